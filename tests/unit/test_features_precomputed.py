"""Precomputed features (``.npy``, ``.npz``, ``.parquet``): read in the dataset's order, and
one clear error naming the file and the fix for a damaged or wrong one."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from pytest_fairness.data import FairnessDataset, load_manifest
from pytest_fairness.errors import FairnessConfigError, InvalidDataError
from pytest_fairness.features import load_precomputed

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture(scope="module")
def dataset() -> FairnessDataset:
    return load_manifest(FIXTURES / "manifest" / "manifest.csv")


def test_precomputed_npy_npz_parquet(dataset, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(16, 5))
    ids = np.array(dataset.image_ids)
    np.save(tmp_path / "e.npy", emb)
    assert np.array_equal(load_precomputed(tmp_path / "e.npy", dataset).embeddings, emb)
    order = rng.permutation(16)
    np.savez(tmp_path / "e.npz", image_id=ids[order], embeddings=emb[order],
             logits=emb[order, :2])
    loaded = load_precomputed(tmp_path / "e.npz", dataset)
    np.testing.assert_array_equal(loaded.embeddings, emb)
    np.testing.assert_array_equal(loaded.logits, emb[:, :2])
    frame = pd.DataFrame(emb[order], columns=[f"f{k}" for k in range(5)])
    frame.insert(0, "image_id", ids[order])
    frame["logits"] = list(emb[order, :2])
    frame.to_parquet(tmp_path / "e.parquet")
    loaded = load_precomputed(tmp_path / "e.parquet", dataset)
    np.testing.assert_array_equal(loaded.embeddings, emb)
    np.testing.assert_array_equal(loaded.logits, emb[:, :2])


def test_precomputed_errors(dataset, tmp_path: Path) -> None:
    np.save(tmp_path / "short.npy", np.zeros((3, 2)))
    with pytest.raises(InvalidDataError, match=r"has 3 rows but dataset 'manifest' has 16"):
        load_precomputed(tmp_path / "short.npy", dataset)
    np.savez(tmp_path / "missing.npz", image_id=np.array(["img000"]), embeddings=np.zeros((1, 2)))
    with pytest.raises(InvalidDataError, match=r"lack 15 of the 16 images.*'img001'"):
        load_precomputed(tmp_path / "missing.npz", dataset)
    np.savez(tmp_path / "dup.npz", image_id=np.array(["a", "a"]), embeddings=np.zeros((2, 2)))
    with pytest.raises(InvalidDataError, match=r"id 'a' appears at rows 0 and 1"):
        load_precomputed(tmp_path / "dup.npz", dataset)
    pd.DataFrame({"x": [1.0]}).to_parquet(tmp_path / "noid.parquet")
    with pytest.raises(InvalidDataError, match=r"no 'image_id' column"):
        load_precomputed(tmp_path / "noid.parquet", dataset)
    (tmp_path / "bad.npy").write_bytes(b"nope")
    with pytest.raises(InvalidDataError, match=r"bad.npy.* are damaged or not a numpy .npy file"):
        load_precomputed(tmp_path / "bad.npy", dataset)
    (tmp_path / "f.csv").write_text("x")
    with pytest.raises(FairnessConfigError, match=r"suffix '.csv'"):
        load_precomputed(tmp_path / "f.csv", dataset)
    with pytest.raises(InvalidDataError, match=r"do not exist"):
        load_precomputed(tmp_path / "none.npz", dataset)


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
    "empty": (lambda raw: b"", r"BadZipFile"),
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
    ({"embeddings": np.full((16, 2), np.nan)}, r"NaN or infinite values in row 0 \(16 row"),
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


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def test_npy_with_bytes_beyond_its_array_is_refused(dataset: FairnessDataset,
                                                    tmp_path: Path) -> None:
    """numpy.load would ignore them; the file is not what numpy.save wrote."""
    file = tmp_path / "features.npy"
    file.write_bytes(_npy_bytes(np.zeros((16, 3))) + b"12345678")
    with pytest.raises(InvalidDataError, match=r"features\.npy' are damaged .*header says "
                                               r"shape \(16, 3\) of float64 \(384 bytes\) "
                                               r"but it holds 392"):
        load_precomputed(file, dataset)


@pytest.mark.parametrize(("members", "expected"), [
    ([("embeddings.npy", b""), ("embeddings.npy", b"")], r"member 'embeddings\.npy' appears twice"),
    ([("embeddings.npy", b"xxxx")], r"member 'embeddings\.npy''s header says shape"),
])
def test_npz_member_twice_or_too_long_is_refused(members: list[tuple[str, bytes]],
                                                 expected: str, dataset: FairnessDataset,
                                                 tmp_path: Path) -> None:
    """numpy.load would pick one copy, or ignore the extra bytes, silently."""
    file = tmp_path / "features.npz"
    with pytest.warns(UserWarning) if len(members) > 1 else _nothing(), \
            zipfile.ZipFile(file, "w") as archive:
        for name, extra in members:
            archive.writestr(name, _npy_bytes(np.zeros((16, 3))) + extra)
    with pytest.raises(InvalidDataError, match=rf"features\.npz' are damaged .*{expected}"):
        load_precomputed(file, dataset)


def _nothing() -> Any:
    import contextlib

    return contextlib.nullcontext()
