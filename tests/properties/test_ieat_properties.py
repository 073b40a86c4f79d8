"""Hypothesis properties of the iEAT (Steed & Caliskan, FAccT 2021) and of the Holm adjustment."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_fairness.indicators import ieat
from pytest_fairness.indicators.embedding_association import holm

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def ieat_sets(draw, max_target=6, min_size=2):
    """Four random embedding sets (targets of min_size..max_target items, attributes of
    min_size..max(5, min_size))."""
    seed = draw(st.integers(0, 2**32 - 1))
    d = draw(st.integers(2, 6))
    n_x = draw(st.integers(min_size, max_target))
    n_y = draw(st.integers(min_size, max_target))
    n_a = draw(st.integers(min_size, max(5, min_size)))
    n_b = draw(st.integers(min_size, max(5, min_size)))
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(n, d)) for n in (n_x, n_y, n_a, n_b)]


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@SETTINGS
@given(ieat_sets())
def test_swapping_targets_negates(sets):
    x, y, a, b = sets
    r, s = ieat(x, y, a, b, seed=0), ieat(y, x, a, b, seed=0)
    assert _close(s.stats["statistic"], -r.stats["statistic"])
    assert _close(s.stats["effect_size"], -r.stats["effect_size"])


@SETTINGS
@given(ieat_sets())
def test_swapping_attributes_negates(sets):
    x, y, a, b = sets
    r, s = ieat(x, y, a, b, seed=0), ieat(x, y, b, a, seed=0)
    assert _close(s.stats["statistic"], -r.stats["statistic"])
    assert _close(s.stats["effect_size"], -r.stats["effect_size"])
    # both swaps at once leave everything, the exact p-value included, unchanged
    both = ieat(y, x, b, a, seed=0)
    assert _close(both.stats["effect_size"], r.stats["effect_size"])
    assert both.stats["p_value"] == r.stats["p_value"]


@SETTINGS
@given(ieat_sets())
def test_exact_tail_counts_partition_the_splits(sets):
    """Splits above the observed value for (X, Y) are those below it for (Y, X)."""
    x, y, a, b = sets
    r, s = ieat(x, y, a, b, seed=0), ieat(y, x, a, b, seed=0)
    total = r.params["n_partitions"]
    assert s.params["n_partitions"] == total == math.comb(len(x) + len(y), len(x))
    assert r.params["n_exceeding"] + s.params["n_exceeding"] + r.params["n_ties"] == total
    assert r.params["n_ties"] == s.params["n_ties"] >= 1  # the identity split ties


@SETTINGS
@given(ieat_sets(), st.randoms(use_true_random=False))
def test_row_permutation_invariance(sets, rnd):
    x, y, a, b = sets
    r = ieat(x, y, a, b, seed=0)
    shuffled = []
    for m in (x, y, a, b):
        order = list(range(len(m)))
        rnd.shuffle(order)
        shuffled.append(m[order])
    s = ieat(*shuffled, seed=0)
    assert _close(s.stats["effect_size"], r.stats["effect_size"])
    assert _close(s.stats["statistic"], r.stats["statistic"])
    assert s.stats["p_value"] == r.stats["p_value"]


@SETTINGS
@given(ieat_sets(), st.floats(0.01, 100.0))
def test_scaling_and_rotation_invariance(sets, scale):
    """Cosines ignore each vector's length and a common rotation."""
    x, y, a, b = sets
    d = x.shape[1]
    rng = np.random.default_rng(d)
    q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    lengths = [scale * (1 + np.arange(len(m)))[:, None] for m in (x, y, a, b)]
    moved = [(m * w) @ q for m, w in zip((x, y, a, b), lengths)]
    r, s = ieat(x, y, a, b, seed=0), ieat(*moved, seed=0)
    assert math.isclose(s.stats["effect_size"], r.stats["effect_size"], rel_tol=1e-7,
                        abs_tol=1e-9)
    assert s.stats["p_value"] == r.stats["p_value"]


def _moved(sets, scale):
    """Every vector rescaled (by its own length factor) and all rotated by one orthogonal map."""
    d = sets[0].shape[1]
    q, _ = np.linalg.qr(np.random.default_rng(d).normal(size=(d, d)))
    return [(m * (scale * (1 + np.arange(len(m)))[:, None])) @ q for m in sets]


def _pairs_close(p, q, rel=1e-7, abs_=1e-9):
    return p is None and q is None or (
        p is not None and q is not None
        and all(math.isclose(u, v, rel_tol=rel, abs_tol=abs_) for u, v in zip(p, q)))


def _check_moved_intervals(sets, scale, method):
    r = ieat(*sets, seed=3, n_bootstrap=100, interval_method=method)
    s = ieat(*_moved(sets, scale), seed=3, n_bootstrap=100, interval_method=method)
    assert set(s.intervals) == set(r.intervals)
    for name in r.intervals:
        assert _pairs_close(s.intervals[name], r.intervals[name]), name
    for g, h in zip(r.groups, s.groups):
        assert _pairs_close(g.interval, h.interval)
    assert s.stats["p_value"] == r.stats["p_value"]


@SETTINGS
@given(ieat_sets(), st.floats(0.01, 100.0))
def test_intervals_invariant_to_embedding_scale_and_rotation(sets, scale):
    """With a fixed seed the replicates redraw the same stimuli, and cosines ignore length."""
    _check_moved_intervals(sets, scale, "percentile")


@SETTINGS
@given(ieat_sets(max_target=12, min_size=8), st.floats(0.01, 100.0))
def test_bca_intervals_invariant_to_embedding_scale_and_rotation(sets, scale):
    """BCa too, on sets large enough that no replicate redraws every set unchanged.

    BCa's bias correction counts the replicates below the estimate; with sets of two or three
    images a sizeable share of replicates redraws the same stimuli and equals the estimate up
    to rounding, so which side they fall on (and the interval) is decided by rounding.
    """
    _check_moved_intervals(sets, scale, "bca")


@SETTINGS
@given(ieat_sets(), st.integers(0, 2**32 - 1))
def test_intervals_change_no_estimate(sets, seed):
    """Intervals are extra: every statistic is the one computed without them."""
    plain = ieat(*sets, seed=seed, n_permutations=200, exact_limit=20)
    boot = ieat(*sets, seed=seed, n_permutations=200, exact_limit=20, n_bootstrap=100)
    assert boot.stats == plain.stats
    low, high = boot.intervals["statistic"]
    assert low <= high
    if "effect_size" in boot.intervals:
        low, high = boot.intervals["effect_size"]
        assert low <= high and boot.intervals["value"] == (low, high)

@SETTINGS
@given(ieat_sets(max_target=8), st.integers(1, 500), st.sampled_from(["paper", "reference"]))
def test_p_value_in_unit_interval(sets, n_permutations, variant):
    x, y, a, b = sets
    if variant == "reference":
        y = y[: len(x)] if len(y) >= len(x) else np.vstack([y, x[: len(x) - len(y)] + 0.5])
    r = ieat(x, y, a, b, n_permutations=n_permutations, exact_limit=10, seed=1,
             variant=variant)
    assert 0.0 <= r.stats["p_value"] <= 1.0
    if variant == "reference" and not r.params["exact"]:
        assert r.stats["p_value"] >= 1 / n_permutations


@SETTINGS
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
def test_holm_properties(ps):
    adj = holm(ps)
    p = np.asarray(ps)
    assert np.all(adj >= p - 1e-15) and np.all(adj <= 1.0)
    assert np.all(adj <= np.minimum(1.0, len(p) * p) + 1e-15)  # never worse than Bonferroni
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adj[order]) >= -1e-15)  # monotone in the raw p-values
    perm = np.random.default_rng(len(ps)).permutation(len(ps))
    assert np.allclose(holm(p[perm]), adj[perm])


@pytest.mark.slow
def test_p_value_is_uniform_under_the_null():
    """Kolmogorov–Smirnov over 300 simulated null tests, exact and sampled."""
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(2024)
    exact, sampled = [], []
    for i in range(300):
        x, y, a, b = (rng.normal(size=(n, 16)) for n in (8, 8, 6, 6))
        exact.append(ieat(x, y, a, b, exact_limit=20_000, seed=i).stats["p_value"])
        x, y = (rng.normal(size=(15, 16)) for _ in range(2))
        sampled.append(ieat(x, y, a, b, n_permutations=1_000, exact_limit=1, seed=i)
                       .stats["p_value"])
    for values in (exact, sampled):
        result = scipy_stats.kstest(values, "uniform")
        assert result.pvalue > 0.01, result
        # a level-0.05 gate rejects about 5 % of null tests
        assert 0.02 <= np.mean(np.asarray(values) <= 0.05) <= 0.09
