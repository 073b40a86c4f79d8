"""Limits on a named metric: ``metric=`` on fairness.threshold and fairness.check."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_fairness import fairness, indicators
from pytest_fairness.checks import validate_threshold
from pytest_fairness.errors import FairnessConfigError, FairnessViolation, InsufficientDataError


def _classification():
    # a: 4 positives (TPR 3/4), 4 negatives (FPR 1/4); b: TPR 1/4, FPR 2/4.
    y = [1, 1, 1, 1, 0, 0, 0, 0] * 2
    p = [1, 1, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0]
    groups = ["a"] * 8 + ["b"] * 8
    return indicators.group_metrics(y, p, groups=groups, min_group_size=1, n_bootstrap=0)


@pytest.mark.parametrize(("metric", "expected"), [
    ("DEO", 0.5), ("DEOdds", 0.75), ("DA", 0.75 - 0.375),  # accuracy a 6/8, b 3/8
    ("DTO", float(np.hypot(1 - 0.75, 1 - 0.375))),
])
def test_max_value_bounds_the_named_stat(metric: str, expected: float) -> None:
    r = _classification()
    assert r.stats[metric] == pytest.approx(expected)
    (ok,) = fairness.check(r, max_value=expected, metric=metric, confidence="point")
    assert ok.passed and ok.observed == r.stats[metric] and ok.where == metric
    with pytest.raises(FairnessViolation, match=rf"max_value={expected - 0.01:.4g}.*{metric}"):
        fairness.check(r, max_value=expected - 0.01, metric=metric, confidence="point")


def test_max_gap_of_a_per_group_stat_and_case() -> None:
    r = _classification()
    (ok,) = fairness.check(r, max_gap=0.5, metric="TPR", confidence="point")  # groups' "tpr"
    assert ok.observed == pytest.approx(0.5) == r.stats["DEO"]
    (fpr,) = fairness.check(r, max_gap=0.25, metric="fpr", confidence="point")
    assert fpr.observed == pytest.approx(0.25)
    (low,) = fairness.check(r, min_value=0.25, metric="tpr", confidence="point")
    assert low.where == "group b tpr"
    (ratio,) = fairness.check(r, min_ratio=0.3, metric="tpr", confidence="point")
    assert ratio.observed == pytest.approx(1 / 3)


def test_nme_of_landmarks() -> None:
    truth = [[[0, 0], [10, 0]]] * 4
    pred = [[[0, 0], [10, 0]], [[1, 0], [10, 0]], [[0, 0], [10, 0]], [[0, 0], [13, 0]]]
    r = indicators.landmark_metrics(truth, pred, groups=[0, 0, 1, 1], normalizer=(0, 1),
                                    min_group_size=1, n_bootstrap=0)
    (overall,) = fairness.check(r, max_value=0.1, metric="NME", confidence="point")
    assert overall.observed == pytest.approx((0.05 + 0.15) / 4)
    # group nme 0.025 and 0.075
    (gap,) = fairness.check(r, max_gap=0.06, metric="NME", confidence="point")
    assert gap.observed == pytest.approx(0.05)
    with pytest.raises(FairnessViolation):
        fairness.check(r, max_gap=0.04, metric="nme", confidence="point")


def test_named_stat_uses_its_interval_under_confidence() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 600)
    p = np.where(rng.random(600) < 0.8, y, 1 - y)
    r = indicators.group_metrics(y, p, groups=rng.integers(0, 2, 600), n_bootstrap=300,
                                 seed=0)
    low, high = r.intervals["DEO"]
    (supported,) = fairness.check(r, max_value=(low + high) / 2, metric="DEO",
                                  confidence="supported")
    assert supported.passed and supported.interval == (low, high)
    with pytest.raises(FairnessViolation):
        fairness.check(r, max_value=(low + high) / 2, metric="DEO", confidence="strict")
    (gap,) = fairness.check(r, max_gap=1.0, metric="TPR", confidence="strict")
    assert gap.interval == r.intervals["gap:tpr"]


def test_unknown_name_lists_what_indicators_offer() -> None:
    with pytest.raises(FairnessConfigError, match=r"metric='DEOO' is not a metric any "
                       r"indicator offers.*group_metrics: accuracy, .*DEO, DEOdds"):
        validate_threshold((), {"max_value": 0.1, "metric": "DEOO"})


def test_name_the_result_lacks_lists_its_own() -> None:
    r = _classification()
    with pytest.raises(FairnessConfigError, match=r"'group_metrics' \(accuracy\) has no such "
                       r"name.*offers: DA, DEO, DEOdds, DTO, MGA, accuracy, mGA, fpr, tpr"):
        fairness.check(r, max_value=0.1, metric="NME")


def test_metric_only_with_value_gap_and_ratio_limits() -> None:
    with pytest.raises(FairnessConfigError, match="max_l1 bounds its own"):
        validate_threshold((), {"max_l1": 0.1, "metric": "DEO"})


def test_undefined_named_stat_is_insufficient_data() -> None:
    r = indicators.group_metrics([1, 0, 1, 0], [1, 0, 1, 1], groups=["a", "a", "b", "b"],
                                 min_group_size=3)
    with pytest.raises(InsufficientDataError, match="DEO"):
        fairness.check(r, max_value=0.1, metric="DEO")


def test_metric_fails_at_collection_in_a_test_module(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
from pytest_fairness import fairness

@fairness.threshold(max_value=0.1, metric="DE0")
def test_typo():
    pass
""")
    result = pytester.runpytest("--fairness")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*metric='DE0' is not a metric any indicator offers*"])
