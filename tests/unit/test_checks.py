"""Unit tests of threshold semantics in ``pytest_fairness.checks``."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

from pytest_fairness import fairness
from pytest_fairness.checks import collecting, evaluate, validate_threshold
from pytest_fairness.errors import (
    FairnessConfigError,
    FairnessViolation,
    InsufficientDataError,
)
from pytest_fairness.indicators import fair_sa
from pytest_fairness.markers import check
from pytest_fairness.options import LIMITS
from pytest_fairness.records import CheckOutcome
from pytest_fairness.results import GroupStat, IndicatorResult, Matrix

NAN = math.nan


def full(**overrides: Any) -> IndicatorResult:
    """One result that every limit can read; all numbers exactly representable."""
    fields: dict[str, Any] = dict(
        name="demo",
        metric="accuracy",
        value=0.625,
        groups=(
            GroupStat("a", 100, 0.75, interval=(0.625, 0.875)),
            GroupStat("b", 100, 0.375, interval=(0.25, 0.5)),
            GroupStat("c", 3, 0.0625, interval=(0.0, 1.0), excluded=True),
        ),
        stats={"effect_size": -0.5, "p_value": 0.25, "amplification": -0.125,
               "variance": 0.0625, "l1": 1.5},
        intervals={"gap": (0.25, 0.5), "ratio": (0.25, 0.75), "effect_size": (-0.75, -0.25),
                   "p_value": (0.125, 0.5), "amplification": (-0.25, 0.0),
                   "variance": (0.03125, 0.125), "l1": (1.0, 2.0)},
        matrices={"auc": Matrix(("a", "b"), ("blur", "noise"), ((0.25, NAN), (-0.75, 0.5)))},
    )
    fields.update(overrides)
    return IndicatorResult(**fields)


def two(a: float, b: float, **kwargs: Any) -> IndicatorResult:
    return IndicatorResult("demo", "accuracy", 0.5, min_group_size=1,
                           groups=(GroupStat("a", 10, a), GroupStat("b", 10, b)), **kwargs)


def run(obj: Any, /, **limits: Any) -> list[CheckOutcome]:
    return evaluate(obj, validate_threshold((), limits))


# -- what each limit observes -------------------------------------------------------------

OBSERVED = [
    ("max_gap", 0.375, ""),
    ("min_ratio", 0.5, ""),
    ("min_value", 0.375, "group b"),
    ("max_value", 0.75, "group a"),
    ("max_effect_size", 0.5, ""),
    ("min_p_value", 0.25, ""),
    ("max_amplification", -0.125, ""),
    ("max_variance", 0.0625, ""),
    ("max_auc", 0.75, "cell b × blur"),
    ("max_l1", 1.5, ""),
]


def test_observed_table_covers_every_limit() -> None:
    assert sorted(limit for limit, _, _ in OBSERVED) == sorted(LIMITS)


@pytest.mark.parametrize("limit, observed, where", OBSERVED)
def test_each_limit_observes_the_documented_number(limit: str, observed: float,
                                                   where: str) -> None:
    (outcome,) = run(full(), **{limit: 1.0 if limit.startswith("min") else 2.0},
                     confidence="point")
    assert outcome.limit == limit
    assert outcome.observed == observed
    assert outcome.where == where
    assert outcome.confidence == "point"


@pytest.mark.parametrize("limit, observed, where", OBSERVED)
def test_equal_to_the_limit_passes_and_beyond_fails(limit: str, observed: float,
                                                    where: str) -> None:
    (at_limit,) = run(full(), **{limit: observed}, confidence="point")
    assert at_limit.passed
    # Clearly beyond (1e-6 relative), so float-rounding tolerance cannot pass it.
    step = 1e-6 * max(1.0, abs(observed)) * (1 if LIMITS[limit].bound == "min" else -1)
    (beyond,) = run(full(), **{limit: observed + step}, confidence="point")
    assert not beyond.passed
    assert beyond.threshold == observed + step


def test_value_limits_use_the_headline_without_groups() -> None:
    r = IndicatorResult("demo", "nme", 0.25)
    (low,) = run(r, min_value=0.25, confidence="point")
    (high,) = run(r, max_value=0.125, confidence="point")
    assert low.observed == high.observed == 0.25
    assert low.passed and not high.passed and low.where == ""


def test_value_limits_skip_excluded_groups() -> None:
    (outcome,) = run(full(), min_value=0.1, confidence="point")
    assert outcome.observed == 0.375 and outcome.passed  # c (0.0625) is excluded


def test_max_auc_takes_the_absolute_value_and_skips_nan() -> None:
    r = full(matrices={"auc": Matrix(("x",), ("p", "q"), ((NAN, -0.5),))})
    (outcome,) = run(r, max_auc=0.5, confidence="point")
    assert outcome.observed == 0.5 and outcome.where == "cell x × q" and outcome.passed


def test_lower_is_better_does_not_change_gap_limits() -> None:
    (outcome,) = run(full(higher_is_better=False), max_gap=0.375, confidence="point")
    assert outcome.observed == 0.375 and outcome.passed


def test_a_gap_equal_to_the_limit_up_to_rounding_passes() -> None:
    (outcome,) = fairness.check(two(0.92, 0.88), max_gap=0.04, confidence="point")
    assert outcome.observed > 0.04  # 0.040000000000000036: equal up to rounding
    (outcome,) = fairness.check(two(0.3, 0.1), min_ratio=1 / 3, confidence="point")
    assert outcome.passed


# -- confidence ---------------------------------------------------------------------------

CONFIDENCE = [
    # max limits: supported fails only when the low end is beyond; strict when the high end is.
    ("max_gap", 0.3, "point", False),
    ("max_gap", 0.3, "supported", True),
    ("max_gap", 0.3, "strict", False),
    ("max_gap", 0.2, "supported", False),
    ("max_gap", 0.5, "strict", True),
    ("max_gap", 0.25, "supported", True),
    ("max_gap", 0.4, "point", True),
    ("max_gap", 0.4, "strict", False),
    # min limits: supported fails only when the high end is below; strict when the low end is.
    ("min_ratio", 0.6, "point", False),
    ("min_ratio", 0.6, "supported", True),
    ("min_ratio", 0.6, "strict", False),
    ("min_ratio", 0.8, "supported", False),
    ("min_ratio", 0.25, "strict", True),
    ("min_ratio", 0.4, "strict", False),
    ("max_variance", 0.1, "supported", True),
    ("max_variance", 0.1, "strict", False),
    ("max_l1", 1.25, "point", False),
    ("max_l1", 1.25, "supported", True),
    ("max_amplification", -0.2, "supported", True),
    ("max_amplification", -0.2, "strict", False),
    # |effect size|: interval (-0.75, -0.25) becomes (0.25, 0.75).
    ("max_effect_size", 0.3, "point", False),
    ("max_effect_size", 0.3, "supported", True),
    ("max_effect_size", 0.3, "strict", False),
    ("max_effect_size", 0.2, "supported", False),
    ("max_effect_size", 0.75, "strict", True),
    # group limits: each group's own interval.
    ("min_value", 0.4, "point", False),
    ("min_value", 0.4, "supported", True),
    ("min_value", 0.4, "strict", False),
    ("min_value", 0.25, "strict", True),
    ("min_value", 0.6, "supported", False),
    ("max_value", 0.7, "point", False),
    ("max_value", 0.7, "supported", True),
    ("max_value", 0.7, "strict", False),
    ("max_value", 0.875, "strict", True),
    ("max_value", 0.6, "supported", False),
]


@pytest.mark.parametrize("limit, threshold, confidence, passed", CONFIDENCE)
def test_confidence_modes(limit: str, threshold: float, confidence: str, passed: bool) -> None:
    (outcome,) = run(full(), **{limit: threshold}, confidence=confidence)
    assert outcome.passed is passed
    assert outcome.confidence == confidence


@pytest.mark.parametrize("confidence", ["point", "supported", "strict"])
@pytest.mark.parametrize(("threshold", "passed"), [(0.3, False), (0.25, True), (0.125, True)])
def test_a_p_value_is_judged_on_its_value_under_every_rule(threshold: float, passed: bool,
                                                           confidence: str) -> None:
    """A p-value is a test's own outcome: no rule reads an interval of it (full() has one,
    (0.125, 0.5), which supported would pass at 0.3 and strict fail at 0.125)."""
    (outcome,) = run(full(), min_p_value=threshold, confidence=confidence)
    assert outcome.observed == 0.25 and outcome.passed is passed
    assert (outcome.confidence, outcome.level) == ("point", None)
    assert outcome.verdict == ("pass" if passed else "fail")
    (bare,) = run(full(intervals={}), min_p_value=threshold, confidence=confidence)
    assert bare.passed is passed and bare.interval is None  # no interval needed


def test_effect_size_interval_straddling_zero_starts_at_zero() -> None:
    r = full(intervals={"effect_size": (-0.25, 0.75)})
    (outcome,) = run(r, max_effect_size=0.0, confidence="supported")
    assert outcome.interval == (0.0, 0.75) and outcome.passed
    (outcome,) = run(r, max_effect_size=0.5, confidence="strict")
    assert not outcome.passed


def test_group_limit_picks_the_decisive_group_under_confidence() -> None:
    r = IndicatorResult("demo", "accuracy", 0.5, min_group_size=1, groups=(
        GroupStat("wide", 10, 0.5, interval=(0.0, 1.0)),
        GroupStat("narrow", 10, 0.375, interval=(0.35, 0.4)),
    ))
    (point,) = run(r, min_value=0.3, confidence="point")
    assert point.where == "group narrow" and point.passed
    (strict,) = run(r, min_value=0.3, confidence="strict")
    assert strict.where == "group wide" and strict.observed == 0.5
    assert strict.interval == (0.0, 1.0) and not strict.passed


def test_headline_value_interval_under_confidence() -> None:
    r = IndicatorResult("demo", "nme", 0.25, intervals={"value": (0.125, 0.375)})
    (outcome,) = run(r, max_value=0.3, confidence="supported")
    assert outcome.passed and outcome.interval == (0.125, 0.375)
    (outcome,) = run(r, max_value=0.3, confidence="strict")
    assert not outcome.passed


@pytest.mark.parametrize(
    "limit, result",
    [("max_gap", full(intervals={})), ("min_ratio", full(intervals={})),
     ("max_effect_size", full(intervals={})),
     ("max_value", IndicatorResult("demo", "nme", 0.25)),
     ("min_value", two(0.5, 0.25))],
)
@pytest.mark.parametrize("confidence", ["supported", "strict"])
def test_missing_interval_is_a_config_error(limit: str, result: IndicatorResult,
                                            confidence: str) -> None:
    with pytest.raises(FairnessConfigError,
                       match=rf"confidence='{confidence}' needs an interval for {limit}.*"
                             r"confidence='point'"):
        run(result, **{limit: 0.5}, confidence=confidence)


def test_missing_interval_is_fine_with_point() -> None:
    (outcome,) = run(full(intervals={}), max_gap=0.5, confidence="point")
    assert outcome.passed and outcome.interval is None


def test_max_auc_with_confidence_needs_an_interval() -> None:
    with pytest.raises(FairnessConfigError,
                       match=r"confidence='supported' needs an interval for max_auc.*"
                             r"confidence='point'"):
        run(full(), max_auc=0.5, confidence="supported")


# -- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "limit, stat",
    [("max_effect_size", "effect_size"), ("min_p_value", "p_value"),
     ("max_amplification", "amplification"), ("max_variance", "variance"), ("max_l1", "l1")],
)
def test_missing_stat_names_the_stat(limit: str, stat: str) -> None:
    with pytest.raises(FairnessConfigError,
                       match=rf"{limit} bounds stats\['{stat}'\], which 'demo' \(accuracy\) "
                             r"does not report \(its stats: other\)"):
        run(two(0.5, 0.25, stats={"other": 1.0}), **{limit: 0.5})


def test_missing_stat_lists_none() -> None:
    with pytest.raises(FairnessConfigError, match=r"\(its stats: none\)"):
        run(two(0.5, 0.25), min_p_value=0.05)


def test_missing_auc_matrix() -> None:
    with pytest.raises(FairnessConfigError, match=r"max_auc bounds matrices\['auc'\].*'demo'"):
        run(two(0.5, 0.25), max_auc=0.5)


def test_all_nan_auc_matrix() -> None:
    r = full(matrices={"auc": Matrix(("a",), ("p",), ((NAN,),))})
    with pytest.raises(InsufficientDataError, match="AUC matrix of 'demo' is empty"):
        run(r, max_auc=0.5, confidence="point")


@pytest.mark.parametrize("limit", ["max_gap", "min_ratio"])
@pytest.mark.parametrize(
    "groups",
    [(), (GroupStat("a", 100, 0.5),),
     (GroupStat("a", 100, 0.5), GroupStat("b", 3, 0.25, excluded=True))],
    ids=["none", "one", "one-excluded"],
)
def test_gap_limits_need_two_included_groups(limit: str, groups: tuple[GroupStat, ...]) -> None:
    r = IndicatorResult("demo", "accuracy", 0.5, groups=groups)
    with pytest.raises(InsufficientDataError,
                       match=rf"{limit} needs at least 2 groups with n >= min_group_size=30"):
        run(r, **{limit: 0.5})


@pytest.mark.parametrize("limit", ["min_value", "max_value", "max_gap", "min_ratio"])
def test_a_nan_group_value_fails_group_limits_naming_the_group(limit: str) -> None:
    """Left out of the gap and of the worst group, a NaN group would pass them all."""
    r = IndicatorResult("demo", "accuracy", 0.5, min_group_size=1, groups=(
        GroupStat("a", 10, 0.75), GroupStat("b", 10, NAN), GroupStat("c", 10, 0.5),
        GroupStat("d", 1, NAN, excluded=True)))
    [outcome] = run(r, **{limit: 0.5})
    assert not outcome.passed and math.isnan(outcome.observed) and outcome.where == "group b"
    with pytest.raises(FairnessViolation, match=rf"{limit}=0.5 \(\w+ NaN \(group b\)\)"):
        check(r, **{limit: 0.5})


def test_a_nan_group_stat_fails_a_limit_on_it() -> None:
    """metric= a per-group stat: a NaN in a compared group fails, naming group and stat."""
    r = IndicatorResult("demo", "accuracy", 0.5, min_group_size=1, groups=(
        GroupStat("a", 10, 0.75, stats={"tpr": 0.5}), GroupStat("b", 10, 0.5, stats={"tpr": NAN})))
    [outcome] = run(r, max_gap=0.5, metric="tpr")
    assert not outcome.passed and outcome.where == "group b tpr"


def test_insufficient_data_message_lists_group_sizes() -> None:
    r = IndicatorResult("demo", "accuracy", 0.5, groups=(
        GroupStat("a", 100, 0.5), GroupStat(("b", "x"), 3, 0.25, excluded=True)))
    with pytest.raises(InsufficientDataError, match=r"groups: a \(n=100\), b × x \(n=3\)"):
        run(r, max_gap=0.1)


def test_ratio_of_negative_values_is_insufficient() -> None:
    with pytest.raises(InsufficientDataError, match=r"min_ratio: the ratio .* negative"):
        run(two(-0.5, 0.25), min_ratio=0.5)


@pytest.mark.parametrize("limit", ["min_value", "max_value"])
def test_value_limits_need_an_included_group(limit: str) -> None:
    r = IndicatorResult("demo", "accuracy", 0.5, groups=(GroupStat("a", 3, 0.5, excluded=True),))
    with pytest.raises(InsufficientDataError,
                       match=rf"{limit}: no group of 'demo' has n >= min_group_size=30"):
        run(r, **{limit: 0.5})


@pytest.mark.parametrize("results", [None, [], {}, "result", [1, 2], {"a": 1}])
def test_nothing_to_check(results: Any) -> None:
    with pytest.raises(FairnessConfigError, match=r"needs an IndicatorResult to check, but got"):
        fairness.check(results, max_gap=0.1)


def test_check_validates_its_limits() -> None:
    with pytest.raises(FairnessConfigError, match=r"unknown keyword maxgap=0\.1"):
        fairness.check(two(0.5, 0.25), maxgap=0.1)


# -- which results -------------------------------------------------------------------------


def test_list_of_results_checks_each() -> None:
    outcomes = run([two(0.5, 0.25), two(0.5, 0.5)], max_gap=0.125, confidence="point")
    assert [o.passed for o in outcomes] == [False, True]
    assert [o.key for o in outcomes] == [None, None]


def test_dict_of_results_carries_keys() -> None:
    outcomes = run({"acc": two(0.5, 0.25), "f1": two(0.5, 0.5)}, max_gap=0.125, min_ratio=0.5,
                   confidence="point")
    assert [(o.key, o.limit, o.passed) for o in outcomes] == [
        ("acc", "max_gap", False), ("acc", "min_ratio", True),
        ("f1", "max_gap", True), ("f1", "min_ratio", True)]


def test_result_selects_by_dict_key() -> None:
    outcomes = run({"acc": two(0.5, 0.25), "f1": two(0.5, 0.5)}, max_gap=0.125, result="f1",
                   confidence="point")
    assert [(o.key, o.passed) for o in outcomes] == [("f1", True)]


def test_result_selects_by_indicator_name() -> None:
    other = IndicatorResult("other", "x", 0.5, min_group_size=1,
                            groups=(GroupStat("a", 10, 1.0), GroupStat("b", 10, 0.0)))
    outcomes = run([other, two(0.5, 0.5)], max_gap=0.125, result="demo", confidence="point")
    assert len(outcomes) == 1 and outcomes[0].result.name == "demo" and outcomes[0].passed


@pytest.mark.parametrize(
    "results, names",
    [({"acc": two(0.5, 0.25), "f1": two(0.5, 0.5)}, "acc, f1"),
     ([two(0.5, 0.25), IndicatorResult("bias_amp", "m", 0.5)], "bias_amp, demo")],
    ids=["dict", "list"],
)
def test_result_matching_nothing_lists_the_choices(results: Any, names: str) -> None:
    with pytest.raises(FairnessConfigError,
                       match=rf"result='zz' matches none of the returned results \({names}\)"):
        fairness.check(results, max_gap=0.1, result="zz")


# -- at= -------------------------------------------------------------------------------------


def swept() -> IndicatorResult:
    return IndicatorResult(
        "label_association", "hit_rate", 0.5, at=0.5, min_group_size=1,
        groups=(GroupStat("a", 10, 0.5), GroupStat("b", 10, 0.25)),
        slices=(two(0.5, 0.5, at=0.75), two(0.75, 0.0, at=0.25)),
    )


def test_at_selects_a_slice() -> None:
    (outcome,) = run(swept(), max_gap=0.125, at=0.75, confidence="point")
    assert outcome.passed and outcome.observed == 0.0 and outcome.result.at == 0.75
    (outcome,) = run(swept(), max_gap=0.125, at=0.25, confidence="point")
    assert not outcome.passed and outcome.observed == 0.75
    (outcome,) = run(swept(), max_gap=0.125, confidence="point")
    assert outcome.observed == 0.25 and outcome.result.at == 0.5


def test_at_missing_lists_coordinates() -> None:
    with pytest.raises(FairnessConfigError,
                       match=r"at=0\.9 is not a coordinate.*available: 0\.5, 0\.75, 0\.25"):
        fairness.check(swept(), max_gap=0.1, at=0.9)


# -- fairness.check ------------------------------------------------------------------------


def test_check_returns_outcomes_when_passing() -> None:
    outcomes = fairness.check(two(0.5, 0.25), max_gap=0.25, min_value=0.25, confidence="point")
    assert isinstance(outcomes, tuple)
    assert [(o.limit, o.passed) for o in outcomes] == [("max_gap", True), ("min_value", True)]
    assert check(two(0.5, 0.25), max_gap=0.25, confidence="point") == outcomes[:1]


def test_check_raises_a_violation_carrying_outcomes() -> None:
    with pytest.raises(FairnessViolation) as info:
        fairness.check(two(0.5, 0.25), max_gap=0.125, min_value=0.25, confidence="point")
    err = info.value
    assert isinstance(err, AssertionError)
    assert [(o.limit, o.passed) for o in err.outcomes] == [("max_gap", False), ("min_value", True)]
    assert [o.limit for o in err.violations] == ["max_gap"]
    assert "max_gap=0.125" in str(err)


def test_collecting_captures_inline_checks() -> None:
    a, b = two(0.5, 0.25), two(0.5, 0.5)
    with collecting() as sink:
        fairness.check(b, max_gap=0.1, confidence="point")
        with pytest.raises(FairnessViolation):
            fairness.check(a, max_gap=0.1, confidence="point")
    assert [results for results, _ in sink] == [b, a]
    assert [[o.passed for o in outcomes] for _, outcomes in sink] == [[True], [False]]


def test_collecting_is_scoped() -> None:
    with collecting() as outer:
        with collecting() as inner:
            fairness.check(two(0.5, 0.5), max_gap=0.1, confidence="point")
        fairness.check(two(0.5, 0.5), min_ratio=0.5, confidence="point")
    assert len(inner) == 1 and len(outer) == 1
    assert outer[0][1][0].limit == "min_ratio"
    with collecting() as later:
        pass
    fairness.check(two(0.5, 0.5), max_gap=0.1, confidence="point")
    assert later == []


def test_collecting_ignores_config_errors() -> None:
    with collecting() as sink:
        with pytest.raises(FairnessConfigError):
            fairness.check(two(0.5, 0.25), max_gap=-1)
    assert sink == []


# -- CheckOutcome --------------------------------------------------------------------------


def test_outcome_label_and_to_dict() -> None:
    (outcome,) = run({"acc": swept()}, max_gap=0.125, at=0.75, confidence="point")
    assert outcome.label == "acc: demo (accuracy) at 0.75"
    data = json.loads(json.dumps(outcome.to_dict(), allow_nan=False))
    assert data == {"limit": "max_gap", "threshold": 0.125, "observed": 0.0, "passed": True,
                    "indicator": "demo", "metric": "accuracy", "at": 0.75, "key": "acc",
                    "confidence": "point", "interval": None, "where": "", "reads": "",
                    "verdict": "pass", "decide": ""}


def test_a_limit_on_a_named_metric_says_so_where_it_is_listed() -> None:
    """The summary's limits column and the HTML name the metric= a limit reads."""
    from pytest_fairness import indicators
    from pytest_fairness.records import CheckOutcome
    from pytest_fairness.report.terminal import limit_name

    result = indicators.group_metrics([1, 0, 1, 1] * 4, [1, 0, 0, 1] * 4,
                                      groups=["a"] * 8 + ["b"] * 8, min_group_size=1,
                                      n_bootstrap=0)
    (outcome,) = run(result, max_gap=0.9, metric="TPR", confidence="point")
    assert outcome.reads == "TPR" and limit_name(outcome) == "max_gap(TPR)"
    assert CheckOutcome.from_dict(outcome.to_dict()).reads == "TPR"
    (plain,) = run(full(), max_gap=0.9)
    assert limit_name(plain) == "max_gap"


def test_outcome_to_dict_with_interval_and_where() -> None:
    (outcome,) = run(full(), min_value=0.4, confidence="supported")
    data = outcome.to_dict()
    assert data["interval"] == [0.25, 0.5] and data["where"] == "group b"
    assert data["observed"] == 0.375 and data["passed"] is True


def test_max_auc_uses_the_cell_intervals_under_confidence() -> None:
    """|AUC| intervals per cell: the decisive cell is the one whose interval end decides."""
    matrix = Matrix(("a", "b"), ("blur", "noise"), ((0.25, -0.6), (-0.75, 0.5)),
                    intervals=(((0.1, 0.4), (-0.9, -0.7)), ((-1.0, 0.2), (0.3, 0.6))))
    r = full(matrices={"auc": matrix})
    # supported: each cell's lowest |AUC|: 0.1, 0.7, 0 (straddles 0), 0.3
    (supported,) = run(r, max_auc=0.65, confidence="supported")
    assert not supported.passed and supported.where == "cell a × noise"
    assert supported.observed == 0.6 and supported.interval == (0.7, 0.9)
    (strict,) = run(r, max_auc=0.95, confidence="strict")
    assert not strict.passed and strict.where == "cell b × blur"  # |AUC| up to 1.0


def test_max_auc_cell_without_interval_is_insufficient_under_confidence() -> None:
    matrix = Matrix(("a",), ("blur", "noise"), ((0.25, -0.6),),
                    intervals=(((0.1, 0.4), None),))
    with pytest.raises(InsufficientDataError, match=r"cell a × noise .* has no interval"):
        run(full(matrices={"auc": matrix}), max_auc=0.65, confidence="supported")
    (point,) = run(full(matrices={"auc": matrix}), max_auc=0.65, confidence="point")
    assert point.passed


# -- the review's findings (a check on an undefined bounded number) -------------------------------


def test_undefined_l1_is_insufficient_data_not_a_violation() -> None:
    rng = np.random.default_rng(1)
    clean = rng.normal(size=(8, 4))
    features = {None: clean, ("blur", 1.0): clean + rng.normal(scale=0.5, size=(8, 4))}
    r = fair_sa(features, attribute=[0] * 4 + [1] * 4, perturbations=["blur"],
                levels=[1.0], threshold=0.9,  # default min_group_size=30: all excluded
                n_bootstrap=0)
    assert math.isnan(r.stats["l1"])
    with pytest.raises(InsufficientDataError):
        fairness.check(r, max_auc=0.5, confidence="point")  # the matrix limit already says so
    with pytest.raises(InsufficientDataError, match="min_group_size"):
        fairness.check(r, max_l1=0.5, confidence="point")
