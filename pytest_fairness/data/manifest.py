"""Your own dataset: a CSV/TSV/Parquet manifest with a path column and attribute columns."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_fairness.data.dataset import FairnessDataset, first_repeat, read_csv, require_rows
from pytest_fairness.data.paths import path_in_root, shown
from pytest_fairness.errors import (
    FairnessConfigError,
    InsufficientDataError,
    InvalidDataError,
    own_error,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["load_manifest"]

__tracebackhide__ = own_error


def load_manifest(
    path: str | os.PathLike[str], *, path_column: str = "path",
    id_column: str | None = "image_id", rename: Mapping[str, str] | None = None,
    root: str | os.PathLike[str] | None = None, name: str = "manifest",
    allow_absolute: bool = False,
) -> FairnessDataset:
    """Load a manifest: one row per image, a path column and any attribute columns.

    Parameters
    ----------
    path : str or Path
        A ``.csv``, ``.tsv`` or ``.parquet`` file, or a directory holding ``manifest.*``.
    path_column, id_column : str
        The column of image paths (each inside ``root``) and of unique ids (when absent or
        None, the path is the id).
    rename : mapping, optional
        Renames applied first (``{"sex": "gender"}``), to meet the canonical names.
    root : str or Path, optional
        Base of relative paths; default the manifest's folder.
    name : str
        Dataset name used in messages and cache keys.
    allow_absolute : bool, default False
        Accept absolute paths anywhere on disk.

    Returns
    -------
    FairnessDataset
        Every column (CSV: stripped strings; Parquet: its types), plus the canonical ones.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise FairnessConfigError(
            f"manifest: path must be a file path; got path={path!r} (type={type(path).__name__}).")
    file = _manifest_file(Path(path).expanduser(), path_column)
    frame = _read(file, name)
    if rename:
        frame = frame.rename(columns=dict(rename))
    if path_column not in frame.columns:
        raise InvalidDataError(
            f"manifest: {str(file)!r} has no {path_column!r} column (columns: "
            f"{list(frame.columns)}); add it or pass path_column=.")
    base = Path(root).expanduser().resolve() if root is not None else file.parent
    paths = [v.strip() if isinstance(v, str) else v for v in frame[path_column].tolist()]
    images = [path_in_root(p, base, absolute="any" if allow_absolute else "inside",
                           where=f"{name}: {str(file)!r} row {i + 2}: {path_column}")
              for i, p in enumerate(paths)]
    frame = frame.copy()
    frame["path"] = [str(image) for image in images]
    frame["image_id"] = _ids(frame, file, name, id_column, path_column, paths)
    require_rows(name, repr(str(file)), len(frame))
    return FairnessDataset(frame, name=name, root=base)


def _manifest_file(file: Path, path_column: str) -> Path:
    """The manifest file (``manifest.*`` in a directory), resolved, or raise."""
    if file.is_dir():
        found = [file / n for n in ("manifest.csv", "manifest.parquet", "manifest.tsv")
                 if (file / n).is_file()]
        if not found:
            raise InvalidDataError(
                f"manifest: {str(file)!r} is a directory without manifest.csv, manifest.parquet "
                "or manifest.tsv; pass the manifest file itself.")
        file = found[0]
    if not file.is_file():
        raise InvalidDataError(
            f"manifest: {str(file)!r} does not exist; pass a CSV/TSV/Parquet manifest with a "
            f"{path_column!r} column.")
    return file.resolve()


def _read(file: Path, name: str) -> pd.DataFrame:
    """The manifest as a frame: Parquet with its types, CSV/TSV as stripped strings."""
    import pandas as pd

    suffix = file.suffix.lower()
    if suffix == ".parquet":
        try:
            frame = pd.read_parquet(file)
            for column in frame.columns:  # pyarrow checks some values only when they are read
                frame[column].tolist()
        except Exception as exc:  # pyarrow raises several unrelated types
            raise InvalidDataError(
                f"manifest: cannot read {str(file)!r} as Parquet: {exc}") from exc
        if frame.empty:
            raise InsufficientDataError(f"manifest: {str(file)!r} has no rows.")
        return frame
    if suffix in (".csv", ".tsv", ".txt"):
        frame = read_csv(file, name, required=(), sep="\t" if suffix == ".tsv" else ",")
        # Padded cells ("female ") would form groups apart from "female" that print alike.
        return frame.apply(lambda column: column.str.strip())
    raise FairnessConfigError(
        f"manifest: {str(file)!r} has suffix {suffix!r}; use .csv, .tsv or .parquet.")


def _ids(frame: pd.DataFrame, file: Path, name: str, id_column: str | None,
         path_column: str, paths: list[Any]) -> list[Any]:
    """The unique id of each row: ``id_column`` when the manifest has it, else the path."""
    if id_column is not None and id_column in frame.columns:
        values = frame[id_column].tolist()
        for i, value in enumerate(values):
            if value is None or (isinstance(value, float) and value != value):
                raise InvalidDataError(
                    f"{name}: {str(file)!r} row {i + 2}: {id_column} is missing "
                    f"({shown(value)}); every row needs a unique id.")
        ids: list[Any] = [str(v).strip() for v in values]
        what = id_column
    else:
        ids = paths
        what = path_column
    repeat = first_repeat(ids)
    if repeat is not None:
        first, again = repeat
        raise InvalidDataError(
            f"manifest: {str(file)!r} rows {first + 2} and {again + 2} share {what} "
            f"{ids[again]!r}; ids must be unique. Remove the repeat or add a unique "
            f"{id_column or 'image_id'} column.")
    return ids
