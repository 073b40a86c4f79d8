"""readings.read_metric: which number ``metric=`` names, the same for limits and regressions."""

from __future__ import annotations

import math

import pytest

from pytest_fairness import fairness
from pytest_fairness.baseline import validate_baseline
from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.readings import Reading, read_metric
from pytest_fairness.records import KeyedResult, ResultSummary
from pytest_fairness.regression import compare_results
from pytest_fairness.results import GroupStat, IndicatorResult


def groups(b_acc: float = 0.5, b_tpr: float = 0.25) -> IndicatorResult:
    """A group_metrics-like result: a (0.75, tpr 0.75), b; DEO the tpr gap."""
    return IndicatorResult(
        "group_metrics", "accuracy", 0.6, min_group_size=1,
        groups=(GroupStat("a", 10, 0.75, interval=(0.7, 0.8), stats={"tpr": 0.75}),
                GroupStat("b", 10, b_acc, stats={"tpr": b_tpr})),
        stats={"accuracy": 0.6, "MGA": 0.75, "DEO": 0.75 - b_tpr, "p_value": 0.2},
        intervals={"gap": (0.1, 0.4), "DEO": (0.3, 0.7), "gap:tpr": (0.2, 0.8)},
        replicates={"gap": (0.25, 0.5)})


def ieat(d: float) -> IndicatorResult:
    return IndicatorResult("ieat", "effect_size", d, stats={"effect_size": d},
                           intervals={"effect_size": (-0.9, -0.1)}, higher_is_better=False)


def read(result: IndicatorResult, metric: str, over_groups: bool = False) -> Reading:
    return read_metric(result, metric, over_groups=over_groups)


@pytest.mark.parametrize(("metric", "number", "label", "lower", "interval"), [
    ("headline", 0.25, "gap (DA)", True, (0.1, 0.4)),
    ("gap", 0.25, "", True, (0.1, 0.4)),
    ("ratio", 0.5 / 0.75, "", False, None),
    ("value", 0.6, "", False, None),
    ("worst", 0.5, "group b", False, None),
    ("DEO", 0.5, "DEO", True, (0.3, 0.7)),
    ("deo", 0.5, "DEO", True, (0.3, 0.7)),         # case-insensitive when unambiguous
    ("MGA", 0.75, "MGA", False, None),             # a level: the result's direction
    ("p_value", 0.2, "p_value", False, None),      # larger p-values are better
    ("TPR", 0.5, "gap of tpr across groups", True, (0.2, 0.8)),
])
def test_every_name_on_a_group_result(metric: str, number: float, label: str, lower: bool,
                                      interval: tuple[float, float] | None) -> None:
    r = read(groups(), metric)
    assert r.number == pytest.approx(number)
    assert (r.label, r.lower_is_better, r.interval) == (label, lower, interval)
    assert r.replicates == ((0.25, 0.5) if metric in ("headline", "gap") else None)


def test_a_per_group_stat_is_the_result_with_it_as_group_values() -> None:
    r = read(groups(), "TPR")
    assert r.name == "tpr" and r.groups is not None
    assert [g.value for g in r.groups.groups] == [0.75, 0.25]
    assert r.groups.ratio == pytest.approx(1 / 3)
    assert read(groups(), "tpr", over_groups=True).number == pytest.approx(0.5)


def test_headline_and_value_of_ieat_are_by_magnitude() -> None:
    head, value = read(ieat(-0.5), "headline"), read(ieat(-0.5), "value")
    assert (head.number, head.label, head.magnitude, head.interval) == (
        0.5, "|effect size|", True, (0.1, 0.9))
    assert (value.number, value.label, value.lower_is_better) == (0.5, "|effect_size|", True)
    stat = read(ieat(-0.5), "effect_size")  # the headline's own stat: its direction, |d|
    assert (stat.number, stat.magnitude, stat.lower_is_better) == (0.5, True, True)


def test_worst_without_groups_is_the_value_and_undefined_gap_is_nan() -> None:
    assert read(ieat(0.3), "worst").number == 0.3
    assert math.isnan(read(ieat(0.3), "gap").number)


def test_an_unknown_name_lists_what_the_result_offers() -> None:
    with pytest.raises(FairnessConfigError, match=r"metric='DEOO': 'group_metrics' \(accuracy\) "
                       r"has no such name among its stats or its groups' stats; it offers: DEO, "
                       r"MGA, accuracy, p_value, tpr \(and headline, gap, ratio, value, worst\)\. "
                       r"Did you mean 'DEO'\?"):
        read(groups(), "DEOO")
    with pytest.raises(FairnessConfigError, match=r"among its groups' stats .*offers: tpr\.$"):
        read(groups(), "DEO", over_groups=True)


# -- the same names in limits ------------------------------------------------------------


@pytest.mark.parametrize(("limits", "observed", "where"), [
    ({"max_value": 0.3, "metric": "gap"}, 0.25, ""),
    ({"max_value": 0.3, "metric": "headline"}, 0.25, "gap (DA)"),
    ({"min_value": 0.5, "metric": "worst"}, 0.5, "group b"),
    ({"min_value": 0.5, "metric": "value"}, 0.6, ""),
    ({"max_value": 0.5, "metric": "DEO"}, 0.5, "DEO"),
    ({"max_gap": 0.5, "metric": "TPR"}, 0.5, "tpr across groups"),
    ({"min_value": 0.25, "metric": "TPR"}, 0.25, "group b tpr"),
])
def test_limits_read_the_same_names(limits: dict[str, object], observed: float,
                                    where: str) -> None:
    (outcome,) = fairness.check(groups(), **limits, confidence="point")
    assert outcome.passed and outcome.observed == pytest.approx(observed)
    assert outcome.where == where


def test_a_gap_limit_on_one_number_is_refused() -> None:
    with pytest.raises(FairnessConfigError, match=r"max_gap with metric='value'.*groups' stats"):
        fairness.check(groups(), max_gap=0.1, metric="value")


# -- the same names in regressions -------------------------------------------------------


def summary(result: IndicatorResult) -> ResultSummary:
    return ResultSummary.of(KeyedResult(None, result))


@pytest.mark.parametrize(("metric", "worse_by", "where"), [
    ("headline", 0.25, "gap (DA)"), ("gap", 0.25, ""), ("ratio", 1 / 3, ""),
    ("value", 0.0, ""), ("worst", 0.25, "group b"), ("DEO", 0.0, ""),
    ("TPR", 0.0, "gap of tpr across groups"),
])
def test_regressions_read_the_same_names(metric: str, worse_by: float, where: str) -> None:
    """Group b's accuracy drops (0.5 → 0.25); its tpr stays."""
    (c,) = compare_results(summary(groups()), summary(groups(b_acc=0.25)), {metric: 0.0},
                           test="t.py::a", result="r", confidence="point")
    assert (c.metric, c.where) == (metric, where)
    assert c.worse_by == pytest.approx(worse_by) and c.regressed == (worse_by > 0)


@pytest.mark.parametrize("metric", ["DEO", "TPR", "deo"])
def test_a_named_stat_regresses_when_it_grows(metric: str) -> None:
    (c,) = compare_results(summary(groups()), summary(groups(b_tpr=0.0)), {metric: 0.1},
                           confidence="point")
    assert (c.baseline, c.now) == pytest.approx((0.5, 0.75)) and c.regressed


def test_stats_travel_through_the_baseline_file() -> None:
    stored = summary(groups())
    back = ResultSummary.from_dict(stored.to_dict())
    assert back == stored and back.stats["DEO"] == 0.5 and back.groups["b"].stats == {
        "tpr": 0.25}
    no_stats = summary(IndicatorResult("x", "m", 0.5, groups=(GroupStat("a", 5, 0.5),)))
    assert "stats" not in no_stats.to_dict() and "stats" not in no_stats.to_dict()["groups"]["a"]


OLD = {"format": "pytest-fairness-baseline", "schema": 1, "metadata": {}, "tests": {
    "t.py::a": {"test": "t.py::a", "checkpoint": None, "outcome": "passed", "results": {
        "group_metrics (accuracy)": {
            "indicator": "group_metrics", "metric": "accuracy", "higher_is_better": True,
            "at": None, "min_group_size": 1, "value": 0.6, "gap": 0.25, "ratio": 0.5 / 0.75,
            "worst": {"group": "b", "value": 0.5}, "params": {},
            "groups": {"a": {"n": 10, "value": 0.75, "interval": None, "excluded": False},
                       "b": {"n": 10, "value": 0.5, "interval": None, "excluded": False}}}}}}}


def test_an_old_baseline_compares_on_gap_and_names_a_missing_stat() -> None:
    """A baseline written before stats were kept: gap compares; DEO is a regression with
    a note that names the test and the fix, never a silent pass."""
    old = validate_baseline(OLD).tests["t.py::a"].results["group_metrics (accuracy)"]
    gap, deo = compare_results(old, summary(groups()), {"gap": 0.0, "DEO": 0.0},
                               test="t.py::a", result="group_metrics (accuracy)",
                               confidence="point")
    assert gap.baseline == pytest.approx(0.25) and not gap.regressed
    assert deo.baseline is None and deo.now == 0.5 and deo.regressed
    assert ("DEO is not in the baseline entry of t.py::a :: group_metrics (accuracy)"
            in deo.notes[0] and "save the baseline again with --fairness-save-baseline"
            in deo.notes[0])


def test_a_name_the_current_result_lacks_is_a_config_error() -> None:
    with pytest.raises(FairnessConfigError, match=r"t\.py::a :: r: cannot compare "
                       r"metric='DTO'.*Did you mean 'DEO'\?"):
        compare_results(summary(groups()), summary(groups()), {"DTO": 0.0},
                        test="t.py::a", result="r")
