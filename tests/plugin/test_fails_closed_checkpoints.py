"""A checkpoint comparison reaches a verdict in the test it belongs to, or fails it (#25).

With several ``--fairness-checkpoint``, each test's record is compared with its record at
the reference checkpoint when the test finishes: a regression is a FAILED line of that
test, ``no_regression`` is honoured without ``--fairness-baseline``, a reference that
produced nothing fails a gated test with "not compared", and the reports carry a verdict.
"""

from __future__ import annotations

import json

import pytest
import scipy.sparse  # noqa: F401  (pytester forgets what a run imported; the bootstrap's
import scipy.special  # noqa: F401  scipy loads numpy.fft, which loads once a process)

#: One test per checkpoint: "worse" makes group b lose accuracy; "same" changes nothing.
MODULE = '''
import pytest

from pytest_fairness import fairness, indicators as ind

{data}

def predictions(checkpoint):
    if checkpoint == "worse":
        return [1 - p if g == "b" and p == y else p for y, p, g in zip(Y, P, G)]
    return P


{marker}
def test_gap(fairness_checkpoint):
    {body}
    return ind.group_metrics(Y, predictions(fairness_checkpoint), groups=G, min_group_size=1)
'''

CHECKPOINTS = [arg for name in ("base", "same", "worse")
               for arg in ("--fairness-checkpoint", name)]


def _module(data: str, *, marker: str = "@pytest.mark.fairness", body: str = "") -> str:
    return MODULE.format(data=data, marker=marker, body=body or "pass")


def test_a_regression_between_checkpoints_fails_its_test(
        pytester: pytest.Pytester, xdist_args: list[str], data_source: str) -> None:
    pytester.makepyfile(test_gap=_module(data_source))
    result = pytester.runpytest("--fairness", *CHECKPOINTS, "--fairness-compare-fail", "gap:0",
                                "-rf", *xdist_args)
    result.assert_outcomes(failed=1, passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "FairnessViolation: 1 fairness regression against the reference checkpoint base: "
        "group_metrics (accuracy): gap 0.25 → 0.75",
    ])
    result.stdout.fnmatch_lines(["FAILED test_gap.py::test_gap[[]worse] - *"])
    result.stdout.fnmatch_lines([
        "fairness checkpoints: each compared with base (1 regression in 1 test (2 "
        "comparisons), confidence supported)",
        "  ok test_gap.py::test_gap[[]same] :: *",
        "  REGRESSED test_gap.py::test_gap[[]worse] :: *",
    ])


def test_no_regression_is_compared_with_the_reference_checkpoint(
        pytester: pytest.Pytester, xdist_args: list[str], data_source: str) -> None:
    pytester.makepyfile(test_gap=_module(data_source,
                                         marker="@fairness.no_regression(tolerance=0.0)"))
    result = pytester.runpytest("--fairness", *CHECKPOINTS, "-rf", *xdist_args)
    result.assert_outcomes(failed=1, passed=2)
    result.stdout.fnmatch_lines([
        "FairnessViolation: 1 fairness regression against the reference checkpoint base: "
        "group_metrics (accuracy): headline 0.25 → 0.75",
    ])
    result.stdout.fnmatch_lines(["FAILED test_gap.py::test_gap[[]worse] - *"])


def test_a_reference_without_result_fails_a_gated_test_as_not_compared(
        pytester: pytest.Pytester, xdist_args: list[str], data_source: str) -> None:
    body = 'assert fairness_checkpoint != "base", "the reference cannot load"'
    pytester.makepyfile(test_gap=_module(data_source, body=body))
    result = pytester.runpytest("--fairness", *CHECKPOINTS, "--fairness-compare-fail", "gap:0",
                                "-rf", *xdist_args)
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines([
        "FairnessViolation: not compared: "
        "test_gap.py::test_gap at same: the reference checkpoint base produced no result "
        "for it (*failed*)*",
    ])

    result = pytester.runpytest("--fairness", *CHECKPOINTS, "-rf", *xdist_args)
    result.assert_outcomes(failed=1, passed=2)  # nothing is gated: shown, not judged


def test_a_deselected_reference_fails_a_gated_test_at_once(
        pytester: pytest.Pytester, data_source: str) -> None:
    pytester.makepyfile(test_gap=_module(data_source,
                                         marker="@fairness.no_regression(tolerance=0.0)"))
    result = pytester.runpytest("--fairness", *CHECKPOINTS, "-k", "not base", "-rf",
                                "-n", "2")
    result.assert_outcomes(failed=2)  # -n 2 does not count deselected tests
    result.stdout.fnmatch_lines([
        "FairnessViolation: not compared: "
        "test_gap.py::test_gap at worse: the reference checkpoint base produced no result "
        "for it (*did not run*)*",
    ])


def test_the_reports_carry_each_checkpoint_verdict(
        pytester: pytest.Pytester, data_source: str) -> None:
    pytester.makepyfile(test_gap=_module(data_source))
    result = pytester.runpytest("--fairness", *CHECKPOINTS, "--fairness-compare-fail", "gap:0",
                                "--fairness-report", "out")
    result.assert_outcomes(failed=1, passed=2)
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    assert [(c["test"], c["verdict"]) for c in report["checkpoint_comparisons"]] == [
        ("test_gap.py::test_gap[same]", "ok"), ("test_gap.py::test_gap[worse]", "REGRESSED")]
    assert report["summary"]["regressions"] == 1
    page = (pytester.path / "out" / "report.html").read_text()
    assert "<th>verdict</th>" in page
    assert '<span class="REGRESSED">REGRESSED</span>' in page
    assert "regressions: 1" in page

    result = pytester.runpytest("--fairness", *CHECKPOINTS, "--fairness-report", "out")
    result.assert_outcomes(passed=3)
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    assert {c["verdict"] for c in report["checkpoint_comparisons"]} == {"not judged"}
    assert report["summary"]["regressions"] == 0
