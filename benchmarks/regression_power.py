"""Power of the regression gate: paired against unpaired intervals and the point rule.

Two checkpoints are evaluated on the same 2,000 images (two groups of 1,000; accuracy
0.88 and 0.83, so the baseline's accuracy gap is about 0.05). The candidate differs from
the baseline by retraining-like noise only (each prediction flipped independently with
probability 2 %), or by that noise plus a true gap increase of 0.02, 0.05 or 0.1 (that
share of the worse group's images turned from right to wrong). Each simulation draws new
data and new flips and compares the two ``group_metrics`` results on their headline (the
gap) with ``pytest_fairness.regression.compare_results``, as the plugin does:

* **point**: a regression when the gap grew by more than the tolerance;
* **paired** (``confidence="supported"``, both sides ``n_bootstrap=1000, seed=0``): when the
  whole 95 % interval of the change lies beyond the tolerance; both resampled the same
  images, so the replicates of the change are paired;
* **unpaired** (the same rule, the candidate drawn with another seed): the interval of two
  independent bootstraps.

Printed per rule and tolerance: the false-alarm rate (noise only; goal <= 5 %) and the
power at each true increase, with exact 95 % binomial intervals. The two interval rules
work at the same nominal level (a one-sided 2.5 % false alarm at tolerance 0), so their
power is compared at equal false alarms; the point rule's false alarms depend on how its
tolerance relates to the noise, which a user does not know. For reference, the point rule
with the tolerance these simulations tune to exactly 5 % false alarms (an oracle).
Finally the size of a committed baseline for 10^4 images with 1,000 replicates.

Run: ``python benchmarks/regression_power.py [--sims 300]``
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from scipy.stats import binomtest

from pytest_fairness import indicators as ind
from pytest_fairness.baseline import build_baseline, dump_baseline
from pytest_fairness.records import KeyedResult, ResultSummary, TestRecord
from pytest_fairness.regression import compare_results
from pytest_fairness.stats import set_paired_draws

N_PER_GROUP = 1_000
FLIP = 0.02
INCREASES = (0.0, 0.02, 0.05, 0.1)
TOLERANCES = (0.0, 0.01)


def _checkpoints(rng: np.random.Generator, increase: float) -> tuple[Any, ...]:
    groups = np.repeat([0, 1], N_PER_GROUP)
    n = groups.size
    y = rng.integers(0, 2, n)
    right = rng.random(n) < np.where(groups == 0, 0.88, 0.83)
    now = right ^ (rng.random(n) < FLIP)  # retraining noise: flips both ways
    worse = np.flatnonzero(now & (groups == 1))
    now[rng.choice(worse, int(round(increase * N_PER_GROUP)), replace=False)] = False
    return y, groups, right, now


def _summary(y: Any, groups: Any, right: Any, seed: int) -> ResultSummary:
    result = ind.group_metrics(y, np.where(right, y, 1 - y), groups=groups,
                               n_bootstrap=1000, seed=seed)
    return ResultSummary.of(KeyedResult(None, result))


def _simulate(rng: np.random.Generator, increase: float) -> dict[str, tuple[float, float]]:
    """(change, half-width) of the headline change for each rule."""
    y, groups, before, after = _checkpoints(rng, increase)
    base = _summary(y, groups, before, seed=0)
    paired = compare_results(base, _summary(y, groups, after, seed=0), {"headline": 0.0})[0]
    unpaired = compare_results(base, _summary(y, groups, after, seed=1), {"headline": 0.0})[0]
    assert paired.paired is True and unpaired.paired is False
    out = {}
    for name, c in (("paired", paired), ("unpaired", unpaired)):
        assert c.interval is not None and c.worse_by is not None
        out[name] = (c.worse_by, c.interval[0])
    out["point"] = (paired.worse_by, paired.worse_by)  # type: ignore[assignment]
    return out


def _rate(hits: int, sims: int) -> str:
    low, high = binomtest(hits, sims).proportion_ci(0.95, method="exact")
    return f"{hits / sims:6.1%} [{low:.1%}, {high:.1%}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sims", type=int, default=300)
    args = parser.parse_args()
    set_paired_draws(True)  # as a run that compares with a baseline draws
    start = time.perf_counter()
    runs = {inc: [_simulate(np.random.default_rng([7, k, int(inc * 1000)]), inc)
                  for k in range(args.sims)] for inc in INCREASES}
    print(f"{args.sims} simulations per row, {2 * N_PER_GROUP} images, flip probability "
          f"{FLIP:.0%}, 1,000 replicates ({time.perf_counter() - start:.0f} s)\n")
    print(f"{'rule':10} {'tolerance':>9}  " + "  ".join(
        f"{'false alarm' if inc == 0 else f'power +{inc:g}':>22}" for inc in INCREASES))
    for rule in ("point", "paired", "unpaired"):
        for tol in TOLERANCES:
            cells = []
            for inc in INCREASES:
                # point: the change itself; the interval rules: the interval's lower end
                hits = sum(sim[rule][1] > tol + 1e-12 for sim in runs[inc])
                cells.append(_rate(hits, args.sims))
            print(f"{rule:10} {tol:9g}  " + "  ".join(f"{c:>22}" for c in cells))
    changes = {inc: np.array([s["point"][0] for s in sims]) for inc, sims in runs.items()}
    cut = float(np.quantile(changes[0.0], 0.95))
    print(f"\noracle: the point rule with its tolerance tuned by these simulations to 5 % false "
          f"alarms (tolerance {cut:.4f}, unknown to a user without them):")
    print("  " + "  ".join(f"power +{inc:g} {_rate(int((changes[inc] > cut).sum()), args.sims)}"
                           for inc in INCREASES[1:]))

    rng = np.random.default_rng(0)
    y, groups = rng.integers(0, 2, 10_000), rng.integers(0, 4, 10_000)
    result = ind.group_metrics(y, np.where(rng.random(10_000) < 0.85, y, 1 - y),
                               groups=groups, n_bootstrap=1000, seed=0)
    document = build_baseline([TestRecord("t.py::test_gap", "t.py::test_gap", outcome="passed",
                                          results=(KeyedResult(None, result),))])
    size = len(dump_baseline(document).encode())
    print(f"\nbaseline of one group_metrics result on 10^4 images, 1,000 replicates: "
          f"{size / 1024:.1f} KiB (goal <= 1 MiB; independent of the number of images)")


if __name__ == "__main__":
    main()
