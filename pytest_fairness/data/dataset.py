"""FairnessDataset: images on disk, attributes in a frame; and the loaders' shared checks."""

from __future__ import annotations

import hashlib
import io
import os
import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_fairness.data.paths import is_utf8, shown
from pytest_fairness.errors import (
    FairnessConfigError,
    InsufficientDataError,
    InvalidDataError,
    did_you_mean,
    own_error,
    require,
)

if TYPE_CHECKING:
    import pandas as pd
    from PIL import Image

__all__ = ["BOX_COLUMNS", "CANONICAL_COLUMNS", "FairnessDataset", "age_group"]

__tracebackhide__ = own_error

#: Columns every dataset frame has (missing values are ``None``/NaN or ``"unknown"``).
CANONICAL_COLUMNS = ("image_id", "path", "gender", "age", "age_group", "skin_tone", "race",
                     "identity", "region", "income", "income_bucket", "household", "labels")

#: Optional crop box in pixels of the image file (left, top, right, bottom).
BOX_COLUMNS = ("box_x0", "box_y0", "box_x1", "box_y1")

#: Age buckets (lower bound inclusive) of "Fairness Indicators for Systematic Assessments of
#: Visual Feature Extractors" (Goyal et al., FAccT 2022): <18, 18-30, 30-45, 45-70, 70+.
_AGE_EDGES = ((18, "<18"), (30, "18-30"), (45, "30-45"), (70, "45-70"))


def age_group(age: Any) -> str:
    """Bucket an age as Goyal et al. 2022: ``<18``, ``18-30``, ``30-45``, ``45-70``, ``70+``.

    Examples
    --------
    >>> [age_group(a) for a in (17, 18, 30, 69, 70, None)]
    ['<18', '18-30', '30-45', '45-70', '70+', 'unknown']
    """
    try:
        value = float(age)
    except (TypeError, ValueError):
        return "unknown"
    if value != value:  # NaN
        return "unknown"
    for edge, label in _AGE_EDGES:
        if value < edge:
            return label
    return "70+"


class FairnessDataset:
    """Images on disk and their attributes, in a frame with canonical columns.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per image (or per box): ``image_id`` (unique) and ``path`` (absolute), the
        other :data:`CANONICAL_COLUMNS` added as missing when absent; optional
        ``box_x0, box_y0, box_x1, box_y1`` crop to a box in pixels (NaN: whole image).
    name : str
        Used in messages and cache keys (``"utkface"``).
    root : str or Path, optional
        Where the dataset lives; cache keys use paths relative to it.
    square_crop_ratio : float, optional
        Crop an image (after the box) whose ``max(h, w) / min(h, w)`` reaches this ratio to a
        square from its top-left corner, as Goyal et al. 2022 do for MIAP (1.2).
    skipped, notes : mapping of reason to count, sequence of str
        Rows the loader left out, by reason, and its remarks.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"image_id": ["a", "b"], "path": ["/x/a.jpg", "/x/b.jpg"],
    ...                       "gender": ["female", "male"]})
    >>> ds = FairnessDataset(frame, name="toy")
    >>> len(ds), list(ds.groups(by="gender"))
    (2, ['female', 'male'])
    >>> ds.subset(ds.frame["gender"] == "male").frame["image_id"].tolist()
    ['b']
    """

    def __init__(
        self,
        frame: pd.DataFrame,
        *,
        name: str = "dataset",
        root: str | os.PathLike[str] | None = None,
        square_crop_ratio: float | None = None,
        skipped: Mapping[str, int] | None = None,
        notes: Sequence[str] = (),
    ) -> None:
        import pandas as pd

        if not isinstance(frame, pd.DataFrame):
            raise FairnessConfigError(
                f"frame must be a pandas DataFrame; got frame of type {type(frame).__name__}.")
        for column in ("image_id", "path"):
            if column not in frame.columns:
                raise InvalidDataError(
                    f"dataset {name!r}: the frame has no {column!r} column (columns: "
                    f"{list(frame.columns)}); add one ({column} per image).")
        if square_crop_ratio is not None and not square_crop_ratio >= 1.0:
            raise FairnessConfigError(
                f"square_crop_ratio must be None or a number >= 1; got "
                f"square_crop_ratio={square_crop_ratio!r}.")
        frame = frame.reset_index(drop=True).copy()
        _check_text(frame, str(name))
        frame["image_id"] = frame["image_id"].astype(str)
        frame["path"] = frame["path"].astype(str)
        duplicated = frame["image_id"].duplicated(keep=False)
        if duplicated.any():
            first = frame.loc[duplicated, "image_id"].iloc[0]
            rows = frame.index[frame["image_id"] == first].tolist()
            raise InvalidDataError(
                f"dataset {name!r}: image_id {first!r} appears {len(rows)} times (rows {rows}); "
                "ids must be unique. De-duplicate the annotations or build ids that include "
                "the box or frame.")
        for column in CANONICAL_COLUMNS:
            if column not in frame.columns:
                frame[column] = None
        self.frame: pd.DataFrame = frame
        self.name = str(name)
        self.root = None if root is None else Path(root)
        self.square_crop_ratio = square_crop_ratio
        self.skipped: dict[str, int] = dict(skipped or {})
        self.notes: tuple[str, ...] = tuple(notes)
        self._fingerprint: str | None = None

    def __len__(self) -> int:
        return len(self.frame)

    def __repr__(self) -> str:
        skipped = sum(self.skipped.values())
        return (f"FairnessDataset(name={self.name!r}, rows={len(self)}, "
                f"skipped={skipped}, root={str(self.root) if self.root else None!r})")

    @property
    def image_ids(self) -> list[str]:
        """The ``image_id`` of every row, in order."""
        return [str(i) for i in self.frame["image_id"]]

    @property
    def fingerprint(self) -> str:
        """sha256 of the annotations and the file list, whatever the row order."""
        if self._fingerprint is None:
            frame = self.frame
            if self.root is not None:
                # Relative paths: moving the dataset must not invalidate cached features.
                prefix = str(self.root).rstrip(os.sep) + os.sep
                frame = frame.assign(
                    path=[p[len(prefix):] if p.startswith(prefix) else p for p in frame["path"]])
            import numpy as np
            import pandas as pd

            digest = hashlib.sha256()
            for item in (self.name, repr(self.square_crop_ratio)):
                digest.update(item.encode() + b"\0")
            ordered = frame.sort_values("image_id", kind="stable")
            for column in sorted(map(str, frame.columns)):
                values = ordered[column].map(_stable_repr)
                hashed = pd.util.hash_pandas_object(values, index=False).to_numpy(dtype=np.uint64)
                digest.update(column.encode() + b"\0")
                digest.update(hashed.tobytes())
            self._fingerprint = digest.hexdigest()
        return self._fingerprint

    def subset(self, rows: Any) -> FairnessDataset:
        """The dataset restricted to ``rows``: a boolean mask, integer positions or image ids."""
        import numpy as np

        if hasattr(rows, "to_numpy"):
            rows = rows.to_numpy()
        array = np.asarray(list(rows) if not isinstance(rows, np.ndarray) else rows)
        if array.dtype == bool:
            if array.shape != (len(self),):
                raise InvalidDataError(
                    f"subset mask has shape {array.shape}; it needs one bool per row "
                    f"({len(self)} rows).")
            positions = np.flatnonzero(array)
        elif array.size == 0:
            positions = np.zeros(0, dtype=np.intp)
        elif array.dtype.kind in "iu":
            if array.min() < -len(self) or array.max() >= len(self):
                raise InvalidDataError(
                    f"subset positions must be in [0, {len(self)}); got min={array.min()}, "
                    f"max={array.max()}.")
            positions = array
        else:
            index = {v: i for i, v in enumerate(self.frame["image_id"])}
            missing = [str(v) for v in array if str(v) not in index]
            if missing:
                raise InvalidDataError(
                    f"subset: {len(missing)} image id(s) are not in dataset {self.name!r}, "
                    f"e.g. {missing[0]!r}; pass ids from dataset.frame['image_id'].")
            positions = np.array([index[str(v)] for v in array], dtype=np.intp)
        return FairnessDataset(self.frame.iloc[positions], name=self.name, root=self.root,
                               square_crop_ratio=self.square_crop_ratio, skipped=self.skipped,
                               notes=self.notes)

    def groups(self, by: str | Sequence[str]) -> Any:
        """Group labels for ``groups=``: a Series of one column, or a DataFrame of several.

        Several columns are read by the indicators as intersectional groups.
        """
        columns = [by] if isinstance(by, str) else list(by)
        if not columns:
            raise FairnessConfigError("by must name at least one column; got an empty sequence.")
        missing = [c for c in columns if c not in self.frame.columns]
        if missing:
            raise FairnessConfigError(
                f"by={by!r}: dataset {self.name!r} has no column {missing[0]!r}; "
                f"available: {sorted(map(str, self.frame.columns))}."
                + did_you_mean(missing[0], map(str, self.frame.columns)))
        if isinstance(by, str):
            return self.frame[by].reset_index(drop=True)
        return self.frame[columns].reset_index(drop=True)

    def load_image(self, index: int) -> Image.Image:
        """Open image ``index`` as RGB, cropped to its box and square-cropped if configured.

        A missing or undecodable file raises InvalidDataError naming file, row and image id.
        """
        pil = require("PIL.Image", purpose="opening images")
        row = self.frame.iloc[index]
        path = row["path"]
        try:
            with pil.open(path) as handle:
                image: Image.Image = handle.convert("RGB")
        except Exception as exc:  # PIL raises many types on damaged files (OSError,
            # UnidentifiedImageError, SyntaxError, struct.error, DecompressionBombError, ...)
            raise InvalidDataError(
                f"dataset {self.name!r}: cannot read image {path!r} (row {index}, image_id "
                f"{row['image_id']!r}): {exc}. Replace or remove the file, or drop the row "
                "with dataset.subset(...)."
            ) from exc
        if all(c in self.frame.columns for c in BOX_COLUMNS):
            box = [row[c] for c in BOX_COLUMNS]
            if all(b == b and b is not None for b in box):
                x0, y0, x1, y1 = (int(round(float(b))) for b in box)
                image = image.crop((x0, y0, x1, y1))
        if self.square_crop_ratio is not None:
            image = square_top_left(image, self.square_crop_ratio)
        return image


def _check_text(frame: pd.DataFrame, name: str) -> None:
    """Refuse strings that are not valid Unicode, before pyarrow fails on them without a word."""
    for column in frame.columns:
        if frame[column].dtype != object:
            continue
        values = frame[column].tolist()
        try:
            "".join(v for v in values if isinstance(v, str)).encode("utf-8")
        except UnicodeEncodeError:
            row = next(i for i, v in enumerate(values) if isinstance(v, str) and not is_utf8(v))
            raise InvalidDataError(
                f"dataset {name!r}: column {column!r} row {row} holds "
                f"{values[row].encode('utf-8', 'backslashreplace').decode()!r}, which is not "
                "valid UTF-8 text (a file name in another encoding?); rename the file or fix "
                "the value.") from None



def square_top_left(image: Image.Image, ratio: float) -> Image.Image:
    """Crop to a square from the top-left when ``max(w, h) / min(w, h) >= ratio`` (MIAP)."""
    width, height = image.size
    short, long = min(width, height), max(width, height)
    if short > 0 and long / short >= ratio:
        return image.crop((0, 0, short, short))
    return image


def _stable_repr(value: Any) -> str:
    if isinstance(value, float) and value != value:
        return "nan"
    if value is None:
        return "None"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_stable_repr(v) for v in value) + "]"
    return repr(value) if not isinstance(value, str) else value


# -- helpers shared by the loaders --------------------------------------------------------------
def as_root(root: Any, dataset: str) -> Path:
    """Validate a dataset root: an existing directory."""
    if not isinstance(root, (str, os.PathLike)):
        raise FairnessConfigError(
            f"{dataset}: root must be a path (str or os.PathLike); got root={root!r} "
            f"(type={type(root).__name__}).")
    path = Path(root).expanduser()
    if not path.is_dir():
        raise InvalidDataError(
            f"{dataset}: root {str(path)!r} is not a directory; pass the folder that holds "
            "the dataset (e.g. --fairness-data NAME=PATH).")
    return path.resolve()


def find_file(root: Path, names: Sequence[str], dataset: str, *, what: str) -> Path:
    """Return the first of ``names`` (relative to ``root``) that exists, or raise naming all."""
    for name in names:
        candidate = root / name
        if candidate.is_file():
            return candidate
    raise InvalidDataError(
        f"{dataset}: no {what} found under {str(root)!r}; looked for "
        f"{', '.join(repr(n) for n in names)}. Point the root at the folder that contains it.")


def read_text(path: Path, dataset: str) -> str:
    """Read a text annotation file (UTF-8, BOM and CR tolerated); raise when it is empty."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidDataError(
            f"{dataset}: {str(path)!r} is not UTF-8 text ({exc}); is it the annotation file?"
        ) from exc
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise InsufficientDataError(
            f"{dataset}: {str(path)!r} is empty; download the annotation file again.")
    return text


def read_csv(path: Path, dataset: str, *, required: Sequence[str], sep: str = ",") -> pd.DataFrame:
    """Read a CSV as strings; check the ``required`` columns and every row's field count."""
    import pandas as pd

    text = read_text(path, dataset)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pd.errors.ParserWarning)
        try:  # index_col=False: a longer row's extra fields would become an index
            frame = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False,
                                index_col=False)
        except (pd.errors.ParserError, ValueError) as exc:
            raise InvalidDataError(
                f"{dataset}: cannot parse {str(path)!r} as CSV: {str(exc).strip()}"
            ) from exc
    if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught) or (
        frame.isna().to_numpy().any()
    ):
        raise _field_count_error(text, sep, path, dataset)
    frame.columns = [str(c).strip() for c in frame.columns]
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise InvalidDataError(
            f"{dataset}: {str(path)!r} has no column {missing[0]!r} (header: "
            f"{list(frame.columns)}); expected {list(required)}."
            + (did_you_mean(missing[0], frame.columns) or " Is this the right file?"))
    if frame.empty:
        raise InsufficientDataError(f"{dataset}: {str(path)!r} has a header but no rows.")
    return frame


def _field_count_error(text: str, sep: str, path: Path, dataset: str) -> InvalidDataError:
    """The error for a row whose number of fields differs from the header's."""
    import csv

    rows = csv.reader(io.StringIO(text), delimiter=sep)
    header = next(rows, [])
    for row in rows:
        if row and len(row) != len(header):
            return InvalidDataError(
                f"{dataset}: {str(path)!r} line {rows.line_num} has {len(row)} fields but the "
                f"header has {len(header)}; a field holds an unquoted {sep!r} or is missing. "
                "Quote or fix that row.")
    return InvalidDataError(
        f"{dataset}: {str(path)!r}: some row has a different number of fields than the header "
        f"({len(header)}); quote or fix that row.")


def bad_value(dataset: str, path: Path, line: int, column: str, value: Any,
              allowed: Iterable[Any], fix: str = "correct or remove that row") -> InvalidDataError:
    """The error for an unknown code: file, line, column, value, allowed values, fix."""
    choices = ", ".join(repr(a) for a in allowed)
    return InvalidDataError(
        f"{dataset}: {str(path)!r} line {line}: {column}={shown(value)} is not one of "
        f"{choices}; {fix}.")


def check_drop_unknown(drop_unknown: Any, allowed: Sequence[str], dataset: str) -> tuple[str, ...]:
    """Validate ``drop_unknown``: True (all of ``allowed``), False, or some (in allowed order)."""
    if drop_unknown is True:
        return tuple(allowed)
    if drop_unknown is False or drop_unknown is None:
        return ()
    names = None
    if not isinstance(drop_unknown, (str, bytes)) and isinstance(drop_unknown, Iterable):
        names = list(drop_unknown)
    if names is None or not all(isinstance(c, str) and c in allowed for c in names):
        wrong = drop_unknown if names is None else next(
            c for c in names if not (isinstance(c, str) and c in allowed))
        raise FairnessConfigError(
            f"{dataset}: drop_unknown must be True (every attribute), False, or a tuple drawn "
            f"from {tuple(allowed)}; got drop_unknown={drop_unknown!r} ({wrong!r} is not "
            f"one of them). Example: drop_unknown=({allowed[0]!r},).")
    return tuple(c for c in allowed if c in names)


def drop_unknown_rows(frame: pd.DataFrame, drop: Iterable[str], columns: Mapping[str, str],
                      skipped: dict[str, int]) -> pd.DataFrame:
    """Drop the rows whose ``columns[name]`` is ``"unknown"`` for each name in ``drop``, counted."""
    for name in drop:
        unknown = frame[columns[name]] == "unknown"
        if unknown.any():
            skipped[f"unknown {name}"] = int(unknown.sum())
            frame = frame[~unknown]
    return frame


def check_codes(frame: pd.DataFrame, column: str, allowed: Iterable[str], dataset: str,
                path: Path, fix: str = "correct or remove that row") -> pd.Series:
    """The stripped values of a CSV column, refused at the first one not in ``allowed``."""
    values = frame[column].str.strip()
    bad = ~values.isin(list(allowed))
    if bad.any():
        row = int(bad.to_numpy().nonzero()[0][0])
        raise bad_value(dataset, path, row + 2, column, values.iloc[row], allowed, fix)
    return values


def first_repeat(values: Iterable[Hashable]) -> tuple[int, int] | None:
    """The positions of the first value met again and of its repeat, or None when unique."""
    seen: dict[Hashable, int] = {}
    for i, value in enumerate(values):
        if value in seen:
            return seen[value], i
        seen[value] = i
    return None


def check_unique(ids: Sequence[str], dataset: str, path: Path, column: str,
                 *, first_line: int = 2, unit: str = "lines") -> None:
    """Raise naming the lines (or records) when an id column repeats a value."""
    repeat = first_repeat(ids)
    if repeat is not None:
        first, again = repeat
        raise InvalidDataError(
            f"{dataset}: {str(path)!r} {unit} {first + first_line} and {again + first_line}: "
            f"duplicate {column} {ids[again]!r}; each {column} must appear once. Remove the "
            "repeated row.")


def empty_value(dataset: str, path: Path, line: int, column: str, fix: str) -> InvalidDataError:
    """The error for a value that must be filled in: file, line, column, fix."""
    return InvalidDataError(f"{dataset}: {str(path)!r} line {line}: {column} is empty; {fix}")


def check_filled(values: Sequence[str], dataset: str, path: Path, column: str, fix: str,
                 *, first_line: int = 2) -> None:
    """Raise naming the first line whose (stripped) value in ``column`` is empty."""
    for i, value in enumerate(values):
        if not value:
            raise empty_value(dataset, path, i + first_line, column, fix)


def image_folder(base: Path, image_dir: str | None, dataset: str, *, holds: str,
                 defaults: Sequence[str], jpg: bool = False) -> Path | None:
    """``base / image_dir`` (a folder), else the first default folder (holding a .jpg), or None."""
    if image_dir is not None:
        folder = base / image_dir
        if not folder.is_dir():
            raise InvalidDataError(
                f"{dataset}: image_dir {str(folder)!r} is not a directory; pass the sub-folder "
                f"of root {holds}.")
        return folder
    for name in defaults:
        folder = base / name
        if folder.is_dir() and (not jpg or any(p.suffix.lower() == ".jpg"
                                               for p in folder.iterdir())):
            return folder
    return None


def require_rows(dataset_name: str, source: Any, n: int) -> None:
    """Raise when a loader produced no rows at all."""
    if n == 0:
        raise InsufficientDataError(
            f"{dataset_name}: {source} has no usable rows; check that the file is the "
            "complete annotation file and that the images are where the loader looks.")
