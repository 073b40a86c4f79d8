"""End to end: a drift budget fails accepted small regressions that add up (#29)."""

from __future__ import annotations

import pytest

#: Group b gets 7 more of its 1,000 images wrong each run (K): its accuracy drops by 0.007 a
#: run, and the gap (group a is always right) grows by 0.007. No replicates (n_bootstrap=0):
#: each run's change is judged by the point rule, named explicitly, as the drift always is.
MODULE = """
import os
from pytest_fairness import indicators as ind
import pytest

K = int(os.environ["K"])

@pytest.mark.fairness
def test_gap():
    y = [0, 1] * 1000
    pred = [1 - v if i in range(1000, 1000 + 7 * K) else v for i, v in enumerate(y)]
    return ind.group_metrics(y, pred, groups=["a"] * 1000 + ["b"] * 1000, min_group_size=1,
                             n_bootstrap=0)
"""
GATE = ("--fairness", "--fairness-no-history", "--fairness-baseline=base.json",
        "--fairness-save-baseline", "base.json", "--fairness-compare-fail", "gap:0.01:0.03",
        "--fairness-compare-confidence", "point")


def test_accepted_regressions_add_up_to_a_drift_failure(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist_args: list[str]) -> None:
    """Five regressions of 0.007 (tolerance 0.01), each accepted and re-saved while the total
    stays within the budget 0.03: the fifth brings it to 0.035 and fails."""
    pytester.makepyfile(test_mod=MODULE)
    monkeypatch.setenv("K", "0")
    pytester.runpytest("--fairness", "--fairness-no-history", "--fairness-save-baseline",
                       "base.json", *xdist_args).assert_outcomes(passed=1)
    for k in (1, 2, 3, 4):
        monkeypatch.setenv("K", str(k))
        result = pytester.runpytest(*GATE, *xdist_args)
        result.assert_outcomes(passed=1)  # each change accepted and saved as the baseline
        result.stdout.fnmatch_lines(["fairness baseline saved: *base.json"])
    monkeypatch.setenv("K", "5")
    result = pytester.runpytest(*GATE, "-rf", *xdist_args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*ok: group_metrics (accuracy): gap baseline 0.028 → now 0.035 (+0.007 worse, "
        "tolerance 0.01, lower is better)",
        "*REGRESSED: group_metrics (accuracy): gap drift since the origin (saved *) "
        "origin 0 → now 0.035 (+0.035 worse, budget 0.03, lower is better)",
        "*note: drift budget of gap: test_mod.py::test_gap :: group_metrics (accuracy): origin 0 "
        "(saved *) → now 0.035, +0.035 worse in total, budget 0.03 — exceeded: *Fix the model; "
        "*delete the test's \"origin\" from the baseline file base.json*",
        "fairness baseline NOT saved to 'base.json': this run failed*",
    ])


def test_a_bad_budget_is_a_usage_error(pytester: pytest.Pytester) -> None:
    """The option, the item and the fix; and a budget below the tolerance."""
    pytester.makepyfile(test_mod=MODULE)
    result = pytester.runpytest("--fairness", "--fairness-baseline=base.json",
                                "--fairness-compare-fail", "gap:0.01:x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*argument --fairness-compare-fail: gap: a drift budget must "
                                 "be a number >= 0*got 'x'. 'gap:0.01:x' reads "
                                 "metric:tolerance:budget, e.g. gap:0.01:0.03."])
    result = pytester.runpytest("--fairness", "--fairness-baseline=base.json",
                                "--fairness-compare-fail", "gap:0.03:0.01")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*'gap:0.03:0.01': the drift budget 0.01 is below the "
                                 "tolerance 0.03*"])
