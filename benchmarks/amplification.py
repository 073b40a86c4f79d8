"""Benchmark: multi-attribute bias amplification at COCO-like scale.

40,000 training and 40,000 test images, 80 attributes, two groups. Labels are sparse and
correlated: each image has one of 40 "scenes" (drawn from a mixture that differs between
the groups); a scene has 4 core attributes, each present with probability 0.55, and every
image adds Poisson(0.4) attributes drawn by Zipf popularity (about 2.6 labels per image,
up to 8). That gives about 10^4 distinct combinations held by both the training and the
test ground truth (M of the paper variant, all combination sizes). Predictions drop 10 %
of the true labels and add 0.5 % false ones; 10 % of the predicted groups are flipped.

Timed, each on its own and at default settings (every combination size, min_count 1):
``multi_mals`` and ``multi_directional`` in each direction (G->M, M->G), for the paper
variant and for ``variant="reference"`` (M = the exact training label sets). Each time is
the median of the repeats (default 5). Goal: at most 2 s per call.

Then the cost of bootstrap intervals (``--n-bootstrap``, default 1,000 replicates over the
test images, percentile; 0 skips it), timed once per indicator (paper variant, plus
``bias_amp`` and ``directional_bias_amp``), beside the indicator's own time. Goal: under
10 s per call.

Run: ``.venv/bin/python benchmarks/amplification.py [--quick] [--repeat N] [--n-bootstrap B]``
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np
from _timing import median_time

from pytest_fairness.indicators import (
    bias_amp,
    directional_bias_amp,
    multi_directional,
    multi_mals,
)


def make_data(n: int, n_attrs: int = 80, n_scenes: int = 40, core: int = 4,
              p_core: float = 0.55, extra: float = 0.4, seed: int = 0):
    """Correlated sparse labels, as described in the module docstring."""
    rng = np.random.default_rng(seed)
    cores = np.array([rng.choice(n_attrs, core, replace=False) for _ in range(n_scenes)])
    mixture = rng.dirichlet(np.full(n_scenes, 0.5), size=2)  # each group's scenes
    popularity = 1.0 / np.arange(1, n_attrs + 1) ** 1.1
    popularity /= popularity.sum()

    def labels(groups):
        m = len(groups)
        scene = (rng.random(m)[:, None] > np.cumsum(mixture[groups], axis=1)).sum(axis=1)
        scene = np.minimum(scene, n_scenes - 1)
        x = np.zeros((m, n_attrs), dtype=np.int8)
        take = (rng.random((m, core)) < p_core).ravel()
        x[np.repeat(np.arange(m), core)[take], cores[scene].ravel()[take]] = 1
        k = rng.poisson(extra, m)
        x[np.repeat(np.arange(m), k), rng.choice(n_attrs, k.sum(), p=popularity)] = 1
        return x

    g_train, g_test = rng.integers(0, 2, n), rng.integers(0, 2, n)
    train, test = labels(g_train), labels(g_test)
    noise = rng.random(test.shape)
    pred = np.where(test == 1, noise >= 0.1, noise < 0.005).astype(np.int8)
    pred_g = np.where(rng.random(n) < 0.1, 1 - g_test, g_test)
    return train, g_train, test, g_test, pred, pred_g


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4,000 images per split")
    parser.add_argument("--repeat", type=int, default=5, help="runs per timing (median)")
    parser.add_argument("--n-bootstrap", type=int, default=1000, help="replicates (0: skip)")
    args = parser.parse_args()
    n = 4_000 if args.quick else 40_000
    train, g_train, test, g_test, pred, pred_g = make_data(n)
    sizes = train.sum(axis=1)
    print(f"train {train.shape}, test {test.shape}; labels per image {sizes.mean():.2f} "
          f"(max {sizes.max()}), {len(np.unique(train, axis=0)):,} distinct training label "
          f"sets; predicted labels per image {pred.sum(axis=1).mean():.2f}")
    calls = {
        "multi_mals": lambda **kw: multi_mals(train, g_train, test, g_test, pred, pred_g, **kw),
        "multi_directional G->M": lambda **kw: multi_directional(
            train, g_train, test, g_test, pred, direction="G->M", **kw),
        "multi_directional M->G": lambda **kw: multi_directional(
            train, g_train, test, g_test, pred_groups=pred_g, direction="M->G", **kw),
    }
    worst = 0.0
    for variant in ("paper", "reference"):
        for name, call in calls.items():
            seconds, result = median_time(partial(call, variant=variant), args.repeat)
            worst = max(worst, seconds)
            print(f"{variant:9s} {name:24s} |M| = {int(result.stats['n_combinations']):6,}  "
                  f"X = {result.value:.6f}  median of {args.repeat}: {seconds:.3f} s")
    print(f"slowest call: {worst:.3f} s (goal: at most 2 s per direction)")
    if not args.n_bootstrap:
        return
    calls |= {"bias_amp": lambda **kw: bias_amp(train, g_train, pred, pred_g, **kw),
              "directional_bias_amp G->M": lambda **kw: directional_bias_amp(
                  train, g_train, test, g_test, pred, direction="G->M", **kw)}
    for name, call in calls.items():  # CPU time too: wall time on a shared machine varies
        own, _ = median_time(call, args.repeat)
        cpu = time.process_time()
        seconds, result = median_time(partial(call, n_bootstrap=args.n_bootstrap, seed=0), 1)
        cpu = time.process_time() - cpu
        low, high = result.intervals["value"]
        print(f"bootstrap {name:26s} {args.n_bootstrap} replicates: {seconds - own:6.2f} s "
              f"(CPU {cpu:.2f} s with the indicator; the indicator alone {own:.3f} s)  "
              f"X = {result.value:.6f} in [{low:.6f}, {high:.6f}]")


if __name__ == "__main__":
    main()
