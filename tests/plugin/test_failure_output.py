"""End to end: what a failing or inline-checked fairness test prints.

The group table appears once per failure, a limit once per summary row, and a test that
only calls ``fairness.check`` is a fairness test like a marked one.
"""

from __future__ import annotations

import re

import pytest

HEADER = "from pytest_fairness import fairness, indicators as ind\nimport pytest\n"

#: Point-rule checks (the gap 0.25 passes 0.3 and breaks 0.1); no intervals are needed.
INLINE_ONLY = """
def gap_result():
    return ind.group_metrics(Y, P, groups=G, min_group_size=1, n_bootstrap=0)

def test_inline_only():
    fairness.check(gap_result(), max_gap=0.3, confidence="point")

def test_inline_in_a_comprehension():
    r = gap_result()
    assert all(o[0].passed for o in [fairness.check(r, min_ratio=0.5, confidence="point")
                                     for _ in range(1)])

def test_plain():
    pass

@pytest.mark.fairness_unit
def test_of_the_check_itself():
    with pytest.raises(AssertionError):
        fairness.check(gap_result(), max_gap=0.1, confidence="point")
"""


def test_inline_check_without_marker_is_skipped_without_fairness(
        pytester: pytest.Pytester, data_source: str) -> None:
    pytester.makepyfile(HEADER + data_source + INLINE_ONLY)
    result = pytester.runpytest("-rs", "--strict-markers")
    result.assert_outcomes(passed=2, skipped=2)  # fairness_unit keeps a test ordinary
    result.stdout.fnmatch_lines(["*run with `pytest --fairness`*"])


def test_inline_check_without_marker_is_recorded_and_selected(
        pytester: pytest.Pytester, data_source: str, xdist_args: list[str]) -> None:
    pytester.makepyfile(HEADER + data_source + INLINE_ONLY)
    result = pytester.runpytest("--fairness", "-m", "fairness", *xdist_args)
    result.assert_outcomes(passed=2)  # -m fairness: test_plain is deselected
    result.stdout.fnmatch_lines(["*fairness summary*"])
    for test, limit in (("test_inline_only", "max_gap=0.3"),
                        ("test_inline_in_a_comprehension", "min_ratio=0.5")):
        result.stdout.fnmatch_lines([f"*::{test} *group_metrics (accuracy)*{limit}*passed"])


@pytest.mark.parametrize("on_ci", [False, True], ids=["terminal", "ci"])
def test_failure_prints_the_group_table_once(pytester: pytest.Pytester, data_source: str,
                                             xdist_args: list[str], on_ci: bool,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # On CI (and under -vv) pytest's short summary prints crash messages whole.
    if on_ci:
        monkeypatch.setenv("CI", "true")
    else:
        monkeypatch.delenv("CI", raising=False)
        monkeypatch.delenv("BUILD_NUMBER", raising=False)
    pytester.makepyfile(HEADER + data_source + """
@fairness.threshold(max_gap=0.1, confidence="point")
@fairness.threshold(min_ratio=0.9, confidence="point")
def test_gap():
    return ind.group_metrics(Y, P, groups=G, min_group_size=1, n_bootstrap=0)

def test_inline():
    fairness.check(ind.group_metrics(Y, P, groups=G, min_group_size=1, n_bootstrap=0),
                   max_gap=0.1, confidence="point")
""")
    result = pytester.runpytest("--fairness", *xdist_args)
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    failures = out[:out.index("short test summary info")]
    assert len(re.findall(r"group +n +accuracy +Δ best", failures)) == 2, out
    if on_ci:  # pytest prints crash messages whole: the marker's is one line
        summary = out[out.index("short test summary info"):].splitlines()[1:]
        assert ("FAILED test_failure_prints_the_group_table_once.py::test_gap - Failed: "
                "FairnessViolation: 2 fairness limits broken: max_gap=0.1 (gap 0.25); "
                "min_ratio=0.9 (ratio 0.6667)") in summary, out
        assert ("FAILED test_failure_prints_the_group_table_once.py::test_inline - "
                "pytest_fairness.errors.FairnessViolation: 1 fairness limit broken: "
                "max_gap=0.1 (gap 0.25)") in summary, out
    result.stdout.fnmatch_lines(["*2 fairness limits broken*", "*- Captured fairness call -*",
                                 "*groups: shown above*"])
    assert "Traceback" not in out and "hidden" not in out, out


def test_agreeing_marker_and_inline_check_are_one_limit(
        pytester: pytest.Pytester, data_source: str) -> None:
    pytester.makepyfile(HEADER + data_source + """
@fairness.threshold(max_gap=0.3, confidence="point")
def test_both():
    r = ind.group_metrics(Y, P, groups=G, min_group_size=1, n_bootstrap=0)
    fairness.check(r, max_gap=0.3, confidence="point")
    return r
""")
    result = pytester.runpytest("--fairness")
    result.assert_outcomes(passed=1)
    (row,) = [line for line in result.outlines if "::test_both" in line and "accuracy" in line]
    assert row.count("max_gap=0.3") == 1, row
