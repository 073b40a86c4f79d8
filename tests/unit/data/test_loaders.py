"""Each loader on its fixtures/ replica, and on broken copies of it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from pytest_fairness.data import (
    CANONICAL_COLUMNS,
    LOADERS,
    load_casual_conversations,
    load_celeba,
    load_dollar_street,
    load_fairface,
    load_fitzpatrick17k,
    load_manifest,
    load_miap,
    load_utkface,
)
from pytest_fairness.errors import FairnessConfigError, InsufficientDataError, InvalidDataError

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
ROOTS = {name: FIXTURES / name for name in LOADERS}
ROOTS["manifest"] = FIXTURES / "manifest" / "manifest.csv"
ROOTS["celeba_kaggle"] = FIXTURES / "celeba_kaggle"


@pytest.fixture
def copy(tmp_path: Path):
    """Copy a replica to tmp_path so a test can break it."""

    def make(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(FIXTURES / name, target)
        return target

    return make


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, count))


# -- every loader on its replica --------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(LOADERS))
def test_replica_has_canonical_columns_unique_ids_and_existing_images(name: str) -> None:
    ds = LOADERS[name](ROOTS[name])
    assert set(CANONICAL_COLUMNS) <= set(ds.frame.columns)
    assert ds.frame["image_id"].is_unique
    assert all(Path(p).is_file() for p in ds.frame["path"])
    assert ds.load_image(0).mode == "RGB"
    assert len(ds.fingerprint) == 64


def test_casual_conversations_replica() -> None:
    ds = load_casual_conversations(ROOTS["casual_conversations"])
    assert len(ds) == 27  # 14 subjects x 2 videos, one without a face crop
    assert ds.skipped == {"no face-crop image": 1}
    f = ds.frame.set_index("image_id")
    row = f.loc["CasualConversationsA/0001/0001_01"]
    assert (row["gender"], row["age"], row["age_group"], row["fitzpatrick"], row["skin_tone"],
            row["lighting"], row["identity"]) == ("female", 19.0, "18-30", 1, "lighter", "dark",
                                                  "0001")
    assert f.loc["CasualConversationsA/0001/0001_00", "lighting"] == "bright"
    # 30 and 45 and 70 are lower bounds; N/A gives unknown
    ages = dict(zip(f["age"].fillna(-1), f["age_group"]))
    assert ages[31.0] == "30-45" and ages[45.0] == "45-70" and ages[70.0] == "70+"
    assert ages[-1] == "unknown"
    assert set(f["gender"]) == {"female", "male", "other", "unknown"}
    # darker: subjects 4-6, 10-12 (2 videos each) and 14 (one crop); lighter: 7 x 2
    assert (f["skin_tone"] == "darker").sum() == 13 and (f["skin_tone"] == "lighter").sum() == 14


def test_casual_conversations_drop_unknown() -> None:
    ds = load_casual_conversations(ROOTS["casual_conversations"], drop_unknown=("gender", "age"))
    assert ds.skipped == {"no face-crop image": 1, "unknown gender": 2}
    assert "unknown" not in set(ds.frame["gender"]) | set(ds.frame["age_group"])


def test_casual_conversations_flat_format(tmp_path: Path) -> None:
    image = next((ROOTS["casual_conversations"] / "images").rglob("*.jpg"))
    records = [{"age": "20", "gender": "Female", "img_path": str(image), "skin-type": "5",
                "subject_id": "1"},
               {"age": "71", "gender": "Male", "img_path": str(image) + "x", "skin-type": "2",
                "subject_id": "2"}]
    (tmp_path / "flat.json").write_text(json.dumps(records))
    # The images lie outside tmp_path: absolute paths there need the explicit option.
    with pytest.raises(InvalidDataError, match=r"record 0: img_path=.*outside the root"):
        load_casual_conversations(tmp_path, annotations="flat.json")
    ds = load_casual_conversations(tmp_path, annotations="flat.json", allow_absolute=True)
    assert ds.frame[["age_group", "skin_tone", "gender"]].values.tolist() == [
        ["18-30", "darker", "female"], ["70+", "lighter", "male"]]


def test_miap_replica() -> None:
    ds = load_miap(ROOTS["miap"])
    assert len(ds) == 24
    assert ds.skipped == {"duplicate box row": 2, "image file missing": 1,
                          "box smaller than 100 px": 3}
    f = ds.frame
    assert set(f["gender"]) == {"female", "male", "unknown"}
    assert set(f["age_group"]) == {"young", "middle", "older", "unknown"}
    assert ((f["box_x1"] - f["box_x0"]) >= 100).all() and ((f["box_y1"] - f["box_y0"]) >= 100).all()
    assert ds.square_crop_ratio == 1.2
    # a tall box 128 x 240 px is cut to a 128-px square from its top-left
    tall = f.index[(f["box_x1"] - f["box_x0"]).round() == 128][0]
    assert ds.load_image(int(tall)).size == (128, 128)
    # ids are numbered per image in coordinate order, independent of the file's row order
    assert all(i.startswith(s + "_") for i, s in zip(f["image_id"], f["source_image_id"]))


def test_miap_protocol_drops_unknown_and_size_is_configurable() -> None:
    ds = load_miap(ROOTS["miap"], drop_unknown=("gender", "age"), min_box_size=0)
    assert "unknown" not in set(ds.frame["gender"]) | set(ds.frame["age_group"])
    assert "box smaller than 0 px" not in ds.skipped
    assert ds.skipped["unknown gender"] > 0
    assert len(load_miap(ROOTS["miap"], min_box_size=0)) == 27


def test_miap_row_order_does_not_change_ids(copy) -> None:
    root = copy("miap")
    csv = root / "open_images_extended_miap_boxes_test.csv"
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join([lines[0], *reversed(lines[1:])]))  # no trailing newline either
    again = load_miap(root)
    original = load_miap(ROOTS["miap"])
    cols = ["image_id", "gender", "age_group", "box_x0", "box_y1"]
    pd.testing.assert_frame_equal(again.frame[cols], original.frame[cols])


def test_utkface_replica() -> None:
    ds = load_utkface(ROOTS["utkface"])
    assert len(ds) == 24
    assert ds.skipped == {"race missing (3 fields)": 1,
                          "not an image name (.jpg/.png missing)": 1}
    assert any("39_1_20170116174525125.jpg.chip.jpg" in n for n in ds.notes)
    assert set(ds.frame["gender"]) == {"male", "female"}
    assert set(ds.frame["race"]) == {"white", "black", "asian", "indian", "others"}
    assert set(ds.frame["age_group"]) == {"<18", "18-30", "30-45", "45-70", "70+"}


@pytest.mark.parametrize("name, expected", [
    ("26_1_3_20170117175041574.jpg.chip.jpg", {"age": 26.0, "gender": "female",
                                                "race": "indian"}),
    ("24_0_1_20170116220224657 .jpg.chip.jpg", {"age": 24.0, "gender": "male", "race": "black"}),
    ("61_1_20170109150557335.jpg.chip.jpg", "race missing (3 fields)"),
    ("55_0_0_20170116232725357JPG", "not an image name (.jpg/.png missing)"),
    ("117_0_0_20170116232725357.jpg", "label out of range (age 0-116, gender 0-1, race 0-4)"),
    ("20_2_0_20170116232725357.jpg", "label out of range (age 0-116, gender 0-1, race 0-4)"),
    ("x_0_0_20170116232725357.jpg", "unparseable name (age, gender, race are not integers)"),
])
def test_utkface_name_parsing(name: str, expected: object) -> None:
    from pytest_fairness.data.utkface import parse_utkface_name

    assert parse_utkface_name(name) == expected


def test_dollar_street_kaggle_replica() -> None:
    ds = load_dollar_street(ROOTS["dollar_street"])
    assert len(ds) == 24
    assert ds.skipped == {"duplicate image merged (labels unioned)": 1}
    f = ds.frame.set_index("image_id")
    assert f.loc["5d4bf0aacf0b3a0f3f000003", "labels"] == [851, 861]
    assert f.loc["5d4bf0aacf0b3a0f3f000001", "topics"] == ["stove/hob"]
    assert set(f["region"]) == {"Africa", "Asia", "Europe", "The Americas"}
    assert f["household"].nunique() == 8
    # round(ln(income) / 3): 35.5 → 1, 150.25 → 2, 1900.5 → 3, 12.75 → 1
    buckets = dict(zip(f["income"], f["income_bucket"]))
    assert (buckets[35.5], buckets[150.25], buckets[1900.5], buckets[12.75]) == (
        "low", "medium", "high", "low")


def test_dollar_street_meta_replica() -> None:
    ds = load_dollar_street(ROOTS["dollar_street"], split="meta")
    assert len(ds) == 12
    f = ds.frame
    assert f.loc[0, "household"] == "Kenya 1" and f.loc[1, "labels"] == ["beds", "bedrooms"]
    assert set(f["income_bucket"]) == {"low", "medium", "high"}


def test_income_bucket_edges_and_clamps() -> None:
    import math

    from pytest_fairness.data.dollar_street import income_bucket

    assert [income_bucket(math.exp(x)) for x in (4.4, 4.6, 7.4, 7.6)] == [
        "low", "medium", "medium", "high"]
    assert income_bucket(1.0) == "low" and income_bucket(1e9) == "high"
    assert income_bucket(float("nan")) == "unknown"


def test_celeba_official_and_kaggle_agree() -> None:
    official = load_celeba(ROOTS["celeba"])
    kaggle = load_celeba(ROOTS["celeba_kaggle"])
    assert len(official) == len(kaggle) == 20
    attrs = ["image_id", "Male", "Young", "Smiling", "5_o_Clock_Shadow", "gender", "age_group",
             "partition"]
    pd.testing.assert_frame_equal(official.frame[attrs], kaggle.frame[attrs])
    assert set(official.frame["Male"]) == {0, 1}
    assert official.frame["identity"].tolist()[:4] == ["1", "1", "1", "2"]
    assert kaggle.frame["identity"].isna().all()
    assert (official.frame["gender"] == "male").sum() == 10


@pytest.mark.parametrize("split, n", [("train", 12), ("valid", 4), ("test", 4), ("all", 20)])
def test_celeba_splits(split: str, n: int) -> None:
    assert len(load_celeba(ROOTS["celeba"], split=split)) == n


def test_fairface_replica() -> None:
    val = load_fairface(ROOTS["fairface"])
    assert len(val) == 21 and len(load_fairface(ROOTS["fairface"], split="all")) == 35
    f = val.frame
    assert set(f["race"]) == {"white", "black", "latino_hispanic", "east_asian",
                              "southeast_asian", "indian", "middle_eastern"}
    assert "70+" in set(f["age_group"]) and "more than 70" not in set(f["age_group"])
    assert f["service_test"].dtype == bool and (~f["service_test"]).sum() == 7  # rows 0, 3, ..., 18


def test_fitzpatrick17k_both_schemas() -> None:
    new = load_fitzpatrick17k(ROOTS["fitzpatrick17k"])
    old = load_fitzpatrick17k(ROOTS["fitzpatrick17k"], csv="fitzpatrick17k_2021.csv")
    assert len(new) == len(old) == 20
    assert new.frame["fitzpatrick"].tolist() == old.frame["fitzpatrick"].tolist()
    counts = new.frame["skin_tone"].value_counts().to_dict()
    assert counts == {"lighter": 11, "darker": 7, "unknown": 2}
    assert "fitzpatrick_centaur" in new.frame and "fitzpatrick_centaur" not in old.frame
    assert new.frame["labels"].iloc[0] == [new.frame["condition"].iloc[0]]


def test_manifest_replica_and_rename(tmp_path: Path) -> None:
    ds = load_manifest(ROOTS["manifest"])
    assert len(ds) == 16 and ds.groups(by="gender").value_counts().to_dict() == {
        "female": 8, "male": 8}
    frame = pd.read_csv(ROOTS["manifest"]).rename(columns={"gender": "sex", "path": "file"})
    frame["file"] = [str(ROOTS["manifest"].parent / p) for p in frame["file"]]
    frame.drop(columns="image_id").to_parquet(tmp_path / "m.parquet")
    with pytest.raises(InvalidDataError, match=r"row 2: file=.*absolute path outside the root"):
        load_manifest(tmp_path / "m.parquet", path_column="file", rename={"sex": "gender"})
    again = load_manifest(tmp_path / "m.parquet", path_column="file", rename={"sex": "gender"},
                          allow_absolute=True)
    assert again.frame["gender"].tolist() == ds.frame["gender"].tolist()
    assert again.frame["image_id"].tolist() == again.frame["path"].tolist()


# -- malformed input: every loader, every kind of damage ------------------------------------
def test_cc_errors(copy) -> None:
    root = copy("casual_conversations")
    js = root / "CasualConversations_mini.json"
    original = js.read_text()
    js.write_text(original.replace('"gender": "Female"', '"gender": "F"', 1))
    with pytest.raises(InvalidDataError, match=r"subject '0001'.*gender='F'"):
        load_casual_conversations(root)
    js.write_text(original.replace('"skin-type": "1"', '"skin-type": "9"', 1))
    with pytest.raises(InvalidDataError, match=r"skin-type='9'.*'1'\.\.'6'"):
        load_casual_conversations(root)
    js.write_text(original.replace('"age": "19"', '"age": "nineteen"', 1))
    with pytest.raises(InvalidDataError, match=r"age='nineteen'"):
        load_casual_conversations(root)
    js.write_text(original.replace('"skin-type": "1"', '"skintype": "1"', 1))
    with pytest.raises(InvalidDataError, match=r"no 'skin-type' key"):
        load_casual_conversations(root)
    js.write_text('{"0001": {"files": [], "label": {}}, "0001": {"files": [], "label": {}}}')
    with pytest.raises(InvalidDataError, match=r"subject '0001' more than once"):
        load_casual_conversations(root)
    js.write_text(original[:-20])
    with pytest.raises(InvalidDataError, match=r"not valid JSON \(line"):
        load_casual_conversations(root)
    js.write_text(original.replace("CasualConversationsA/0001/0001_00", "X/0002/0001_00", 1))
    with pytest.raises(InvalidDataError, match=r"folder of subject '0002'"):
        load_casual_conversations(root)
    js.write_text("  \n")
    with pytest.raises(InsufficientDataError, match=r"is empty"):
        load_casual_conversations(root)
    js.write_text("{}")
    with pytest.raises(InsufficientDataError, match=r"no usable rows"):
        load_casual_conversations(root)
    js.unlink()
    with pytest.raises(InvalidDataError, match=r"CasualConversations_mini.json"):
        load_casual_conversations(root)
    with pytest.raises(InvalidDataError, match=r"does not exist"):
        load_casual_conversations(root, annotations="nope.json")
    with pytest.raises(FairnessConfigError, match=r"drop_unknown="):
        load_casual_conversations(ROOTS["casual_conversations"], drop_unknown="gender")


def test_miap_errors(copy) -> None:
    root = copy("miap")
    csv = root / "open_images_extended_miap_boxes_test.csv"
    original = csv.read_text()
    csv.write_text(original.replace("AgePresentation", "Age", 1))
    with pytest.raises(InvalidDataError, match=r"no column 'AgePresentation'"):
        load_miap(root)
    csv.write_text(original.replace("Predominantly Feminine", "Feminine", 1))
    with pytest.raises(InvalidDataError, match=r"line \d+: GenderPresentation='Feminine'"):
        load_miap(root)
    csv.write_text(original.replace(",Middle", ",Adult", 1))
    with pytest.raises(InvalidDataError, match=r"AgePresentation='Adult'"):
        load_miap(root)
    csv.write_text(original.replace(",/m/01g317,1,0.", ",/m/01g317,1,1.5", 1))
    with pytest.raises(InvalidDataError, match=r"XMin=1\.5.*XMin, XMax, YMin, YMax"):
        load_miap(root)
    csv.write_text(original.splitlines()[0] + "\n")
    with pytest.raises(InsufficientDataError, match=r"header but no rows"):
        load_miap(root)
    csv.write_text(original)
    next((root / "test").glob("*.jpg")).write_bytes(b"not a jpeg")
    with pytest.raises(InvalidDataError, match=r"cannot read image .*ImageID"):
        load_miap(root)
    with pytest.raises(FairnessConfigError, match=r"split='dev'"):
        load_miap(root, split="dev")
    with pytest.raises(FairnessConfigError, match=r"min_box_size=-1"):
        load_miap(root, min_box_size=-1)
    with pytest.raises(InvalidDataError, match=r"no MIAP box file for split 'val'"):
        load_miap(root, split="val")


def test_utkface_errors(copy, tmp_path: Path) -> None:
    root = copy("utkface")
    twin = root / "part2"
    twin.mkdir()
    shutil.copy(next((root / "UTKFace").glob("*.chip.jpg")), twin)
    with pytest.raises(InvalidDataError, match=r"appears twice.*one release"):
        load_utkface(root)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InsufficientDataError, match=r"contains no files"):
        load_utkface(empty)
    (empty / "README.txt").write_text("x")
    with pytest.raises(InsufficientDataError, match=r"no usable rows"):
        load_utkface(empty)
    with pytest.raises(InvalidDataError, match=r"is not a directory"):
        load_utkface(tmp_path / "missing")
    with pytest.raises(FairnessConfigError, match=r"root=3"):
        load_utkface(3)  # type: ignore[arg-type]


def test_dollar_street_errors(copy) -> None:
    root = copy("dollar_street") / "dataset_dollarstreet"
    csv = root / "images_v2.csv"
    original = csv.read_text()
    csv.write_text(original.replace("region.id", "region", 1))
    with pytest.raises(InvalidDataError, match=r"no column 'region.id'"):
        load_dollar_street(root)
    csv.write_text(original.replace(",India,as,", ",India,xx,", 1))
    with pytest.raises(InvalidDataError, match=r"line 2: region.id='xx'"):
        load_dollar_street(root)
    csv.write_text(original.replace(",35.5,", ",lots,", 1))
    with pytest.raises(InvalidDataError, match=r"income='lots'"):
        load_dollar_street(root)
    lines = original.splitlines()
    csv.write_text("\n".join([*lines, lines[1].replace(",India,as,", ",India,eu,")]))
    with pytest.raises(InvalidDataError, match=r"lines 2 and 27 .*different region"):
        load_dollar_street(root)
    csv.write_text("")
    with pytest.raises(InsufficientDataError, match=r"is empty"):
        load_dollar_street(root)
    with pytest.raises(FairnessConfigError, match=r"split='val'"):
        load_dollar_street(root, split="val")
    meta = root / "metadata.csv"
    meta.write_text(meta.read_text().replace(",Africa,", ",Oceania,", 1))
    with pytest.raises(InvalidDataError, match=r"region='Oceania'"):
        load_dollar_street(root, split="meta")


def test_celeba_errors(copy) -> None:
    root = copy("celeba")
    attr = root / "list_attr_celeba.txt"
    original = attr.read_text()
    attr.write_text(original.replace("000003.jpg -1", "000003.jpg 0", 1).replace(
        "000003.jpg 1", "000003.jpg 0", 1))
    with pytest.raises(InvalidDataError, match=r"line 5: 5_o_Clock_Shadow='0'"):
        load_celeba(root)
    attr.write_text(original.replace("000004.jpg", "000003.jpg", 1))
    with pytest.raises(InvalidDataError, match=r"duplicate image file name '000003.jpg'"):
        load_celeba(root)
    attr.write_text(original.replace("20", "21", 1))
    with pytest.raises(InvalidDataError, match=r"declares 21 images but 20 rows"):
        load_celeba(root)
    attr.write_text(original.replace(" Male ", " Man ", 1))
    with pytest.raises(InvalidDataError, match=r"'Male'"):
        load_celeba(root)
    attr.write_text("\n".join(original.splitlines()[:-1] + [original.splitlines()[-1][:30]]))
    with pytest.raises(InvalidDataError, match=r"line 22: \d+ fields, expected 41"):
        load_celeba(root)
    attr.write_text(original)
    part = root / "list_eval_partition.txt"
    part.write_text(part.read_text().replace("000002.jpg 0", "000002.jpg 7"))
    with pytest.raises(InvalidDataError, match=r"line 2: partition='7'"):
        load_celeba(root)
    part.unlink()
    with pytest.raises(InvalidDataError, match=r"split='test' needs list_eval_partition"):
        load_celeba(root, split="test")
    ident = root / "identity_CelebA.txt"
    ident.write_text("\n".join(ident.read_text().splitlines()[:-1]))
    with pytest.raises(InvalidDataError, match=r"no identity for 1 image"):
        load_celeba(root)
    attr.write_text("")
    with pytest.raises(InsufficientDataError, match=r"is empty"):
        load_celeba(root)
    with pytest.raises(FairnessConfigError, match=r"split='val'"):
        load_celeba(root, split="val")


def test_celeba_kaggle_errors(copy) -> None:
    root = copy("celeba_kaggle")
    attr = root / "list_attr_celeba.csv"
    attr.write_text(attr.read_text().replace("000002.jpg,1", "000002.jpg,2", 1).replace(
        "000002.jpg,-1", "000002.jpg,2", 1))
    with pytest.raises(InvalidDataError, match=r"line 3: 5_o_Clock_Shadow='2'"):
        load_celeba(root)


def test_fairface_errors(copy) -> None:
    root = copy("fairface")
    csv = root / "fairface_label_val.csv"
    original = csv.read_text()
    csv.write_text(original.replace("East Asian", "Asian", 1))
    with pytest.raises(InvalidDataError, match=r"line \d+: race='Asian' is not one of"):
        load_fairface(root)
    csv.write_text(original.replace("more than 70", "70+", 1))
    with pytest.raises(InvalidDataError, match=r"age='70\+'"):
        load_fairface(root)
    csv.write_text(original.replace("val/2.jpg", "val/1.jpg", 1))
    with pytest.raises(InvalidDataError, match=r"lines 2 and 3: duplicate file 'val/1.jpg'"):
        load_fairface(root)
    csv.write_text(original.replace("service_test", "service", 1))
    with pytest.raises(InvalidDataError, match=r"no column 'service_test'"):
        load_fairface(root)
    csv.write_text("file,age,gender,race,service_test\n")
    with pytest.raises(InsufficientDataError, match=r"header but no rows"):
        load_fairface(root)
    with pytest.raises(FairnessConfigError, match=r"split='test'"):
        load_fairface(root, split="test")


def test_fitzpatrick17k_errors(copy) -> None:
    root = copy("fitzpatrick17k")
    csv = root / "fitzpatrick17k.csv"
    original = csv.read_text()
    lines = original.splitlines()
    csv.write_text(original.replace("fitzpatrick_scale", "scale", 1))
    with pytest.raises(InvalidDataError, match=r"neither 'fitzpatrick_scale'.*nor 'fitzpatrick'"):
        load_fitzpatrick17k(root)
    bad = lines[1].split(",")
    bad[1] = "7"
    csv.write_text("\n".join([lines[0], ",".join(bad), *lines[2:]]))
    with pytest.raises(InvalidDataError, match=r"line 2: fitzpatrick_scale='7'.*-1 for unknown"):
        load_fitzpatrick17k(root)
    dup = lines[2].split(",")
    dup[0] = lines[1].split(",")[0]
    csv.write_text("\n".join([lines[0], lines[1], ",".join(dup), *lines[3:]]))
    with pytest.raises(InvalidDataError, match=r"lines 2 and 3: duplicate md5hash"):
        load_fitzpatrick17k(root)
    csv.write_text("")
    with pytest.raises(InsufficientDataError, match=r"is empty"):
        load_fitzpatrick17k(root)
    with pytest.raises(InvalidDataError, match=r"image_dir .* is not a directory"):
        load_fitzpatrick17k(ROOTS["fitzpatrick17k"], image_dir="nope")


def test_manifest_errors(copy, tmp_path: Path) -> None:
    root = copy("manifest")
    csv = root / "manifest.csv"
    original = csv.read_text()
    csv.write_text(original.replace("image_id,path", "image_id,file", 1))
    with pytest.raises(InvalidDataError, match=r"no 'path' column.*path_column="):
        load_manifest(csv)
    csv.write_text(original.replace("img001,", "img000,", 1))
    with pytest.raises(InvalidDataError, match=r"rows 2 and 3 share image_id 'img000'"):
        load_manifest(csv)
    csv.write_text(original.replace("images/img_003.png", "", 1))
    with pytest.raises(InvalidDataError, match=r"row 5: path is empty"):
        load_manifest(csv)
    csv.write_text("")
    with pytest.raises(InsufficientDataError, match=r"is empty"):
        load_manifest(csv)
    with pytest.raises(FairnessConfigError, match=r"suffix '.json'"):
        (tmp_path / "m.json").write_text("{}")
        load_manifest(tmp_path / "m.json")
    with pytest.raises(InvalidDataError, match=r"does not exist"):
        load_manifest(tmp_path / "nope.csv")
    with pytest.raises(InvalidDataError, match=r"without manifest.csv"):
        load_manifest(tmp_path)


@pytest.mark.parametrize("name", sorted(set(LOADERS) - {"miap"}))
def test_unreadable_image_names_file_row_and_id(name: str, copy) -> None:
    root = copy(name if name != "manifest" else "manifest")
    path = root / "manifest.csv" if name == "manifest" else root
    ds = LOADERS[name](path)
    Path(ds.frame["path"].iloc[1]).write_bytes(b"\x00garbage")
    with pytest.raises(InvalidDataError, match=r"cannot read image .* \(row 1, image_id .*Replace"):
        ds.load_image(1)
