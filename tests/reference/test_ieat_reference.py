"""Cross-checks of the iEAT against an independent oracle of the released code.

The oracle re-implements the behaviour of ryansteed/weat ``weat/test.py`` (which
ryansteed/ieat calls) from its description: cosine similarities from scikit-learn, s(w, A, B)
as a difference of row means, the statistic as a sum over an index mask, the effect size
with ddof=1, and an exact p-value from ``itertools.combinations`` where a split counts when
its sum is ``>`` or ``==`` the observed one, in float arithmetic and index order.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from pytest_fairness.indicators import ieat

sk_pairwise = pytest.importorskip("sklearn.metrics.pairwise")


class Oracle:
    """The released code's computations, written out independently."""

    def __init__(self, x, y, a, b):
        self.n = len(x)
        sim = sk_pairwise.cosine_similarity(np.vstack([x, y]), np.vstack([a, b]))
        self.s = sim[:, : len(a)].mean(axis=1) - sim[:, len(a):].mean(axis=1)

    def statistic(self):
        return self.s[: self.n].sum() - self.s[self.n:].sum()

    def effect_size(self):
        return (self.s[: self.n].mean() - self.s[self.n:].mean()) / np.std(self.s, ddof=1)

    def exact_p(self, *, order_exact=False):
        """Reference rule; ``order_exact`` compares correctly rounded sums (math.fsum)."""
        total = len(self.s)
        add = math.fsum if order_exact else (lambda v: np.asarray(v).sum())
        observed = add(self.s[np.arange(self.n)])
        hits = count = 0
        for subset in itertools.combinations(range(total), self.n):
            value = add(self.s[np.array(subset)])
            hits += value > observed or value == observed
            count += 1
        return hits / count

    def exact_p_strict(self):
        """Share of splits strictly above the observed sum, with exact (fsum) sums."""
        observed = math.fsum(self.s[: self.n])
        sums = [math.fsum(self.s[list(c)])
                for c in itertools.combinations(range(len(self.s)), self.n)]
        return sum(v > observed for v in sums) / len(sums)


def _sets(seed, n, d=12, n_attr=7):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(m, d)) for m in (n, n, n_attr, n_attr + 2)]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n", [2, 4, 6])
def test_matches_reference_exact(seed, n):
    x, y, a, b = _sets(seed, n)
    oracle = Oracle(x, y, a, b)
    r = ieat(x, y, a, b, variant="reference", seed=0)
    assert r.params["exact"] is True
    assert r.stats["effect_size"] == pytest.approx(oracle.effect_size(), abs=1e-9, rel=1e-9)
    assert r.stats["statistic"] == pytest.approx(oracle.statistic(), abs=1e-9, rel=1e-9)
    assert r.stats["p_value"] == pytest.approx(oracle.exact_p(), abs=1e-9)
    paper = ieat(x, y, a, b, seed=0)
    assert paper.stats["p_value"] == pytest.approx(oracle.exact_p_strict(), abs=1e-9)
    assert paper.stats["effect_size"] == r.stats["effect_size"]


def test_real_embedding_scale():
    """2,048-d embeddings of non-negative (ReLU-like) features, as image backbones give."""
    rng = np.random.default_rng(99)
    x, y, a, b = (np.maximum(rng.normal(size=(m, 2048)), 0) for m in (6, 6, 10, 12))
    oracle = Oracle(x, y, a, b)
    r = ieat(x, y, a, b, variant="reference", seed=0)
    assert r.stats["effect_size"] == pytest.approx(oracle.effect_size(), abs=1e-9, rel=1e-9)
    assert r.stats["p_value"] == pytest.approx(oracle.exact_p(), abs=1e-9)


def test_ties_the_reference_misses_to_summation_order():
    """Duplicated images: ours counts every exact tie; the float-order oracle misses some."""
    missed = 0
    for seed in range(30):
        rng = np.random.default_rng(seed)
        x = rng.normal(size=(4, 6))
        y = x[[3, 1, 2, 0]] if seed % 2 else x[[2, 3, 0, 1]]
        a, b = (rng.normal(size=(3, 6)) for _ in range(2))
        oracle = Oracle(x, y, a, b)
        r = ieat(x, y, a, b, variant="reference", seed=0)
        # robust = what exact (order-free) arithmetic says
        assert r.stats["p_value"] == pytest.approx(oracle.exact_p(order_exact=True), abs=1e-12)
        missed += not math.isclose(oracle.exact_p(), r.stats["p_value"], abs_tol=1e-12)
    # the released rule is at the mercy of summation order for some of these
    assert missed > 0


@pytest.mark.parametrize("variant", ["paper", "reference"])
def test_exact_and_sampled_agree_within_monte_carlo_error(variant):
    x, y, a, b = _sets(123, 7, d=10)
    exact = ieat(x, y, a, b, variant=variant, exact_limit=10_000, seed=0)
    assert exact.params["exact"] is True and exact.params["n_partitions"] == 3432
    p = exact.stats["p_value"]
    # The reference samples only when C(2n, n) > n_samples (its n_permutations).
    n = 40_000 if variant == "paper" else 3_000
    sampled = ieat(x, y, a, b, variant=variant, n_permutations=n, exact_limit=100, seed=7)
    assert sampled.params["exact"] is False
    se = math.sqrt(max(p * (1 - p), 1 / n) / n)
    assert abs(sampled.stats["p_value"] - p) <= 4 * se + 1 / n


def test_sampled_null_distribution_matches_exact_enumeration():
    """Sampled splits are uniform: their tail shares match exact ones at several cut points."""
    x, y, a, b = _sets(5, 6, d=5)
    oracle = Oracle(x, y, a, b)
    sums = np.array([oracle.s[list(c)].sum() for c in itertools.combinations(range(12), 6)])
    # re-run with X and Y chosen so the observed sum falls at several quantiles
    order = np.argsort(sums)
    for q in (0.1, 0.5, 0.9):
        subset = list(itertools.combinations(range(12), 6))[order[int(q * len(order))]]
        rest = [i for i in range(12) if i not in subset]
        pool = np.vstack([x, y])
        xs, ys = pool[list(subset)], pool[rest]
        exact = ieat(xs, ys, a, b, seed=0)
        sampled = ieat(xs, ys, a, b, n_permutations=20_000, exact_limit=1, seed=11)
        p = exact.stats["p_value"]
        assert abs(sampled.stats["p_value"] - p) <= 4 * math.sqrt(p * (1 - p) / 20_000) + 1e-4


def test_unequal_sizes_against_brute_force():
    rng = np.random.default_rng(8)
    x, y, a, b = (rng.normal(size=(m, 9)) for m in (3, 7, 4, 5))
    sim = sk_pairwise.cosine_similarity(np.vstack([x, y]), np.vstack([a, b]))
    s = sim[:, :4].mean(axis=1) - sim[:, 4:].mean(axis=1)
    observed = math.fsum(s[:3]) - math.fsum(s[3:])
    stats = [2 * math.fsum(s[list(c)]) - math.fsum(s)
             for c in itertools.combinations(range(10), 3)]
    r = ieat(x, y, a, b, seed=0)
    assert r.stats["p_value"] == pytest.approx(np.mean([v > observed + 1e-12 for v in stats]))
    assert r.stats["statistic"] == pytest.approx(observed, abs=1e-12)
    assert r.stats["effect_size"] == pytest.approx(
        (s[:3].mean() - s[3:].mean()) / s.std(ddof=1), abs=1e-12)
