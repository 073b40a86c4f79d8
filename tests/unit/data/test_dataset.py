"""FairnessDataset: fingerprint, subset, groups, crops, buckets."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from pytest_fairness.data import FairnessDataset
from pytest_fairness.data.casual_conversations import skin_tone_group
from pytest_fairness.data.dataset import age_group, square_top_left
from pytest_fairness.errors import FairnessConfigError, InvalidDataError


def toy(n: int = 6) -> FairnessDataset:
    return FairnessDataset(pd.DataFrame({
        "image_id": [f"i{k}" for k in range(n)],
        "path": [f"/data/i{k}.jpg" for k in range(n)],
        "gender": ["female", "male"] * (n // 2),
        "skin_tone": ["lighter"] * (n // 2) + ["darker"] * (n // 2),
    }), name="toy", root="/data")


@settings(max_examples=25, deadline=None)
@given(st.permutations(list(range(6))))
def test_fingerprint_ignores_row_order(order: list[int]) -> None:
    ds = toy()
    shuffled = FairnessDataset(ds.frame.iloc[order], name="toy", root="/data")
    assert shuffled.fingerprint == ds.fingerprint


def test_fingerprint_changes_with_annotations_and_files_not_with_root() -> None:
    ds = toy()
    relabelled = ds.frame.copy()
    relabelled.loc[0, "gender"] = "male"
    assert FairnessDataset(relabelled, name="toy", root="/data").fingerprint != ds.fingerprint
    renamed = ds.frame.copy()
    renamed.loc[0, "path"] = "/data/other.jpg"
    assert FairnessDataset(renamed, name="toy", root="/data").fingerprint != ds.fingerprint
    moved = ds.frame.assign(path=[p.replace("/data", "/mnt/copy") for p in ds.frame["path"]])
    assert FairnessDataset(moved, name="toy", root="/mnt/copy").fingerprint == ds.fingerprint


def test_subset_by_mask_positions_and_ids() -> None:
    ds = toy()
    by_mask = ds.subset(ds.frame["gender"] == "male")
    assert by_mask.image_ids == ["i1", "i3", "i5"]
    assert ds.subset([4, 0]).image_ids == ["i4", "i0"]
    assert ds.subset(["i2"]).image_ids == ["i2"]
    assert len(ds.subset([])) == 0
    with pytest.raises(InvalidDataError, match=r"not in dataset 'toy', e.g. 'zz'"):
        ds.subset(["zz"])
    with pytest.raises(InvalidDataError, match=r"shape \(2,\)"):
        ds.subset([True, False])
    with pytest.raises(InvalidDataError, match=r"positions must be in \[0, 6\)"):
        ds.subset([6])


def test_groups_single_and_intersectional() -> None:
    ds = toy()
    assert ds.groups(by="gender").tolist() == ["female", "male"] * 3
    both = ds.groups(by=("gender", "skin_tone"))
    assert list(both.columns) == ["gender", "skin_tone"] and len(both) == 6
    with pytest.raises(FairnessConfigError, match=r"has no column 'colour'"):
        ds.groups(by="colour")
    with pytest.raises(FairnessConfigError, match=r"at least one column"):
        ds.groups(by=())


def test_constructor_validation() -> None:
    frame = toy().frame
    with pytest.raises(InvalidDataError, match=r"image_id 'i0' appears 2 times \(rows \[0, 6\]\)"):
        FairnessDataset(pd.concat([frame, frame.iloc[:1]]), name="toy")
    with pytest.raises(InvalidDataError, match=r"no 'path' column"):
        FairnessDataset(frame.drop(columns="path"))
    with pytest.raises(FairnessConfigError, match=r"DataFrame"):
        FairnessDataset([1, 2])  # type: ignore[arg-type]
    with pytest.raises(FairnessConfigError, match=r"square_crop_ratio=0.5"):
        FairnessDataset(frame, square_crop_ratio=0.5)


def test_box_crop_then_square_top_left(tmp_path: Path) -> None:
    picture = Image.new("RGB", (50, 40), (0, 0, 0))
    picture.paste((255, 0, 0), (10, 5, 20, 35))  # a red 10 x 30 box
    picture.save(tmp_path / "a.png")
    frame = pd.DataFrame({"image_id": ["a"], "path": [str(tmp_path / "a.png")],
                          "box_x0": [10.0], "box_y0": [5.0], "box_x1": [20.0], "box_y1": [35.0]})
    crop = FairnessDataset(frame).load_image(0)
    assert crop.size == (10, 30) and crop.getpixel((5, 29)) == (255, 0, 0)
    square = FairnessDataset(frame, square_crop_ratio=1.2).load_image(0)
    assert square.size == (10, 10)
    assert square_top_left(Image.new("RGB", (11, 10)), 1.2).size == (11, 10)  # 1.1 < 1.2
    assert square_top_left(Image.new("RGB", (12, 10)), 1.2).size == (10, 10)  # 1.2 >= 1.2


def test_missing_image_is_a_clear_error() -> None:
    with pytest.raises(InvalidDataError, match=r"cannot read image '/data/i0.jpg' \(row 0"):
        toy().load_image(0)


@pytest.mark.parametrize("age, group", [(0, "<18"), (17.9, "<18"), (18, "18-30"), (29, "18-30"),
                                        (30, "30-45"), (45, "45-70"), (70, "70+"), (85, "70+"),
                                        ("N/A", "unknown"), (float("nan"), "unknown")])
def test_age_group(age: object, group: str) -> None:
    assert age_group(age) == group


@pytest.mark.parametrize("value, tone", [(1, "lighter"), ("3", "lighter"), (4, "darker"),
                                         (6, "darker"), (-1, "unknown"), (7, "unknown"),
                                         ("x", "unknown")])
def test_skin_tone_group(value: object, tone: str) -> None:
    assert skin_tone_group(value) == tone
