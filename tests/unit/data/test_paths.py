"""path_in_root: annotation paths stay inside the dataset root."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_fairness.data.paths import path_in_root, shown
from pytest_fairness.errors import FairnessConfigError, InvalidDataError

ROOT = Path("/data/set")


@pytest.mark.parametrize("value, expected", [
    ("val/1.jpg", "/data/set/val/1.jpg"),
    ("val/./1.jpg", "/data/set/val/1.jpg"),
    ("val/../train/1.jpg", "/data/set/train/1.jpg"),
    ("val/./", "/data/set/val"),
    ("a b/\u00e9.jpg", "/data/set/a b/\u00e9.jpg"),
])
def test_relative_paths_are_normalised_under_the_root(value: str, expected: str) -> None:
    assert path_in_root(value, ROOT, where="file").as_posix() == expected


@pytest.mark.parametrize("value, fragment", [
    ("../../etc/passwd", r"file='\.\./\.\./etc/passwd' climbs out of the root"),
    ("val/../../x.jpg", r"climbs out of the root"),
    ("..", r"climbs out of the root"),
    ("/etc/passwd", r"file='/etc/passwd' is an absolute path"),
    (".", r"names the root folder itself"),
    ("a\x00b", r"NUL byte"),
    ("\udcff.jpg", r"not valid UTF-8"),
    ("x" * 300 + ".jpg", r"name of 304 bytes"),
])
def test_escaping_or_impossible_paths_are_refused(value: str, fragment: str) -> None:
    with pytest.raises(InvalidDataError, match=fragment) as info:
        path_in_root(value, ROOT, where="file")
    assert "/data/set" in str(info.value) or "name of" in str(info.value)


@pytest.mark.parametrize("value", [None, 5, ["a"], b"a.jpg"])
def test_non_strings_are_refused_with_their_type(value: object) -> None:
    with pytest.raises(InvalidDataError, match=r"file must be a path \(a string\); got .*type="):
        path_in_root(value, ROOT, where="file")


def test_empty_is_refused() -> None:
    with pytest.raises(InvalidDataError, match=r"file is empty"):
        path_in_root("  ", ROOT, where="file")


def test_absolute_policies(tmp_path: Path) -> None:
    inside = str(tmp_path / "img" / "a.jpg")
    assert path_in_root(inside, tmp_path, where="p", absolute="inside") == Path(inside)
    with pytest.raises(InvalidDataError, match=r"absolute path outside the root.*allow_absolute"):
        path_in_root("/etc/passwd", tmp_path, where="p", absolute="inside")
    assert path_in_root("/etc/passwd", tmp_path, where="p", absolute="any") == Path("/etc/passwd")
    with pytest.raises(InvalidDataError, match=r"is an absolute path"):
        path_in_root(inside, tmp_path, where="p")  # "refuse", the default


def test_symlinked_folders_inside_the_root_are_followed(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "a.jpg").write_bytes(b"x")
    root = tmp_path / "root"
    root.mkdir()
    (root / "images").symlink_to(tmp_path / "elsewhere")
    assert path_in_root("images/a.jpg", root, where="p").read_bytes() == b"x"


def test_without_a_root_and_with_another_error_class() -> None:
    assert path_in_root("a//b/", None, where="X") == Path("a/b")
    with pytest.raises(FairnessConfigError, match=r"X='\.\./up'.*inside the stimuli root"):
        path_in_root("../up", None, where="X", root_label="the stimuli root",
                     error=FairnessConfigError)


def test_shown_cuts_long_values() -> None:
    assert shown("1" * 400).endswith("... (402 chars)")
    assert shown("ok") == "'ok'"


def test_shown_cuts_to_the_limit_and_counts_the_characters() -> None:
    assert shown("1" * 200, limit=12) == "'11111111111... (202 chars)"


def test_path_in_root_normalises_and_refuses_climbing_out() -> None:
    assert path_in_root("val/../val/1.jpg", "/data/fairface",
                        where="file").as_posix() == "/data/fairface/val/1.jpg"
    with pytest.raises(InvalidDataError) as caught:
        path_in_root("../../etc/passwd", "/data/fairface", where="file")
    assert str(caught.value) == (
        "file='../../etc/passwd' climbs out of the root with '..'; it must stay inside the "
        "dataset root '/data/fairface': a path relative to it, without '..' that leaves it. "
        "Correct the entry or move the file under the root.")
