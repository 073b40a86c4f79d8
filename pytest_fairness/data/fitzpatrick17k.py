"""Fitzpatrick17k: ``fitzpatrick17k.csv`` (both schema versions) plus ``<md5hash>.jpg`` images."""

from __future__ import annotations

import os

from pytest_fairness.data.casual_conversations import skin_tone_group
from pytest_fairness.data.dataset import (
    FairnessDataset,
    as_root,
    check_codes,
    check_filled,
    check_unique,
    find_file,
    image_folder,
    read_csv,
    require_rows,
)
from pytest_fairness.data.paths import path_in_root
from pytest_fairness.errors import InvalidDataError, own_error

__all__ = ["load_fitzpatrick17k"]

__tracebackhide__ = own_error

_SCALES = ("-1", "1", "2", "3", "4", "5", "6")


def load_fitzpatrick17k(
    root: str | os.PathLike[str],
    *,
    csv: str | os.PathLike[str] = "fitzpatrick17k.csv",
    image_dir: str | None = None,
) -> FairnessDataset:
    """Load Fitzpatrick17k skin-condition images with Fitzpatrick skin types.

    Reads the current CSV (``fitzpatrick_scale``) and the 2021 one (``fitzpatrick``); ``-1``
    is unknown; :func:`~pytest_fairness.data.skin_tone_group` as in Goyal et al. 2022.

    Parameters
    ----------
    root : str or Path
        Folder with the CSV and the images.
    csv : str or Path
        The CSV, absolute or relative to root.
    image_dir : str, optional
        Sub-folder with ``<md5hash>.jpg``; default the first of ``finalfitz17k/``,
        ``images/`` and root that exists.

    Returns
    -------
    FairnessDataset
        ``image_id`` = md5hash; ``fitzpatrick``, ``skin_tone``, ``fitzpatrick_centaur``,
        ``condition`` (``label``), the partition labels, ``qc``; ``labels`` = [condition].
    """
    import pandas as pd

    name = "fitzpatrick17k"
    base = as_root(root, name)
    path = base / csv  # an absolute path replaces base
    path = find_file(path.parent, [path.name], name, what="annotation CSV")
    frame = read_csv(path, name, required=("md5hash", "label"))
    scale = next((c for c in ("fitzpatrick_scale", "fitzpatrick") if c in frame.columns), None)
    if scale is None:
        raise InvalidDataError(
            f"fitzpatrick17k: {str(path)!r} has neither 'fitzpatrick_scale' (current CSV) nor "
            f"'fitzpatrick' (2021 CSV); header: {list(frame.columns)}.")
    ids = frame["md5hash"].str.strip().tolist()
    check_filled(ids, name, path, "md5hash",
                 "every image needs its md5hash (the image file name).")
    check_unique(ids, name, path, "md5hash")
    conditions = frame["label"].str.strip().tolist()
    check_filled(conditions, name, path, "label (the condition)",
                 "every image needs its condition. Fill it in or remove that row.")
    columns = [scale] + [c for c in ("fitzpatrick_centaur",) if c in frame.columns]
    for column in columns:
        check_codes(frame, column, _SCALES, name, path, "use 1-6, or -1 for unknown")
    images = image_folder(base, image_dir, name, holds="with the <md5hash>.jpg files",
                          defaults=("finalfitz17k", "images")) or base
    files = [path_in_root(f"{v}.jpg", images,
                          where=f"fitzpatrick17k: {str(path)!r} line {i + 2}: md5hash + '.jpg'")
             for i, v in enumerate(ids)]
    fitz = frame[scale].str.strip().astype(int)
    out = pd.DataFrame({
        "image_id": ids,
        "path": [str(f) for f in files],
        "fitzpatrick": fitz,
        "skin_tone": [skin_tone_group(v) for v in fitz],
        "condition": conditions,
        "labels": [[v] for v in conditions],
    })
    if "fitzpatrick_centaur" in frame.columns:
        out["fitzpatrick_centaur"] = frame["fitzpatrick_centaur"].str.strip().astype(int)
    for column in ("nine_partition_label", "three_partition_label", "qc", "url"):
        if column in frame.columns:
            out[column] = frame[column].str.strip()
    require_rows(name, repr(str(path)), len(out))
    return FairnessDataset(out, name=name, root=base)
