"""Family-wise false alarms of a whole run, with and without ``--fairness-family-alpha``.

A run of 20 limits and 20 paired comparisons, each in its own test (T = 40, one check
each), every one with its truth exactly at its limit or tolerance:

* **limits**: ``group_metrics`` with 2, 3, 4 or 5 groups (sizes 200/150/100/60/40, the
  first k), ``max_gap=0.05, confidence="supported"``; the best group's true accuracy 0.85,
  the worst's 0.80, the others between: the true gap is the limit;
* **comparisons**: two checkpoints on the same 1,000 images (``seed=0`` both: paired),
  ``confidence="supported"`` on the accuracy (``metric="value"``) with ``tolerance=0.02``;
  the candidate is right on an image when the baseline is and a uniform draw per image
  says so, so it is worse by exactly the tolerance (baseline 0.85, candidate 0.83).

Each simulation draws new data for all 40 and judges them through the plugin's own pure
functions: :func:`~pytest_fairness.checks.evaluate` and
:func:`~pytest_fairness.regression.compare_results`, alone (each at its 95 % interval) and
at :func:`~pytest_fairness.family.family_level` (α = 0.05 over 40 tests of one check:
each interval at 1 − 2·0.05/40 = 99.75 %). A false alarm is a limit failed (its whole
interval beyond it) or a comparison counted as a regression. Printed: the rate of runs
with any false alarm, with exact binomial 95 % intervals (goal with the option: ≤ 5 %),
then the power cost: the share of checks that fail when each truth lies 2 and 4 standard
errors beyond its limit (the SE of the two extreme groups' difference, of the paired
change), with and without the option.

Run: ``python benchmarks/family_calibration.py [--sims 400] [--power-sims 100] [--jobs 2]``
"""

from __future__ import annotations

import argparse
import math
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
from scipy.stats import binomtest

from pytest_fairness import indicators as ind
from pytest_fairness.checks import evaluate, validate_threshold
from pytest_fairness.family import family_level
from pytest_fairness.records import KeyedResult, ResultSummary
from pytest_fairness.regression import compare_results
from pytest_fairness.stats import set_paired_draws

SIZES = (200, 150, 100, 60, 40)
LIMIT, TOP = 0.05, 0.85
TOLERANCE, N_IMAGES, BASE = 0.02, 1_000, 0.85
N_LIMITS = N_COMPARISONS = 20
B = 1_000
ALPHA = 0.05
LEVEL = family_level(ALPHA, N_LIMITS + N_COMPARISONS, 1)


def _limit_result(rng: np.random.Generator, k: int, gap: float) -> Any:
    sizes = SIZES[:k]
    accuracy = np.linspace(TOP, TOP - gap, k)
    groups = np.repeat(np.arange(k), sizes)
    y = rng.integers(0, 2, groups.size)
    right = rng.random(groups.size) < accuracy[groups]
    return ind.group_metrics(y, np.where(right, y, 1 - y), groups=groups, n_bootstrap=B,
                             seed=0)


def _gap_se(k: int) -> float:
    """The SE of the difference of the two extreme groups' accuracy."""
    n1, n2 = SIZES[0], SIZES[k - 1]
    return math.sqrt(TOP * (1 - TOP) / n1 + (TOP - LIMIT) * (1 - TOP + LIMIT) / n2)


def _pair(rng: np.random.Generator, change: float) -> tuple[ResultSummary, ResultSummary]:
    groups = np.repeat([0, 1], N_IMAGES // 2)
    y = rng.integers(0, 2, N_IMAGES)
    u = rng.random(N_IMAGES)
    out = []
    for accuracy in (BASE, BASE - change):
        pred = np.where(u < accuracy, y, 1 - y)
        r = ind.group_metrics(y, pred, groups=groups, n_bootstrap=B, seed=0)
        out.append(ResultSummary.of(KeyedResult(None, r)))
    return out[0], out[1]


_CHANGE_SE = math.sqrt(TOLERANCE * (1 - TOLERANCE) / N_IMAGES)  # of the paired change


def one_run(args: tuple[int, float]) -> tuple[list[bool], list[bool]]:
    """One run of 20 limits and 20 comparisons, truths ``shift`` SEs beyond their limits.

    Returns each check's alarm alone and under family control.
    """
    seed, shift = args
    rng = np.random.default_rng(seed)
    alone, family = [], []
    for i in range(N_LIMITS):
        k = 2 + i % 4
        r = _limit_result(rng, k, LIMIT + shift * _gap_se(k))
        limits = validate_threshold((), {"max_gap": LIMIT, "confidence": "supported"})
        alone.append(evaluate(r, limits)[0].verdict == "fail")
        family.append(evaluate(r, limits, level=LEVEL)[0].verdict == "fail")
    for _ in range(N_COMPARISONS):
        base, now = _pair(rng, TOLERANCE + shift * _CHANGE_SE)
        for level, sink in ((None, alone), (LEVEL, family)):
            [c] = compare_results(base, now, {"value": TOLERANCE}, confidence="supported",
                                  level=level)
            sink.append(c.regressed)
    return alone, family


def _rate(hits: int, n: int) -> str:
    ci = binomtest(hits, n).proportion_ci(method="exact")
    return f"{hits / n:6.1%} [{ci.low:5.1%}, {ci.high:5.1%}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sims", type=int, default=400)
    parser.add_argument("--power-sims", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=1)
    opts = parser.parse_args()
    set_paired_draws(True)  # a run that compares draws image by image (workers fork from here)
    start = time.perf_counter()
    print(f"T = {N_LIMITS + N_COMPARISONS} tests of one check each; α = {ALPHA}: each "
          f"interval at level {LEVEL:.6g} under the option, 0.95 alone; {B} replicates")
    with ProcessPoolExecutor(opts.jobs) as pool:
        runs = list(pool.map(one_run, [(s, 0.0) for s in range(opts.sims)]))
        print(f"\ntruth at every limit and tolerance, {opts.sims} runs "
              "(rate of runs with any false alarm, exact 95 % interval):")
        for name, at in (("limits only (20)", slice(0, N_LIMITS)),
                         ("comparisons only (20)", slice(N_LIMITS, None)),
                         ("20 limits + 20 comparisons", slice(None))):
            row = [_rate(sum(any(run[j][at]) for run in runs), len(runs)) for j in (0, 1)]
            print(f"  {name:28s} alone {row[0]}   family α=0.05 {row[1]}")
        checks = [sum(sum(run[j]) for run in runs) for j in (0, 1)]
        total = len(runs) * (N_LIMITS + N_COMPARISONS)
        print(f"  per check: alone {_rate(checks[0], total)}, family {_rate(checks[1], total)}")
        print(f"\npower cost: share of checks failing, {opts.power_sims} runs per shift:")
        for shift in (2.0, 4.0):
            runs = list(pool.map(one_run, [(10_000 + s, shift) for s in range(
                opts.power_sims)]))
            for name, at, n in (("limits", slice(0, N_LIMITS), N_LIMITS),
                                ("comparisons", slice(N_LIMITS, None), N_COMPARISONS)):
                hits = [sum(sum(run[j][at]) for run in runs) for j in (0, 1)]
                total = n * len(runs)
                print(f"  +{shift:.0f} SE {name:12s} alone {_rate(hits[0], total)}   "
                      f"family {_rate(hits[1], total)}")
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
