"""Dollar Street: the MLCommons/Kaggle release (``images_v2*.csv``) and Meta's ``metadata.csv``."""

from __future__ import annotations

import ast
import json
import math
import os
from pathlib import Path
from typing import Any, Literal, TypedDict
from urllib.parse import unquote, urlparse

from pytest_fairness.data.dataset import (
    FairnessDataset,
    as_root,
    bad_value,
    empty_value,
    find_file,
    read_csv,
    require_rows,
)
from pytest_fairness.data.jsonfile import check_nesting
from pytest_fairness.data.paths import path_in_root, shown
from pytest_fairness.errors import FairnessConfigError, InvalidDataError, own_error

__all__ = ["income_bucket", "load_dollar_street"]

__tracebackhide__ = own_error

KAGGLE_COLUMNS = ("id", "country.id", "country.name", "region.id", "type", "imageRelPath",
                  "topics", "place", "income", "imagenet_synonyms", "imagenet_sysnet_id")
META_COLUMNS = ("country", "url", "income", "region", "label")
_REGION_IDS = {"af": "Africa", "am": "The Americas", "as": "Asia", "eu": "Europe"}
_REGIONS = {"Africa": "Africa", "Asia": "Asia", "Europe": "Europe", "The Americas": "The Americas",
            "Americas": "The Americas"}
_BUCKETS = {1: "low", 2: "medium", 3: "high"}
#: ``imagenet_sysnet_id`` holds ImageNet-1k class indices: 0 <= index < 1000.
IMAGENET1K_CLASSES = 1000
#: A list cell nests no deeper than this (a flat list has depth 1).
_MAX_CELL_DEPTH = 8
_FILES = {"all": ("images_v2.csv",), "train": ("images_v2_imagenet_train.csv",),
          "test": ("images_v2_imagenet_test.csv",), "meta": ("metadata.csv",)}
#: What the rows of one image must agree on.
_AGREED: tuple[Literal["region", "income", "household", "path"], ...] = (
    "region", "income", "household", "path")


class _Kaggle(TypedDict, total=False):
    country_id: str
    topics: list[str]


class _Image(_Kaggle):
    """One image as a row of the frame (``labels``: class indices, or topics for Meta's)."""

    image_id: str
    path: str
    country: str
    region: str
    income: float
    household: str
    labels: list[Any]


def income_bucket(income: float) -> str:
    r"""Income bucket: :math:`\mathrm{round}(\ln(\text{income}) / 3)`.

    The buckets of "Fairness Indicators for Systematic Assessments of Visual Feature
    Extractors" (Goyal et al., FAccT 2022): 1 → ``low``, 2 → ``medium``, 3 → ``high``
    (half-to-even, clamped); a missing income gives ``unknown``.

    Examples
    --------
    >>> [income_bucket(x) for x in (27.0, 90.0, 93.0, 1700.0, 1900.0, 10000.0)]
    ['low', 'low', 'medium', 'medium', 'high', 'high']
    """
    if income is None or not income == income or income <= 0:
        return "unknown"
    bucket = round(math.log(income) / 3)
    return _BUCKETS[min(max(bucket, 1), 3)]


def _parse_list(text: str, where: str) -> list[Any]:
    """A list literal of a cell: JSON, Python repr, or (topics) a plain comma-separated string."""
    text = text.strip()
    if not text:
        return []
    check_nesting(text, source=f"dollar_street: {where}", max_depth=_MAX_CELL_DEPTH)
    value: Any
    try:
        value = json.loads(text)
    except ValueError:  # not JSON (also: an integer beyond Python's digit limit)
        try:
            value = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            # images_v2.csv may store topics as a plain comma-separated string.
            value = [t.strip().lower() for t in text.split(",") if t.strip()]
    if isinstance(value, (str, int)):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise InvalidDataError(
            f"dollar_street: {where}: {shown(text)} is not a list literal; write a list such "
            "as [892] or ['stoves'].")
    return list(value)


def _strings(text: str, where: str) -> list[str]:
    """Topic names: every item a non-empty string."""
    values = _parse_list(text, where)
    for value in values:
        if not isinstance(value, str) or not value.strip():
            raise InvalidDataError(
                f"dollar_street: {where}: {shown(text)} holds {shown(value)} "
                f"(type={type(value).__name__}); list topic names as strings, e.g. ['stoves'].")
    return [v.strip() for v in values]


def _class_indices(text: str, where: str) -> list[int]:
    """ImageNet-1k class indices: whole numbers (ints, 892.0 or '892') in 0-999."""
    out = []
    for value in _parse_list(text, where):
        index = None
        if isinstance(value, int) and not isinstance(value, bool):
            index = value
        elif isinstance(value, float) and value.is_integer():
            index = int(value)
        elif isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
            index = int(value.strip()) if len(value.strip()) < 10 else IMAGENET1K_CLASSES
        if index is None or not 0 <= index < IMAGENET1K_CLASSES:
            raise InvalidDataError(
                f"dollar_street: {where}={shown(text)} holds {shown(value)}, which is not an "
                f"ImageNet-1k class index (a whole number in 0-{IMAGENET1K_CLASSES - 1}); "
                "correct or remove that row.")
        out.append(index)
    return out


def load_dollar_street(
    root: str | os.PathLike[str],
    *,
    split: str = "all",
    image_dir: str = "images",
) -> FairnessDataset:
    """Load Dollar Street with region, income bucket, household and labels.

    The MLCommons/Kaggle release (``labels``: the ImageNet-1k class indices of
    ``imagenet_sysnet_id``; household ``place``) or Meta's ``metadata.csv`` (``split="meta"``;
    ``labels``: the topics of ``label``; household the url's ``<Country> <N>`` folder). As in
    Goyal et al. 2022, an image listed once per label becomes one row with their union.

    Parameters
    ----------
    root : str or Path
        ``dataset_dollarstreet/`` (Kaggle; or its parent) or the folder with ``metadata.csv``.
    split : {"all", "train", "test", "meta"}
        Which file to read.
    image_dir : str
        For ``split="meta"``: the sub-folder with the images.

    Returns
    -------
    FairnessDataset
    """
    import pandas as pd

    name = "dollar_street"
    base = as_root(root, name)
    if split not in _FILES:
        raise FairnessConfigError(
            f"dollar_street: split must be one of {sorted(_FILES)}; got split={split!r}.")
    nested = base / "dataset_dollarstreet"
    if nested.is_dir() and not any((base / f).is_file() for f in _FILES[split]):
        base = nested  # the parent of Kaggle's unzipped folder
    path = find_file(base, _FILES[split], name, what=f"annotation CSV for split {split!r}")
    if split == "meta":
        frame = read_csv(path, name, required=META_COLUMNS)
        records = _meta_records(frame, path, base / image_dir)
    else:
        frame = read_csv(path, name, required=KAGGLE_COLUMNS)
        records = _kaggle_records(frame, path, base)
    require_rows(name, repr(str(path)), len(records))
    merged, skipped = _deduplicate(records, path)
    out = pd.DataFrame.from_records(merged)
    out["income_bucket"] = [income_bucket(x) for x in out["income"]]
    return FairnessDataset(out, name=name, root=base, skipped=skipped)


def _income(value: str, path: Path, line: int) -> float:
    try:
        income = float(value)
    except ValueError:
        raise InvalidDataError(
            f"dollar_street: {str(path)!r} line {line}: income={shown(value)} is not a number "
            "(monthly household income in USD); correct or remove that row.") from None
    if not 0 < income < math.inf:
        raise InvalidDataError(
            f"dollar_street: {str(path)!r} line {line}: income={shown(value)} must be a "
            "positive, finite number; correct or remove that row.")
    return income


def _kaggle_records(frame: Any, path: Path, base: Path) -> list[tuple[int, _Image]]:
    records = []
    for i, row in enumerate(frame.to_dict("records")):
        line = i + 2
        region = _REGION_IDS.get(row["region.id"].strip().lower())
        if region is None:
            raise bad_value("dollar_street", path, line, "region.id", row["region.id"],
                            _REGION_IDS)
        image_id = row["id"].strip()
        if not image_id:
            raise empty_value("dollar_street", path, line, "id", "every image needs its 24-hex id.")
        where = f"{str(path)!r} line {line}"
        labels = _class_indices(row["imagenet_sysnet_id"], f"{where}: imagenet_sysnet_id")
        image = path_in_root(row["imageRelPath"].strip(), base,
                             where=f"dollar_street: {where}: imageRelPath")
        topics = _strings(row["topics"], f"{where}: topics")
        records.append((line, _Image(
            image_id=image_id, path=str(image), country=row["country.name"].strip(),
            country_id=row["country.id"].strip(), region=region,
            income=_income(row["income"], path, line),
            household=row["place"].strip() or "unknown", labels=labels, topics=topics)))
    return records


def _meta_records(frame: Any, path: Path, images: Path) -> list[tuple[int, _Image]]:
    records = []
    for i, row in enumerate(frame.to_dict("records")):
        line = i + 2
        where = f"{str(path)!r} line {line}"
        region = _REGIONS.get(row["region"].strip())
        if region is None:
            raise bad_value("dollar_street", path, line, "region", row["region"],
                            sorted(set(_REGIONS.values())))
        try:
            url = unquote(urlparse(row["url"].strip()).path)
        except ValueError:  # e.g. "Invalid IPv6 URL" for "http://[..."
            url = ""
        parts = [p for p in url.split("/") if p]
        if len(parts) < 2:
            raise InvalidDataError(
                f"dollar_street: {str(path)!r} line {line}: url={shown(row['url'])} has no "
                "'media/<Country N>/image/<uuid>/<file>.jpg' path; correct or remove that row.")
        file = path_in_root(parts[-1], images, where=f"dollar_street: {str(path)!r} line "
                            f"{line}: the file name of url", root_label=f"the image folder "
                            f"{str(images)!r}")
        household = parts[parts.index("media") + 1] if "media" in parts[:-1] else "unknown"
        image_id = parts[-2] if "image" in parts else file.stem
        labels = _strings(row["label"], f"{where}: label")
        records.append((line, _Image(
            image_id=image_id, path=str(file), country=row["country"].strip(), region=region,
            income=_income(row["income"], path, line), household=household, labels=labels)))
    return records


def _deduplicate(records: list[tuple[int, _Image]],
                 path: Path) -> tuple[list[_Image], dict[str, int]]:
    merged: dict[str, tuple[int, _Image]] = {}
    for line, record in records:
        if record["image_id"] not in merged:
            merged[record["image_id"]] = (line, record)
            continue
        first_line, first = merged[record["image_id"]]
        for key in _AGREED:
            if first[key] != record[key]:
                raise InvalidDataError(
                    f"dollar_street: {str(path)!r} lines {first_line} and {line} list image "
                    f"{record['image_id']!r} with different {key} ({first[key]!r} vs "
                    f"{record[key]!r}); one image has one {key}. Correct one of the rows.")
        first["labels"] = first["labels"] + [v for v in record["labels"]
                                             if v not in first["labels"]]
        if "topics" in first and "topics" in record:
            first["topics"] = first["topics"] + [v for v in record["topics"]
                                                 if v not in first["topics"]]
    repeats = len(records) - len(merged)
    skipped = {"duplicate image merged (labels unioned)": repeats} if repeats else {}
    return [record for _, record in merged.values()], skipped
