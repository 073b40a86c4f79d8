"""Damaged feature-cache entries are recomputed with a warning; damaged precomputed files
give one clear error naming the file and the fix."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch

from pytest_fairness.data import FairnessDataset, load_manifest
from pytest_fairness.errors import InvalidDataError
from pytest_fairness.features import (
    DefaultTransform,
    extract_features,
    file_sha256,
    load_precomputed,
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


def _data_offset(raw: bytes, member: str) -> int:
    """Where the array data of ``member`` starts in the stored (uncompressed) zip ``raw``."""
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        info = archive.getinfo(member)
    name_len = int.from_bytes(raw[info.header_offset + 26:info.header_offset + 28], "little")
    extra_len = int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_len + extra_len
    return start + raw[start:].index(b"\n") + 1  # after the npy header


def _flip_in_data(raw: bytes) -> bytes:
    at = _data_offset(raw, "embeddings.npy") + 8
    out = bytearray(raw)
    out[at] ^= 0xFF
    out[at + 1] ^= 0x01
    return bytes(out)


def _bad_member(raw: bytes) -> bytes:
    """A copy whose embeddings member is not an .npy array (numpy would hand back bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw)) as source, zipfile.ZipFile(buffer, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            target.writestr(info.filename, b"not an array" if info.filename ==
                            "embeddings.npy" else data)
    return buffer.getvalue()


#: Damage to a precomputed ``.npz`` and what numpy's reader says about it.
NPZ_DAMAGE: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "truncated": (lambda raw: raw[: len(raw) // 2], r"BadZipFile"),
    "short by 10 bytes": (lambda raw: raw[:-10], r"BadZipFile"),
    "two bytes flipped": (_flip_in_data, r"Bad CRC-32"),
    "invalid npy member": (_bad_member, r"member 'embeddings\.npy' is not an \.npy array"),
    "empty": (lambda raw: b"", r"EOFError"),
}


@pytest.mark.parametrize("kind", sorted(NPZ_DAMAGE))
def test_load_precomputed_on_damage(kind: str, dataset: FairnessDataset,
                                    tmp_path: Path) -> None:
    """One InvalidDataError naming the file, what is wrong and how to fix it."""
    file = tmp_path / "features.npz"
    np.savez(file, image_id=np.array(dataset.image_ids),
             embeddings=np.arange(16 * 3, dtype=float).reshape(16, 3))
    damage, expected = NPZ_DAMAGE[kind]
    file.write_bytes(damage(file.read_bytes()))
    with pytest.raises(InvalidDataError, match=rf"features\.npz' are damaged .*"
                                                rf"{expected}.*write the file again"):
        load_precomputed(file, dataset)


def test_load_precomputed_on_a_directory(dataset: FairnessDataset, tmp_path: Path) -> None:
    (tmp_path / "features.npz").mkdir()
    with pytest.raises(InvalidDataError, match=r"features\.npz' do not exist"):
        load_precomputed(tmp_path / "features.npz", dataset)


@pytest.mark.parametrize(("arrays", "fragment"), [
    ({"image_id": np.array(["a"]), "embeddings": np.array([["x"]])},
     r"'embeddings' holds <U1 values .*array of numbers"),
    ({"embeddings": np.zeros((16, 2, 2))}, r"shape \(16, 2, 2\)"),
    ({"embeddings": np.full((16, 2), np.nan)}, r"NaN or infinite values \(row 0 first, 16 rows"),
    ({"image_id": np.zeros((16, 2)), "embeddings": np.zeros((16, 2))},
     r"'image_id' ids are float64 of shape \(16, 2\)"),
    ({"image_id": np.array(["a", "b"]), "embeddings": np.zeros((3, 2))},
     r"'embeddings' has 3 rows but there are 2 'image_id' ids"),
    ({"image_id": np.array(["a"])}, r"hold no arrays"),
])
def test_load_precomputed_refuses_what_is_not_features(arrays: dict[str, np.ndarray],
                                                       fragment: str, dataset: FairnessDataset,
                                                       tmp_path: Path) -> None:
    np.savez(tmp_path / "f.npz", **arrays)  # type: ignore[arg-type]
    with pytest.raises(InvalidDataError, match=fragment):
        load_precomputed(tmp_path / "f.npz", dataset)


def test_npy_header_that_lies_about_its_shape(dataset: FairnessDataset, tmp_path: Path) -> None:
    """A damaged shape: numpy cannot allocate it, and says so in one clear error."""
    file = tmp_path / "f.npy"
    np.save(file, np.zeros((16, 4)))
    file.write_bytes(file.read_bytes().replace(b"(16, 4)", b"(16000000000000, 4)", 1)[:200])
    with pytest.raises(InvalidDataError, match=r"f\.npy' are damaged or not a numpy \.npy file"):
        load_precomputed(file, dataset)


def test_npy_header_that_does_not_parse(dataset: FairnessDataset, tmp_path: Path) -> None:
    """numpy's fallback header parser raises tokenize.TokenError: still one clear error."""
    file = tmp_path / "f.npy"
    np.save(file, np.zeros((16, 4)))
    raw = bytearray(file.read_bytes())
    raw[20:30] = bytes(10)  # inside "{'descr': '<f8', ..."
    file.write_bytes(bytes(raw))
    with pytest.raises(InvalidDataError, match=r"f\.npy' are damaged or not a numpy \.npy file"):
        load_precomputed(file, dataset)


def test_parquet_id_that_is_not_utf8(dataset: FairnessDataset, tmp_path: Path) -> None:
    """pyarrow notices bad UTF-8 only when the column is converted: still one clear error."""
    import pandas as pd

    file = tmp_path / "f.parquet"
    frame = pd.DataFrame({"image_id": dataset.image_ids, "f0": np.arange(16.0)})
    frame.to_parquet(file, compression=None)
    raw = file.read_bytes()
    assert raw.count(b"img002") >= 1
    file.write_bytes(raw.replace(b"img002", b"\xffmg002"))
    with pytest.raises(InvalidDataError, match=r"f\.parquet' are damaged .*write the file again"):
        load_precomputed(file, dataset)


def test_member_with_an_empty_name(dataset: FairnessDataset, tmp_path: Path) -> None:
    """A member with an empty name that is not an array: one clear error, no traceback."""
    file = tmp_path / "features.npz"
    with zipfile.ZipFile(file, "w") as archive:
        archive.writestr(zipfile.ZipInfo(""), b"\x93NUMPY")
    with pytest.raises(InvalidDataError, match=r"features\.npz' are damaged or not a numpy"):
        load_precomputed(file, dataset)
