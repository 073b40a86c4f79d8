"""Baselines: deterministic files, lookup, and direction-aware comparison; a damaged baseline is
one FairnessConfigError naming the file, the key and the fix."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_fairness.baseline import (
    BASELINE_FORMAT,
    build_baseline,
    dump_baseline,
    find_entry,
    load_baseline,
    resolve_baseline,
    save_baseline,
    validate_baseline,
)
from pytest_fairness.cli import main
from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.options import strip_param
from pytest_fairness.records import Comparison, KeyedResult, ResultSummary, TestRecord
from pytest_fairness.regression import compare_baselines, compare_results
from pytest_fairness.report.terminal import regression_message
from pytest_fairness.results import GroupStat, IndicatorResult, result_id


def summarize(data: dict[str, Any]) -> ResultSummary:
    """The summary of a result dict (as the plugin records it)."""
    return ResultSummary.of(KeyedResult.from_dict(data))


def result(values: dict[str, float], *, higher: bool = True, key: str | None = None,
           name: str = "group_metrics", metric: str = "accuracy", **params: Any) -> dict[str, Any]:
    """A result dict (as the plugin records it) with one group per entry of ``values``."""
    r = IndicatorResult(name, metric, sum(values.values()) / len(values),
                        groups=tuple(GroupStat(g, 10, v) for g, v in values.items()),
                        higher_is_better=higher, min_group_size=1, params=params)
    return {**r.to_dict(), "key": key}


def record(nodeid: str, *results: dict[str, Any], **extra: Any) -> TestRecord:
    return TestRecord.from_dict({"nodeid": nodeid, "outcome": "passed", "results": list(results),
                                 **extra})


def test_summary_numbers() -> None:
    """A summary keeps value, gap, ratio, worst group and every group."""
    s = summarize(result({"a": 0.8, "b": 0.6})).to_dict()
    assert s["value"] == pytest.approx(0.7)
    assert s["gap"] == pytest.approx(0.2)
    assert s["ratio"] == pytest.approx(0.75)
    assert s["worst"] == {"group": "b", "value": 0.6}
    assert s["groups"]["a"] == {"n": 10, "value": 0.8, "interval": None, "excluded": False}


def test_summary_lower_is_better_worst_group() -> None:
    """With lower-is-better metrics the worst group is the highest."""
    s = summarize(result({"a": 0.1, "b": 0.3}, higher=False, metric="nme")).to_dict()
    assert s["worst"]["group"] == "b"


def test_summary_without_groups() -> None:
    """No groups: no gap, ratio or worst group."""
    r = IndicatorResult("ieat", "association", 0.5, stats={"p_value": 0.1})
    s = summarize({**r.to_dict(), "key": None}).to_dict()
    assert (s["gap"], s["ratio"], s["worst"], s["groups"]) == (None, None, None, {})


def test_result_id() -> None:
    """Results are named by key, else indicator (metric) and coordinate."""
    assert result_id({"key": "k", "name": "x", "metric": "m"}) == "k"
    assert result_id({"key": None, "name": "x", "metric": "m", "at": 0.5}) == "x (m) @ 0.5"


def test_strip_param() -> None:
    """The checkpoint id leaves the node id wherever it sits."""
    assert strip_param("t.py::f[ck]", "ck") == "t.py::f"
    assert strip_param("t.py::f[a-ck-b]", "ck") == "t.py::f[a-b]"
    assert strip_param("t.py::f[ck-b]", "ck") == "t.py::f[b]"
    assert strip_param("t.py::f[v-1]", "v-1") == "t.py::f"
    assert strip_param("t.py::f[other]", "ck") == "t.py::f[other]"
    assert strip_param("t.py::f", "ck") == "t.py::f"
    assert strip_param("t.py::f[ck]", None) == "t.py::f[ck]"


def test_file_is_deterministic_and_sorted(tmp_path: Path) -> None:
    """Same records in any order give byte-identical files with sorted keys."""
    records = [record(f"t.py::test_{i}", result({"b": 0.5, "a": 0.7})) for i in range(5)]
    first = save_baseline(tmp_path / "one.json", records, merge=False).read_text()
    shuffled = records[:]
    random.Random(0).shuffle(shuffled)
    second = save_baseline(tmp_path / "two.json", shuffled, merge=False).read_text()
    assert first == second
    assert first.endswith("\n")
    document = json.loads(first)
    assert list(document["tests"]) == sorted(document["tests"])
    assert dump_baseline(validate_baseline(document)) == first


def test_save_merges_with_previous(tmp_path: Path) -> None:
    """A run of a subset updates its tests and keeps the others."""
    path = tmp_path / "b.json"
    save_baseline(path, [record("t.py::a", result({"x": 0.5, "y": 0.5})),
                         record("t.py::b", result({"x": 0.1, "y": 0.9}))])
    save_baseline(path, [record("t.py::a", result({"x": 0.2, "y": 0.4}))])
    tests = load_baseline(path).tests
    assert set(tests) == {"t.py::a", "t.py::b"}
    assert tests["t.py::a"].results["group_metrics (accuracy)"].gap == pytest.approx(0.2)
    save_baseline(path, [record("t.py::c", result({"x": 1, "y": 1}))], merge=False)
    assert set(load_baseline(path).tests) == {"t.py::c"}


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{", "is not valid JSON"),
        ('{"format": "other"}', r"is not a pytest-fairness baseline \(format='other'"),
        ("[1]", "format='list'"),
        (f'{{"format": "{BASELINE_FORMAT}", "schema": "1"}}', "invalid schema='1'"),
        (f'{{"format": "{BASELINE_FORMAT}", "schema": 99, "tests": {{}}}}',
         "schema=99, newer than this pytest-fairness understands"),
        (f'{{"format": "{BASELINE_FORMAT}", "schema": 1}}', "has no 'tests' mapping"),
    ],
)
def test_load_errors(tmp_path: Path, content: str, fragment: str) -> None:
    """Bad files fail with the file name and the fix."""
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(FairnessConfigError, match=fragment):
        load_baseline(path)


def test_load_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FairnessConfigError, match="does not exist; write one with"):
        load_baseline(tmp_path / "none.json")


def test_find_entry_by_test_id() -> None:
    """A node id is found directly, or through a unique checkpoint-free test id."""
    doc = build_baseline([record("t.py::f[ck1]", result({"a": 1, "b": 1}), test="t.py::f")])
    assert find_entry(doc, "t.py::f[ck1]") is not None
    assert find_entry(doc, "t.py::f[ck2]", "t.py::f") is not None
    assert find_entry(doc, "t.py::g") is None
    doc = build_baseline([record("t.py::f[1]", result({"a": 1}), test="t.py::f"),
                          record("t.py::f[2]", result({"a": 1}), test="t.py::f")])
    assert find_entry(doc, "t.py::f[3]", "t.py::f") is None  # ambiguous


def compare(base: dict[str, float], now: dict[str, float], metric: str, tolerance: float = 0.0,
            higher: bool = True) -> Comparison:
    """The comparison by the point rule: these hand-built results keep no replicates."""
    (c,) = compare_results(summarize(result(base, higher=higher)),
                           summarize(result(now, higher=higher)), {metric: tolerance},
                           confidence="point")
    return c


def test_gap_lower_is_better() -> None:
    """A growing gap regresses; a shrinking one does not."""
    assert compare({"a": 0.8, "b": 0.7}, {"a": 0.8, "b": 0.6}, "gap").regressed
    assert not compare({"a": 0.8, "b": 0.6}, {"a": 0.8, "b": 0.7}, "gap").regressed


def test_ratio_higher_is_better() -> None:
    assert compare({"a": 0.8, "b": 0.7}, {"a": 0.8, "b": 0.6}, "ratio").regressed
    assert not compare({"a": 0.8, "b": 0.6}, {"a": 0.8, "b": 0.7}, "ratio").regressed


@pytest.mark.parametrize("metric", ["value", "worst"])
def test_value_and_worst_follow_direction(metric: str) -> None:
    """Value and worst group regress downwards when higher is better, upwards otherwise."""
    assert compare({"a": 0.8, "b": 0.7}, {"a": 0.8, "b": 0.6}, metric).regressed
    assert not compare({"a": 0.8, "b": 0.7}, {"a": 0.8, "b": 0.6}, metric, higher=False).regressed
    # lower is better: the worst group is the highest one, and rising is worse
    assert compare({"a": 0.3, "b": 0.1}, {"a": 0.4, "b": 0.1}, metric, higher=False).regressed
    assert not compare({"a": 0.3, "b": 0.1}, {"a": 0.2, "b": 0.1}, metric,
                       higher=False).regressed


def test_worst_names_the_group() -> None:
    c = compare({"a": 0.3, "b": 0.1}, {"a": 0.4, "b": 0.1}, "worst", higher=False)
    assert c.where == "group a" and (c.baseline, c.now) == (0.3, 0.4)


def test_tolerance_boundary() -> None:
    """Worse by exactly the tolerance passes; by more fails."""
    c = compare({"a": 0.5, "b": 0.25}, {"a": 0.5, "b": 0.0}, "gap", tolerance=0.25)
    assert c.worse_by == pytest.approx(0.25) and not c.regressed
    assert compare({"a": 0.5, "b": 0.25}, {"a": 0.5, "b": 0.0}, "gap", tolerance=0.24).regressed


def test_undefined_metric_counts_as_a_regression() -> None:
    """A tolerance on a number a result lacks is reported, never silently ignored."""
    c = compare({"a": 0.5}, {"a": 0.1}, "gap")
    assert c.baseline is None and c.regressed
    assert "gap is undefined in the baseline and run: cannot be compared" in c.notes[0]


def _summary(name: str, value: float, gap: float | None = None) -> ResultSummary:
    return ResultSummary(indicator=name, metric="m", value=value, gap=gap,
                         higher_is_better=False)


@pytest.mark.parametrize(("name", "base", "now", "before", "after", "regressed"), [
    # iEAT: |d|, so a sign flip of the same size is no regression; growth is.
    ("ieat", -0.5, 0.5, 0.5, 0.5, False), ("ieat", 0.2, -0.6, 0.2, 0.6, True),
    ("fair_sa", 0.3, 0.5, 0.3, 0.5, True), ("multi_mals", 0.02, 0.01, 0.02, 0.01, False),
])
def test_headline_is_each_indicators_tracked_number(name: str, base: float, now: float,
                                                    before: float, after: float,
                                                    regressed: bool) -> None:
    (c,) = compare_results(_summary(name, base), _summary(name, now), {"headline": 0.01},
                           confidence="point")
    assert (c.baseline, c.now, c.regressed, c.lower_is_better) == (before, after, regressed,
                                                                    True)


def test_gap_on_an_indicator_without_groups_says_to_track_the_headline() -> None:
    (c,) = compare_results(_summary("fair_sa", 0.3), _summary("fair_sa", 0.9), {"gap": 0.01})
    assert c.regressed and "fair_sa has no gap, track its headline (L1 of AUCs)" in c.notes[0]


def test_headline_of_group_indicators_is_the_gap() -> None:
    base = summarize(result({"a": 0.8, "b": 0.7}))
    now = summarize(result({"a": 0.8, "b": 0.5}))
    (c,) = compare_results(base, now, {"headline": 0.05}, confidence="point")
    assert c.regressed and c.baseline == pytest.approx(0.1) and c.now == pytest.approx(0.3)


def test_params_change_is_noted() -> None:
    base = summarize(result({"a": 1, "b": 1}, top_k=5))
    now = summarize(result({"a": 1, "b": 1}, top_k=10))
    (c,) = compare_results(base, now, {"gap": 0})
    assert "top_k: 5 → 10" in c.notes[0]


def test_unknown_metric() -> None:
    with pytest.raises(FairnessConfigError, match="cannot compare metric='size'"):
        compare_results(ResultSummary(), ResultSummary(), {"size": 0.1})


def test_comparison_round_trip() -> None:
    c = compare({"a": 0.8, "b": 0.7}, {"a": 0.8, "b": 0.6}, "gap")
    assert Comparison.from_dict(json.loads(json.dumps(c.to_dict()))) == c


def test_regression_message_group_by_group() -> None:
    """The message shows baseline and now for every group and marks the worse one."""
    c = compare({"a": 0.8, "b": 0.7}, {"a": 0.8, "b": 0.6}, "gap", tolerance=0.01)
    text = regression_message([c], source="base.json")
    assert text.splitlines()[0].startswith("1 fairness regression against the baseline base.json")
    assert "gap baseline 0.1 → now 0.2 (+0.1 worse, tolerance 0.01, lower is better)" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("b "))
    assert "0.7" in row and "0.6" in row and "-0.1" in row and "← worse" in row


def test_compare_documents_lists_new_and_missing() -> None:
    base = build_baseline([record("t.py::a", result({"x": 0.5, "y": 0.5})),
                           record("t.py::gone", result({"x": 0.5, "y": 0.5}))])
    now = build_baseline([record("t.py::a", result({"x": 0.5, "y": 0.1})),
                          record("t.py::new", result({"x": 0.5, "y": 0.5}))])
    comparisons, missing = compare_baselines(base, now, {"gap": 0.0}, confidence="point")
    assert [c.regressed for c in comparisons] == [True]
    assert any("new test" in m and "t.py::new" in m for m in missing)
    assert any("missing test" in m and "t.py::gone" in m for m in missing)


@given(st.lists(st.floats(0, 1), min_size=2, max_size=6), st.floats(0.01, 10))
def test_identical_never_regresses_and_scaling_keeps_direction(values: list[float],
                                                                scale: float) -> None:
    """A result never regresses against itself; scaling both sides keeps the verdict."""
    groups = {f"g{i}": v for i, v in enumerate(values)}
    same = summarize(result(groups))
    assert not any(c.regressed for c in compare_results(same, same, dict.fromkeys(
        ("gap", "ratio", "value", "worst"), 0.0), confidence="point"))
    worse = {**groups, "g0": min(values) - 0.5}
    c1 = compare(groups, worse, "worst")
    c2 = compare({k: v * scale for k, v in groups.items()},
                 {k: v * scale for k, v in worse.items()}, "worst")
    assert c1.regressed == c2.regressed is True


def test_resolve_file_and_report(tmp_path: Path) -> None:
    """A baseline file and a report.json both resolve; an unknown name explains itself."""
    path = save_baseline(tmp_path / "b.json", [record("t.py::a", result({"x": 1, "y": 0}))])
    document, source = resolve_baseline(str(path), None)
    assert source == str(path) and "t.py::a" in document.tests
    from pytest_fairness.report.json_report import build_report, write_json

    report = write_json(build_report([record("t.py::r", result({"x": 1, "y": 0}))]),
                        tmp_path)
    document, _ = resolve_baseline(str(report), None)
    assert "t.py::r" in document.tests
    with pytest.raises(FairnessConfigError, match="is not a file, and there is no history"):
        resolve_baseline("ckpt-7", tmp_path / "none.sqlite")


def test_effect_size_value_compares_by_magnitude() -> None:
    """d from 0.2 to -1.5 is a stronger (reverse) association: a regression, not a gain."""
    def ieat_like(d: float) -> ResultSummary:
        return summarize(IndicatorResult(name="ieat", metric="effect_size", value=d,
                                         stats={"effect_size": d}, higher_is_better=False,
                                         min_group_size=2).to_dict())

    (c,) = compare_results(ieat_like(0.2), ieat_like(-1.5), {"value": 0.1}, confidence="point")
    assert c.regressed and (c.baseline, c.now) == (0.2, 1.5) and c.where == "|effect_size|"
    (c,) = compare_results(ieat_like(-0.9), ieat_like(0.3), {"value": 0.1}, confidence="point")
    assert not c.regressed


# -- damaged baselines ----------------------------------------------------------------------------

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


def _report_of(tmp_path: Path, edit: Any) -> Path:
    """A report.json of one test, with ``edit(test_dict)`` applied to its test."""
    import json

    from pytest_fairness.report.json_report import build_report, write_json

    document = build_report([record("t.py::r", result({"x": 1, "y": 0}))])
    test = json.loads(json.dumps(document["tests"][0]))
    edit(test)
    document["tests"] = [test]
    return write_json(document, tmp_path)


def test_a_report_baseline_reads_only_what_a_baseline_keeps(tmp_path: Path) -> None:
    """Damage in a report's checks or regressions does not matter to its results."""
    report = _report_of(tmp_path, lambda t: t.update(checks=None, regressions=[None]))
    document, _ = resolve_baseline(str(report), None)
    assert "t.py::r" in document.tests


def test_a_report_baseline_with_a_damaged_outcome_names_it(tmp_path: Path) -> None:
    report = _report_of(tmp_path, lambda t: t.update(outcome=[]))
    with pytest.raises(FairnessConfigError, match=r"report .* is damaged or was edited: .*"
                                                  r"\['tests'\]\[0\]\['outcome'\] is \[\], "
                                                  r"not a string or null"):
        resolve_baseline(str(report), None)


def test_a_stored_comparison_without_groups_or_notes_reads_back() -> None:
    stored = {"test": "t", "result": "r", "metric": "gap", "baseline": 0.1, "now": 0.2,
              "tolerance": 0.0, "lower_is_better": True, "groups": None, "notes": None}
    comparison = Comparison.from_dict(stored)
    assert comparison.groups == () and comparison.notes == () and comparison.regressed
    with pytest.raises(FairnessConfigError, match=r"\['regressed'\] is 'x', not true or false"):
        Comparison.from_dict({**stored, "regressed": "x"})


def test_a_baseline_is_checked_for_consistency() -> None:
    """Gap and ratio agree with the groups, replicates with n_bootstrap and the point value."""
    from pytest_fairness import indicators as ind
    from pytest_fairness.baseline import build_baseline, validate_baseline

    y, p, g = [1, 0, 1, 1, 0, 1, 0, 0] * 10, [1, 0, 1, 0, 0, 0, 0, 1] * 10, list("aaaabbbb") * 10
    result = ind.group_metrics(y, p, groups=g, n_bootstrap=200, seed=0)
    document = build_baseline([TestRecord("t.py::a", "t.py::a", results=(
        KeyedResult(None, result),))]).to_dict()
    validate_baseline(document)
    summary = document["tests"]["t.py::a"]["results"]["group_metrics (accuracy)"]
    summary["ratio"] = 0.6
    with pytest.raises(FairnessConfigError, match=r"baseline 'f.json': t.py::a :: group_metrics "
                       r"\(accuracy\): its ratio 0.6 is not min / max .*--fairness-save-baseline "
                       "f.json"):
        validate_baseline(document, source="f.json")
    summary["ratio"] = 0.5 / 0.75
    summary["params"]["n_bootstrap"] = 100
    with pytest.raises(FairnessConfigError, match="200 value replicates, but .* n_bootstrap=100"):
        validate_baseline(document)


def test_two_tests_with_the_same_default_result_load_back(tmp_path: Path) -> None:
    """Identical results with a perfect group: the same replicates under other names (its
    group's 1.0, the best group's, the worst group's) are not a copied baseline."""
    from pytest_fairness import indicators as ind

    r = ind.group_metrics([1, 0] * 20, [1, 0] * 10 + [0, 0] * 10,
                          groups=["a"] * 20 + ["b"] * 20, min_group_size=1)
    records = [TestRecord.from_dict({"nodeid": f"t.py::{name}", "outcome": "passed",
                                     "results": [{**r.to_dict(), "key": None}]})
               for name in ("test_a", "test_b")]
    baseline = load_baseline(save_baseline(tmp_path / "base.json", records))
    assert set(baseline.tests) == {"t.py::test_a", "t.py::test_b"}
