"""The features cache: a damaged or unreadable entry is recomputed with a warning."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch

from pytest_fairness.data import FairnessDataset, load_manifest
from pytest_fairness.features import (
    DefaultTransform,
    extract_features,
    file_sha256,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


class Counting(torch.nn.Module):
    """A linear embedder that counts its forward passes."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.linear = torch.nn.Linear(3 * 4 * 4, 5)
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        out: torch.Tensor = self.linear(x.flatten(1))
        return out


@pytest.fixture(scope="module")
def dataset() -> FairnessDataset:
    return load_manifest(FIXTURES / "manifest" / "manifest.csv")


def _entry(cache: Path) -> tuple[Path, Path]:
    """The sidecar of the one entry in ``cache`` and its embeddings file."""
    sidecar = next(cache.rglob("*.sha256"))
    listed = json.loads(sidecar.read_text())["arrays"]
    return sidecar, sidecar.parent / listed["embeddings"]["file"]


def _flip_two(path: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[-8] ^= 0xFF
    raw[-7] ^= 0x01
    path.write_bytes(bytes(raw))


def _sidecar_edit(sidecar: Path) -> None:
    listed = json.loads(sidecar.read_text())
    listed["arrays"]["embeddings"]["sha256"] = "0" * 64
    sidecar.write_text(json.dumps(listed))


#: Each damage, applied to (sidecar, embeddings file), and what the warning says.
DAMAGE: dict[str, tuple[Callable[[Path, Path], None], str]] = {
    "truncated": (lambda _, f: f.write_bytes(f.read_bytes()[: f.stat().st_size // 2]),
                  r"'embeddings': its sha256 does not match"),
    "two bytes flipped": (lambda _, f: _flip_two(f), r"'embeddings': its sha256 does not match"),
    "empty": (lambda _, f: f.write_bytes(b""), r"'embeddings': its sha256 does not match"),
    "missing member": (lambda _, f: f.unlink(), r"'embeddings': FileNotFoundError"),
    "sidecar mismatch": (lambda s, _: _sidecar_edit(s), r"'embeddings': its sha256 does not"),
    "sidecar not JSON": (lambda s, _: s.write_text("{"), r"its sidecar does not parse"),
    "sidecar truncated": (lambda s, _: s.write_bytes(s.read_bytes()[:20]),
                          r"its sidecar does not parse"),
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_damaged_entry_is_recomputed_with_a_warning(kind: str, dataset: FairnessDataset,
                                                    tmp_path: Path) -> None:
    """The warning names the entry and the problem; the features equal a fresh extraction."""
    model = Counting()
    first = extract_features(model, dataset, transform=DefaultTransform(4), cache_dir=tmp_path)
    sidecar, embeddings = _entry(tmp_path)
    damage, expected = DAMAGE[kind]
    damage(sidecar, embeddings)
    with pytest.warns(UserWarning, match=rf"{sidecar.name}' is damaged \(.*{expected}") as got:
        again = extract_features(model, dataset, transform=DefaultTransform(4),
                                 cache_dir=tmp_path)
    assert len(got) == 1, [str(w.message) for w in got]
    assert model.calls == 2 and not again.from_cache
    np.testing.assert_array_equal(again.embeddings, first.embeddings)
    third = extract_features(model, dataset, transform=DefaultTransform(4), cache_dir=tmp_path)
    assert third.from_cache and model.calls == 2  # the entry was written again
    np.testing.assert_array_equal(third.embeddings, first.embeddings)


def test_entry_of_other_rows_is_recomputed(dataset: FairnessDataset, tmp_path: Path) -> None:
    """Arrays whose checksums hold but whose image ids are another dataset's: recomputed."""
    model = Counting()
    extract_features(model, dataset, transform=DefaultTransform(4), cache_dir=tmp_path)
    sidecar = next(tmp_path.rglob("*.sha256"))
    listed = json.loads(sidecar.read_text())
    ids = sidecar.parent / listed["arrays"]["__image_ids__"]["file"]
    np.save(ids, np.array([f"other{i}" for i in range(16)]))
    listed["arrays"]["__image_ids__"]["sha256"] = file_sha256(ids)
    sidecar.write_text(json.dumps(listed))
    with pytest.warns(UserWarning, match=r"does not match the dataset's rows"):
        again = extract_features(model, dataset, transform=DefaultTransform(4),
                                 cache_dir=tmp_path)
    assert model.calls == 2 and not again.from_cache


@pytest.mark.parametrize("which", ["sidecar", "embeddings file"])
def test_entry_that_is_a_directory(which: str, dataset: FairnessDataset,
                                   tmp_path: Path) -> None:
    """A directory in a file's place: one warning naming it, then features without caching."""
    model = Counting()
    first = extract_features(model, dataset, transform=DefaultTransform(4), cache_dir=tmp_path)
    sidecar, embeddings = _entry(tmp_path)
    entry = sidecar if which == "sidecar" else embeddings
    entry.unlink()
    entry.mkdir()
    (entry / "keep").write_text("x")
    with pytest.warns(UserWarning, match=rf"{sidecar.name}' is a directory.*remove it") as got:
        again = extract_features(model, dataset, transform=DefaultTransform(4),
                                 cache_dir=tmp_path)
    assert len(got) == 1, [str(w.message) for w in got]
    np.testing.assert_array_equal(again.embeddings, first.embeddings)
    assert entry.is_dir() and (entry / "keep").exists()  # the directory is left alone


def test_unwritable_cache_costs_only_a_warning(dataset: FairnessDataset, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails (disk full, read-only folder) warns and returns the features."""
    import tempfile

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "mkstemp", full)
    with pytest.warns(UserWarning, match=r"cannot write entry .*No space left"):
        features = extract_features(Counting(), dataset, transform=DefaultTransform(4),
                                    cache_dir=tmp_path)
    assert features.embeddings.shape == (16, 5) and not list(tmp_path.rglob("*.sha256"))


def test_damage_after_a_warm_read_is_still_found(dataset: FairnessDataset,
                                                 tmp_path: Path) -> None:
    """A file is hashed once per process per (size, mtime): damage after that is caught."""
    model = Counting()
    extract_features(model, dataset, transform=DefaultTransform(4), cache_dir=tmp_path)
    warm = extract_features(model, dataset, transform=DefaultTransform(4), cache_dir=tmp_path)
    assert warm.from_cache and model.calls == 1
    _, embeddings = _entry(tmp_path)
    _flip_two(embeddings)  # same size; a later mtime
    with pytest.warns(UserWarning, match=r"sha256 does not match the sidecar"):
        again = extract_features(model, dataset, transform=DefaultTransform(4),
                                 cache_dir=tmp_path)
    assert not again.from_cache and model.calls == 2


def test_shard_receipt_keys_do_not_follow_the_cache_version() -> None:
    """Receipts written before the cache moved to version 3 still match (shards are kept)."""
    import hashlib

    from pytest_fairness.features import cache_key
    from pytest_fairness.features.cache import CACHE_VERSION
    from pytest_fairness.features.job import RECEIPT_VERSION

    parts = {"dataset": "d", "rows": [0, 8], "perturbation": None}
    before = hashlib.sha256(json.dumps({"version": 2, **parts}, sort_keys=True,
                                       default=str).encode()).hexdigest()
    assert cache_key(version=RECEIPT_VERSION, **parts) == before
    assert CACHE_VERSION != RECEIPT_VERSION and cache_key(**parts) != before


def test_overwrite_with_the_mtime_set_back_is_found(dataset: FairnessDataset,
                                                    tmp_path: Path) -> None:
    """Same size, mtime restored with os.utime: the ctime still changed, so it is hashed."""
    import os

    model = Counting()
    extract_features(model, dataset, transform=DefaultTransform(4), cache_dir=tmp_path)
    extract_features(model, dataset, transform=DefaultTransform(4), cache_dir=tmp_path)
    _, embeddings = _entry(tmp_path)
    before = embeddings.stat()
    _flip_two(embeddings)
    os.utime(embeddings, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.warns(UserWarning, match=r"sha256 does not match the sidecar"):
        again = extract_features(model, dataset, transform=DefaultTransform(4),
                                 cache_dir=tmp_path)
    assert not again.from_cache and model.calls == 2


def test_implausible_header_is_recomputed(dataset: FairnessDataset, tmp_path: Path) -> None:
    """A header claiming far more than the file holds is refused before numpy allocates."""
    model = Counting()
    extract_features(model, dataset, transform=DefaultTransform(4), cache_dir=tmp_path)
    sidecar, embeddings = _entry(tmp_path)
    raw = embeddings.read_bytes().replace(b"'shape': (16, 5)", b"'shape': (9999,)", 1)
    embeddings.write_bytes(raw)
    listed = json.loads(sidecar.read_text())
    listed["arrays"]["embeddings"]["sha256"] = file_sha256(embeddings)
    sidecar.write_text(json.dumps(listed))
    with pytest.warns(UserWarning, match=r"'embeddings': its header claims 9999 float32"):
        again = extract_features(model, dataset, transform=DefaultTransform(4),
                                 cache_dir=tmp_path)
    assert not again.from_cache and again.embeddings.shape == (16, 5)


def test_unwritable_cache_folder_warns_once(dataset: FairnessDataset, tmp_path: Path) -> None:
    """A cache folder under a regular file: one warning, then every extraction goes on."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    model = Counting()
    with pytest.warns(UserWarning, match=r"cannot write.*a-file.*--fairness-no-cache") as got:
        for model_id in ("a", "a", "b"):  # two entries, one read twice
            features = extract_features(model, dataset, transform=DefaultTransform(4),
                                        cache_dir=blocker / "sub", model_id=model_id)
            assert not features.from_cache
    assert len(got) == 1, [str(w.message) for w in got]
    assert blocker.read_text() == "not a folder" and model.calls == 3
