"""The confidence rules of regression checks, and what makes a comparison paired."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_fairness import indicators as ind
from pytest_fairness.records import (
    Baseline,
    BaselineEntry,
    Comparison,
    KeyedResult,
    ResultSummary,
    TestRecord,
)
from pytest_fairness.regression import compare_results, compare_test


def _comparison(worse: float, interval: tuple[float, float] | None, rule: str) -> Comparison:
    return Comparison("t", "r", "gap", 0.1, 0.1 + worse, 0.01, True, confidence=rule,
                      interval=interval)


@pytest.mark.parametrize(("worse", "interval", "point", "supported", "strict"), [
    (0.02, (0.015, 0.025), True, True, True),     # all of it beyond the tolerance
    (0.02, (-0.01, 0.05), True, False, True),     # straddles it
    (0.005, (-0.01, 0.02), False, False, True),   # the change within, the interval not
    (0.0, (-0.005, 0.005), False, False, False),  # all of it within
    (0.02, None, True, True, True),               # no interval: the rules cannot pass it
])
def test_each_rule_reads_its_end_of_the_interval(worse: float, interval: tuple[float, float]
                                                 | None, point: bool, supported: bool,
                                                 strict: bool) -> None:
    verdicts = {rule: _comparison(worse, interval, rule).regressed
                for rule in ("point", "supported", "strict")}
    assert verdicts == {"point": point, "supported": supported, "strict": strict}
    back = Comparison.from_dict(_comparison(worse, interval, "supported").to_dict())
    assert back == _comparison(worse, interval, "supported")


def _data(seed: int, flip: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    groups = np.repeat(["a", "b"], 200)
    y = rng.integers(0, 2, 400)
    right = rng.random(400) < np.where(groups == "a", 0.9, 0.8)
    right ^= np.random.default_rng(seed + 1).random(400) < flip
    return y, np.where(right, y, 1 - y), groups


def _summary(y: np.ndarray, pred: np.ndarray, groups: np.ndarray,
             seed: int = 0) -> ResultSummary:
    return ResultSummary.of(KeyedResult(None, ind.group_metrics(
        y, pred, groups=groups, n_bootstrap=300, seed=seed)))


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(["headline", "gap", "ratio", "value"]))
def test_a_result_against_itself_is_a_zero_change_with_a_zero_interval(
        seed: int, metric: str) -> None:
    summary = _summary(*_data(seed))
    (c,) = compare_results(summary, summary, {metric: 0.0}, confidence="strict")
    assert c.paired is True and c.interval == (0.0, 0.0) and not c.regressed


@pytest.mark.usefixtures("paired_draws")
def test_relabelling_the_groups_changes_nothing() -> None:
    y, pred, groups = _data(3, flip=0.05)
    y0, pred0, _ = _data(3)
    renamed = np.where(groups == "a", "z", "y")
    before = compare_results(_summary(y0, pred0, groups), _summary(y, pred, groups),
                             {"headline": 0.0})[0]
    after = compare_results(_summary(y0, pred0, renamed), _summary(y, pred, renamed),
                            {"headline": 0.0})[0]
    assert after.paired is before.paired is True
    assert (after.worse_by, *after.interval) == pytest.approx(  # type: ignore[misc]
        (before.worse_by, *before.interval))  # type: ignore[misc]


@pytest.mark.usefixtures("paired_draws")
def test_another_seed_or_other_images_are_unpaired_and_wider() -> None:
    y, pred, groups = _data(4)
    _, noisy, _ = _data(4, flip=0.05)
    base = _summary(y, pred, groups)
    paired = compare_results(base, _summary(y, noisy, groups), {"gap": 0.0})[0]
    reseeded = compare_results(base, _summary(y, noisy, groups, seed=1), {"gap": 0.0})[0]
    other = compare_results(base, _summary(y[:300], noisy[:300], groups[:300]),
                            {"gap": 0.0})[0]
    assert paired.paired and not reseeded.paired and not other.paired
    assert paired.interval is not None and reseeded.interval is not None
    width = {c: c.interval[1] - c.interval[0] for c in (paired, reseeded)}  # type: ignore[index]
    assert width[paired] < width[reseeded]
    assert any("different seeds (0 and 1)" in n for n in reseeded.notes)
    assert any("resampled different units" in n for n in other.notes)


def test_the_most_demanding_rule_on_a_metric_wins() -> None:
    y, pred, groups = _data(5)
    result = ind.group_metrics(y, pred, groups=groups, n_bootstrap=300, seed=0)
    keyed = KeyedResult(None, result)
    baseline = Baseline({"t.py::a": BaselineEntry("t.py::a", results={
        "group_metrics (accuracy)": ResultSummary.of(keyed)})})
    record = TestRecord("t.py::a", "t.py::a", results=(keyed,))

    def rules(compare_fail: dict, marks: list) -> list[tuple[str, float, str]]:
        out, _ = compare_test(baseline, record, compare_fail=compare_fail, marks=marks,
                              compare_confidence="supported")
        return [(c.metric, c.tolerance, c.confidence) for c in out]

    mark = {"tolerance": 0.01, "metric": "gap", "confidence": "strict"}
    assert rules({"gap": 0.01}, [mark]) == [("gap", 0.01, "strict")]
    assert rules({"gap": 0.0}, [mark]) == [("gap", 0.0, "supported")]
    assert rules({"headline": 0.02}, [mark]) == [("headline", 0.02, "supported"),
                                                 ("gap", 0.01, "strict")]


def test_a_gated_result_the_baseline_does_not_match_is_not_compared() -> None:
    """Each side's unmatched result is a ``not compared`` note; ungated, nothing is said."""
    y, pred, groups = _data(5)
    result = ind.group_metrics(y, pred, groups=groups)
    baseline = Baseline({"t.py::a": BaselineEntry("t.py::a", results={
        "group_metrics (accuracy)": ResultSummary.of(KeyedResult(None, result))})})
    keyed = TestRecord("t.py::a", "t.py::a", results=(KeyedResult("acc", result),))
    out, notes = compare_test(baseline, keyed, compare_fail={"gap": 0.0}, marks=[],
                              source="b.json")
    assert out == []
    assert notes == [
        "not compared: t.py::a :: acc (not in the baseline b.json, whose entry of the test "
        "has: group_metrics (accuracy))",
        "not compared: t.py::a :: group_metrics (accuracy) (in the baseline b.json; this "
        "run's test returned acc)",
    ]
    renamed = TestRecord("t.py::b", "t.py::b", results=(KeyedResult(None, result),))
    mark = {"tolerance": 0.0, "metric": "headline"}
    assert compare_test(baseline, renamed, compare_fail={}, marks=[mark], source="b.json")[1] \
        == ["not compared: t.py::b :: group_metrics (accuracy) (the test is not in the "
            "baseline b.json)"]
    assert compare_test(baseline, renamed, compare_fail={}, marks=[]) == ([], [])
    nowhere = {**mark, "result": "tpr"}
    assert compare_test(baseline, renamed, compare_fail={}, marks=[nowhere])[1] == [
        "not compared: t.py::b :: tpr (fairness.no_regression(result='tpr') names no result "
        "of the test; it returned group_metrics (accuracy))"]
