"""What 1,000 bootstrap replicates cost, against the indicator's own time.

For the per-image indicators (group and landmark metrics, label association,
geodiversity; precision@k printed) at 10^4, 10^5 and 10^6 images the goal (issue #28) is
an extra time of at most 3x the indicator's own at 10^4 and 10^5 and 10x at 10^6; iEAT is
printed at its own size. Each time is the median of ``--repeat`` calls, with and without
intervals alternately; "cold" clears the process's cache of replicate weights before each
call (a first test), "warm" does not (a later test over the same rows and seed). Then the
peak memory of one 10^6 call, a paired checkpoint comparison, and a suite of 20
group_metrics tests at 10^6 rows. The machine may be shared: read ratios.

Run: ``python benchmarks/bootstrap_cost.py [--repeat 3] [--only NAME] [--sizes 4 5 6]``
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from pytest_fairness import indicators as ind

N = 10_000  # set per size by main()


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
def _amplification(name: str) -> Callable[..., Any]:
    """The amplification indicators on the coverage benchmark's train and test sets."""
    import _coverage_amplification as amp

    train, test = amp._train(), amp.draw(np.random.default_rng(7), amp.N_TEST)
    return lambda **kw: amp.CALLS[name](*train, *test, **{"seed": 0, **kw})


def _fair_sa() -> Callable[..., Any]:
    """Fair SA on the coverage benchmark's 300 images, 3 perturbations."""
    import _coverage_fair_sa as sa

    features, groups = sa.population_sample(np.random.default_rng(5), 300)
    return lambda **kw: ind.fair_sa(
        features, attribute=groups, protected="P", perturbations=list(sa.CUTS),
        levels=list(sa.LEVELS), threshold=0.5, min_group_size=30, **{"seed": 0, **kw})


OTHERS = {"ieat": _ieat, "fair_sa": _fair_sa,
          **{name: partial(_amplification, name) for name in (
              "bias_amp", "directional_bias_amp", "multi_mals", "multi_directional")}}


def _alternate(calls: list[Callable[[], Any]], repeat: int,
               before: Callable[[], Any] = lambda: None) -> list[float]:
    """Median seconds of each call, the calls run in turn ``repeat`` times."""
    import statistics
    import time

    times: list[list[float]] = [[] for _ in calls]
    for _ in range(repeat):
        for call, seen in zip(calls, times):
            before()
            start = time.perf_counter()
            call()
            seen.append(time.perf_counter() - start)
    return [statistics.median(seen) for seen in times]


def _peak_mib(rows: int, paired: bool) -> tuple[float, float]:
    """Peak memory (MiB) of a fresh process after one default group_metrics call, and its
    growth over the point estimate's peak.

    VmHWM, the process's own high-water mark (Linux): ``ru_maxrss`` would carry over the
    parent's from before the spawn. ``paired``: drawn image by image, as a comparing run.
    """
    from pytest_fairness import stats

    def high_water() -> float:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) / 1024 for line in status
                        if line.startswith("VmHWM:"))

    global N
    N = rows
    stats.set_paired_draws(paired)
    call = _group_metrics()
    call(n_bootstrap=0)
    before = high_water()
    call()
    after = high_water()
    return after, after - before


def main() -> None:
    global N
    from pytest_fairness import draws, regression, stats
    from pytest_fairness.records import KeyedResult, ResultSummary

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", action="append")
    parser.add_argument("--sizes", type=int, nargs="+", default=[4, 5, 6])
    parser.add_argument("--no-table", action="store_true", help="only the 10^6 runs below")
    args = parser.parse_args()
    clear = draws._cache.clear  # the kept replicate weights
    print(f"{'indicator':<18} {'rows':>7} {'own':>9} {'+1000 cold':>11} {'ratio':>7}"
          f" {'+1000 warm':>11} {'ratio':>7}  goal")
    for table, goal in ((PER_IMAGE, "<=3x (10^6: <=10x)"), (OTHERS, "printed")):
        for name, make in table.items():
            if args.no_table or (args.only and name not in args.only):
                continue
            for power in args.sizes if table is PER_IMAGE else [0]:
                if name == "precision_at_k" and power > 5:  # its own search: minutes at 10^6
                    print(f"{name:<18} {'10^6':>7} skipped: the search alone takes minutes")
                    continue
                N = 10**power if power else N
                boot = make()  # the defaults: 1,000 replicates, the run's seed
                call = partial(boot, n_bootstrap=0)
                call(), boot()  # warm up (imports)
                own, cold = _alternate([call, boot], args.repeat, clear)
                warm = _alternate([boot], args.repeat)[0]
                shown = f"10^{power}" if power else "own"
                print(f"{name:<18} {shown:>7} {own * 1e3:>7.1f}ms {(cold - own) * 1e3:>9.0f}ms"
                      f" {(cold - own) / own:>6.1f}x {(warm - own) * 1e3:>9.0f}ms"
                      f" {(warm - own) / own:>6.1f}x  {goal}", flush=True)
    if args.only:
        return
    N = 10**6
    clear()
    import multiprocessing

    for paired in (False, True):
        with multiprocessing.get_context("spawn").Pool(1) as fresh:
            peak, growth = fresh.apply(_peak_mib, (N, paired))
        print(f"peak memory of a process after one group_metrics call at 10^6 rows, 1000 "
              f"replicates{' drawn image by image' if paired else ''}: {peak:.0f} MiB, "
              f"{growth:.0f} MiB above the point estimate's peak  [goal <= 2 GiB]")
    # A paired comparison: two checkpoints on the same rows (their kinds differ).
    rng = np.random.default_rng(9)
    y = rng.integers(0, 2, N)
    first = np.where(rng.random(N) < 0.8, y, 1 - y)
    second = np.where(rng.random(N) < 0.02, 1 - first, first)
    groups = rng.integers(0, 4, N)

    def compare() -> Any:
        a, b = (ResultSummary.of(KeyedResult(None, ind.group_metrics(y, p, groups=groups)))
                for p in (first, second))
        [c] = regression.compare_results(a, b, {"value": 0.01})
        assert c.paired, c.notes
        return c

    clear()
    previous = stats.set_paired_draws(True)  # as a run that compares: image by image
    print(f"paired checkpoint comparison at 10^6 rows (two results, 1000 replicates): "
          f"{_alternate([compare], 1, clear)[0]:.2f} s")
    stats.set_paired_draws(previous)
    suite = [partial(ind.group_metrics, y, first, groups=groups, min_group_size=30 + i)
             for i in range(20)]  # 20 tests of one checkpoint, each its own limit
    clear()
    plain, boot = (_alternate([lambda kw=kw: [t(**kw) for t in suite]], 1)[0]
                   for kw in ({"n_bootstrap": 0}, {}))
    print(f"suite of 20 group_metrics tests at 10^6 rows: {plain:.1f} s with n_bootstrap=0, "
          f"{boot:.1f} s with 1000 replicates ({boot / plain:.1f}x)")


if __name__ == "__main__":
    main()
