"""Damaged annotation files: an error naming file, row and value, never a traceback (#17)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_fairness.data import (
    load_casual_conversations,
    load_celeba,
    load_dollar_street,
    load_fairface,
    load_fitzpatrick17k,
    load_manifest,
    load_miap,
    load_utkface,
)
from pytest_fairness.errors import FairnessConfigError, InvalidDataError

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"


@pytest.fixture
def copy(tmp_path: Path) -> Callable[[str], Path]:
    def make(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(FIXTURES / name, target)
        return target

    return make


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


# -- paths that leave the root -----------------------------------------------------------------
ESCAPES = ["/etc/passwd", "../../etc/passwd", "val/../../../x.jpg"]


@pytest.mark.parametrize("hostile", ESCAPES)
def test_fairface_file_stays_inside_root(copy: Callable[[str], Path], hostile: str) -> None:
    root = copy("fairface")
    edit(root / "fairface_label_val.csv", "val/1.jpg", hostile)
    with pytest.raises(InvalidDataError, match=r"fairface_label_val.csv' line 2: file=.*root"):
        load_fairface(root)


@pytest.mark.parametrize("hostile", ESCAPES)
def test_celeba_image_names_stay_inside_the_image_folder(
    copy: Callable[[str], Path], hostile: str
) -> None:
    root = copy("celeba")
    for name in ("list_attr_celeba.txt", "identity_CelebA.txt", "list_eval_partition.txt"):
        edit(root / name, "000002.jpg", hostile)
    with pytest.raises(InvalidDataError, match=r"line 4: image name=.*img_align_celeba"):
        load_celeba(root)
    kaggle = copy("celeba_kaggle")
    for name in ("list_attr_celeba.csv", "list_eval_partition.csv"):
        edit(kaggle / name, "000002.jpg", hostile)
    with pytest.raises(InvalidDataError, match=r"line 3: image name="):
        load_celeba(kaggle)


def test_fitzpatrick_md5hash_stays_inside_the_image_folder(copy: Callable[[str], Path]) -> None:
    root = copy("fitzpatrick17k")
    edit(root / "fitzpatrick17k.csv", "3a79cec8f9d053d4b1bf347f6f830e52", "../../../etc/x")
    with pytest.raises(InvalidDataError, match=r"line 2: md5hash \+ '.jpg'='../../../etc/x.jpg'"):
        load_fitzpatrick17k(root)


def test_miap_image_id_stays_inside_the_image_folder(copy: Callable[[str], Path]) -> None:
    root = copy("miap")
    edit(root / "open_images_extended_miap_boxes_test.csv", "6f4fba56a82d107f", "../../etc/x")
    with pytest.raises(InvalidDataError, match=r"line \d+: ImageID \+ '.jpg'=.*climbs out"):
        load_miap(root)


def test_dollar_street_paths_stay_inside_root(copy: Callable[[str], Path]) -> None:
    root = copy("dollar_street") / "dataset_dollarstreet"
    edit(root / "images_v2.csv", "assets/5d4bf0aacf0b3a0f3f000000/", "/etc/")
    with pytest.raises(InvalidDataError, match=r"line 2: imageRelPath='/etc/.*absolute path"):
        load_dollar_street(root)
    edit(root / "metadata.csv", "/480x480-00000000-1111-2222-3333-000000000000.jpg", "/..")
    with pytest.raises(InvalidDataError, match=r"line 2: the file name of url='..' climbs"):
        load_dollar_street(root, split="meta")


def test_dollar_street_meta_url_that_urllib_refuses(copy: Callable[[str], Path]) -> None:
    root = copy("dollar_street") / "dataset_dollarstreet"
    edit(root / "metadata.csv", "http://static.dollarstreet.org", "http://[static")
    with pytest.raises(InvalidDataError, match=r"line 2: url='http://\[static.* has no"):
        load_dollar_street(root, split="meta")


def cc_json(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / "CasualConversations_mini.json").read_text())
    return data


def write_cc(root: Path, data: Any) -> None:
    (root / "CasualConversations_mini.json").write_text(json.dumps(data))


def test_casual_conversations_files_stay_inside_root(copy: Callable[[str], Path]) -> None:
    root = copy("casual_conversations")
    for hostile in ("../../../etc/passwd", "/etc/passwd.MP4"):
        data = cc_json(root)
        data["0001"]["files"][0] = hostile
        write_cc(root, data)
        with pytest.raises(InvalidDataError, match=r"subject '0001': files\[0\]=.*root"):
            load_casual_conversations(root)


def test_manifest_paths_stay_inside_root_unless_allowed(copy: Callable[[str], Path]) -> None:
    root = copy("manifest")
    csv = root / "manifest.csv"
    edit(csv, "images/img_003.png", "../../img_003.png")
    with pytest.raises(InvalidDataError, match=r"row 5: path='../../img_003.png' climbs out"):
        load_manifest(csv)
    with pytest.raises(InvalidDataError, match=r"climbs out"):
        load_manifest(csv, allow_absolute=True)  # the option is about absolute paths only
    edit(csv, "../../img_003.png", "/etc/passwd")
    with pytest.raises(InvalidDataError, match=r"row 5: path='/etc/passwd' is an absolute path "
                                               r"outside the root.*allow_absolute=True"):
        load_manifest(csv)
    assert load_manifest(csv, allow_absolute=True).frame["path"][3] == "/etc/passwd"
    edit(csv, "/etc/passwd", str(root / "images" / "img_003.png"))
    assert load_manifest(csv).frame["path"][3] == str(root / "images" / "img_003.png")


# -- JSON ------------------------------------------------------------------------------------
def test_casual_conversations_deep_or_foreign_json(copy: Callable[[str], Path]) -> None:
    root = copy("casual_conversations")
    js = root / "CasualConversations_mini.json"
    js.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(InvalidDataError, match=r"CasualConversations_mini.json' nests"):
        load_casual_conversations(root)
    js.write_bytes(b"\xff\xfe" + json.dumps({}).encode("utf-16-le"))
    with pytest.raises(InvalidDataError, match=r"byte-order mark of UTF-16"):
        load_casual_conversations(root)


# -- Casual Conversations values ---------------------------------------------------------------
@pytest.mark.parametrize("key, value, fragment", [
    ("files", None, r"'files' must be a list of video paths \(strings\); got None"),
    ("files", 5, r"'files' must be a list .*got 5 \(type=int\)"),
    ("files", "x", r"'files' must be a list .*got 'x' \(type=str\)"),
    ("files", [5], r"got 5 \(type=int\) in it"),
    ("dark_files", 5, r"'dark_files' must be a list"),
    ("label", {"age": "1" * 400, "gender": "Male", "skin-type": "2"},
     r"age='1111.*\(402 chars\) is outside 0-130 years"),
    ("label", {"age": "-5", "gender": "Male", "skin-type": "2"}, r"age='-5' is outside 0-130"),
    ("label", {"age": str(10**30), "gender": "Male", "skin-type": "2"}, r"is outside 0-130"),
    ("label", {"age": 1.5, "gender": "Male", "skin-type": "2"}, r"age=1.5 is neither"),
    ("label", {"age": None, "gender": "Male", "skin-type": "2"}, r"age=None is neither"),
    ("label", {"age": "\u0663\u0660", "gender": "Male", "skin-type": "2"}, r"is neither"),
    ("label", {"age": "30", "gender": None, "skin-type": "2"}, r"gender=None is not one of"),
    ("label", {"age": "30", "gender": "Male", "skin-type": True}, r"skin-type=True is not"),
])
def test_casual_conversations_wrong_types_and_values(
    copy: Callable[[str], Path], key: str, value: Any, fragment: str
) -> None:
    root = copy("casual_conversations")
    data = cc_json(root)
    data["0001"][key] = value
    write_cc(root, data)
    with pytest.raises(InvalidDataError, match=r"subject '0001': .*" + fragment):
        load_casual_conversations(root)


def test_casual_conversations_integer_ages_and_bounds(copy: Callable[[str], Path]) -> None:
    root = copy("casual_conversations")
    data = cc_json(root)
    data["0001"]["label"]["age"] = 0
    data["0002"]["label"]["age"] = "130"
    write_cc(root, data)
    f = load_casual_conversations(root).frame.set_index("identity")
    assert f.loc["0001", "age"].tolist() == [0.0, 0.0]
    assert f.loc["0002", "age_group"].tolist() == ["70+", "70+"]


def test_casual_conversations_drop_unknown_age_drops_unknown_age_groups() -> None:
    root = FIXTURES / "casual_conversations"
    kept = load_casual_conversations(root)
    dropped = load_casual_conversations(root, drop_unknown=("age",))
    n_unknown = int((kept.frame["age_group"] == "unknown").sum())
    assert n_unknown > 0
    assert dropped.skipped["unknown age"] == n_unknown
    assert len(dropped) == len(kept) - n_unknown
    everything = load_casual_conversations(root, drop_unknown=True).frame
    assert "unknown" not in {*everything["gender"], *everything["age_group"],
                             *everything["skin_tone"]}
    assert load_casual_conversations(root, drop_unknown=False).skipped == kept.skipped


def test_casual_conversations_flat_img_path_must_be_a_path(tmp_path: Path) -> None:
    record = {"age": "20", "gender": "Male", "skin-type": "2", "subject_id": "1"}
    for value, fragment in ((None, r"img_path must be a path \(a string\); got None"),
                            (5, r"got 5 \(type=int\)"),
                            ("../x.jpg", r"img_path='../x.jpg' climbs out")):
        (tmp_path / "flat.json").write_text(json.dumps([{**record, "img_path": value}]))
        with pytest.raises(InvalidDataError, match=r"record 0: .*" + fragment):
            load_casual_conversations(tmp_path, annotations="flat.json")
    (tmp_path / "flat.json").write_text(json.dumps([{**record, "img_path": "a.jpg",
                                                     "subject_id": None}]))
    with pytest.raises(InvalidDataError, match=r"subject_id=None must be a string"):
        load_casual_conversations(tmp_path, annotations="flat.json")


# -- drop_unknown=True/False, and what stays an error ---------------------------------------
def test_miap_drop_unknown_true_means_gender_and_age() -> None:
    root = FIXTURES / "miap"
    both = load_miap(root, drop_unknown=True)
    assert both.skipped == load_miap(root, drop_unknown=("gender", "age")).skipped
    assert load_miap(root, drop_unknown=False).skipped == load_miap(root).skipped


@pytest.mark.parametrize("value", ["gender", ("gender", "race"), 3, (True,)])
def test_drop_unknown_rejects_other_values(value: Any) -> None:
    with pytest.raises(FairnessConfigError, match=r"drop_unknown must be True \(every "
                                                  r"attribute\), False, or a tuple"):
        load_miap(FIXTURES / "miap", drop_unknown=value)
    with pytest.raises(FairnessConfigError, match=r"drop_unknown="):
        load_casual_conversations(FIXTURES / "casual_conversations", drop_unknown=value)


# -- Dollar Street ------------------------------------------------------------------------------
@pytest.mark.parametrize("labels", ["[892.7]", "[true]", "[5000]", "[-3]", "[null]", "[[1]]",
                                    "[1e999]", "['x']"])
def test_dollar_street_labels_are_imagenet_class_indices(
    copy: Callable[[str], Path], labels: str
) -> None:
    root = copy("dollar_street") / "dataset_dollarstreet"
    edit(root / "images_v2.csv", '"[892]"', f'"{labels}"')
    with pytest.raises(InvalidDataError, match=r"line 2: imagenet_sysnet_id=.* is not an "
                                               r"ImageNet-1k class index \(a whole number in "
                                               r"0-999\)"):
        load_dollar_street(root)


def test_dollar_street_integral_labels_still_load(copy: Callable[[str], Path]) -> None:
    root = copy("dollar_street") / "dataset_dollarstreet"
    edit(root / "images_v2.csv", '"[892]"', '"[892.0, \'17\']"')
    frame = load_dollar_street(root).frame.set_index("image_id")
    assert frame.loc["5d4bf0aacf0b3a0f3f000000", "labels"] == [892, 17]


@pytest.mark.parametrize("income", ["inf", "1e400", "-inf", "nan", "0"])
def test_dollar_street_income_must_be_positive_and_finite(
    copy: Callable[[str], Path], income: str
) -> None:
    root = copy("dollar_street") / "dataset_dollarstreet"
    edit(root / "images_v2.csv", ",35.5,", f",{income},")
    with pytest.raises(InvalidDataError, match=rf"line 2: income='{income}' must be a positive, "
                                               "finite number"):
        load_dollar_street(root)


def test_dollar_street_deep_list_cell(copy: Callable[[str], Path]) -> None:
    root = copy("dollar_street") / "dataset_dollarstreet"
    edit(root / "images_v2.csv", '"[892]"', '"' + "[" * 100_000 + '"')
    with pytest.raises(InvalidDataError, match=r"line 2: imagenet_sysnet_id nests"):
        load_dollar_street(root)


# -- CSV structure ----------------------------------------------------------------------------
def test_a_row_with_an_extra_field_is_not_shifted(copy: Callable[[str], Path]) -> None:
    root = copy("fairface")
    edit(root / "fairface_label_val.csv", "val/1.jpg,", "val/1.jpg,extra,")
    with pytest.raises(InvalidDataError, match=r"line 2 has 6 fields but the header has 5"):
        load_fairface(root)


# -- file names and empty values ---------------------------------------------------------------
def test_utkface_name_that_is_not_utf8_is_skipped_and_counted(copy: Callable[[str], Path]) -> None:
    root = copy("utkface")
    with open(os.path.join(os.fsencode(root / "UTKFace"), b"20_0_0_2017\xff.jpg"), "wb"):
        pass
    ds = load_utkface(root)
    assert len(ds) == 24
    assert ds.skipped["file name is not valid UTF-8"] == 1
    assert any("not valid UTF-8" in note and "xff.jpg" in note for note in ds.notes)


@pytest.mark.parametrize("name", ["\u0663\u0660_0_0_2017.jpg", "+3_0_0_2017.jpg",
                                  " 3_0_0_2017.jpg"])
def test_utkface_fields_are_ascii_digits(name: str) -> None:
    from pytest_fairness.data.utkface import parse_utkface_name

    assert parse_utkface_name(name) == "unparseable name (age, gender, race are not integers)"


def test_fitzpatrick_empty_condition_is_an_error(copy: Callable[[str], Path]) -> None:
    root = copy("fitzpatrick17k")
    edit(root / "fitzpatrick17k.csv", ",psoriasis,", ", ,")
    with pytest.raises(InvalidDataError, match=r"line 2: label \(the condition\) is empty"):
        load_fitzpatrick17k(root)
