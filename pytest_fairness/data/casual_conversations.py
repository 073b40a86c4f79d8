"""Casual Conversations v1 (Meta): ``CasualConversations[_mini].json`` plus face-crop images."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pytest_fairness.data.dataset import (
    FairnessDataset,
    age_group,
    as_root,
    find_file,
    read_text,
    require_rows,
)
from pytest_fairness.errors import FairnessConfigError, InvalidDataError

__all__ = ["load_casual_conversations", "skin_tone_group"]

_GENDERS = {"female": "female", "male": "male", "other": "other", "n/a": "unknown"}
_ANNOTATIONS = ("CasualConversations_mini.json", "CasualConversations.json")
_IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png")


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
    drop_unknown: tuple[str, ...] = (),
) -> FairnessDataset:
    r"""Load Casual Conversations v1 face crops with self-reported age and gender.

    Two annotation layouts are read:

    * Meta's release, a JSON object keyed by subject id with ``files``, ``dark_files`` and
      ``label`` (``age``, ``gender``, ``skin-type``). One row per video; its face crop is
      looked up at ``<root>/<image_dir>/<video path without extension>.jpg`` (or
      ``.jpeg``/``.png``). Videos without a crop are skipped and counted, as the seed does
      for the 29 videos where no face was found.
    * The flattened list used by Meta's fairness indicators: ``[{"img_path", "subject_id",
      "age", "gender", "skin-type"}, ...]``; ``img_path`` is absolute or relative to root.

    Groups follow seed 000: age buckets 18-30, 30-45, 45-70, 70+ (lower bound inclusive,
    ``<18``, ``unknown`` otherwise); skin tone ``lighter`` for Fitzpatrick I-III and
    ``darker`` for IV-VI; gender lower-cased, ``N/A`` → ``unknown``.

    Parameters
    ----------
    root : str or Path
        The folder with the annotation JSON and the face-crop images.
    annotations : str or Path, optional
        The JSON file, absolute or relative to root. Default: ``CasualConversations_mini.json``
        if present, else ``CasualConversations.json``.
    image_dir : str
        Sub-folder of root that mirrors the video paths with one image per video.
    drop_unknown : tuple of {"gender", "age", "skin_tone"}
        Drop rows whose attribute is unknown (counted in ``dataset.skipped``).

    Returns
    -------
    FairnessDataset
        Columns: the canonical ones plus ``fitzpatrick`` (1-6, or -1) and ``lighting``
        (``dark``/``bright``); ``identity`` is the subject id.

    Examples
    --------
    >>> ds = load_casual_conversations("fixtures/casual_conversations")  # doctest: +SKIP
    >>> ds.frame["age_group"].value_counts()  # doctest: +SKIP
    """
    name = "casual_conversations"
    base = as_root(root, name)
    _check_drop(drop_unknown, ("gender", "age", "skin_tone"), name)
    if annotations is None:
        path = find_file(base, _ANNOTATIONS, name, what="annotation JSON")
    else:
        path = Path(annotations)
        path = path if path.is_absolute() else base / path
        if not path.is_file():
            raise InvalidDataError(
                f"{name}: annotations file {str(path)!r} does not exist; pass the path of "
                "CasualConversations.json (absolute or relative to root)."
            )
    text = read_text(path, name)
    duplicates: list[str] = []

    def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                duplicates.append(key)
            seen[key] = value
        return seen

    try:
        data = json.loads(text, object_pairs_hook=_pairs)
    except json.JSONDecodeError as exc:
        raise InvalidDataError(
            f"{name}: {str(path)!r} is not valid JSON (line {exc.lineno}, column {exc.colno}: "
            f"{exc.msg}); download the file again."
        ) from exc
    if duplicates:
        raise InvalidDataError(
            f"{name}: {str(path)!r} lists subject {duplicates[0]!r} more than once; each "
            "subject id must be one key. Remove the repeated entry."
        )
    skipped: dict[str, int] = {}
    if isinstance(data, dict):
        records = _from_release(data, path, base / image_dir, skipped)
    elif isinstance(data, list):
        records = _from_flat(data, path, base)
    else:
        raise InvalidDataError(
            f"{name}: {str(path)!r} holds a JSON {type(data).__name__}; expected an object "
            "keyed by subject id (Meta's release) or a list of records (flattened)."
        )
    import pandas as pd

    frame = pd.DataFrame.from_records(records)
    require_rows(name, repr(str(path)), len(frame))
    for column in drop_unknown:
        unknown = frame[column] == "unknown"
        if unknown.any():
            skipped[f"unknown {column}"] = int(unknown.sum())
            frame = frame[~unknown]
    return FairnessDataset(frame, name=name, root=base, skipped=skipped)


def _check_drop(drop_unknown: Any, allowed: tuple[str, ...], name: str) -> None:
    if isinstance(drop_unknown, str) or not all(c in allowed for c in drop_unknown):
        raise FairnessConfigError(
            f"{name}: drop_unknown must be a tuple drawn from {allowed}; got "
            f"drop_unknown={drop_unknown!r}."
        )


def _parse_label(label: Any, where: str, path: Path) -> dict[str, Any]:
    name = "casual_conversations"
    if not isinstance(label, dict):
        raise InvalidDataError(
            f"{name}: {str(path)!r} {where}: 'label' must be an object with age, gender and "
            f"skin-type; got {label!r}."
        )
    for key in ("age", "gender", "skin-type"):
        if key not in label:
            raise InvalidDataError(
                f"{name}: {str(path)!r} {where}: label has no {key!r} key (keys: "
                f"{sorted(label)}); every label needs age, gender and skin-type."
            )
    gender_raw = str(label["gender"]).strip()
    gender = _GENDERS.get(gender_raw.lower())
    if gender is None:
        raise InvalidDataError(
            f"{name}: {str(path)!r} {where}: gender={gender_raw!r} is not one of 'Female', "
            "'Male', 'Other', 'N/A'; correct the label."
        )
    age_raw = str(label["age"]).strip()
    if age_raw.upper() == "N/A" or age_raw == "":
        age: float = float("nan")
    else:
        try:
            age = float(int(age_raw))
        except ValueError:
            raise InvalidDataError(
                f"{name}: {str(path)!r} {where}: age={age_raw!r} is neither an integer nor "
                "'N/A'; correct the label."
            ) from None
    skin_raw = str(label["skin-type"]).strip()
    if skin_raw.upper() == "N/A" or skin_raw == "":
        fitzpatrick = -1
    elif skin_raw in {"1", "2", "3", "4", "5", "6"}:
        fitzpatrick = int(skin_raw)
    else:
        raise InvalidDataError(
            f"{name}: {str(path)!r} {where}: skin-type={skin_raw!r} is not a Fitzpatrick type "
            "'1'..'6' (or 'N/A'); correct the label."
        )
    return {
        "gender": gender,
        "age": age,
        "age_group": age_group(age),
        "fitzpatrick": fitzpatrick,
        "skin_tone": skin_tone_group(fitzpatrick),
    }


def _find_image(stem: Path) -> Path | None:
    for ext in _IMAGE_EXTENSIONS:
        for candidate in (stem.with_suffix(ext), stem.with_suffix(ext.upper())):
            if candidate.is_file():
                return candidate
    return None


def _from_release(data: dict[str, Any], path: Path, image_root: Path,
                  skipped: dict[str, int]) -> list[dict[str, Any]]:
    name = "casual_conversations"
    records = []
    for key in sorted(data):
        entry = data[key]
        where = f"subject {key!r}"
        if not isinstance(entry, dict) or "files" not in entry or "label" not in entry:
            got = sorted(entry) if isinstance(entry, dict) else entry
            raise InvalidDataError(
                f"{name}: {str(path)!r} {where}: expected an object with 'files', "
                f"'dark_files' and 'label'; got {got!r}."
            )
        label = _parse_label(entry["label"], where, path)
        dark = {str(f) for f in entry.get("dark_files") or ()}
        for video in entry["files"]:
            video = str(video)
            folder = Path(video).parent.name
            if folder and folder.isdigit() and key.isdigit() and int(folder) != int(key):
                raise InvalidDataError(
                    f"{name}: {str(path)!r} {where}: file {video!r} sits in the folder of "
                    f"subject {folder!r}; the key and the folder must agree."
                )
            image = _find_image(image_root / Path(video).with_suffix(""))
            if image is None:
                skipped["no face-crop image"] = skipped.get("no face-crop image", 0) + 1
                continue
            records.append({
                "image_id": Path(video).with_suffix("").as_posix(),
                "path": str(image),
                "identity": key,
                "lighting": "dark" if video in dark else "bright",
                **label,
            })
    return records


def _from_flat(data: list[Any], path: Path, base: Path) -> list[dict[str, Any]]:
    name = "casual_conversations"
    records = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(data):
        where = f"record {i}"
        if not isinstance(entry, dict) or "img_path" not in entry:
            raise InvalidDataError(
                f"{name}: {str(path)!r} {where}: expected an object with 'img_path', "
                f"'subject_id', 'age', 'gender' and 'skin-type'; got {entry!r}."
            )
        image = Path(str(entry["img_path"]))
        image = image if image.is_absolute() else base / image
        key = str(entry["img_path"])
        if key in seen:
            raise InvalidDataError(
                f"{name}: {str(path)!r} records {seen[key]} and {i} share img_path {key!r}; "
                "each image must be listed once. Remove the repeated record."
            )
        seen[key] = i
        records.append({
            "image_id": key,
            "path": str(image),
            "identity": str(entry.get("subject_id", "")),
            "lighting": None,
            **_parse_label(entry, where, path),
        })
    return records
