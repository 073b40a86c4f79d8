"""CelebA: the official space-aligned text files, or the Kaggle CSV re-packaging."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pytest_fairness.data.dataset import (
    FairnessDataset,
    as_root,
    bad_value,
    check_codes,
    check_unique,
    read_csv,
    read_text,
    require_rows,
)
from pytest_fairness.data.paths import path_in_root
from pytest_fairness.errors import FairnessConfigError, InvalidDataError, own_error

__all__ = ["load_celeba"]

__tracebackhide__ = own_error

_NAME = "celeba"
_SPLITS = {"train": "0", "valid": "1", "test": "2"}
_PARTITIONS = ("0", "1", "2")


def load_celeba(root: str | os.PathLike[str], *, split: str = "all") -> FairnessDataset:
    """Load CelebA's 40 binary attributes, identities and partitions.

    Parameters
    ----------
    root : str or Path
        The CelebA folder: the official text files (``list_attr_celeba.txt``,
        ``identity_CelebA.txt``, ``list_eval_partition.txt``) or the Kaggle CSVs, and
        ``img_align_celeba/``.
    split : {"all", "train", "valid", "test"}
        Keep one partition (needs the partition file).

    Returns
    -------
    FairnessDataset
        One 0/1 column per attribute as named in the file (torchvision's ``(x + 1) // 2``);
        ``gender`` from ``Male``, ``age_group`` (young, not_young) from ``Young``;
        ``identity`` when the identity file is present; ``partition``.
    """
    import pandas as pd

    base = as_root(root, _NAME)
    if split not in ("all", *_SPLITS):
        raise FairnessConfigError(
            f"celeba: split must be 'all', 'train', 'valid' or 'test'; got split={split!r}.")
    if (base / "celeba").is_dir() and not any(
            (base / f"list_attr_celeba.{kind}").is_file() for kind in ("txt", "csv")):
        base = base / "celeba"
    if (base / "list_attr_celeba.txt").is_file():
        attrs = _read_official_attrs(base / "list_attr_celeba.txt")
        identity = _read_pairs(base / "identity_CelebA.txt", "identity")
        partition = _read_pairs(base / "list_eval_partition.txt", "partition")
    elif (base / "list_attr_celeba.csv").is_file():
        attrs = _read_kaggle_attrs(base / "list_attr_celeba.csv")
        identity = None
        file = base / "list_eval_partition.csv"
        partition = None
        if file.is_file():
            table = read_csv(file, _NAME, required=("image_id", "partition"))
            check_unique(table["image_id"].tolist(), _NAME, file, "image_id")
            partition = (file, dict(zip(table["image_id"].str.strip(), check_codes(
                table, "partition", _PARTITIONS, _NAME, file))))
    else:
        raise InvalidDataError(
            f"celeba: no list_attr_celeba.txt (official) or list_attr_celeba.csv (Kaggle) under "
            f"{str(base)!r}; point the root at the CelebA folder.")
    images = base / "img_align_celeba"
    if (images / "img_align_celeba").is_dir():
        images = images / "img_align_celeba"
    frame = attrs
    for extra, column in ((identity, "identity"), (partition, "partition")):
        if extra is None:
            continue
        file, mapping = extra
        missing = [i for i in frame["image_id"] if i not in mapping]
        if missing:
            raise InvalidDataError(
                f"celeba: {str(file)!r} has no {column} for {len(missing)} image(s) of the "
                f"attribute file, e.g. {missing[0]!r}; use the files of one release.")
        frame[column] = [mapping[i] for i in frame["image_id"]]
    if split != "all":
        if "partition" not in frame.columns:
            raise InvalidDataError(
                f"celeba: split={split!r} needs list_eval_partition.txt (or .csv) under "
                f"{str(base)!r}; add it or use split='all'.")
        frame = frame[frame["partition"] == _SPLITS[split]]
    # Names were checked line by line when read (_image_name): they stay inside images/.
    frame["path"] = [str(path_in_root(i, images, where="celeba: image name"))
                     for i in frame["image_id"]]
    frame["gender"] = ["male" if v == 1 else "female" for v in frame["Male"]] \
        if "Male" in frame.columns else None
    frame["age_group"] = ["young" if v == 1 else "not_young" for v in frame["Young"]] \
        if "Young" in frame.columns else None
    require_rows(_NAME, repr(str(base)), len(frame))
    return FairnessDataset(pd.DataFrame(frame), name=_NAME, root=base)


def _read_official_attrs(path: Path) -> Any:
    import pandas as pd

    lines = [line for line in read_text(path, _NAME).split("\n") if line.strip()]
    try:
        declared = int(lines[0].strip())
    except ValueError:
        raise InvalidDataError(
            f"celeba: {str(path)!r} line 1 should be the image count; got {lines[0]!r}. Is this "
            "the official list_attr_celeba.txt?") from None
    if len(lines) < 2:
        raise InvalidDataError(f"celeba: {str(path)!r} has no attribute-name line (line 2).")
    names = lines[1].split()
    if "Male" not in names:
        raise InvalidDataError(
            f"celeba: {str(path)!r} line 2 does not name the attribute 'Male' (got {names[:5]}"
            "...); line 2 must list the 40 attribute names.")
    ids, rows = [], []
    for number, line in enumerate(lines[2:], start=3):
        fields = line.split()
        if len(fields) != len(names) + 1:
            raise InvalidDataError(
                f"celeba: {str(path)!r} line {number}: {len(fields)} fields, expected "
                f"{len(names) + 1} (file name + {len(names)} attributes); the file is truncated "
                "or corrupted.")
        values = []
        for column, value in zip(names, fields[1:]):
            if value not in ("1", "-1"):
                raise bad_value(_NAME, path, number, column, value, ("-1", "1"))
            values.append((int(value) + 1) // 2)
        ids.append(_image_name(fields[0], path, number))
        rows.append(values)
    if declared != len(ids):
        raise InvalidDataError(
            f"celeba: {str(path)!r} line 1 declares {declared} images but {len(ids)} rows "
            "follow; the file is truncated. Download it again.")
    check_unique(ids, _NAME, path, "image file name", first_line=3)
    frame = pd.DataFrame(rows, columns=names)
    frame.insert(0, "image_id", ids)
    return frame


def _read_kaggle_attrs(path: Path) -> Any:
    frame = read_csv(path, _NAME, required=("image_id", "Male"))
    check_unique(frame["image_id"].tolist(), _NAME, path, "image_id")
    for column in frame.columns[1:]:
        values = check_codes(frame, column, ("-1", "1"), _NAME, path)
        frame[column] = (values.astype(int) + 1) // 2
    frame["image_id"] = [_image_name(v.strip(), path, i + 2)
                         for i, v in enumerate(frame["image_id"])]
    return frame


def _image_name(value: str, path: Path, line: int) -> str:
    """An image file name of an attribute file, refused when it leaves the image folder."""
    path_in_root(value, None, where=f"celeba: {str(path)!r} line {line}: image name",
                 root_label="the image folder img_align_celeba/")
    return value


def _read_pairs(path: Path, column: str) -> tuple[Path, dict[str, str]] | None:
    if not path.is_file():
        return None
    mapping: dict[str, str] = {}
    for number, line in enumerate(read_text(path, _NAME).split("\n"), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2:
            raise InvalidDataError(
                f"celeba: {str(path)!r} line {number}: expected '<file name> <{column}>', got "
                f"{line!r}.")
        if fields[0] in mapping:
            raise InvalidDataError(
                f"celeba: {str(path)!r} line {number}: {fields[0]!r} is listed twice; each "
                "image must appear once.")
        if column == "partition" and fields[1] not in _PARTITIONS:
            raise bad_value(_NAME, path, number, "partition", fields[1], _PARTITIONS)
        mapping[fields[0]] = fields[1]
    return path, mapping
