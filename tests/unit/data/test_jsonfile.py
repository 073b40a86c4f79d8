"""read_json / parse_json: every damaged JSON file is an InvalidDataError naming it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_fairness.data.jsonfile import DEFAULT_MAX_DEPTH, check_nesting, parse_json, read_json
from pytest_fairness.errors import InsufficientDataError, InvalidDataError


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "doc.json"
    path.write_bytes(data)
    return path


def test_reads_valid_json_and_skips_a_utf8_bom(tmp_path: Path) -> None:
    assert read_json(write(tmp_path, b'{"a": [1, "x"]}'), what="t") == {"a": [1, "x"]}
    assert read_json(write(tmp_path, b"\xef\xbb\xbf[1]"), what="t") == [1]
    assert read_json(write(tmp_path, '["\u00e9", "\\ud83d\\ude00"]'.encode()),
                     what="t") == ["\u00e9", "\U0001f600"]


@pytest.mark.parametrize("data, fragment", [
    (b"[" * 100_000 + b"]" * 100_000, r"nests arrays/objects more than 64 levels deep"),
    (b'{"a": ' * 70 + b"1" + b"}" * 70, r"more than 64 levels"),
    (b"\xff\xfe[\x00]\x00", r"byte-order mark of UTF-16 \(little-endian\).*UTF-8"),
    (b"\xfe\xff\x00[\x00]", r"UTF-16 \(big-endian\)"),
    (b'["caf\xe9"]', r"not UTF-8 text: byte 5 \(line 1\)"),
    (b'{"a": 1, "a": 2}', r"repeats the key 'a'"),
    (b"[NaN]", r"contains NaN"),
    (b"[-Infinity]", r"contains -Infinity"),
    (b"[1e400]", r"'1e400', beyond the range of a float"),
    (b'["\\ud800"]', r"string at \$\[0\] holds a lone UTF-16 surrogate"),
    (b'{"k": {"\\udc00": 1}}', r"\$\['k'\] \(a key\)"),
    (b"[" + b"9" * 5000 + b"]", r"holds a number Python cannot read"),
    (b'{"a": [1, 2}\n', r"not valid JSON \(line 1, column 12"),
    (b'\n\n  "open', r"not valid JSON \(line 3, column 3"),
])
def test_damaged_files_are_invalid_data_naming_the_file(
    tmp_path: Path, data: bytes, fragment: str
) -> None:
    path = write(tmp_path, data)
    with pytest.raises(InvalidDataError, match=fragment) as info:
        read_json(path, what="reader")
    assert str(info.value).startswith(f"reader: {str(path)!r}")


def test_empty_missing_and_unreadable(tmp_path: Path) -> None:
    with pytest.raises(InsufficientDataError, match=r"is empty"):
        read_json(write(tmp_path, b" \n"), what="t")
    with pytest.raises(InvalidDataError, match=r"does not exist"):
        read_json(tmp_path / "nope.json", what="t")
    with pytest.raises(InvalidDataError, match=r"cannot be read"):
        read_json(tmp_path, what="t")


def test_options(tmp_path: Path) -> None:
    path = write(tmp_path, b'[NaN, 1e400, {"a": 1, "a": 2}]')
    assert str(read_json(path, what="t", allow_nan=True, object_pairs_hook=dict)) == \
        "[nan, inf, {'a': 2}]"
    deep = b"[" * 10 + b"]" * 10
    with pytest.raises(InvalidDataError, match=r"more than 5 levels"):
        parse_json(deep, source="s", max_depth=5)
    assert parse_json(deep, source="s") == [[[[[[[[[[]]]]]]]]]]


def test_nesting_scan_ignores_brackets_in_strings_and_is_not_recursive() -> None:
    assert check_nesting('["[[[[", "\\"[[", {"]": "]]]"}]', source="s") == 2
    text = '"' + "[" * 10_000 + '"'
    assert check_nesting(text, source="s") == 0
    assert check_nesting("[" * (DEFAULT_MAX_DEPTH), source="s") == DEFAULT_MAX_DEPTH
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        with pytest.raises(InvalidDataError, match=r"levels deep"):
            check_nesting("[" * 1_000_000, source="s")
    finally:
        sys.setrecursionlimit(limit)


def test_check_nesting_counts_brackets_outside_strings() -> None:
    assert check_nesting('{"a": [1, "[[["]}', source="x") == 2


def test_read_json_names_the_reader_and_file_of_a_deep_document(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InvalidDataError) as caught:
        read_json(path, what="example")
    assert str(caught.value).startswith(
        f"example: {str(path)!r} nests arrays/objects more than 64 levels deep; ")
