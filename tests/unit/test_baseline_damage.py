"""Damaged baselines: one FairnessConfigError naming the file, the key and the fix."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_fairness.baseline import (
    build_baseline,
    dump_baseline,
    load_baseline,
    resolve_baseline,
    validate_baseline,
)
from pytest_fairness.cli import main
from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.records import TestRecord
from pytest_fairness.results import GroupStat, IndicatorResult

FIX = r"--fairness-save-baseline"
NODE = "t.py::test_a"
RID = "group_metrics (accuracy)"


def good() -> dict[str, Any]:
    r = IndicatorResult("group_metrics", "accuracy", 0.6, min_group_size=1,
                        groups=(GroupStat("a", 10, 0.7), GroupStat("b", 10, 0.5)))
    return build_baseline([TestRecord.from_dict({
        "nodeid": NODE, "outcome": "passed", "results": [{**r.to_dict(), "key": None}]})]
    ).to_dict()


def write(tmp_path: Path, content: str | bytes) -> Path:
    path = tmp_path / "base.json"
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return path


def test_a_good_baseline_loads(tmp_path: Path) -> None:
    assert load_baseline(write(tmp_path, dump_baseline(validate_baseline(good())))).tests[NODE]


@pytest.mark.parametrize(("content", "fragment"), [
    (b"\xff\xfe{\x00}\x00", r"base\.json' starts with the byte-order mark of UTF-16"),
    (b'{"format": "\xe9"}', r"base\.json' is not UTF-8 text: byte 12"),
    ("[" * 100_000 + "]" * 100_000, r"base\.json' nests arrays/objects more than 64 levels"),
    ('{"a": NaN}', r"base\.json' contains NaN"),
    ('{"a": 1e400}', r"base\.json' contains the number '1e400'"),
    ('{"a": 1, "a": 2}', r"repeats the key 'a'"),
    ("", r"base\.json' is empty"),
])
def test_unreadable_files(tmp_path: Path, content: str | bytes, fragment: str) -> None:
    """Encoding, nesting and JSON problems: the file, the place and the fix."""
    with pytest.raises(FairnessConfigError, match=fragment + r".*" + FIX):
        load_baseline(write(tmp_path, content))


def _damaged(path: list[Any], value: Any) -> dict[str, Any]:
    document = copy.deepcopy(good())
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    if value is KeyError:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return document


ENTRY = ["tests", NODE]
SUMMARY = [*ENTRY, "results", RID]


@pytest.mark.parametrize(("path", "value", "fragment"), [
    ([*ENTRY, "results"], "x", r"\['tests'\]\['t.py::test_a'\]\['results'\] is 'x', not an "
                               r"object"),
    ([*SUMMARY, "groups"], "x", r"\['results'\]\['group_metrics \(accuracy\)'\]\['groups'\] is "
                                r"'x', not an object"),
    ([*SUMMARY, "gap"], "0.2", r"\['gap'\] is '0.2', not a finite number or null"),
    ([*SUMMARY, "gap"], True, r"\['gap'\] is True, not a finite number or null"),
    ([*SUMMARY, "value"], float("inf"), r"\['value'\] is inf, not a finite number"),
    ([*SUMMARY, "ratio"], KeyError, r"\['group_metrics \(accuracy\)'\] has no 'ratio'"),
    ([*SUMMARY, "groups", "b", "value"], [0.5], r"\['groups'\]\['b'\]\['value'\] is \[0.5\]"),
    ([*SUMMARY, "groups", "b"], 0.5, r"\['groups'\]\['b'\] is 0.5, not an object"),
    ([*SUMMARY, "worst"], "b", r"\['worst'\] is 'b', not null or \{\"group\""),
    ([*SUMMARY, "higher_is_better"], "yes", r"\['higher_is_better'\] is 'yes', not true or "
                                            r"false"),
    ([*SUMMARY, "params"], [], r"\['params'\] is \[\], not an object"),
    (ENTRY, [], r"\['tests'\]\['t.py::test_a'\] is \[\], not an object"),
    (["metadata"], "x", r"\['metadata'\] is 'x', not an object"),
])
def test_wrong_types_name_the_key(tmp_path: Path, path: list[Any], value: Any,
                                  fragment: str) -> None:
    """A value of the wrong type, non-finite or missing: the file, the key, the fix."""
    document = _damaged(path, value)
    with pytest.raises(FairnessConfigError, match=r"baseline '.*base\.json': .*" + fragment
                       + r".*" + FIX):
        validate_baseline(document, source=str(tmp_path / "base.json"))
    if value != float("inf"):  # JSON has no infinity: the reader refuses it earlier
        file = write(tmp_path, json.dumps(document))
        with pytest.raises(FairnessConfigError, match=fragment):
            load_baseline(file)


def test_null_numbers_stay_allowed() -> None:
    """null means undefined (a gap of one group): not compared, not an error."""
    validate_baseline(_damaged([*SUMMARY, "gap"], None))


@pytest.mark.parametrize("mode", ["pytest", "command"])
def test_the_plugin_and_the_command_report_it_plainly(
        pytester: pytest.Pytester, mode: str) -> None:
    """--fairness-baseline and `pytest-fairness compare`: a usage error, no INTERNALERROR."""
    write(pytester.path, b"\xff\xfe" + "{}".encode("utf-16-le"))
    if mode == "pytest":
        pytester.makepyfile("def test_x():\n    pass\n")
        result = pytester.runpytest("--fairness", "--fairness-baseline", "base.json",
                                    "-p", "no:xdist")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["*--fairness-baseline=base.json: baseline file: *base.json*"
                                     " starts with the byte-order mark of UTF-16*"])
        assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    else:
        assert main(["compare", str(pytester.path / "base.json"),
                     str(pytester.path / "base.json")]) == 2


def test_a_damaged_report_json(tmp_path: Path) -> None:
    """A report.json whose results do not rebuild: the file and the fix."""
    report = {"format": "pytest-fairness-report", "schema": 1,
              "tests": [{"nodeid": "t.py::a", "results": [{"name": 5}]}]}
    file = tmp_path / "report.json"
    file.write_text(json.dumps(report))
    with pytest.raises(FairnessConfigError, match=r"report '.*report\.json' is damaged.*"
                                                  r"--fairness-report DIR"):
        resolve_baseline(str(file), None)
    file.write_text(json.dumps({**report, "tests": "x"}))
    with pytest.raises(FairnessConfigError, match=r"'tests' is str, not a list"):
        resolve_baseline(str(file), None)
