"""Calibration of ``confidence="supported"`` with 2, 5 and 10 groups of unequal sizes.

For each indicator (``group_metrics``: accuracy gap and TPR gap via ``metric="TPR"``,
``label_association``, ``geodiversity``, ``precision_at_k``) and each number of groups
(sizes 600/300, 600/300/150/80/40, and 600/300/150/80/40/40/35/30/300/150 images), two
populations are drawn ``--sims`` times with ``n_bootstrap=1000``:

- *equal*: every group has the same true value; ``max_gap=0.05`` should rarely fail, and
  ``min_value`` at that common value is the min_value false alarm at the limit;
- *at the limit*: groups alternate (largest first) between two true values Δ apart, so
  every top/bottom pair sits at the limit ``max_gap=Δ``; ``max_gap=Δ − 2 SE`` and
  ``Δ − 4 SE`` give the power (SE: the spread over simulations of the estimated difference
  of the two largest groups); the share of gap intervals holding Δ is the coverage.

Each verdict is computed with the simultaneous interval (now) and, for the headline gap,
with the percentile interval of the max − min replicates (before), so the two sit side by
side. Rates carry exact 95 % binomial intervals (scipy ``binomtest``).

Each group's and each pair's SD is floored at the pooled per-unit variance scaled to the
group's data (``stats.simultaneous(..., weights=)``); ``--cost`` times one call with and
without the floor at 10 and 50 groups.

Run: ``python benchmarks/many_groups.py [--sims 400] [--only group_metrics] [--cost]``
"""

from __future__ import annotations

import argparse
import importlib
import time
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from pytest_fairness import indicators as ind
from pytest_fairness.bounds import simultaneous

SIZES = {2: [600, 300], 5: [600, 300, 150, 80, 40],
         10: [600, 300, 150, 80, 40, 40, 35, 30, 300, 150]}
BOOT = {"n_bootstrap": 1000, "min_group_size": 1}



def _labels(sizes: list[int]) -> np.ndarray:
    return np.repeat([f"g{i:02d}" for i in range(len(sizes))], sizes)


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(2**31))


def _rates(sizes: list[int], top: float, bottom: float) -> np.ndarray:
    """Per-row true rate: groups alternate top, bottom, top, ... (largest first)."""
    return np.repeat([top if i % 2 == 0 else bottom for i in range(len(sizes))], sizes)


def accuracy(rng: np.random.Generator, sizes: list[int], top: float, bottom: float) -> Any:
    g = _labels(sizes)
    y = rng.integers(0, 2, g.size)
    correct = rng.random(g.size) < _rates(sizes, top, bottom)
    return ind.group_metrics(y, np.where(correct, y, 1 - y), groups=g, seed=_seed(rng), **BOOT)


def tpr(rng: np.random.Generator, sizes: list[int], top: float, bottom: float) -> Any:
    g = _labels(sizes)
    y = rng.integers(0, 2, g.size)
    hit = rng.random(g.size) < np.where(y == 1, _rates(sizes, top, bottom), 0.1)
    return ind.group_metrics(y, hit.astype(int), groups=g, seed=_seed(rng), **BOOT)


def label_association(rng: np.random.Generator, sizes: list[int], top: float,
                      bottom: float) -> Any:
    g = _labels(sizes)
    harmful = rng.random(g.size) < _rates(sizes, top, bottom)
    labels = np.stack([np.where(harmful, 3, 2), np.full(g.size, 1)], axis=1)
    return ind.label_association(labels, np.tile([0.9, 0.05], (g.size, 1)), groups=g,
                                 taxonomy={1: "non_human", 2: "human", 3: "crime"}, top_k=2,
                                 seed=_seed(rng), **BOOT)


def geodiversity(rng: np.random.Generator, sizes: list[int], top: float,
                 bottom: float) -> Any:
    rows: dict[str, list[Any]] = {"household": [], "region": [], "hit": []}
    for r, size in enumerate(sizes):  # about 4.5 images per household
        m = top if r % 2 == 0 else bottom
        rates = rng.beta(m * 4.0, (1 - m) * 4.0, max(size // 4, 2))
        for h, p in enumerate(rates):
            k = int(rng.integers(1, 9))
            rows["household"] += [f"g{r:02d}-{h}"] * k
            rows["region"] += [f"g{r:02d}"] * k
            rows["hit"] += (rng.random(k) < p).tolist()
    hit = np.array(rows["hit"])
    n = hit.size
    labels = np.stack([np.where(hit, 1, 2), np.full(n, 3)], axis=1)
    return ind.geodiversity(labels, np.tile([0.9, 0.1], (n, 1)), truth=np.ones(n, int),
                            household=rows["household"], region=rows["region"],
                            income=np.full(n, 300.0), top_k=2, by="region", seed=_seed(rng),
                            **BOOT)


def _queries(rng: np.random.Generator, sigma: np.ndarray) -> Any:
    genders = np.where(rng.random(sigma.size) < 0.5, "f", "m")
    centre = np.where(genders[:, None] == "f", 1.0, -1.0) * np.eye(8)[0]
    return centre + rng.normal(size=(sigma.size, 8)) * sigma[:, None], genders


@cache
def precision_truth(sigma: float) -> float:
    """Precision@10 of a query drawn with noise ``sigma`` (50,000 queries)."""
    cov = importlib.import_module("interval_coverage")
    queries, genders = _queries(np.random.default_rng(12), np.full(50_000, sigma))
    return float(cov._precision(queries, genders).mean())


def precision_at_k(rng: np.random.Generator, sizes: list[int], top: float,
                   bottom: float) -> Any:
    cov = importlib.import_module("interval_coverage")
    g = _labels(sizes)
    queries, genders = _queries(rng, _rates(sizes, top, bottom))  # "rates" are noise SDs
    return ind.precision_at_k((queries, pd.DataFrame({"gender": genders, "group": g})),
                              cov._database(), k=10, match="gender", by="group",
                              seed=_seed(rng), **BOOT)


Draw = Callable[[np.random.Generator, list[int], float, float], Any]


def cases() -> dict[str, tuple[Draw, str, float, float, float]]:
    """name: (draw, metric, equal value, top, bottom) in the draw's own units."""
    sigma_top, sigma_bottom = 1.0, 1.6
    return {
        "accuracy gap": (accuracy, "gap", 0.9, 0.9, 0.8),
        "TPR gap": (tpr, "TPR", 0.8, 0.85, 0.75),
        "label_association": (label_association, "gap", 0.1, 0.15, 0.08),
        "geodiversity": (geodiversity, "gap", 0.5, 0.6, 0.45),
        "precision_at_k": (precision_at_k, "gap", sigma_top, sigma_top, sigma_bottom),
    }


def _truth(name: str, top: float, bottom: float) -> tuple[float, float]:
    """True (top value, gap) of a case (precision: from the noise levels)."""
    if name == "precision_at_k":
        high, low = precision_truth(top), precision_truth(bottom)
        return high, abs(high - low)
    return top, abs(top - bottom)


def _record(result: Any, metric: str) -> dict[str, float]:
    """What the verdicts need from one result: bounds now and before."""
    groups = result.groups
    if metric == "gap":
        values = [g.value for g in groups]
        low, high = result.intervals["gap"]
        old_low, old_high = np.quantile(result.replicates["gap"], [0.025, 0.975])
        highs = [g.interval[1] for g in groups]
        min_high, old_min_high = result.intervals["min"][1], min(highs)
    else:
        values = [g.stats["tpr"] for g in groups]
        low, high = result.intervals["gap:tpr"]
        old_low = old_high = min_high = old_min_high = np.nan
    return {"low": low, "high": high, "old_low": old_low, "old_high": old_high,
            "min_high": min_high, "old_min_high": old_min_high, "d01": values[0] - values[1]}


def _rate(hits: np.ndarray) -> str:
    hits = hits[~np.isnan(hits)]
    if not hits.size:
        return f"{'—':^21}"
    count = int(hits.sum())
    ci = binomtest(count, hits.size).proportion_ci(0.95, method="exact")
    return f"{count / hits.size:>6.1%} [{ci.low:>4.1%}, {ci.high:>5.1%}]"


def run(name: str, k: int, sims: int) -> None:
    draw, metric, equal, top, bottom = cases()[name]
    sizes = SIZES[k]
    start = time.perf_counter()
    rng = np.random.default_rng(1000 + k)
    flat = [_record(draw(rng, sizes, equal, equal), metric) for _ in range(sims)]
    apart = [_record(draw(rng, sizes, top, bottom), metric) for _ in range(sims)]
    eq = {key: np.array([r[key] for r in flat]) for key in flat[0]}
    at = {key: np.array([r[key] for r in apart]) for key in apart[0]}
    level, delta = _truth(name, equal, equal)[0], _truth(name, top, bottom)[1]
    se = float(np.std(at["d01"], ddof=1))
    rows = [("equal, max_gap=0.05", eq, 0.05), ("at limit Δ", at, delta),
            ("power Δ−2SE", at, delta - 2 * se), ("power Δ−4SE", at, delta - 4 * se)]
    for label, data, limit in rows:
        new, old = data["low"] > limit, np.where(np.isnan(data["old_low"]), np.nan,
                                                 data["old_low"] > limit)
        print(f"{name:<18} {k:>2} {label:<20} {limit:>7.4f}  {_rate(new.astype(float))}  "
              f"{_rate(old)}")
    cover = (at["low"] <= delta) & (delta <= at["high"])
    old_cover = np.where(np.isnan(at["old_low"]), np.nan,
                         (at["old_low"] <= delta) & (delta <= at["old_high"]))
    print(f"{name:<18} {k:>2} {'coverage of Δ':<20} {delta:>7.4f}  "
          f"{_rate(cover.astype(float))}  {_rate(old_cover)}")
    if metric == "gap" and name != "precision_at_k":  # precision's level is not the draw's
        new_min = (eq["min_high"] < level).astype(float)
        old_min = (eq["old_min_high"] < level).astype(float)
        print(f"{name:<18} {k:>2} {'min_value at limit':<20} {level:>7.4f}  "
              f"{_rate(new_min)}  {_rate(old_min)}")
    print(f"{'':<18}    (SE {se:.4f}, {time.perf_counter() - start:.0f}s)", flush=True)


def cost() -> None:
    """Milliseconds per :func:`simultaneous` call, 1,000 replicates, without / with the floor."""
    rng = np.random.default_rng(0)
    for k in (10, 50):
        reps = rng.normal(0.5, 0.05, size=(1000, k))
        weights = rng.integers(30, 600, k).astype(float)
        shown = []
        for kw in ({}, {"weights": weights}):
            simultaneous(reps, reps.mean(axis=0), 0.95, **kw)
            start = time.perf_counter()
            for _ in range(20):
                simultaneous(reps, reps.mean(axis=0), 0.95, **kw)
            shown.append(f"{(time.perf_counter() - start) / 20 * 1e3:.1f} ms")
        print(f"{k} groups: {shown[0]} without the floor, {shown[1]} with it")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sims", type=int, default=400)
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    parser.add_argument("--groups", default="2,5,10")
    parser.add_argument("--cost", action="store_true", help="time one call, then stop")
    args = parser.parse_args()
    if args.cost:
        cost()
        return
    print(f"confidence='supported', {args.sims} simulations per row, 1000 replicates; share "
          "of runs that FAIL (coverage: share of intervals holding Δ) [exact 95% CI]")
    print(f"{'indicator':<18} {'k':>2} {'row':<20} {'limit':>7}  {'simultaneous (now)':^21}  "
          f"{'percentile (before)':^21}")
    for name in cases():
        if args.only in name:
            for k in map(int, args.groups.split(",")):
                run(name, k, args.sims)


if __name__ == "__main__":
    main()
