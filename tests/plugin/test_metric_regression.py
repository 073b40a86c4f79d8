"""End to end: regressions gated on a named stat (DEO): marker, option and command."""

from __future__ import annotations

import json

import pytest

from pytest_fairness.cli import main

#: Group b's true-positive rate: 0.5 as saved, 0 with B=worse, 1 with B=better; its accuracy
#: is the same saved and better, so only DEO tells those two apart. No replicates
#: (n_bootstrap=0): the DEO comparisons are judged by the point rule, named explicitly.
MODULE = """
import os
import pytest
from pytest_fairness import fairness, indicators as ind

B = {"": [1, 0, 0, 0], "worse": [0, 0, 0, 0], "better": [1, 1, 0, 1]}[os.environ.get("B", "")]

def result():
    return ind.group_metrics([1, 1, 0, 0] * 20, [1, 1, 0, 0] * 10 + B * 10,
                             groups=["a"] * 40 + ["b"] * 40, min_group_size=1, n_bootstrap=0)

@fairness.no_regression(metric="DEO", confidence="point")
def test_marked():
    return result()

@pytest.mark.fairness
def test_plain():
    return result()
"""
RUN = ("--fairness", "--fairness-baseline", "base.json", "--fairness-no-history",
       "--fairness-compare-confidence", "point")


@pytest.fixture
def saved(pytester: pytest.Pytester) -> pytest.Pytester:
    """The module and a baseline saved from it (DEO 0.5)."""
    pytester.makepyfile(test_mod=MODULE)
    result = pytester.runpytest("--fairness", "--fairness-save-baseline", "base.json",
                                "--fairness-no-history")
    result.assert_outcomes(passed=2)
    return pytester


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["no_xdist", "xdist_two"])
def test_deo_gates_the_marker_and_the_option(saved: pytest.Pytester,
                                             monkeypatch: pytest.MonkeyPatch,
                                             mode: list[str]) -> None:
    """DEO got worse: both tests fail on DEO; DEO got better: both pass."""
    monkeypatch.setenv("B", "worse")
    result = saved.runpytest(*RUN, "--fairness-compare-fail", "DEO:0", *mode)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*REGRESSED: group_metrics (accuracy): DEO baseline 0.5 → "
                                 "now 1 (+0.5 worse, tolerance 0, lower is better)"])
    monkeypatch.setenv("B", "better")
    saved.runpytest(*RUN, "--fairness-compare-fail", "DEO:0", *mode).assert_outcomes(passed=2)


def test_the_marker_alone_gates_its_test(saved: pytest.Pytester,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("B", "worse")
    result = saved.runpytest(*RUN, "-rf")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["FairnessViolation: 1 fairness regression against the baseline "
                                 "base.json: group_metrics (accuracy): DEO 0.5 → 1",
                                 "FAILED test_mod.py::test_marked - *"])


def _old_layout(path: str) -> None:
    """Rewrite a baseline as today's files are: no stats, overall or per group."""
    with open(path) as file:
        document = json.load(file)
    for entry in document["tests"].values():
        for summary in entry["results"].values():
            del summary["stats"]
            for group in summary["groups"].values():
                del group["stats"]
    with open(path, "w") as file:
        json.dump(document, file)


def test_an_old_baseline_compares_on_gap_and_names_a_missing_stat(
        saved: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """The marked test cannot compare DEO with it: a regression, with the test and the fix."""
    _old_layout(str(saved.path / "base.json"))
    result = saved.runpytest(*RUN, "--fairness-compare-fail", "gap:0", "-rf")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*ok: group_metrics (accuracy): gap baseline 0.25 → now 0.25 *",
        "*REGRESSED: group_metrics (accuracy): DEO baseline n/a → now 0.5 *",
        "*note: DEO is not in the baseline entry of test_mod.py::test_marked :: group_metrics "
        "(accuracy) *counted as a regression; save the baseline again with "
        "--fairness-save-baseline"])
    result.stdout.fnmatch_lines(["FAILED test_mod.py::test_marked - *"])
    monkeypatch.setenv("B", "worse")
    saved.runpytest(*RUN, "--fairness-compare-fail", "gap:0").assert_outcomes(failed=2)


def test_the_compare_command_fails_on_deo(saved: pytest.Pytester,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    for variant in ("worse", "better"):
        monkeypatch.setenv("B", variant)
        saved.runpytest("--fairness", "--fairness-save-baseline", f"{variant}.json",
                        "--fairness-no-history").assert_outcomes(passed=2)
    base = str(saved.path / "base.json")
    point = ["--confidence", "point"]
    assert main(["compare", base, str(saved.path / "worse.json"), "--fail", "DEO:0", *point]) == 1
    assert main(["compare", base, str(saved.path / "better.json"), "--fail", "DEO:0", *point]) == 0
    assert main(["compare", base, str(saved.path / "better.json"), "--fail", "gap:0", *point]) == 0
