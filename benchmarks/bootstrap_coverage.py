"""Coverage of the 95% bootstrap intervals on simulated clustered data.

Usage: python benchmarks/bootstrap_coverage.py [--sims 500] [--bootstrap 1000]

Each simulation draws households (clusters) in two groups with true mean hit rates 0.6 and
0.4, images per household 1-8, and computes the household-level bootstrap of the group
mean, the overall mean and the gap. Goal: coverage in [93%, 97%] over 500 simulations.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pytest_fairness.stats import bootstrap_group_means


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sims", type=int, default=500)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--clusters", type=int, default=150, help="households per group")
    args = parser.parse_args()
    rng = np.random.default_rng(2024)
    truth = {"group 0": 0.6, "value": 0.5, "gap": 0.2}
    start = time.perf_counter()
    for method in ("percentile", "bca"):
        hits = dict.fromkeys(truth, 0)
        for s in range(args.sims):
            c = args.clusters
            sizes = rng.integers(1, 9, size=2 * c)
            groups = np.repeat(np.r_[np.zeros(c, int), np.ones(c, int)], sizes)
            clusters = np.repeat(np.arange(2 * c), sizes)
            p = np.r_[rng.beta(6, 4, c), rng.beta(4, 6, c)]
            values = (rng.random(groups.size) < p[clusters]).astype(float)
            b = bootstrap_group_means(values, groups, n_groups=2, included=[True, True],
                                      clusters=clusters, n_bootstrap=args.bootstrap,
                                      method=method, seed=s)
            for name, interval in (("group 0", b.group_interval(0)),
                                   ("value", b.interval("value")), ("gap", b.interval("gap"))):
                hits[name] += interval is not None and interval[0] <= truth[name] <= interval[1]
        shown = ", ".join(f"{k} {hits[k] / args.sims:.1%}" for k in truth)
        print(f"{method:>10}: coverage over {args.sims} simulations: {shown}")
    print(f"elapsed {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
