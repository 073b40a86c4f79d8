"""Hypothesis properties of the result contract: round trip, gap and ratio invariances."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_fairness.checks import evaluate, validate_threshold
from pytest_fairness.results import Curve, GroupStat, IndicatorResult, Matrix

# Local settings (not a global profile, which would change other modules' tests):
# generated results are nested, so the first examples can be slow on a shared machine.
relaxed = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

text = st.text(max_size=8)
names = st.text("abcxyz_", min_size=1, max_size=6)
# Keys that never compare equal across kinds (no bools or floats beside ints).
group_keys = st.one_of(
    text, st.integers(-5, 50), st.tuples(names, st.integers(0, 3)), st.tuples(names, names)
)
any_float = st.floats(allow_nan=False, allow_infinity=True, width=64)
finite = st.floats(-1e6, 1e6, allow_nan=False)
unit = st.floats(0, 1, allow_nan=False)


def interval_of(values: st.SearchStrategy[float]) -> st.SearchStrategy[tuple[float, float]]:
    return st.tuples(values, values).map(lambda p: (min(p), max(p)))


stat_maps = st.dictionaries(names, any_float, max_size=3)


@st.composite
def group_stats(draw: st.DrawFn, key: Any, values: st.SearchStrategy[float] = any_float,
                with_nan: bool = False) -> GroupStat:
    value = draw(st.one_of(values, st.just(math.nan)) if with_nan else values)
    return GroupStat(
        key,
        draw(st.integers(0, 10_000)),
        value,
        interval=draw(st.none() | interval_of(any_float)),
        excluded=draw(st.booleans()),
        stats=draw(stat_maps),
    )


@st.composite
def group_tuples(draw: st.DrawFn, values: st.SearchStrategy[float] = any_float,
                 min_size: int = 0, max_size: int = 5) -> tuple[GroupStat, ...]:
    keys = draw(st.lists(group_keys, min_size=min_size, max_size=max_size, unique=True))
    return tuple(draw(group_stats(k, values)) for k in keys)


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), finite, text)
params = st.dictionaries(
    names, st.one_of(json_scalars, st.lists(json_scalars, max_size=3),
                     st.dictionaries(names, json_scalars, max_size=2)), max_size=4)
tables = st.dictionaries(
    names, st.lists(st.dictionaries(names, json_scalars, max_size=3), max_size=3).map(tuple),
    max_size=2)


@st.composite
def curves(draw: st.DrawFn) -> Curve:
    n = draw(st.integers(0, 4))
    x = draw(st.lists(any_float, min_size=n, max_size=n))
    y = draw(st.lists(any_float, min_size=n, max_size=n))
    band = draw(st.none() | st.lists(interval_of(any_float), min_size=n, max_size=n))
    return Curve(tuple(x), tuple(y), x_label=draw(text), y_label=draw(text),
                 interval=None if band is None else tuple(band))


@st.composite
def matrices(draw: st.DrawFn) -> Matrix:
    rows = draw(st.lists(group_keys, max_size=3, unique=True))
    cols = draw(st.lists(group_keys, max_size=3, unique=True))
    values = [draw(st.lists(any_float, min_size=len(cols), max_size=len(cols))) for _ in rows]
    return Matrix(tuple(rows), tuple(cols), tuple(tuple(v) for v in values))


coordinates = st.one_of(st.none(), st.integers(0, 1000), finite)


@st.composite
def results(draw: st.DrawFn, depth: int = 1) -> IndicatorResult:
    slices: tuple[IndicatorResult, ...] = ()
    if depth > 0:
        slices = tuple(draw(st.lists(results(depth=depth - 1), max_size=2)))
    return IndicatorResult(
        name=draw(names),
        metric=draw(text),
        value=draw(any_float),
        groups=draw(group_tuples()),
        stats=draw(stat_maps),
        intervals=draw(st.dictionaries(names, interval_of(any_float), max_size=3)),
        curves=draw(st.dictionaries(names, curves(), max_size=2)),
        matrices=draw(st.dictionaries(names, matrices(), max_size=1)),
        tables=draw(tables),
        params=draw(params),
        higher_is_better=draw(st.booleans()),
        min_group_size=draw(st.integers(0, 100)),
        at=draw(coordinates),
        slices=slices,
        notes=tuple(draw(st.lists(text, max_size=2))),
    )


# -- round trip ---------------------------------------------------------------------------


@settings(relaxed, max_examples=50)
@given(results())
def test_round_trip(r: IndicatorResult) -> None:
    # One test for the three forms of the property: generating nested results is the
    # expensive part, so each example is used three times.
    data = r.to_dict()
    assert IndicatorResult.from_dict(data) == r
    assert IndicatorResult.from_dict(json.loads(json.dumps(data, allow_nan=False))) == r
    assert IndicatorResult.from_dict(data).to_dict() == data


@relaxed
@given(st.data())
def test_nan_values_survive_strict_json(data: st.DataObject) -> None:
    keys = data.draw(st.lists(group_keys, max_size=4, unique=True))
    groups = tuple(data.draw(group_stats(k, with_nan=True)) for k in keys)
    r = IndicatorResult("x", "m", math.nan, groups=groups, stats={"s": math.nan})
    back = IndicatorResult.from_dict(json.loads(json.dumps(r.to_dict(), allow_nan=False)))
    assert back.to_dict() == r.to_dict()
    assert [math.isnan(g.value) for g in back.groups] == [math.isnan(g.value) for g in groups]


# -- gap and ratio ------------------------------------------------------------------------


@relaxed
@given(group_tuples(finite, min_size=2))
def test_gap_is_non_negative_and_matches_an_oracle(groups: tuple[GroupStat, ...]) -> None:
    r = IndicatorResult("x", "m", 0.0, groups=groups)
    values = [g.value for g in groups if not g.excluded]
    if len(values) < 2:
        assert math.isnan(r.gap)
    else:
        assert r.gap >= 0
        assert r.gap == max(values) - min(values)


@relaxed
@given(group_tuples(st.floats(0, 1e6, allow_nan=False), min_size=2))
def test_ratio_is_in_unit_interval(groups: tuple[GroupStat, ...]) -> None:
    r = IndicatorResult("x", "m", 0.0, groups=groups)
    if len(r.included_groups) < 2:
        assert math.isnan(r.ratio)
    else:
        assert 0.0 <= r.ratio <= 1.0


@relaxed
@given(group_tuples(finite, min_size=2))
def test_ratio_is_nan_only_for_negatives_or_too_few(groups: tuple[GroupStat, ...]) -> None:
    r = IndicatorResult("x", "m", 0.0, groups=groups)
    values = [g.value for g in r.included_groups]
    assert math.isnan(r.ratio) == (len(values) < 2 or min(values) < 0)


@relaxed
@given(st.data(), group_tuples(finite, min_size=2))
def test_gap_ratio_best_worst_ignore_group_order(data: st.DataObject,
                                                 groups: tuple[GroupStat, ...]) -> None:
    shuffled = tuple(data.draw(st.permutations(groups)))
    a = IndicatorResult("x", "m", 0.0, groups=groups)
    b = IndicatorResult("x", "m", 0.0, groups=shuffled)
    assert a.gap == b.gap or (math.isnan(a.gap) and math.isnan(b.gap))
    assert a.ratio == b.ratio or (math.isnan(a.ratio) and math.isnan(b.ratio))
    if a.best_group is not None:
        assert a.best_group.value == b.best_group.value  # type: ignore[union-attr]
        assert a.worst_group.value == b.worst_group.value  # type: ignore[union-attr]


@relaxed
@given(group_tuples(finite, min_size=2), st.lists(names, min_size=5, max_size=5, unique=True))
def test_gap_and_ratio_ignore_group_names(groups: tuple[GroupStat, ...],
                                          new_names: list[str]) -> None:
    renamed = tuple(
        GroupStat(name, g.n, g.value, interval=g.interval, excluded=g.excluded, stats=g.stats)
        for name, g in zip(new_names, groups)
    )
    a = IndicatorResult("x", "m", 0.0, groups=groups)
    b = IndicatorResult("x", "m", 0.0, groups=renamed)
    assert a.gap == b.gap or (math.isnan(a.gap) and math.isnan(b.gap))
    assert a.ratio == b.ratio or (math.isnan(a.ratio) and math.isnan(b.ratio))


@relaxed
@given(group_tuples(st.floats(0, 1e3, allow_nan=False).filter(lambda v: v == 0 or v > 1e-3),
                    min_size=2),
       st.floats(1e-2, 1e2))
def test_scaling_scales_gap_and_keeps_ratio(groups: tuple[GroupStat, ...], c: float) -> None:
    scaled = tuple(
        GroupStat(g.group, g.n, g.value * c, excluded=g.excluded) for g in groups
    )
    a = IndicatorResult("x", "m", 0.0, groups=groups)
    b = IndicatorResult("x", "m", 0.0, groups=scaled)
    if len(a.included_groups) < 2:
        assert math.isnan(b.gap)
        return
    assert b.gap == pytest.approx(c * a.gap, rel=1e-9, abs=1e-9)
    assert b.ratio == pytest.approx(a.ratio, rel=1e-9, abs=1e-12)


@relaxed
@given(group_tuples(finite, min_size=1))
def test_higher_is_better_swaps_best_and_worst(groups: tuple[GroupStat, ...]) -> None:
    up = IndicatorResult("x", "m", 0.0, groups=groups)
    down = IndicatorResult("x", "m", 0.0, groups=groups, higher_is_better=False)
    if up.best_group is None:
        assert down.best_group is None and down.worst_group is None
        return
    assert up.best_group.value == down.worst_group.value  # type: ignore[union-attr]
    assert up.worst_group.value == down.best_group.value  # type: ignore[union-attr]
    assert up.best_group.value >= up.worst_group.value  # type: ignore[union-attr]


@relaxed
@given(group_tuples(st.floats(0, 1, allow_nan=False), min_size=2), unit)
def test_max_gap_verdict_is_gap_at_most_limit(groups: tuple[GroupStat, ...],
                                              limit: float) -> None:
    r = IndicatorResult("x", "m", 0.0, groups=groups)
    if len(r.included_groups) < 2:
        return
    (outcome,) = evaluate(r, validate_threshold((), {"max_gap": limit, "confidence": "point"}))
    assert outcome.observed == r.gap
    if r.gap <= limit:
        assert outcome.passed
    elif r.gap > limit + 1e-9:  # clearly beyond; closer than that is float-rounding territory
        assert not outcome.passed
