"""Coverage and cost of Fair SA's bootstrap intervals (``fair_sa(..., n_bootstrap=1000)``).

From "Fair SA: Sensitivity Analysis for Fairness in Face Recognition" (Joshi et al. 2022):
the L1 norm of the signed-AUC matrix of α(δ) = P(match | protected) − P(match | rest).

1. Coverage of the 95 % interval of the L1 norm (self-matching, ``threshold=0.5`` given, so
   the match rule is fixed and only the images are random). The population: each image has
   a latent robustness ``z = μ_g + 0.7 s + 0.71 e`` per perturbation (``s`` shared by the
   image's perturbations, ``e`` its own; all standard normal), protected images ``μ = 0``
   (40 %), the rest ``μ = 0.5``. At level δ > 0 the image still matches itself iff
   ``z >= h(δ)``, with ``h = -2 + 3δ`` for "blur" and ``h = -2 + 2.5δ²`` for "noise"; the
   perturbed embedding is built at cosine ``0.5 + 0.45 tanh(z - h)`` from the clean one, so
   the rule ``cos >= 0.5`` is exactly ``z >= h``. The truth is exact: P(match | g, δ) =
   Φ((μ_g - h(δ)) / σ), σ² = 0.7² + 0.71², then the same trapezoid and L1 as the indicator,
   over levels 0, 0.25, 0.5, 0.75, 1 (level 0 is the clean image, α = 0), protected row only.
   True AUCs are -0.12 (blur) and -0.09 (noise): away from 0, where |AUC| has little bias.
2. Cost of 1,000 replicates at the sizes used here for speed: self-matching on 10^4 images
   and verification on 1,000 images of 200 identities (5 each; identities resampled), both
   with the 11 built-in perturbations at 4 levels, 32-d features, two subgroups.

Run: ``python benchmarks/_coverage_fair_sa.py [--simulations 500] [--n 300] [--no-cost]``.

Measured (1,000 replicates each; 95 % Clopper-Pearson interval of the coverage in brackets):

- 300 images, 1,000 simulations: percentile 93.7 % [92.0, 95.1], BCa 93.4 % [91.7, 94.9];
  misses on both sides about equally (32 with the truth below, 31 above, percentile).
- 600 images, 500 simulations: percentile 95.2 % [92.9, 96.9], BCa 95.6 % [93.4, 97.2].
- 150 images, 500 simulations: percentile 94.6 % [92.2, 96.4], BCa 92.2 % [89.5, 94.4].

Not measured here: a population whose true AUCs are near 0. There the L1 norm's
replicates lie above the estimate (|x| of noise), the interval misses a truth near 0, and
BCa intervals can exclude the estimate itself (seen on the cost data below, where the two
groups do not differ).

Cost (a shared 2-core machine under load 6-10, OPENBLAS_NUM_THREADS=1, best of 3): 1,000
percentile replicates took 0.36 s CPU (0.9 s wall) on 10^4 images in self-matching, where
the indicator itself took 1.2 s CPU; 2.8 s CPU (7.0 s wall) on 1,000 images of 200
identities in verification (indicator 1.1 s CPU). BCa adds a jackknife over the images
(identities): about 4 s CPU more in each case.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from scipy.special import ndtr
from scipy.stats import beta

from pytest_fairness.indicators import fair_sa

LEVELS = (0.25, 0.5, 0.75, 1.0)
MU = {"P": 0.0, "R": 0.5}
SIGMA = float(np.hypot(0.7, 0.71))
CUTS = {"blur": lambda d: -2 + 3 * d, "noise": lambda d: -2 + 2.5 * d**2}


def truth_l1() -> float:
    """The population L1 norm (protected row only), exactly."""
    x = np.array((0.0, *LEVELS))
    total = 0.0
    for cut in CUTS.values():
        rate = {g: np.array([1.0] + [ndtr((mu - cut(d)) / SIGMA) for d in LEVELS])
                for g, mu in MU.items()}
        alpha = rate["P"] - rate["R"]
        total += abs(float(np.sum((alpha[1:] + alpha[:-1]) / 2 * np.diff(x))) / x[-1])
    return total


TRUTH = truth_l1()


def population_sample(rng: np.random.Generator, n: int) -> tuple[dict[Any, Any], Any]:
    """Clean and perturbed unit embeddings of n images, and their groups."""
    groups = np.where(rng.random(n) < 0.4, "P", "R")
    mu = np.where(groups == "P", MU["P"], MU["R"])
    clean = rng.normal(size=(n, 16))
    clean /= np.linalg.norm(clean, axis=1, keepdims=True)
    shared = rng.normal(size=n)
    features: dict[Any, Any] = {None: clean}
    for name, cut in CUTS.items():
        z = mu + 0.7 * shared + 0.71 * rng.normal(size=n)
        other = rng.normal(size=(n, 16))
        other -= np.einsum("ij,ij->i", other, clean)[:, None] * clean
        other /= np.linalg.norm(other, axis=1, keepdims=True)
        for level in LEVELS:
            cos = 0.5 + 0.45 * np.tanh(z - cut(level))
            features[(name, level)] = cos[:, None] * clean + np.sqrt(1 - cos**2)[:, None] * other
    return features, groups


def simulate_fair_sa(rng: np.random.Generator, *, n: int = 300, method: str = "percentile",
                     n_bootstrap: int = 1000) -> tuple[tuple[float, float] | None, float]:
    """One simulated dataset: (interval of the L1 norm or None, the population L1 norm)."""
    features, groups = population_sample(rng, n)
    r = fair_sa(features, attribute=groups, protected="P", perturbations=list(CUTS),
                levels=list(LEVELS), threshold=0.5, min_group_size=30, n_bootstrap=n_bootstrap,
                interval_method=method, seed=int(rng.integers(2**31)))
    return r.intervals.get("l1"), TRUTH


def coverage(simulations: int, n: int, method: str) -> None:
    rng = np.random.default_rng(20220614)
    start = time.perf_counter()
    hits = below = 0
    for _ in range(simulations):
        interval, truth = simulate_fair_sa(rng, n=n, method=method)
        if interval is not None and interval[0] <= truth <= interval[1]:
            hits += 1
        elif interval is not None and truth < interval[0]:
            below += 1
    low, high = beta.ppf([0.025, 0.975], [hits, hits + 1], [simulations - hits + 1,
                                                             simulations - hits])
    print(f"{method:>10}: L1 coverage {hits / simulations:.1%} (95% CI {low:.1%}-{high:.1%}) "
          f"over {simulations} simulations of {n} images; truth below the interval in "
          f"{below}, above in {simulations - hits - below}; {time.perf_counter() - start:.1f} s")


def synthetic(n: int, per_identity: int, rng: np.random.Generator) -> tuple[dict[Any, Any], Any,
                                                                               Any]:
    from pytest_fairness.perturbations import PERTURBATIONS

    ids = np.arange(n) // per_identity
    centres = rng.normal(size=(ids.max() + 1, 32))
    clean = centres[ids] + 0.5 * rng.normal(size=(n, 32))
    features: dict[Any, Any] = {None: clean}
    for name in PERTURBATIONS:
        for level in LEVELS:
            features[(name, level)] = clean + level * rng.normal(size=(n, 32)) * rng.uniform(
                0.5, 1.5, (n, 1))
    return features, np.where(ids % 2 == 0, "a", "b"), ids


def cost(task: str, n: int, per_identity: int, repeat: int = 3) -> None:
    """The indicator's time without intervals, and the bootstrap's own time (best of repeat)."""
    from pytest_fairness import stats

    features, groups, ids = synthetic(n, per_identity, np.random.default_rng(0))
    kwargs = {"attribute": groups, "levels": list(LEVELS), "far": 0.01, "task": task,
              "identities": ids if task == "verification" else None}
    engine, spent = stats.bootstrap, []

    def timed(*args: Any, **options: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        out = engine(*args, **options)
        spent.append((time.perf_counter() - wall, time.process_time() - cpu))
        return out

    plain = []
    stats.bootstrap = timed  # type: ignore[assignment]
    try:
        for _ in range(repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            fair_sa(features, **kwargs)
            plain.append((time.perf_counter() - wall, time.process_time() - cpu))
            r = fair_sa(features, n_bootstrap=1000, seed=1, **kwargs)
    finally:
        stats.bootstrap = engine
    left = [note for note in r.notes if "replicates left out" in note]
    print(f"{task:>13} on {n} images: indicator {min(plain)[0]:.2f} s wall "
          f"({min(plain)[1]:.2f} s CPU); 1,000 replicates {min(spent)[0]:.2f} s wall "
          f"({min(spent)[1]:.2f} s CPU), best of {repeat}. {left or ''}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--simulations", type=int, default=500)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--no-cost", action="store_true")
    args = parser.parse_args()
    print(f"population L1 norm {TRUTH:.4f}")
    for method in ("percentile", "bca"):
        coverage(args.simulations, args.n, method)
    if not args.no_cost:
        cost("self_matching", 10_000, 1)
        cost("verification", 1_000, 5)


if __name__ == "__main__":
    main()
