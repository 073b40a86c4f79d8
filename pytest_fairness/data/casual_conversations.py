"""Casual Conversations v1 (Meta): ``CasualConversations[_mini].json`` plus face-crop images."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, TypedDict

from pytest_fairness.data.dataset import (
    FairnessDataset,
    age_group,
    as_root,
    check_drop_unknown,
    check_unique,
    drop_unknown_rows,
    find_file,
    require_rows,
)
from pytest_fairness.data.jsonfile import read_json
from pytest_fairness.data.paths import path_in_root, shown
from pytest_fairness.errors import InvalidDataError, own_error

__all__ = ["load_casual_conversations", "skin_tone_group"]

__tracebackhide__ = own_error

_NAME = "casual_conversations"

_GENDERS = {"female": "female", "male": "male", "other": "other", "n/a": "unknown"}
_ANNOTATIONS = ("CasualConversations_mini.json", "CasualConversations.json")
_IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png")
#: Ages (years) a label may give; anything else is a typo or damage.
MAX_AGE = 130
#: drop_unknown name -> the column whose "unknown" it drops.
_DROP_COLUMNS = {"gender": "gender", "age": "age_group", "skin_tone": "skin_tone"}
_DIGITS = re.compile(r"[0-9]+")


def skin_tone_group(fitzpatrick: Any) -> str:
    """Fitzpatrick type 1-3 → ``"lighter"``, 4-6 → ``"darker"``, anything else ``"unknown"``.

    Examples
    --------
    >>> [skin_tone_group(v) for v in (1, 3, 4, 6, -1, None)]
    ['lighter', 'lighter', 'darker', 'darker', 'unknown', 'unknown']
    """
    try:
        value = int(fitzpatrick)
    except (TypeError, ValueError):
        return "unknown"
    if 1 <= value <= 3:
        return "lighter"
    if 4 <= value <= 6:
        return "darker"
    return "unknown"


def load_casual_conversations(
    root: str | os.PathLike[str],
    *,
    annotations: str | os.PathLike[str] | None = None,
    image_dir: str = "images",
    drop_unknown: bool | tuple[str, ...] = (),
    allow_absolute: bool = False,
) -> FairnessDataset:
    r"""Load Casual Conversations v1 face crops with self-reported age and gender.

    Reads Meta's release (subject id → ``files``, ``dark_files``, ``label``; one row per video,
    its face crop at ``<root>/<image_dir>/<video path>.jpg`` (or ``.jpeg``, ``.png``), videos
    without one counted in ``skipped``) or the flat list of Meta's fairness indicators
    (``[{"img_path", "subject_id", "age", "gender", "skin-type"}, ...]``). Groups follow Goyal
    et al. 2022: :func:`~pytest_fairness.data.age_group`, :func:`skin_tone_group`.

    Parameters
    ----------
    root : str or Path
        The folder with the annotation JSON and the face-crop images.
    annotations : str or Path, optional
        The JSON file, absolute or relative to root; default ``CasualConversations_mini.json``
        if present, else ``CasualConversations.json``.
    image_dir : str
        Sub-folder of root that mirrors the video paths with one image per video.
    drop_unknown : bool or tuple of {"gender", "age", "skin_tone"}
        Drop rows whose attribute (``"age"``: ``age_group``) is unknown, counted; True: all.
    allow_absolute : bool, default False
        Flat layout only: accept an absolute ``img_path`` outside root.

    Returns
    -------
    FairnessDataset
        The canonical columns plus ``fitzpatrick`` (1-6, or -1) and ``lighting``
        (``dark``/``bright``); ``identity`` is the subject id.
    """
    base = as_root(root, _NAME)
    drop = check_drop_unknown(drop_unknown, tuple(_DROP_COLUMNS), _NAME)
    if annotations is None:
        path = find_file(base, _ANNOTATIONS, _NAME, what="annotation JSON")
    else:
        path = base / annotations  # an absolute path replaces base
        if not path.is_file():
            raise InvalidDataError(
                f"{_NAME}: annotations file {str(path)!r} does not exist; pass the path of "
                "CasualConversations.json (absolute or relative to root).")
    duplicates: list[str] = []

    def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        first = {key: i for i, (key, _) in reversed(list(enumerate(pairs)))}
        duplicates.extend(key for i, (key, _) in enumerate(pairs) if first[key] < i)
        return dict(pairs)

    data = read_json(path, what=_NAME, object_pairs_hook=_pairs)
    if duplicates:
        key = duplicates[0]
        what = (f"lists subject {key!r} more than once; each subject id must be one key"
                if isinstance(data, dict) and key in data else
                f"repeats the key {key!r} in one object; each key must appear once")
        raise InvalidDataError(f"{_NAME}: {str(path)!r} {what}. Remove the repeated entry.")
    skipped: dict[str, int] = {}
    if isinstance(data, dict):
        records = _from_release(data, path, base / image_dir, skipped)
    elif isinstance(data, list):
        records = _from_flat(data, path, base, allow_absolute)
    else:
        raise InvalidDataError(
            f"{_NAME}: {str(path)!r} holds a JSON {type(data).__name__}; expected an object "
            "keyed by subject id (Meta's release) or a list of records (flattened).")
    import pandas as pd

    frame = pd.DataFrame.from_records(records)
    require_rows(_NAME, repr(str(path)), len(frame))
    frame = drop_unknown_rows(frame, drop, _DROP_COLUMNS, skipped)
    return FairnessDataset(frame, name=_NAME, root=base, skipped=skipped)


class _Label(TypedDict):
    gender: str
    age: float
    age_group: str
    fitzpatrick: int
    skin_tone: str


class _Record(_Label):
    image_id: str
    path: str
    identity: str
    lighting: str | None


def _parse_label(label: Any, at: str) -> _Label:
    """The groups of one label; ``at`` names the file and the subject or record."""
    if not isinstance(label, dict):
        raise InvalidDataError(
            f"{at}: 'label' must be an object with age, gender and skin-type; got {label!r}.")
    for key in ("age", "gender", "skin-type"):
        if key not in label:
            raise InvalidDataError(
                f"{at}: label has no {key!r} key (keys: {sorted(label)}); every label needs "
                "age, gender and skin-type.")
    gender_raw = label["gender"]
    gender = _GENDERS.get(gender_raw.strip().lower()) if isinstance(gender_raw, str) else None
    if gender is None:
        raise InvalidDataError(
            f"{at}: gender={shown(gender_raw)} is not one of 'Female', 'Male', 'Other', 'N/A'; "
            "correct the label.")
    age = _parse_age(label["age"], at)
    skin_raw = label["skin-type"]
    skin = str(skin_raw).strip() if isinstance(skin_raw, (str, int)) and not isinstance(
        skin_raw, bool) else None
    if skin is not None and (skin.upper() == "N/A" or skin == ""):
        fitzpatrick = -1
    elif skin in {"1", "2", "3", "4", "5", "6"}:
        fitzpatrick = int(skin)
    else:
        raise InvalidDataError(
            f"{at}: skin-type={shown(skin_raw)} is not a Fitzpatrick type '1'..'6' (or 'N/A'); "
            "correct the label.")
    return _Label(gender=gender, age=age, age_group=age_group(age), fitzpatrick=fitzpatrick,
                  skin_tone=skin_tone_group(fitzpatrick))


def _parse_age(raw: Any, at: str) -> float:
    """Age in years from a label: an integer string (or number) in 0-130, or N/A → NaN."""
    if isinstance(raw, str) and raw.strip().upper() in ("N/A", ""):
        return float("nan")
    text = raw.strip() if isinstance(raw, str) else None
    if isinstance(raw, int) and not isinstance(raw, bool):
        text = str(raw) if abs(raw) < 10**6 else "1" * 7
    if text is None or not _DIGITS.fullmatch(text.lstrip("+-")):
        raise InvalidDataError(
            f"{at}: age={shown(raw)} is neither an integer (years) nor 'N/A'; correct the label.")
    digits = text.lstrip("+-").lstrip("0") or "0"
    if text.startswith("-") and digits != "0" or len(digits) > 3 or int(digits) > MAX_AGE:
        raise InvalidDataError(
            f"{at}: age={shown(raw)} is outside 0-{MAX_AGE} years; correct the label (or write "
            "'N/A' when it is not known).")
    return float(int(digits))


def _string_list(value: Any, key: str, at: str) -> list[str]:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    bad = value if not isinstance(value, list) else next(v for v in value if not isinstance(v, str))
    inside = "" if bad is value else " in it"
    raise InvalidDataError(
        f"{at}: {key!r} must be a list of video paths (strings); got {shown(bad)} "
        f"(type={type(bad).__name__}){inside}. Correct the entry.")


def _find_image(stem: Path) -> Path | None:
    for ext in _IMAGE_EXTENSIONS:
        for candidate in (stem.with_suffix(ext), stem.with_suffix(ext.upper())):
            try:
                if candidate.is_file():
                    return candidate
            except OSError:  # a name the file system cannot hold: no such image
                continue
    return None


def _from_release(data: dict[str, Any], path: Path, image_root: Path,
                  skipped: dict[str, int]) -> list[_Record]:
    records = []
    for key in sorted(data):
        entry = data[key]
        at = f"{_NAME}: {str(path)!r} subject {key!r}"
        if not isinstance(entry, dict) or "files" not in entry or "label" not in entry:
            got = sorted(entry) if isinstance(entry, dict) else entry
            raise InvalidDataError(
                f"{at}: expected an object with 'files', 'dark_files' and 'label'; got {got!r}.")
        label = _parse_label(entry["label"], at)
        dark_raw = entry.get("dark_files")
        dark = set(() if dark_raw is None else _string_list(dark_raw, "dark_files", at))
        for j, video in enumerate(_string_list(entry["files"], "files", at)):
            relative = path_in_root(video, None, where=f"{at}: files[{j}]")
            folder = relative.parent.name
            if (folder and _DIGITS.fullmatch(folder) and _DIGITS.fullmatch(key)
                    and folder.lstrip("0") != key.lstrip("0")):
                raise InvalidDataError(
                    f"{at}: file {video!r} sits in the folder of subject {folder!r}; the key "
                    "and the folder must agree.")
            stem = relative.with_suffix("")
            image = _find_image(image_root / stem)
            if image is None:
                skipped["no face-crop image"] = skipped.get("no face-crop image", 0) + 1
                continue
            records.append(_Record(image_id=stem.as_posix(), path=str(image), identity=key,
                                   lighting="dark" if video in dark else "bright", **label))
    return records


def _from_flat(data: list[Any], path: Path, base: Path, allow_absolute: bool) -> list[_Record]:
    records = []
    for i, entry in enumerate(data):
        at = f"{_NAME}: {str(path)!r} record {i}"
        if not isinstance(entry, dict) or "img_path" not in entry:
            raise InvalidDataError(
                f"{at}: expected an object with 'img_path', 'subject_id', 'age', 'gender' and "
                f"'skin-type'; got {entry!r}.")
        image = path_in_root(entry["img_path"], base, where=f"{at}: img_path",
                             absolute="any" if allow_absolute else "inside")
        subject = entry.get("subject_id", "")
        if isinstance(subject, bool) or not isinstance(subject, (str, int)):
            raise InvalidDataError(
                f"{at}: subject_id={shown(subject)} must be a string (or an integer); correct "
                "the record.")
        records.append(_Record(image_id=entry["img_path"], path=str(image),
                               identity=str(subject), lighting=None, **_parse_label(entry, at)))
    check_unique([r["image_id"] for r in records], _NAME, path, "img_path", first_line=0,
                 unit="records")
    return records
