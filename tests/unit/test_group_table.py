"""The per-group core: group values, gap, ratio, derived statistics and their intervals."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pytest_fairness.indicators._common import group_table, spread
from pytest_fairness.stats import IntervalOptions, Units, bootstrap


def _data() -> tuple[np.ndarray, np.ndarray]:
    values = np.r_[np.ones(40), np.zeros(20), np.ones(15), np.zeros(45)]
    groups = np.r_[np.zeros(60, int), np.ones(60, int)]
    return values, groups


def _table(values: Any, groups: Any, *, n_bootstrap: int = 200, method: str = "percentile",
           seed: Any = 0, min_group_size: int = 1, clusters: Any = None, den: Any = None,
           derive: Any = None, params: dict | None = None):
    codes = np.asarray(groups, dtype=np.intp)
    return group_table(list(range(int(codes.max()) + 1)), codes, {"v": (values, den)},
                       min_group_size=min_group_size,
                       options=IntervalOptions.check(n_bootstrap, 0.95, method, seed),
                       params={} if params is None else params, derive=derive,
                       clusters=clusters)


def test_values_gap_and_ratio_by_hand() -> None:
    values, groups = _data()
    t = _table(values, groups, n_bootstrap=0)
    assert t.values["v"][:, 0].tolist() == [2 / 3, 0.25]
    stats = t.group_stats()
    assert [g.value for g in stats] == [2 / 3, 0.25] and [g.n for g in stats] == [60, 60]
    assert t.boot is None and t.intervals() == {}


def test_ratios_with_denominators_are_rates() -> None:
    """A TPR: predicted positives among the positives of each group."""
    pos = np.array([1, 1, 0, 1, 1, 0, 0, 0])
    pred = np.array([1, 0, 0, 1, 1, 1, 0, 1])
    groups = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    t = _table(pred * pos, groups, den=pos, n_bootstrap=0)
    assert t.values["v"][:, 0].tolist() == [2 / 3, 1.0]


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_intervals_contain_estimates(method: str) -> None:
    values, groups = _data()
    params: dict = {}
    t = _table(values, groups, n_bootstrap=400, method=method, seed=3, params=params)
    intervals = t.intervals()
    low, high = intervals["gap"]
    assert low < 2 / 3 - 0.25 < high
    g0 = t.group_stats()[0].interval
    assert g0 is not None and g0[0] < 2 / 3 < g0[1]
    v = intervals["value"]
    assert v[0] < 55 / 120 < v[1]
    assert set(intervals) == {"value", "gap", "ratio", "min", "max"}
    assert params == {"n_bootstrap": 400, "seed": 3, "confidence_level": 0.95,
                      "interval_method": method, "bootstrap_plan": params["bootstrap_plan"],
                      "bootstrap_draw": "kinds"}  # 120 rows of few kinds: drawn per kind


def test_seed_reproducible_and_varies() -> None:
    values, groups = _data()
    a = _table(values, groups, seed=1).intervals()["gap"]
    assert a == _table(values, groups, seed=1).intervals()["gap"]
    assert a != _table(values, groups, seed=2).intervals()["gap"]


def test_constant_values_give_degenerate_interval() -> None:
    t = _table(np.ones(10), np.r_[np.zeros(5, int), np.ones(5, int)], n_bootstrap=100,
               method="bca")
    assert t.intervals()["gap"] == (0.0, 0.0)
    assert t.group_stats()[1].interval == (1.0, 1.0)


def test_gap_undefined_with_one_included_group() -> None:
    values, groups = _data()
    t = _table(values[:70], groups[:70], min_group_size=20, n_bootstrap=100)
    assert [g.excluded for g in t.group_stats()] == [False, True]
    assert "gap" not in t.intervals() and "value" in t.intervals()


def test_clusters_widen_interval() -> None:
    """Perfectly correlated clusters: resampling them gives a wider interval than units."""
    rng = np.random.default_rng(0)
    cluster_value = rng.random(20) < 0.5
    clusters = np.repeat(np.arange(20), 10)
    values = cluster_value[clusters].astype(float)
    groups = np.zeros(200, int)
    plain = _table(values, groups, n_bootstrap=500).group_stats()[0].interval
    clustered = _table(values, groups, n_bootstrap=500,
                       clusters=clusters).group_stats()[0].interval
    assert plain is not None and clustered is not None
    assert clustered[1] - clustered[0] > 2 * (plain[1] - plain[0])


def test_several_entries_at_once() -> None:
    values, groups = _data()
    t = _table(np.stack([values, 1 - values], axis=1), groups)
    g0, g0_flipped = t.group_stats(0)[0].interval, t.group_stats(1)[0].interval
    assert g0 is not None and g0_flipped is not None
    assert g0[0] == pytest.approx(1 - g0_flipped[1])


def test_derived_statistics_get_estimates_and_intervals() -> None:
    values, groups = _data()
    t = _table(values, groups, derive=lambda v, inc: {"twice_gap": 2 * spread(v["v"], inc)})
    assert t.stats() == {"twice_gap": pytest.approx(2 * (2 / 3 - 0.25))}
    low, high = t.intervals()["twice_gap"]
    assert t.boot is not None  # derived stats keep percentile intervals of their replicates
    gap_low, gap_high = t.boot.interval("gap:v", 0) or (0.0, 0.0)
    assert (low, high) == pytest.approx((2 * gap_low, 2 * gap_high))


def test_pooled_kinds_match_the_generic_engine() -> None:
    """The core pools identical rows; the generic engine on plain units agrees."""
    values, groups = _data()
    units = Units.of(values.size)
    b = bootstrap(lambda w: {"m": (w[:, groups == 0] @ values[groups == 0])
                             / w[:, groups == 0].sum(axis=1)},
                  units, n_bootstrap=4000, seed=4)
    t = _table(values, groups, n_bootstrap=4000, seed=4)
    assert b.interval("m") == pytest.approx(t.group_stats()[0].interval, abs=0.01)


def test_weights_are_the_data_behind_each_value() -> None:
    """The simultaneous floor's weights: each group's sum of denominators (its positives)."""
    pos = np.array([1, 1, 0, 1, 1, 0, 0, 0, 1, 1])
    pred = np.array([1, 0, 0, 1, 1, 1, 0, 1, 1, 0])
    groups = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    t = _table(pred * pos, groups, den=pos, n_bootstrap=200)
    assert t.weights["v"][:, 0].tolist() == [3.0, 3.0]
    assert set(t.intervals()) >= {"gap", "min", "max"}
