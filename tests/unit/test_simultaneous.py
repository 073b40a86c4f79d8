"""Simultaneous (bootstrap maxT) intervals of spreads and extremes over groups."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_fairness import fairness
from pytest_fairness import indicators as ind
from pytest_fairness.bounds import simultaneous
from pytest_fairness.errors import FairnessViolation
from pytest_fairness.results import GroupStat, IndicatorResult

#: Four replicates of three group values, and the estimates.
REPS = np.array([[0.50, 0.40, 0.30], [0.55, 0.35, 0.30], [0.45, 0.45, 0.20],
                 [0.60, 0.40, 0.35]])
EST = np.array([0.52, 0.40, 0.28])


def _quantile(x: list[float], q: float) -> float:
    """numpy's default (linear) quantile, by hand."""
    x = sorted(x)
    h = (len(x) - 1) * q
    lo = int(h)
    return x[lo] + (h - lo) * (x[min(lo + 1, len(x) - 1)] - x[lo])


def _sd(x: list[float]) -> float:
    m = sum(x) / len(x)
    return (sum((v - m) ** 2 for v in x) / (len(x) - 1)) ** 0.5


def _within_reach(pair: tuple[float, float], reps: list[list[float]],
                  est: list[float]) -> tuple[float, ...]:
    """A bound on the lowest or highest value, kept within what values and replicates reach."""
    reach = [x for r in reps for x in r] + est
    return tuple(min(max(b, min(reach)), max(reach)) for b in pair)


def test_three_groups_by_hand() -> None:
    """d, s, M*, c and the bounds computed by hand match to 1e-12."""
    reps, est = REPS.tolist(), EST.tolist()
    pairs = [(0, 1), (0, 2), (1, 2)]
    d = [est[i] - est[j] for i, j in pairs]
    s = [_sd([r[i] - r[j] for r in reps]) for i, j in pairs]
    top = [max(abs(r[i] - r[j] - dk) / sk for (i, j), dk, sk in zip(pairs, d, s))
           for r in reps]
    c = _quantile(top, 0.9)
    gap = (max(0.0, max(abs(dk) - c * sk for dk, sk in zip(d, s))),
           max(abs(dk) + c * sk for dk, sk in zip(d, s)))
    sg = [_sd([r[g] for r in reps]) for g in range(3)]
    cg = _quantile([max(abs(r[g] - est[g]) / sg[g] for g in range(3)) for r in reps], 0.9)
    low = (min(e - cg * x for e, x in zip(est, sg)), min(e + cg * x for e, x in zip(est, sg)))
    high = (max(e - cg * x for e, x in zip(est, sg)), max(e + cg * x for e, x in zip(est, sg)))
    low, high = _within_reach(low, reps, est), _within_reach(high, reps, est)
    got = simultaneous(REPS, EST, 0.9)
    assert got.ravel() == pytest.approx([*gap, *low, *high], abs=1e-12)


def test_the_weighted_floor_by_hand() -> None:
    """Weights floor each SD at sqrt(σ² / w_g), σ² = Σ w² s² / Σ w; pairs at the root sum."""
    reps, est, w = REPS.tolist(), EST.tolist(), [100.0, 100.0, 4.0]
    sg = [_sd([r[g] for r in reps]) for g in range(3)]
    pooled = sum(wg**2 * x**2 for wg, x in zip(w, sg)) / sum(w)
    floor = [(pooled / wg) ** 0.5 for wg in w]
    assert floor[2] > sg[2]  # the small group is floored, the others keep their own SD
    fg = [max(x, f) for x, f in zip(sg, floor)]
    cg = _quantile([max(abs(r[g] - est[g]) / fg[g] for g in range(3)) for r in reps], 0.9)
    low = (min(e - cg * x for e, x in zip(est, fg)), min(e + cg * x for e, x in zip(est, fg)))
    high = (max(e - cg * x for e, x in zip(est, fg)), max(e + cg * x for e, x in zip(est, fg)))
    low, high = _within_reach(low, reps, est), _within_reach(high, reps, est)
    pairs = [(0, 1), (0, 2), (1, 2)]
    d = [est[i] - est[j] for i, j in pairs]
    s = [max(_sd([r[i] - r[j] for r in reps]), (floor[i] ** 2 + floor[j] ** 2) ** 0.5)
         for i, j in pairs]
    top = [max(abs(r[i] - r[j] - dk) / sk for (i, j), dk, sk in zip(pairs, d, s))
           for r in reps]
    c = _quantile(top, 0.9)
    gap = (max(0.0, max(abs(dk) - c * sk for dk, sk in zip(d, s))),
           max(abs(dk) + c * sk for dk, sk in zip(d, s)))
    got = simultaneous(REPS, EST, 0.9, weights=np.array(w))
    assert got.ravel() == pytest.approx([*gap, *low, *high], abs=1e-12)


def test_a_group_with_no_spread_is_floored() -> None:
    """A group whose replicates never move (0 events of 30) still gets an SD from the rest."""
    rng = np.random.default_rng(1)
    reps = np.column_stack([rng.binomial(300, 0.1, 2000) / 300, np.zeros(2000)])
    unfloored = simultaneous(reps, np.array([0.1, 0.0]), 0.95)
    floored = simultaneous(reps, np.array([0.1, 0.0]), 0.95, weights=np.array([300.0, 30.0]))
    assert unfloored[1, 1] == 0.0  # the lowest value's upper end: the old, too narrow bound
    assert floored[1, 1] == pytest.approx(1.96 * (0.09 / 30) ** 0.5, rel=0.15)


def test_two_groups_reduce_to_the_difference() -> None:
    """With two groups the gap interval is |d| ± c s, c the quantile of |t*|."""
    rng = np.random.default_rng(0)
    reps = rng.normal([0.7, 0.5], [0.02, 0.03], size=(2000, 2))
    est = np.array([0.71, 0.49])
    diff = reps[:, 0] - reps[:, 1]
    s = diff.std(ddof=1)
    c = np.quantile(np.abs(diff - 0.22) / s, 0.95)
    low, high = simultaneous(reps, est, 0.95)[0]
    assert (low, high) == pytest.approx((0.22 - c * s, 0.22 + c * s), abs=1e-12)


def test_undefined_replicates_and_groups_are_left_out() -> None:
    """A NaN group is dropped; a NaN replicate leaves only its own pairs out."""
    with_nan = np.column_stack([REPS, np.full(4, np.nan)])
    assert simultaneous(with_nan, np.r_[EST, np.nan], 0.9) == pytest.approx(
        simultaneous(REPS, EST, 0.9))
    reps = REPS.copy()
    reps[0, 2] = np.nan
    assert np.isfinite(simultaneous(reps, EST, 0.9)).all()
    assert np.isnan(simultaneous(REPS[:, :1], EST[:1], 0.9)[0]).all()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 6), st.floats(-5, 5))
def test_relabelling_permuting_and_shifting_leave_it_unchanged(
        seed: int, k: int, shift: float) -> None:
    """Relabelling groups, permuting replicates, scaling weights, shifting: the gap stays."""
    rng = np.random.default_rng(seed)
    reps = rng.normal(0.5, 0.05, size=(200, k))
    est = rng.normal(0.5, 0.05, size=k)
    w = rng.integers(30, 600, k).astype(float)
    base = simultaneous(reps, est, 0.95, weights=w)
    order, rows = rng.permutation(k), rng.permutation(200)
    assert simultaneous(reps[rows][:, order], est[order], 0.95,
                        weights=w[order]) == pytest.approx(base)
    assert simultaneous(reps, est, 0.95, weights=7 * w) == pytest.approx(base)
    shifted = simultaneous(reps + shift, est + shift, 0.95, weights=w)
    assert shifted[0] == pytest.approx(base[0], abs=1e-9)
    assert shifted[1:] == pytest.approx(base[1:] + shift, abs=1e-9)


def _ten_equal_groups() -> IndicatorResult:
    rng = np.random.default_rng(7)
    groups = np.repeat([f"g{i}" for i in range(10)], 120)
    y = rng.integers(0, 2, groups.size)
    correct = rng.random(groups.size) < 0.9
    return ind.group_metrics(y, np.where(correct, y, 1 - y), groups=groups,
                             n_bootstrap=1000, seed=0)


def test_ten_equal_groups_pass_a_supported_gap_limit() -> None:
    """All groups equal: the percentile interval of max − min sat above 0.05; this doesn't."""
    r = _ten_equal_groups()
    assert np.quantile(r.replicates["gap"], 0.025) > 0.05  # the old interval's lower end
    assert [o.passed for o in fairness.check(r, max_gap=0.05, confidence="supported")] == [True]
    assert r.intervals["DA"] == r.intervals["gap"]
    assert r.intervals["DEO"] == r.intervals["gap:tpr"]
    assert [o.passed for o in fairness.check(r, max_gap=0.05, metric="TPR",
                                             confidence="supported")] == [True]


def test_min_value_uses_the_simultaneous_interval() -> None:
    """min_value under supported reads intervals['min'], not the lowest per-group bound."""
    r = _ten_equal_groups()
    low, high = r.intervals["min"]
    assert high > min(g.interval[1] for g in r.groups if g.interval)  # wider: over 10 groups
    limit = (high + min(g.interval[1] for g in r.groups if g.interval)) / 2
    (outcome,) = fairness.check(r, min_value=limit, confidence="supported")
    assert outcome.passed and outcome.interval == (low, high)
    with pytest.raises(FairnessViolation):
        fairness.check(r, min_value=high + 0.001, confidence="supported")


def test_min_value_without_the_interval_reads_the_groups() -> None:
    """A hand-built result without intervals['min'] keeps the per-group rule."""
    r = IndicatorResult(name="x", metric="acc", value=0.8, groups=(
        GroupStat(group="a", n=50, value=0.8, interval=(0.7, 0.9)),
        GroupStat(group="b", n=50, value=0.75, interval=(0.6, 0.85))))
    (outcome,) = fairness.check(r, min_value=0.8, confidence="supported")
    assert outcome.passed and outcome.interval == (0.6, 0.85)


def test_a_small_group_at_the_boundary_does_not_false_alarm() -> None:
    """Ten groups truly at 90 % accuracy, the one of 30 images at 30/30 by chance (p = 0.04).

    Its replicates never move, so without the floor the pairs with it were as narrow as the
    other group's error alone: max_gap=0.05 and max_value=0.9 failed under supported.
    """
    sizes = [600, 300, 150, 80, 40, 40, 35, 30, 300, 150]
    groups = np.repeat([f"g{i}" for i in range(10)], sizes)
    wrong = np.concatenate([np.arange(n) % 10 == 0 if n != 30 else np.zeros(n, bool)
                            for n in sizes])
    y = np.arange(groups.size) % 2
    r = ind.group_metrics(y, np.where(wrong, 1 - y, y), groups=groups, n_bootstrap=1000,
                          seed=0, min_group_size=1)
    assert max(g.value for g in r.groups) == 1.0 and r.value == pytest.approx(0.9, abs=0.01)
    assert [o.passed for o in fairness.check(r, max_gap=0.05, confidence="supported")] == [True]
    assert [o.passed for o in fairness.check(r, max_value=0.9, confidence="supported")] == [True]


def test_bounds_on_a_rate_stay_between_0_and_1() -> None:
    """50 faces a group, one harmful hit in each: the bounds never leave [0, 1]."""
    hits = np.zeros(100)
    hits[[0, 50]] = 1
    r = ind.group_metrics(hits, np.ones(100), groups=np.repeat(["a", "b"], 50),
                          min_group_size=1, pos_label=1)
    low, high = r.intervals["min"]
    assert 0.0 <= low <= 0.02 <= high <= 1.0
    assert 0.0 <= r.intervals["max"][0]

