"""FairFace: ``fairface_label_{train,val}.csv`` plus the ``train/`` and ``val/`` images."""

from __future__ import annotations

import os

from pytest_fairness.data.dataset import (
    FairnessDataset,
    as_root,
    check_codes,
    check_unique,
    find_file,
    read_csv,
    require_rows,
)
from pytest_fairness.data.paths import path_in_root
from pytest_fairness.errors import FairnessConfigError, own_error

__all__ = ["load_fairface"]

__tracebackhide__ = own_error

COLUMNS = ("file", "age", "gender", "race", "service_test")
AGES = {"0-2": "0-2", "3-9": "3-9", "10-19": "10-19", "20-29": "20-29", "30-39": "30-39",
        "40-49": "40-49", "50-59": "50-59", "60-69": "60-69", "more than 70": "70+"}
GENDERS = {"Male": "male", "Female": "female"}
RACES = {"White": "white", "Black": "black", "Latino_Hispanic": "latino_hispanic",
         "East Asian": "east_asian", "Southeast Asian": "southeast_asian", "Indian": "indian",
         "Middle Eastern": "middle_eastern"}


def load_fairface(root: str | os.PathLike[str], *, split: str = "val") -> FairnessDataset:
    """Load FairFace with apparent age bin, gender and race.

    Parameters
    ----------
    root : str or Path
        Folder with ``fairface_label_<split>.csv`` and the ``train/`` / ``val/`` images
        (either padding release).
    split : {"val", "train", "all"}
        Which label file(s) to read.

    Returns
    -------
    FairnessDataset
        ``image_id`` = ``file`` (inside root); ``age_group`` (``more than 70`` → ``70+``),
        ``gender``, ``race`` (lower-case, underscores), ``service_test`` (bool).
    """
    import pandas as pd

    name = "fairface"
    base = as_root(root, name)
    splits = {"val": ("val",), "train": ("train",), "all": ("train", "val")}
    if split not in splits:
        raise FairnessConfigError(
            f"fairface: split must be 'val', 'train' or 'all'; got split={split!r}.")
    frames = []
    for part in splits[split]:
        path = find_file(base, [f"fairface_label_{part}.csv"], name,
                         what=f"label CSV for split {part!r}")
        frame = read_csv(path, name, required=COLUMNS)
        for column, mapping in (("age", AGES), ("gender", GENDERS), ("race", RACES),
                                ("service_test", {"True": True, "False": False})):
            frame[column] = check_codes(frame, column, mapping, name, path).map(mapping)
        files = frame["file"].str.strip()
        images = [path_in_root(f, base, where=f"{name}: {str(path)!r} line {i + 2}: file")
                  for i, f in enumerate(files)]
        files = [image.relative_to(base).as_posix() for image in images]
        check_unique(files, name, path, "file")
        frames.append(pd.DataFrame({
            "image_id": files, "path": [str(image) for image in images],
            "age_group": frame["age"], "gender": frame["gender"], "race": frame["race"],
            "service_test": frame["service_test"].astype(bool)}))
    out = pd.concat(frames, ignore_index=True)
    require_rows(name, repr(str(base)), len(out))
    return FairnessDataset(out, name=name, root=base)
