"""Calibration of the gate: how often a ``max_gap`` limit fails, by confidence mode.

For ``group_metrics`` (accuracy gap, 2 groups × 500 images) and for ``precision_at_k``
(precision@10 gap of 300 queries against a fixed database, the population of
``benchmarks/interval_coverage.py``), each simulation draws a fresh sample and checks
``max_gap = limit`` under ``confidence="point"``, ``"supported"`` and ``"strict"``
(``n_bootstrap=1000``; the gap's interval is the simultaneous one of
``docs/intervals.md``, for two groups ``|d| ± c·s`` with ``c`` the bootstrap quantile of
``|d* − d| / s``, the same for every ``interval_method``). The limit is set at the true gap minus
0, 0.05, 0.1 and 0.2: the first row is the false-alarm rate (the true gap equals the
limit: a gate should rarely fail), the others the power. Rates are printed with their exact
95 % binomial interval.

What to expect: under ``"supported"`` a limit fails only when the whole interval is above
it, so with a calibrated two-sided 95 % interval the false-alarm rate at the limit is about
2.5 % (and lower for a true gap below the limit); ``"point"`` fails half the time there.
``"strict"`` fails whenever any part of the interval is above the limit: it is the rule
for proving a model *within* a limit, and alarms most of the time at the limit.

Run: ``python benchmarks/gate_calibration.py [--sims 500]``
"""

from __future__ import annotations

import argparse
import importlib
import time
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from pytest_fairness import fairness
from pytest_fairness import indicators as ind
from pytest_fairness.errors import FairnessViolation

MODES = ("point", "supported", "strict")
EXCESS = (0.0, 0.05, 0.1, 0.2)



def group_metrics(rng: np.random.Generator, gap: float) -> Any:
    groups = np.repeat([0, 1], 500)
    y = rng.integers(0, 2, 1000)
    correct = rng.random(1000) < np.where(groups == 0, 0.9, 0.9 - gap)
    return ind.group_metrics(y, np.where(correct, y, 1 - y), groups=groups,
                             n_bootstrap=1000, seed=int(rng.integers(2**31)))


def fails(result: Any, limit: float, mode: str) -> bool:
    try:
        fairness.check(result, max_gap=limit, confidence=mode)
    except FairnessViolation:
        return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sims", type=int, default=500)
    args = parser.parse_args()
    cov = importlib.import_module("interval_coverage")
    truth_precision = cov._precision_truth()
    cases = {
        # The accuracy gap is the limit plus the excess; the limit is 0.1.
        "group_metrics": (0.1, lambda rng, excess: group_metrics(rng, 0.1 + excess)),
        # A fixed population: the limit moves below its true gap.
        "precision_at_k": (truth_precision, lambda rng, excess: ind.precision_at_k(
            (cov._people(rng, g := np.repeat(["f", "m"], 150)), pd.DataFrame({"gender": g})),
            cov._database(), k=10, match="gender", by="gender", n_bootstrap=1000,
            seed=int(rng.integers(2**31)))),
    }
    print(f"max_gap gate, {args.sims} simulations per row, 1000 replicates, simultaneous "
          "gap intervals; share of runs that FAIL [exact 95% CI]")
    print(f"{'indicator':<16} {'true gap':>8} {'limit':>7}  " +
          "  ".join(f"{m:^22}" for m in MODES))
    for name, (base, draw) in cases.items():
        for excess in EXCESS:
            rng = np.random.default_rng(99)
            limit = base if name == "group_metrics" else truth_precision - excess
            true_gap = base + excess if name == "group_metrics" else truth_precision
            counts = dict.fromkeys(MODES, 0)
            start = time.perf_counter()
            for _ in range(args.sims):
                result = draw(rng, excess)
                for mode in MODES:
                    counts[mode] += fails(result, limit, mode)
            cells = []
            for mode in MODES:
                ci = binomtest(counts[mode], args.sims).proportion_ci(0.95, method="exact")
                cells.append(f"{counts[mode] / args.sims:>6.1%} [{ci.low:.1%}, {ci.high:.1%}]")
            label = "false alarm" if excess == 0 else f"power +{excess:g}"
            print(f"{name:<16} {true_gap:>8.3f} {limit:>7.3f}  " + "  ".join(
                f"{c:<22}" for c in cells) + f"  {label} ({time.perf_counter() - start:.0f}s)")


if __name__ == "__main__":
    main()
