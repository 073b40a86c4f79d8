"""UTKFace: labels encoded in file names, ``[age]_[gender]_[race]_[date&time].jpg[.chip.jpg]``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypedDict

from pytest_fairness.data.dataset import FairnessDataset, age_group, as_root, require_rows
from pytest_fairness.data.paths import is_utf8
from pytest_fairness.errors import InsufficientDataError, InvalidDataError, own_error

__all__ = ["load_utkface", "parse_utkface_name"]

__tracebackhide__ = own_error

GENDERS = {0: "male", 1: "female"}
RACES = {0: "white", 1: "black", 2: "asian", 3: "indian", 4: "others"}
_IMAGE_MARKERS = (".jpg", ".jpeg", ".png")


class UTKFaceLabels(TypedDict):
    """The labels of one UTKFace file name."""

    age: float
    gender: str
    race: str


def parse_utkface_name(filename: str) -> UTKFaceLabels | str:
    """Parse one UTKFace file name into labels, or return why it is malformed.

    ``age_gender_race_datetime`` with an image extension somewhere (``.jpg.chip.jpg``): age
    0-116, gender 0 (male) or 1 (female), race 0-4 (white, black, asian, indian, others).

    Examples
    --------
    >>> parse_utkface_name("26_1_3_20170117175041574.jpg.chip.jpg")["race"]
    'indian'
    >>> parse_utkface_name("39_1_20170116174525125.jpg.chip.jpg")
    'race missing (3 fields)'
    """
    base = os.path.basename(filename)
    if not any(marker in base.lower() for marker in _IMAGE_MARKERS):
        return "not an image name (.jpg/.png missing)"
    fields = base.split("_")
    if len(fields) < 4:
        if len(fields) == 3 and all(f.isdigit() for f in fields[:2]):
            return "race missing (3 fields)"
        return "unparseable name (fewer than 4 fields)"
    if not all(f.isascii() and f.isdigit() and len(f) <= 3 for f in fields[:3]):
        return "unparseable name (age, gender, race are not integers)"
    age, gender, race = (int(f) for f in fields[:3])
    if not 0 <= age <= 116 or gender not in GENDERS or race not in RACES:
        return "label out of range (age 0-116, gender 0-1, race 0-4)"
    return UTKFaceLabels(age=float(age), gender=GENDERS[gender], race=RACES[race])


def load_utkface(root: str | os.PathLike[str]) -> FairnessDataset:
    """Load UTKFace (the aligned ``UTKFace/`` release or the in-the-wild ``part1-3/``).

    Every file under root is parsed with :func:`parse_utkface_name`; malformed names are
    skipped, counted by reason in ``dataset.skipped`` and named in ``dataset.notes``.

    Parameters
    ----------
    root : str or Path
        The folder with the images (``UTKFace/``) or a parent of ``part1/ part2/ part3/``.

    Returns
    -------
    FairnessDataset
        ``image_id`` = path relative to root; ``age``, ``age_group``, ``gender``, ``race``.
    """
    import pandas as pd

    name = "utkface"
    base = as_root(root, name)
    records = []
    skipped: dict[str, int] = {}
    examples: dict[str, list[str]] = {}
    seen: dict[str, Path] = {}
    files = sorted(p for p in base.rglob("*") if p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(base).parts))
    if not files:
        raise InsufficientDataError(
            f"utkface: {str(base)!r} contains no files; point the root at the UTKFace/ folder "
            "(or the parent of part1/ part2/ part3/).")
    for file in files:
        if not is_utf8(file.relative_to(base).as_posix()):  # bytes of another encoding
            reason = "file name is not valid UTF-8"
            skipped[reason] = skipped.get(reason, 0) + 1
            examples.setdefault(reason, []).append(
                os.fsencode(file.relative_to(base).as_posix()).decode("utf-8", "backslashreplace"))
            continue
        parsed = parse_utkface_name(file.name)
        if isinstance(parsed, str):
            skipped[parsed] = skipped.get(parsed, 0) + 1
            examples.setdefault(parsed, []).append(file.relative_to(base).as_posix())
            continue
        if file.name in seen:
            raise InvalidDataError(
                f"utkface: the file name {file.name!r} appears twice, in "
                f"{str(seen[file.name].parent)!r} and {str(file.parent)!r}; point the root at "
                "one release (UTKFace/ or part1-3/), not both.")
        seen[file.name] = file
        records.append({
            "image_id": file.relative_to(base).as_posix(),
            "path": str(file),
            "age_group": age_group(parsed["age"]),
            **parsed,
        })
    require_rows(name, repr(str(base)), len(records))
    notes = [f"skipped {len(v)} file(s): {k}, e.g. {v[:3]}" for k, v in examples.items()]
    return FairnessDataset(pd.DataFrame.from_records(records), name=name, root=base,
                           skipped=skipped, notes=notes)
