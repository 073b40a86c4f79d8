"""Features computed elsewhere: ``.npy``, ``.npz``, ``.parquet`` files and shard directories."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_fairness.errors import FairnessConfigError, FairnessError, InvalidDataError, own_error
from pytest_fairness.features.extraction import Features
from pytest_fairness.features.fingerprint import callable_fingerprint, normalize_spec
from pytest_fairness.stats import check_finite

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from pytest_fairness.data.dataset import FairnessDataset

__all__ = ["load_precomputed"]

__tracebackhide__ = own_error


class _Damaged(Exception):
    """A file that numpy or pyarrow cannot read back; says why."""


def load_precomputed(path: str | os.PathLike[str], dataset: FairnessDataset, *,
                     id_column: str = "image_id", perturbation: Any = None,
                     transform: Any = None, normalize: Any = None,
                     cache_dir: str | os.PathLike[str] | None = None) -> Features:
    """Read features computed elsewhere and align them with ``dataset``'s rows.

    Parameters
    ----------
    path : str or Path
        A directory written by ``pytest-fairness extract`` (:func:`read_shards` checks it);
        ``.npy`` (one 2-D array, rows in the dataset's order); ``.npz`` (named arrays and
        optionally ids); ``.parquet`` (an id column; list columns are outputs, the numeric
        scalar columns the ``embeddings``). The page "Wiring a model repository" has more.
    dataset : FairnessDataset
        Extra ids in the file are ignored; missing ones are an error.
    id_column : str
        Name of the id array/column.
    perturbation : None, (name, level) or (name, level, seed)
        Directories only: which extraction to read (default: the clean images).
    transform, normalize : optional
        Directories only: the extraction must have used the same ones.
    cache_dir : str or Path, optional
        Directories only: keep the decoded matrices there, memory-mapped.

    Returns
    -------
    Features

    Examples
    --------
    >>> import numpy as np, pandas as pd, tempfile, os
    >>> from pytest_fairness.data import FairnessDataset
    >>> ds = FairnessDataset(pd.DataFrame({"image_id": ["a", "b"], "path": ["a", "b"]}))
    >>> file = os.path.join(tempfile.mkdtemp(), "f.npz")
    >>> np.savez(file, image_id=np.array(["b", "a"]), embeddings=np.array([[2.0], [1.0]]))
    >>> load_precomputed(file, ds).embeddings.ravel().tolist()
    [1.0, 2.0]
    """
    file = Path(path)
    if file.is_dir() and file.suffix.lower() not in (".npy", ".npz", ".parquet"):
        from pytest_fairness.features.shards import read_shards
        return Features(dataset, read_shards(
            file, dataset, perturbation=perturbation, cache_dir=cache_dir,
            transform=None if transform is None else callable_fingerprint(transform),
            normalize=None if normalize is None else normalize_spec(normalize)))
    if not file.is_file():
        raise InvalidDataError(
            f"precomputed features {str(file)!r} do not exist; pass a .npy, .npz or .parquet "
            "file, or a directory written by `pytest-fairness extract`.")
    suffix = file.suffix.lower()
    if suffix not in (".npy", ".npz", ".parquet"):
        raise FairnessConfigError(
            f"precomputed features {str(file)!r}: suffix {suffix!r} is not .npy, .npz or "
            ".parquet.")
    fix = ("write the file again (numpy.save/numpy.savez or DataFrame.to_parquet) or "
           "recompute the features")
    try:
        if suffix == ".parquet":
            outputs, ids = _read_parquet(file, id_column)
        else:
            outputs = _read_numpy(file)
            if suffix == ".npy":
                outputs = {"embeddings": outputs[""]}
            ids = outputs.pop(id_column, None)
    except _Damaged as exc:
        raise InvalidDataError(
            f"precomputed features {str(file)!r} are damaged or not a numpy {suffix} file "
            f"({exc}); {fix}.") from None
    if not outputs:
        raise InvalidDataError(f"precomputed features {str(file)!r} hold no arrays; {fix}.")
    for name, array in outputs.items():
        if array.dtype.kind not in "biuf" or array.ndim not in (1, 2):
            raise InvalidDataError(
                f"precomputed features {str(file)!r}: {name!r} holds {array.dtype} values of "
                f"shape {array.shape}; each output must be a 1-D or 2-D array of numbers. "
                f"Save only feature arrays (and the {id_column!r} ids), or {fix}.")
        check_finite(array, f"{name!r} in precomputed features {str(file)!r}", fix)
    if ids is None:
        for name, array in outputs.items():
            if len(array) != len(dataset):
                raise InvalidDataError(
                    f"precomputed features {str(file)!r}: {name!r} has {len(array)} rows but "
                    f"dataset {dataset.name!r} has {len(dataset)}; without an {id_column!r} "
                    "array, rows must match the dataset one to one. Save the ids too.")
        return Features(dataset, outputs)
    return _aligned(file, dataset, outputs, ids, id_column, fix)


def _aligned(file: Path, dataset: FairnessDataset, outputs: dict[str, NDArray[Any]], ids: Any,
             id_column: str, fix: str) -> Features:
    """The outputs in the dataset's row order, matched by id (each once, none missing)."""
    import numpy as np
    ids = np.asarray(ids)
    if ids.ndim != 1 or ids.dtype.kind not in "UiuO":
        raise InvalidDataError(
            f"precomputed features {str(file)!r}: the {id_column!r} ids are {ids.dtype} of "
            f"shape {ids.shape}; save them as one string per row "
            f"(dataset.frame['image_id']), or {fix}.")
    for name, array in outputs.items():
        if len(array) != len(ids):
            raise InvalidDataError(
                f"precomputed features {str(file)!r}: {name!r} has {len(array)} rows but there "
                f"are {len(ids)} {id_column!r} ids; {fix}.")
    import pandas as pd
    ids = [str(v) for v in ids.tolist()]
    index = pd.Index(ids)
    if index.has_duplicates:
        i = int(np.flatnonzero(index.duplicated())[0])
        raise InvalidDataError(
            f"precomputed features {str(file)!r}: id {ids[i]!r} appears at rows "
            f"{ids.index(ids[i])} and {i}; each image needs one row.")
    order = index.get_indexer(dataset.image_ids)
    if (order < 0).any():
        missing = [v for v, row in zip(dataset.image_ids, order) if row < 0]
        raise InvalidDataError(
            f"precomputed features {str(file)!r} lack {len(missing)} of the {len(dataset)} "
            f"images of dataset {dataset.name!r}, e.g. {missing[0]!r}; recompute them on the "
            "same dataset (ids from dataset.frame['image_id']).")
    return Features(dataset, {k: v[order] for k, v in outputs.items()})


def _read_numpy(file: Path) -> dict[str, NDArray[Any]]:
    """Every array of an ``.npz`` (of an ``.npy`` under ``""``), each size checked first.

    numpy would silently read an array shorter than its header, or a name given twice.
    """
    import numpy as np
    try:
        _check_sizes(file)
        loaded = np.load(file, allow_pickle=False)
        if isinstance(loaded, np.ndarray):
            return {"": loaded}
        with loaded:
            arrays = {name: loaded[name] for name in loaded.files}
    except _Damaged:
        raise
    except Exception as exc:  # noqa: BLE001 - numpy lets zipfile, zlib, EOF... errors out
        raise _Damaged(f"{type(exc).__name__}: {exc}") from None
    for name, array in arrays.items():
        if not isinstance(array, np.ndarray):  # numpy hands back a member that is not .npy
            raise _Damaged(f"member {name!r} is not an .npy array")
    return arrays


def _check_sizes(file: Path) -> None:
    """Each ``.npy`` of ``file`` holds as many bytes as its header says; no name twice."""
    import zipfile

    from numpy.lib import format as npy

    def check(stream: Any, size: int, name: str) -> None:
        try:
            version = npy.read_magic(stream)
        except ValueError:
            raise _Damaged(f"{name} is not an .npy array") from None
        shape, _, dtype = (npy.read_array_header_1_0 if version == (1, 0)
                           else npy.read_array_header_2_0)(stream)
        expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if stream.tell() + expected != size:
            raise _Damaged(f"{name}'s header says shape {tuple(shape)} of {dtype} "
                           f"({expected} bytes) but it holds {size - stream.tell()}")

    import numpy as np
    if file.suffix.lower() == ".npy":
        with open(file, "rb") as handle:
            check(handle, os.fstat(handle.fileno()).st_size, "the array")
        return
    with zipfile.ZipFile(file) as archive:
        names = [info.filename for info in archive.infolist()]
        twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if twice is not None:
            raise _Damaged(f"member {twice!r} appears twice")
        for info in archive.infolist():
            if info.filename.endswith(".npy") and not info.is_dir():
                with archive.open(info) as member:
                    check(member, info.file_size, f"member {info.filename!r}")


def _read_parquet(file: Path, id_column: str) -> tuple[dict[str, NDArray[Any]], Any]:
    """The outputs and ids of a Parquet file; pyarrow's errors on damage become _Damaged."""
    try:
        return _parquet_outputs(file, id_column)
    except (FairnessError, _Damaged, ImportError):
        raise
    except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid, ArrowException
        # (bytes that are not UTF-8, found only when a column is converted), OSError, ...
        raise _Damaged(f"{type(exc).__name__}: {exc}") from None


def _parquet_outputs(file: Path, id_column: str) -> tuple[dict[str, NDArray[Any]], Any]:
    import numpy as np
    import pandas as pd
    frame = pd.read_parquet(file)
    if id_column not in frame.columns:
        raise InvalidDataError(
            f"precomputed features {str(file)!r} have no {id_column!r} column (columns: "
            f"{list(frame.columns)[:10]}); add the image ids.")
    outputs: dict[str, NDArray[Any]] = {}
    scalars = []
    for column in frame.columns:
        if column == id_column:
            continue
        first = frame[column].iloc[0] if len(frame) else None
        if isinstance(first, (list, tuple, np.ndarray)):
            try:
                outputs[str(column)] = np.stack([np.asarray(v, dtype=float)
                                                 for v in frame[column]])
            except (TypeError, ValueError) as exc:
                raise _Damaged(f"column {column!r} is not one equal-length list of numbers "
                               f"per row ({exc})") from None
        elif pd.api.types.is_numeric_dtype(frame[column]):
            scalars.append(column)
    if scalars:
        outputs.setdefault("embeddings", frame[scalars].to_numpy(dtype=float))
    return outputs, frame[id_column].to_numpy()
