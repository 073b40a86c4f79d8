"""Benchmark of the iEAT (seed 004) against straightforward loops, in one run.

1. Sampled test: 4 sets x 50 items x 2,048 dimensions, 10^6 re-partitions. The baseline is
   the released code's approach: cosine matrix once, then per permutation a shuffle and a
   sum over the X half (ryansteed/weat ``weat/test.py``), the p-value counted in a Python
   loop. Goal: ours >= 10x faster.
2. Exact test at |X| = |Y| = 12 (C(24, 12) = 2,704,156 splits): the baseline enumerates
   ``itertools.combinations`` and sums each subset. Goal: ours about a second or less.

Both report identical statistic and effect size, and p-values that agree (exactly for the
exact test, within Monte-Carlo error for the sampled one).

Run: ``python benchmarks/ieat.py`` (``--quick`` times the sampled baseline on 10^5
permutations and scales it, for a fast look).
"""

from __future__ import annotations

import argparse
import itertools
import math
import time

import numpy as np

from pytest_fairness.indicators import ieat


def baseline_associations(x, y, a, b):
    unit = lambda m: m / np.linalg.norm(m, axis=1, keepdims=True)  # noqa: E731
    xy = unit(np.vstack([x, y]))
    sim = xy @ np.vstack([unit(a), unit(b)]).T
    s = sim[:, : len(a)].mean(axis=1) - sim[:, len(a):].mean(axis=1)
    n = len(x)
    statistic = s[:n].sum() - s[n:].sum()
    effect = (s[:n].mean() - s[n:].mean()) / s.std(ddof=1)
    return s, statistic, effect


def baseline_sampled(x, y, a, b, n_samples, seed):
    s, statistic, effect = baseline_associations(x, y, a, b)
    n = len(x)
    rng = np.random.default_rng(seed)
    observed = s[:n].sum()
    order = np.arange(len(s))
    hits = 1  # the reference's "hallucinated" observation
    for _ in range(n_samples - 1):
        rng.shuffle(order)
        if s[order[:n]].sum() >= observed:
            hits += 1
    return statistic, effect, hits / n_samples


def baseline_exact(x, y, a, b):
    s, statistic, effect = baseline_associations(x, y, a, b)
    n = len(x)
    observed = s[:n].sum()
    hits = total = 0
    for subset in itertools.combinations(range(len(s)), n):
        if s[list(subset)].sum() >= observed:
            hits += 1
        total += 1
    return statistic, effect, hits / total


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="time the sampled baseline on 1e5 permutations and scale by 10")
    parser.add_argument("--permutations", type=int, default=1_000_000)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    # a mild real association so the p-value is not trivially 0 or 1
    direction = rng.normal(size=2048)
    x, y, a, b = (rng.normal(size=(50, 2048)) for _ in range(4))
    x += 0.01 * direction
    a += 0.01 * direction

    n = args.permutations
    ours, t_ours = timed(ieat, x, y, a, b, n_permutations=n, exact_limit=1, seed=1,
                         variant="reference")
    n_base = n // 10 if args.quick else n
    (stat_b, eff_b, p_b), t_base = timed(baseline_sampled, x, y, a, b, n_base, 2)
    t_base *= n / n_base
    p = ours.stats["p_value"]
    se = math.sqrt(max(p * (1 - p), 1 / n) / min(n, n_base))
    print(f"sampled, 4 x 50 x 2048, {n:,} re-partitions")
    print(f"  ours      {t_ours:8.3f} s   p={p:.5f}")
    print(f"  baseline  {t_base:8.3f} s   p={p_b:.5f}"
          + ("   (timed on 1e5, scaled x10)" if args.quick else ""))
    print(f"  speed-up  {t_base / t_ours:8.1f} x   (goal >= 10x)")
    print(f"  statistic equal: {math.isclose(ours.stats['statistic'], stat_b, rel_tol=1e-9)}"
          f", effect size equal: {math.isclose(ours.stats['effect_size'], eff_b, rel_tol=1e-9)}"
          f", p within 4 SE: {abs(p - p_b) <= 4 * se + 1 / n}")

    x12, y12 = x[:12], y[:12]
    ours, t_ours = timed(ieat, x12, y12, a, b, exact_limit=10**7, seed=0, variant="reference")
    (stat_b, eff_b, p_b), t_base = timed(baseline_exact, x12, y12, a, b)
    print(f"exact, |X| = |Y| = 12, {math.comb(24, 12):,} re-partitions")
    print(f"  ours      {t_ours:8.3f} s   p={ours.stats['p_value']:.7f}")
    print(f"  baseline  {t_base:8.3f} s   p={p_b:.7f}")
    print(f"  speed-up  {t_base / t_ours:8.1f} x")
    print(f"  statistic equal: {math.isclose(ours.stats['statistic'], stat_b, rel_tol=1e-9)}"
          f", effect size equal: {math.isclose(ours.stats['effect_size'], eff_b, rel_tol=1e-9)}"
          f", p equal: {math.isclose(ours.stats['p_value'], p_b, abs_tol=1e-12)}")


if __name__ == "__main__":
    main()
