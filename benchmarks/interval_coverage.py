"""Coverage of the 95 % bootstrap intervals of every indicator, on data with a known truth.

One line per indicator: the share of simulations whose interval of the tracked number
contains the population value, with its exact (Clopper-Pearson) 95 % interval. Goal:
coverage within [93 %, 97 %]. Each simulation draws a fresh sample from a fixed population
and computes the indicator with ``n_bootstrap=1000`` and its default interval (``--method
percentile`` or ``bca`` asks for one construction everywhere): the percentile interval for
most, BCa for ``ieat``, linearised for ``multi_directional``; a gap is the simultaneous
interval over the pairs of groups (for two groups ``|d| ± c·s``, whatever the method). The
populations are not tuned to the intervals; a line outside the band is printed as measured,
with the reason in its note.

=====================  ==============================================================
indicator              population (the truth is exact, or from 10^6 draws once)
=====================  ==============================================================
group_metrics          2 groups × 1,000 images, accuracy 0.85 and 0.75: DA = 0.10
landmark_metrics       2 groups × 600 faces, 2 landmarks 10 apart, error sd 0.5 / 0.7
                       per coordinate, SDR at NME < 0.08: DS from 10^6 draws
label_association      2 groups × 800 images, harmful top label with p 0.15 / 0.08
geodiversity           2 regions × 150 households of 1-8 images, household hit rate
                       Beta with means 0.60 / 0.45: gap 0.15 (households resampled)
precision_at_k         a fixed database of 320 "f" and 80 "m" items (8-d Gaussians at ±e1);
                       300 queries per sample: precision@10 gap (≈ 0.42) from 10^5 queries
ieat                   the stimulus model of ``benchmarks/ieat.py`` at d ≈ 0.73, 25 per set
=====================  ==============================================================

The amplification and Fair SA simulations live in ``benchmarks/_coverage_amplification.py``
and ``benchmarks/_coverage_fair_sa.py`` (their populations are described there) and are
run from here; each takes 10-20 minutes at 500 simulations.

Measured with ``--method percentile`` (500 simulations), before the gaps were simultaneous
and before the iEAT and Multi→ defaults changed: group_metrics 95.0 %, landmark_metrics
94.2 %, label_association 95.0 %, geodiversity 94.8 %, precision_at_k 94.8 %, ieat 96.0 %,
bias_amp 96.6 %, directional_bias_amp 93.0 %, multi_mals 95.2 %, multi_directional 90.4 %
(outside: the mean of |Δ| over noisy cells is biased upwards and the bootstrap adds to the
bias), fair_sa 93.7 % (1,000 simulations at 300 images). Multi→'s default, the linearised
interval, covers 96.0 % and iEAT's BCa 96.2 % (``docs/intervals.md``, "Indicators whose
default is not the percentile interval").

Run: ``python benchmarks/interval_coverage.py [--sims 500] [--only NAME] [--method bca]``
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
import time
from collections.abc import Callable
from functools import cache, partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from pytest_fairness import indicators as ind

HERE = Path(__file__).resolve().parent
B = 1000
#: None: each indicator's default interval; else passed as ``interval_method``.
METHOD: str | None = None

Interval = tuple[float, float] | None


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(2**31))


def _boot() -> dict[str, Any]:
    return {"n_bootstrap": B, **({} if METHOD is None else {"interval_method": METHOD})}


def group_metrics(rng: np.random.Generator) -> tuple[Interval, float]:
    n = 1000
    groups = np.repeat([0, 1], n)
    y = rng.integers(0, 2, 2 * n)
    correct = rng.random(2 * n) < np.where(groups == 0, 0.85, 0.75)
    r = ind.group_metrics(y, np.where(correct, y, 1 - y), groups=groups, seed=_seed(rng),
                          **_boot())
    return r.intervals.get("gap"), 0.10


def _landmarks(rng: np.random.Generator, sigma: Any) -> tuple[Any, Any]:
    n = len(sigma)
    truth = np.broadcast_to(np.array([[0.0, 0.0], [10.0, 0.0]]), (n, 2, 2))
    return truth, truth + rng.normal(size=(n, 2, 2)) * np.asarray(sigma)[:, None, None]


@cache
def _landmark_truth() -> float:
    rng = np.random.default_rng(7)
    rates = []
    for sigma in (0.5, 0.7):
        truth, pred = _landmarks(rng, np.full(10**6, sigma))
        nme = np.linalg.norm(truth - pred, axis=2).mean(axis=1) / 10
        rates.append(float((nme < 0.08).mean()))
    return rates[0] - rates[1]


def landmark_metrics(rng: np.random.Generator) -> tuple[Interval, float]:
    groups = np.repeat([0, 1], 600)
    truth, pred = _landmarks(rng, np.where(groups == 0, 0.5, 0.7))
    r = ind.landmark_metrics(truth, pred, groups=groups, normalizer=(0, 1), seed=_seed(rng),
                             **_boot())
    return r.intervals.get("gap"), _landmark_truth()


def label_association(rng: np.random.Generator) -> tuple[Interval, float]:
    n = 800
    groups = np.repeat(["a", "b"], n)
    harmful = rng.random(2 * n) < np.where(groups == "a", 0.15, 0.08)
    labels = np.stack([np.where(harmful, 3, 2), np.full(2 * n, 1)], axis=1)
    scores = np.tile([0.9, 0.05], (2 * n, 1))
    r = ind.label_association(labels, scores, groups=groups, taxonomy={
        1: "non_human", 2: "human", 3: "crime"}, top_k=2, seed=_seed(rng), **_boot())
    return r.intervals.get("gap"), 0.07


def geodiversity(rng: np.random.Generator) -> tuple[Interval, float]:
    households, mean, concentration = 150, (0.60, 0.45), 4.0
    rows: dict[str, list[Any]] = {"household": [], "region": [], "hit": []}
    for r_index, region in enumerate(("Africa", "Europe")):
        m = mean[r_index]
        rates = rng.beta(m * concentration, (1 - m) * concentration, households)
        for h, p in enumerate(rates):
            k = int(rng.integers(1, 9))
            rows["household"] += [f"{region}{h}"] * k
            rows["region"] += [region] * k
            rows["hit"] += (rng.random(k) < p).tolist()
    hit = np.array(rows["hit"])
    n = hit.size
    labels = np.stack([np.where(hit, 1, 2), np.full(n, 3)], axis=1)
    r = ind.geodiversity(labels, np.tile([0.9, 0.1], (n, 1)), truth=np.ones(n, int),
                         household=rows["household"], region=rows["region"],
                         income=np.full(n, 300.0), top_k=2, by="region", seed=_seed(rng),
                         **_boot())
    return r.intervals.get("gap"), mean[0] - mean[1]


@cache
def _database() -> tuple[Any, Any]:
    rng = np.random.default_rng(11)
    genders = np.repeat(["f", "m"], [320, 80])  # "m" under-represented
    return _people(rng, genders), pd.DataFrame({"gender": genders})


def _people(rng: np.random.Generator, genders: Any) -> Any:
    centre = np.where(genders[:, None] == "f", 1.0, -1.0) * np.eye(8)[0]
    return centre + rng.normal(size=(len(genders), 8))


def _precision(queries: Any, genders: Any) -> Any:
    db, frame = _database()
    qn = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    dn = db / np.linalg.norm(db, axis=1, keepdims=True)
    top = np.argsort(-(qn @ dn.T), axis=1, kind="stable")[:, :10]
    return (frame["gender"].to_numpy()[top] == genders[:, None]).mean(axis=1)


@cache
def _precision_truth() -> float:
    rng = np.random.default_rng(12)
    genders = np.repeat(["f", "m"], 50_000)
    p = _precision(_people(rng, genders), genders)
    return float(p[genders == "f"].mean() - p[genders == "m"].mean())


def precision_at_k(rng: np.random.Generator) -> tuple[Interval, float]:
    genders = np.repeat(["f", "m"], 150)
    queries = (_people(rng, genders), pd.DataFrame({"gender": genders}))
    r = ind.precision_at_k(queries, _database(), k=10, match="gender", by="gender",
                           seed=_seed(rng), **_boot())
    return r.intervals.get("gap"), abs(_precision_truth())


@cache
def _ieat_population() -> tuple[Any, float]:
    module = _load("ieat")
    population = module.Population(0.05)
    return population, population.true_effect(seed=1)


def ieat(rng: np.random.Generator) -> tuple[Interval, float]:
    population, truth = _ieat_population()
    x, y, a, b = (population.draw(rng, name, 25) for name in "XYAB")
    r = ind.ieat(x, y, a, b, seed=_seed(rng), n_permutations=1, exact_limit=0, **_boot())
    return r.intervals.get("effect_size"), truth


def _load(name: str) -> Any:
    """A sibling benchmark module (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def simulations() -> dict[str, Callable[[np.random.Generator], tuple[Interval, float]]]:
    """Indicator name → one simulation, ours and those of the sibling files."""
    found: dict[str, Callable[[np.random.Generator], tuple[Interval, float]]] = {
        "group_metrics": group_metrics, "landmark_metrics": landmark_metrics,
        "label_association": label_association, "geodiversity": geodiversity,
        "precision_at_k": precision_at_k, "ieat": ieat}
    chosen = {} if METHOD is None else {"method": METHOD}  # None: their own defaults
    for family in ("_coverage_amplification", "_coverage_fair_sa"):
        if (HERE / f"{family}.py").exists():
            module = _load(family)
            found.update({name[len("simulate_"):]: partial(getattr(module, name), **chosen)
                          for name in dir(module) if name.startswith("simulate_")})
    return found


def main() -> None:
    global METHOD
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sims", type=int, default=500)
    parser.add_argument("--only", action="append", help="indicator name (repeatable)")
    parser.add_argument("--method", default="default", choices=("default", "percentile", "bca"))
    args = parser.parse_args()
    METHOD = None if args.method == "default" else args.method
    shown = "each indicator's default" if METHOD is None else METHOD
    print(f"coverage of 95 % intervals ({shown}), {args.sims} simulations, {B} replicates")
    print(f"{'indicator':<22} {'coverage':>8}  {'95% CI':<16} {'undefined':>9}  {'time':>6}")
    for name, simulate in simulations().items():
        if args.only and name not in args.only:
            continue
        rng = np.random.default_rng(2026)
        covered = undefined = 0
        start = time.perf_counter()
        for _ in range(args.sims):
            interval, truth = simulate(rng)
            if interval is None or any(map(math.isnan, interval)):
                undefined += 1
            else:
                covered += interval[0] <= truth <= interval[1]
        ci = binomtest(covered, args.sims).proportion_ci(0.95, method="exact")
        rate = covered / args.sims
        flag = "" if 0.93 <= rate <= 0.97 else "  outside [93%, 97%]"
        print(f"{name:<22} {rate:>8.1%}  [{ci.low:.1%}, {ci.high:.1%}]  {undefined:>9}  "
              f"{time.perf_counter() - start:>5.0f}s{flag}")


if __name__ == "__main__":
    main()
