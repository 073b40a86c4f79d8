"""Shards read in batches that slice a row group still put every value in its row.

Arrow's scanner cuts a row group larger than its batch size (131,072 rows) into slices; a
list column's ``.values`` ignores the slice's offset, so the reader must flatten it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from pytest_fairness.data import FairnessDataset  # noqa: E402
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
