"""What 1,000 bootstrap replicates cost, against the indicator's own time.

For the per-image indicators on 10^4 images (group and landmark metrics, label
association, geodiversity, precision@k once the neighbours are found) the goal is an
extra time of at most 2x the indicator's own; for iEAT, the amplification indicators and
Fair SA the extra time is printed and must stay under 10 s at the sizes of their own
benchmarks. Each time is the median of ``--repeat`` calls (default 5), run alternately
with and without intervals; the machine may be shared, so read ratios, not absolutes.

Run: ``python benchmarks/bootstrap_cost.py [--repeat 5] [--only NAME]``
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from _timing import median_time

from pytest_fairness import indicators as ind

N = 10_000


def _group_metrics() -> Callable[..., Any]:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, N)
    pred = np.where(rng.random(N) < 0.8, y, 1 - y)
    groups = rng.integers(0, 4, N)
    return lambda **kw: ind.group_metrics(y, pred, groups=groups, **kw)


def _landmark_metrics() -> Callable[..., Any]:
    rng = np.random.default_rng(1)
    truth = rng.normal(size=(N, 68, 2)) * 20
    pred = truth + rng.normal(size=truth.shape)
    groups = rng.integers(0, 4, N)
    return lambda **kw: ind.landmark_metrics(truth, pred, groups=groups,
                                             normalizer="interocular", **kw)


def _label_association() -> Callable[..., Any]:
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 1000, (N, 5))
    scores = np.sort(rng.random((N, 5)), axis=1)[:, ::-1]
    groups = rng.integers(0, 4, N)
    taxonomy = {i: ("crime", "human", "non_human")[i % 3] for i in range(1000)}
    return lambda **kw: ind.label_association(labels, scores, groups=groups,
                                              taxonomy=taxonomy, **kw)


def _geodiversity() -> Callable[..., Any]:
    rng = np.random.default_rng(3)
    household = rng.integers(0, 2500, N)
    regions = np.array(["Africa", "Americas", "Asia", "Europe"])
    return lambda **kw: ind.geodiversity(
        rng.integers(0, 50, (N, 5)), np.sort(rng.random((N, 5)), axis=1)[:, ::-1],
        truth=rng.integers(0, 50, N), household=household.astype(str),
        region=regions[household % 4], income=np.exp(1.5 + household % 9 / 3), **kw)


def _precision_at_k() -> Callable[..., Any]:
    rng = np.random.default_rng(4)
    emb = rng.normal(size=(N, 64)).astype(np.float32)
    frame = pd.DataFrame({"gender": rng.choice(["f", "m"], N),
                          "age": rng.choice(["young", "old"], N)})
    return lambda **kw: ind.precision_at_k((emb, frame), (emb, frame), k=[1, 10],
                                           match="gender", by="age", exclude_self=True, **kw)


def _ieat() -> Callable[..., Any]:
    rng = np.random.default_rng(5)
    sets = [rng.normal(size=(25, 2048)) for _ in range(4)]
    return lambda **kw: ind.ieat(*sets, **{"seed": 0, **kw})


PER_IMAGE = {"group_metrics": _group_metrics, "landmark_metrics": _landmark_metrics,
             "label_association": _label_association, "geodiversity": _geodiversity,
             "precision_at_k": _precision_at_k}
OTHERS = {"ieat": _ieat}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", action="append")
    args = parser.parse_args()
    print(f"{'indicator':<20} {'own':>9} {'+1000 replicates':>17} {'extra/own':>10}  goal")
    for table, goal in ((PER_IMAGE, "<= 2x"), (OTHERS, "extra < 10 s")):
        for name, make in table.items():
            if args.only and name not in args.only:
                continue
            call = make()
            call(), call(n_bootstrap=1000, seed=0)  # warm up (imports, caches)
            own = median_time(call, args.repeat)[0]
            total = median_time(partial(call, n_bootstrap=1000, seed=0), args.repeat)[0]
            extra = total - own
            print(f"{name:<20} {own * 1e3:>7.1f}ms {extra * 1e3:>15.1f}ms {extra / own:>9.2f}x"
                  f"  {goal}")


if __name__ == "__main__":
    main()
