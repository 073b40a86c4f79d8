"""Family-wise control: the level of each check, and intervals re-levelled from a result."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_fairness import indicators
from pytest_fairness.bounds import simultaneous
from pytest_fairness.checks import evaluate, rejudge, validate_threshold
from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.family import at_level, family_level, interval_at
from pytest_fairness.records import KeyedResult, ResultSummary
from pytest_fairness.regression import compare_results
from pytest_fairness.results import GroupStat, IndicatorResult


def _result(seed: int = 0, sizes: tuple[int, ...] = (300, 200, 100, 50, 40),
            flip: float = 0.2) -> IndicatorResult:
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(len(sizes)), sizes)
    y = rng.integers(0, 2, groups.size)
    pred = np.where(rng.random(groups.size) < 1 - flip, y, 1 - y)
    return indicators.group_metrics(y, pred, groups=groups, n_bootstrap=1000, seed=0)


def test_family_level_is_bonferroni_over_tests_and_checks() -> None:
    assert family_level(0.05, 1, 1) == pytest.approx(0.9)
    assert family_level(0.05, 20, 2) == pytest.approx(1 - 0.1 / 40)
    with pytest.raises(FairnessConfigError, match="alpha"):
        family_level(0.0, 3, 1)
    with pytest.raises(FairnessConfigError, match="tests=0"):
        family_level(0.05, 0, 1)


def test_percentile_relevels_from_the_stored_replicates() -> None:
    r = _result()
    draws = np.asarray(r.replicates["value"], dtype=np.float64)
    expected = np.quantile(draws, [0.0005, 0.9995])
    assert interval_at(r, "value", 0.999) == pytest.approx(tuple(expected))
    group = np.asarray(r.replicates["group:3"], dtype=np.float64)
    relevelled, _ = at_level(r, 0.99)
    assert relevelled.groups[3].interval == pytest.approx(
        tuple(np.quantile(group, [0.005, 0.995])))


def test_simultaneous_relevels_with_stats_simultaneous() -> None:
    r = _result()
    reps = np.array([r.replicates[f"group:{i}"] for i in range(5)], dtype=np.float64).T
    values = np.array([g.value for g in r.groups])
    weights = np.array([g.n for g in r.groups], dtype=np.float64)  # the SD floor's
    bounds = simultaneous(reps, values, 0.998, weights=weights)
    for row, name in enumerate(("gap", "min", "max")):
        assert interval_at(r, name, 0.998) == pytest.approx(tuple(bounds[row]))
    low, high = simultaneous(np.log(reps), np.log(values), 0.998, weights=weights)[0]
    assert interval_at(r, "ratio", 0.998) == pytest.approx((np.exp(-high), np.exp(-low)))
    # at the result's own level: its own intervals, up to the float32 of stored replicates
    for name in ("gap", "min", "max", "ratio", "value"):
        assert interval_at(r, name, 0.95) == pytest.approx(r.intervals[name], abs=1e-6)


def test_a_higher_level_widens_and_can_leave_a_failure_undecided() -> None:
    r = _result(sizes=(400, 400), flip=0.2)
    gap = r.gap
    limit = validate_threshold((), {"max_gap": max(gap - 0.045, 0.001),
                                    "confidence": "supported"})
    alone = evaluate(r, limit)[0]
    family = evaluate(r, limit, level=0.9999)[0]
    assert alone.level is None and family.level == 0.9999
    assert alone.interval is not None and family.interval is not None
    assert family.interval[0] <= alone.interval[0] and family.interval[1] >= alone.interval[1]
    if alone.verdict == "fail":
        assert family.verdict in ("fail", "inconclusive")
    # re-judging an outcome (inline checks) gives what evaluate gives at that level
    assert rejudge([alone], 0.9999)[0].interval == family.interval


def test_a_result_without_replicates_fails_closed() -> None:
    r = IndicatorResult("demo", "accuracy", 0.8, min_group_size=1,
                        groups=(GroupStat("a", 50, 0.9), GroupStat("b", 50, 0.8)),
                        intervals={"gap": (0.06, 0.18)})
    limit = validate_threshold((), {"max_gap": 0.05, "confidence": "supported"})
    assert evaluate(r, limit)[0].verdict == "fail"  # alone: judged at its own level
    with pytest.raises(FairnessConfigError) as error:
        evaluate(r, limit, level=0.999)
    text = str(error.value)
    assert "max_gap=0.05" in text and "family" in text and "n_bootstrap=1000" in text
    assert "no replicates of its groups" in text


def test_a_per_group_stat_fails_closed_saying_only_the_headline_is_kept() -> None:
    r = _result()
    limit = validate_threshold((), {"max_gap": 0.5, "metric": "TPR",
                                    "confidence": "supported"})
    assert evaluate(r, limit)[0].verdict == "pass"
    with pytest.raises(FairnessConfigError, match="only the headline's per group"):
        evaluate(r, limit, level=0.999)


def test_point_checks_keep_their_verdict_and_no_level() -> None:
    r = IndicatorResult("demo", "accuracy", 0.8, min_group_size=1,
                        groups=(GroupStat("a", 50, 0.9), GroupStat("b", 50, 0.8)))
    limit = validate_threshold((), {"max_gap": 0.05, "confidence": "point"})
    outcome = evaluate(r, limit, level=0.999)[0]
    assert outcome.verdict == "fail" and outcome.level is None


@pytest.mark.usefixtures("paired_draws")
def test_compare_results_judges_the_change_at_the_level() -> None:
    base, now = _result(seed=1), _result(seed=1, flip=0.22)
    b, n = ResultSummary.of(KeyedResult(None, base)), ResultSummary.of(KeyedResult(None, now))
    [c] = compare_results(b, n, {"value": 0.0}, confidence="supported", level=0.999)
    change = -(np.asarray(now.replicates["value"], dtype=np.float64)
               - np.asarray(base.replicates["value"], dtype=np.float64))
    assert c.level == 0.999 and c.paired is True
    assert c.interval == pytest.approx(tuple(np.quantile(change, [0.0005, 0.9995])))
    [alone] = compare_results(b, n, {"value": 0.0}, confidence="supported")
    assert alone.level is None and alone.interval is not None
    assert alone.interval[0] >= c.interval[0]


def test_a_bca_interval_fails_closed_naming_the_percentile_fix() -> None:
    """iEAT's default BCa interval cannot be re-levelled from its replicates alone."""
    rng = np.random.default_rng(0)
    r = indicators.ieat(*(rng.normal(size=(20, 8)) + shift for shift in (0.3, 0, 0, 0.3)),
                        n_bootstrap=200, seed=0)
    limit = validate_threshold((), {"max_effect_size": 5.0, "confidence": "supported"})
    assert evaluate(r, limit)[0].verdict == "pass"
    with pytest.raises(FairnessConfigError, match=r"'bca', re-levelled only when 'percentile'"):
        evaluate(r, limit, level=0.999)
    pct = indicators.ieat(*(rng.normal(size=(20, 8)) for _ in range(4)), n_bootstrap=200,
                          seed=0, interval_method="percentile")
    assert evaluate(pct, limit, level=0.999)[0].level == 0.999


def test_a_stat_sharing_the_gaps_interval_is_relevelled_as_the_gap() -> None:
    """DA's interval is the gap's: re-levelled alike; DEO's is the TPR gap's: fails closed."""
    r = _result()
    assert interval_at(r, "DA", 0.999) == interval_at(r, "gap", 0.999)
    for name in ("DEO", "gap:tpr", "min:tpr"):
        with pytest.raises(FairnessConfigError, match="per-group stat"):
            interval_at(r, name, 0.999)
    relevelled, missing = at_level(r, 0.999)
    assert relevelled.intervals["DA"] == relevelled.intervals["gap"] and "DEO" in missing
