"""Shards read in batches that slice a row group still put every value in its row; a
manifest or shard that disagrees is one MissingFeaturesError naming what and where.

Arrow's scanner cuts a row group larger than its batch size (131,072 rows) into slices; a
list column's ``.values`` ignores the slice's offset, so the reader must flatten it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from pytest_fairness.data import FairnessDataset  # noqa: E402
from pytest_fairness.errors import MissingFeaturesError  # noqa: E402
from pytest_fairness.features import load_precomputed  # noqa: E402

ROWS = 140_000  # one row group, read as a batch of 131,072 rows and a slice of the rest


def test_a_row_group_cut_into_batches_keeps_every_row(tmp_path: Path) -> None:
    ids = [f"i{k}" for k in range(ROWS)]
    dataset = FairnessDataset(pd.DataFrame({"image_id": ids, "path": ids}), name="many")
    values = np.arange(2 * ROWS, dtype=np.float32).reshape(ROWS, 2)
    order = np.random.default_rng(0).permutation(ROWS)  # rows placed by id, not by position
    table = pa.table({"image_id": pa.array([ids[k] for k in order]),
                      "embeddings": pa.FixedSizeListArray.from_arrays(
                          pa.array(values[order].reshape(-1)), 2)})
    (tmp_path / "clean").mkdir()
    shard = tmp_path / "clean" / "part-00000-of-00001.parquet"
    pq.write_table(table, shard, compression="none", row_group_size=ROWS)
    manifest = {
        "format": "pytest-fairness-features", "version": 1, "command": "by hand",
        "model": {"factory": "none", "fingerprint": "none"},
        "dataset": {"name": dataset.name, "fingerprint": dataset.fingerprint, "rows": ROWS},
        "transform": "none", "normalize": "None", "id_column": "image_id",
        "outputs": {"embeddings": {"dtype": "float32", "width": 2}},
        "extractions": [{"perturbation": None, "directory": "clean", "shards": [{
            "file": "clean/part-00000-of-00001.parquet", "rows": ROWS,
            "sha256": hashlib.sha256(shard.read_bytes()).hexdigest()}]}],
    }
    (tmp_path / "_manifest.json").write_text(json.dumps(manifest))
    features = load_precomputed(tmp_path, dataset)
    np.testing.assert_array_equal(features.embeddings, values)


def _folder(tmp_path: Path, values: np.ndarray) -> tuple[Path, FairnessDataset, Any]:
    """A one-shard folder of ``values`` (6 rows) as the job writes it, and its manifest."""
    ids = [f"i{k}" for k in range(len(values))]
    dataset = FairnessDataset(pd.DataFrame({"image_id": ids, "path": ids}), name="six")
    shard = tmp_path / "clean" / "part-00000-of-00001.parquet"
    shard.parent.mkdir()
    pq.write_table(pa.table({"image_id": pa.array(ids), "embeddings": pa.FixedSizeListArray
                             .from_arrays(pa.array(values.reshape(-1)), values.shape[1])}),
                   shard, compression="none")
    manifest = {
        "format": "pytest-fairness-features", "version": 1, "command": "extract-it",
        "model": {"factory": "m:f", "fingerprint": "x"},
        "dataset": {"name": "six", "fingerprint": dataset.fingerprint, "rows": len(ids)},
        "transform": "none", "normalize": "None", "id_column": "image_id",
        "outputs": {"embeddings": {"dtype": values.dtype.name, "width": values.shape[1]}},
        "extractions": [{"perturbation": None, "directory": "clean", "shards": [{
            "file": "clean/part-00000-of-00001.parquet", "rows": len(ids),
            "sha256": hashlib.sha256(shard.read_bytes()).hexdigest()}]}]}
    (tmp_path / "_manifest.json").write_text(json.dumps(manifest))
    return tmp_path, dataset, manifest


def test_a_wrong_key_is_named_by_its_path(tmp_path: Path) -> None:
    """A manifest key of the wrong kind: its path and value, not a KeyError or TypeError."""
    folder, dataset, manifest = _folder(tmp_path, np.zeros((6, 2), np.float32))
    manifest["extractions"][0]["shards"][0]["rows"] = "6"
    (folder / "_manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(MissingFeaturesError, match=r"extractions\[0\]\.shards\[0\]\.rows is '6'"):
        load_precomputed(folder, dataset)


def test_a_huge_claimed_width_is_refused_before_allocating(tmp_path: Path) -> None:
    """A width the shard's bytes cannot hold fails on the sizes, never with MemoryError."""
    folder, dataset, manifest = _folder(tmp_path, np.zeros((6, 2), np.float32))
    manifest["outputs"]["embeddings"]["width"] = 2**30
    (folder / "_manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(MissingFeaturesError, match="bytes of features the manifest claims"):
        load_precomputed(folder, dataset)


def test_a_shard_linked_outside_the_folder_is_refused(tmp_path: Path) -> None:
    """A shard that is a link to a file outside the folder is not opened."""
    (tmp_path / "f").mkdir()
    folder, dataset, _ = _folder(tmp_path / "f", np.zeros((6, 2), np.float32))
    shard = folder / "clean" / "part-00000-of-00001.parquet"
    outside = tmp_path / "elsewhere.parquet"
    shard.rename(outside)
    shard.symlink_to(outside)
    with pytest.raises(MissingFeaturesError, match="outside the features folder"):
        load_precomputed(folder, dataset)


def test_nan_features_are_refused_naming_the_ids(tmp_path: Path) -> None:
    """NaN in a shard: the ids of the rows, not a gap computed over NaN."""
    values = np.ones((6, 2), np.float32)
    values[4, 1] = np.nan
    folder, dataset, _ = _folder(tmp_path, values)
    with pytest.raises(MissingFeaturesError, match=r"NaN or infinite .*\['i4'\]"):
        load_precomputed(folder, dataset)


def test_a_shard_of_another_dtype_is_not_cast(tmp_path: Path) -> None:
    """float64 values under a manifest saying float32: refused, not cast."""
    folder, dataset, manifest = _folder(tmp_path, np.zeros((6, 2), np.float64))
    manifest["outputs"]["embeddings"]["dtype"] = "float32"
    (folder / "_manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(MissingFeaturesError, match="as float64, the manifest says float32"):
        load_precomputed(folder, dataset)


def test_a_shard_of_another_extraction_is_refused_by_its_key(tmp_path: Path) -> None:
    """Same dataset and perturbation, another job (model, transform, rows): the key differs."""
    folder, dataset, manifest = _folder(tmp_path, np.zeros((6, 2), np.float32))
    shard = folder / "clean" / "part-00000-of-00001.parquet"
    meta = {"key": "theirs", "perturbation": None, "dataset": dataset.fingerprint}
    pq.write_table(pq.read_table(shard).replace_schema_metadata(
        {"pytest_fairness": json.dumps(meta)}), shard, compression="none")
    entry = manifest["extractions"][0]["shards"][0]
    entry.update(sha256=hashlib.sha256(shard.read_bytes()).hexdigest(), key="ours")
    (folder / "_manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(MissingFeaturesError, match="written by another extraction"):
        load_precomputed(folder, dataset)
    entry["key"] = "theirs"  # the manifest's own shard: read
    (folder / "_manifest.json").write_text(json.dumps(manifest))
    assert load_precomputed(folder, dataset).embeddings.shape == (6, 2)



_PEAK = """
import sys
sys.path[:0] = {path!r}
import numpy as np, pandas as pd, pyarrow.compute, pyarrow.parquet
sys.path.insert(0, {bench!r})
from scale import dataset, write_shards
from pathlib import Path
from pytest_fairness.features import load_precomputed
folder, n, width = Path({folder!r}), 40_000, 1024
if sys.argv[1] == "write":
    write_shards(folder, n, width, 8)
    sys.exit()
ds = dataset(n)
ds.fingerprint
status = lambda field: next(int(line.split()[1]) * 1024 for line in open("/proc/self/status")
                            if line.startswith(field + ":"))
before = status("VmRSS")
open("/proc/self/clear_refs", "w").write("5")  # VmHWM := VmRSS
load_precomputed(folder, ds)
print((status("VmHWM") - before) / (n * width * 4))
"""


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="Linux peak counter")
def test_reading_eight_shards_peaks_near_the_matrix_size(tmp_path: Path) -> None:
    """Every shard's reader is open from the start (footers are checked first): the bytes one
    reader buffers must not stay until the last shard is read (2.5x the 160 MiB matrix, not
    1.55x: about 90 MiB of batches and pools on top of it)."""
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[2]
    source = _PEAK.format(path=[str(root), *sys.path], bench=str(root / "benchmarks"),
                          folder=str(tmp_path / "features"))
    subprocess.run([sys.executable, "-c", source, "write"], check=True)  # a process of its own
    out = subprocess.run([sys.executable, "-c", source, "read"], capture_output=True, text=True,
                         check=True).stdout
    assert float(out) <= 2.0, f"peak growth {float(out):.2f}x the matrix"
