"""Open Images MIAP: ``open_images_extended_miap_boxes_<split>.csv`` plus the Open Images files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from pytest_fairness.data.dataset import (
    FairnessDataset,
    as_root,
    bad_value,
    check_drop_unknown,
    drop_unknown_rows,
    empty_value,
    find_file,
    image_folder,
    read_csv,
    require_rows,
)
from pytest_fairness.data.paths import path_in_root
from pytest_fairness.errors import (
    FairnessConfigError,
    InvalidDataError,
    check_int,
    own_error,
    require,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["load_miap"]

__tracebackhide__ = own_error

COLUMNS = ("ImageID", "LabelName", "Confidence", "XMin", "XMax", "YMin", "YMax", "IsOccluded",
           "IsTruncated", "IsGroupOf", "IsDepictionOf", "IsInsideOf", "GenderPresentation",
           "AgePresentation")
_GENDERS = {"Predominantly Feminine": "female", "Predominantly Masculine": "male",
            "Unknown": "unknown"}
_AGES = {"Young": "young", "Middle": "middle", "Older": "older", "Unknown": "unknown"}
_SPLITS = {"train": "train", "val": "validation", "validation": "validation", "test": "test"}


class _Box(TypedDict):
    """One box as a row of the frame, in pixels."""

    source_image_id: str
    path: str
    gender: str
    age_group: str
    gender_presentation: str
    age_presentation: str
    box_x0: float
    box_y0: float
    box_x1: float
    box_y1: float
    is_occluded: bool
    is_truncated: bool
    is_group_of: bool
    is_depiction_of: bool
    is_inside_of: bool


def load_miap(
    root: str | os.PathLike[str], *, split: str = "test", image_dir: str | None = None,
    min_box_size: int = 100, drop_unknown: bool | tuple[str, ...] = (),
    square_crop_ratio: float | None = 1.2, drop_duplicate_boxes: bool = True,
) -> FairnessDataset:
    r"""Load the person boxes of Open Images MIAP with perceived gender and age.

    Follows Goyal et al. 2022 (appendix B.2): one row per box, small boxes dropped, crops
    with :math:`\max(h, w) / \min(h, w) \ge 1.2` cut square from the top-left corner.

    Parameters
    ----------
    root : str or Path
        Folder with ``open_images_extended_miap_boxes_<split>.csv`` and the ``<ImageID>.jpg``
        images (in ``image_dir``; default the first of ``<split>/``, ``images/``, root).
    split : {"test", "val", "train"}
        Which box file to read.
    image_dir : str, optional
        Sub-folder with the images.
    min_box_size : int
        Minimum box width and height in pixels (Goyal et al. 2022: 100); 0 keeps every box.
    drop_unknown : bool or tuple of {"gender", "age"}
        Drop boxes whose presentation is ``Unknown`` (counted in ``dataset.skipped``).
    square_crop_ratio : float or None
        See :class:`FairnessDataset`; ``None`` keeps the box's aspect ratio.
    drop_duplicate_boxes : bool
        Drop rows the real files repeat verbatim (counted).

    Returns
    -------
    FairnessDataset
        ``image_id`` ``<ImageID>_<k>`` (boxes numbered in coordinate order),
        ``source_image_id``, ``gender``, ``age_group``, ``box_x0..box_y1`` in pixels, flags.
    """
    name = "miap"
    base = as_root(root, name)
    if split not in _SPLITS:
        raise FairnessConfigError(
            f"miap: split must be one of {sorted(_SPLITS)}; got split={split!r}.")
    check_int("min_box_size", min_box_size, low=0, why=" (pixels, in the miap loader)")
    drop = check_drop_unknown(drop_unknown, ("gender", "age"), name)
    file_split = "val" if split == "validation" else split
    path = find_file(base, [f"open_images_extended_miap_boxes_{file_split}.csv"], name,
                     what=f"MIAP box file for split {split!r}")
    frame = read_csv(path, name, required=COLUMNS)
    images = image_folder(base, image_dir, name, holds="that holds <ImageID>.jpg files",
                          defaults=(_SPLITS[split], "images", "."), jpg=True)
    if images is None:
        raise InvalidDataError(
            f"miap: no <ImageID>.jpg images under {str(base)!r} (looked in {_SPLITS[split]}/, "
            "images/ and the root); download them with Open Images' downloader.py or pass "
            "image_dir=.")

    skipped: dict[str, int] = {}
    if drop_duplicate_boxes:
        repeated = frame.duplicated(keep="first")
        if repeated.any():
            skipped["duplicate box row"] = int(repeated.sum())
        lines = (frame.index[~repeated] + 2).tolist()
        frame = frame[~repeated]
    else:
        lines = (frame.index + 2).tolist()

    import pandas as pd

    sizes: dict[str, tuple[int, int] | None] = {}
    records: list[_Box] = []
    for line, row in zip(lines, frame.itertuples(index=False)):
        image_id, gender, age, (x0, x1, y0, y1) = _check_row(row, path, line)
        if image_id not in sizes:
            sizes[image_id] = _image_size(image_id, images, path, line)
        size = sizes[image_id]
        if size is None:
            skipped["image file missing"] = skipped.get("image file missing", 0) + 1
            continue
        width, height = size
        box = (x0 * width, y0 * height, x1 * width, y1 * height)
        if box[2] - box[0] < min_box_size or box[3] - box[1] < min_box_size:
            key = f"box smaller than {min_box_size} px"
            skipped[key] = skipped.get(key, 0) + 1
            continue
        records.append(_Box(
            source_image_id=image_id,
            path=str(path_in_root(f"{image_id}.jpg", images, where="miap: ImageID")),
            gender=gender, age_group=age, gender_presentation=row.GenderPresentation.strip(),
            age_presentation=row.AgePresentation.strip(),
            box_x0=box[0], box_y0=box[1], box_x1=box[2], box_y1=box[3],
            is_occluded=row.IsOccluded == "1", is_truncated=row.IsTruncated == "1",
            is_group_of=row.IsGroupOf == "1", is_depiction_of=row.IsDepictionOf == "1",
            is_inside_of=row.IsInsideOf == "1"))
    out = _drop_and_number(pd.DataFrame.from_records(records), drop, skipped, path)
    return FairnessDataset(out, name=name, root=base, square_crop_ratio=square_crop_ratio,
                           skipped=skipped)


def _check_row(row: Any, path: Path, line: int,
               ) -> tuple[str, str, str, tuple[float, float, float, float]]:
    """ImageID, gender, age group and the normalised box of one row, or raise."""
    image_id = str(row.ImageID).strip()
    if not image_id:
        raise empty_value("miap", path, line, "ImageID",
                          "every box needs the 16-hex Open Images ImageID.")
    gender = _GENDERS.get(row.GenderPresentation.strip())
    if gender is None:
        raise bad_value("miap", path, line, "GenderPresentation", row.GenderPresentation,
                        _GENDERS)
    age = _AGES.get(row.AgePresentation.strip())
    if age is None:
        raise bad_value("miap", path, line, "AgePresentation", row.AgePresentation, _AGES)
    try:
        x0, x1, y0, y1 = (float(getattr(row, c)) for c in ("XMin", "XMax", "YMin", "YMax"))
    except ValueError:
        raise InvalidDataError(
            f"miap: {str(path)!r} line {line}: box coordinates "
            f"{[row.XMin, row.XMax, row.YMin, row.YMax]} are not numbers; the columns are "
            "XMin, XMax, YMin, YMax, normalised to [0, 1].") from None
    if not (0.0 <= x0 <= x1 <= 1.0 and 0.0 <= y0 <= y1 <= 1.0):
        raise InvalidDataError(
            f"miap: {str(path)!r} line {line}: box XMin={x0}, XMax={x1}, YMin={y0}, "
            f"YMax={y1} is not inside [0, 1] with min <= max; the columns are XMin, XMax, "
            "YMin, YMax (in that order), normalised.")
    return image_id, gender, age, (x0, x1, y0, y1)


def _image_size(image_id: str, images: Path, path: Path, line: int) -> tuple[int, int] | None:
    """The pixel size of ``<image_id>.jpg`` (None if the file is missing), or raise."""
    Image = require("PIL.Image", purpose="load_miap (reading image sizes)")

    file = path_in_root(f"{image_id}.jpg", images, where=f"miap: {str(path)!r} line "
                        f"{line}: ImageID + '.jpg'", root_label=f"the image folder "
                        f"{str(images)!r}")
    try:
        with Image.open(file) as handle:
            size: tuple[int, int] = handle.size
            return size
    except FileNotFoundError:
        return None
    except Exception as exc:  # PIL raises many types on damaged files (OSError,
        # UnidentifiedImageError, SyntaxError, struct.error, DecompressionBombError, ...)
        raise InvalidDataError(
            f"miap: cannot read image {str(file)!r} (ImageID {image_id!r}, {str(path)!r} "
            f"line {line}): {exc}. Download it again or delete it to skip its boxes."
        ) from exc


def _drop_and_number(out: pd.DataFrame, drop: tuple[str, ...], skipped: dict[str, int],
                     path: Path) -> pd.DataFrame:
    """Drop unknown gender/age as asked (counted), then number the boxes of each image."""
    require_rows("miap", repr(str(path)), len(out))
    out = drop_unknown_rows(out, drop, {"gender": "gender", "age": "age_group"}, skipped)
    require_rows("miap", repr(str(path)), len(out))
    # Rows are not sorted in the real files: number boxes per image in coordinate order so
    # ids do not depend on row order.
    out = out.sort_values(["source_image_id", "box_x0", "box_y0", "box_x1", "box_y1",
                           "gender", "age_group"], kind="stable").reset_index(drop=True)
    rank = out.groupby("source_image_id").cumcount()
    out.insert(0, "image_id", out["source_image_id"] + "_" + rank.astype(str))
    return out
