"""Seeds and cluster-aware bootstrap intervals shared by the indicators.

Every stochastic computation takes ``seed: int | numpy.random.Generator | None`` and turns
it into a Generator here, so the seed that was used can be reported with the result.

The bootstrap covers the statistics most indicators share: a per-group **mean of unit
values** (a unit is an image, a query or a household), the overall mean, the **gap**
(max − min over the included groups) and the **ratio** (min / max). Units can belong to
clusters (households, identities): a replicate then draws whole clusters with replacement,
so correlated units move together, as seed 000 §3.2 asks for Dollar Street households.

Replicates are computed from per-cluster sums with matrix products (no Python loop over
replicates), several metrics at once (e.g. every threshold τ of a sweep), in bounded memory.

Two interval methods:

- ``"percentile"``: the α/2 and 1 − α/2 quantiles of the replicates.
- ``"bca"``: bias-corrected and accelerated (Efron 1987); the bias from the share of
  replicates below the estimate, the acceleration from a leave-one-cluster-out jackknife.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_fairness.errors import FairnessConfigError, InvalidDataError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "BOOTSTRAP_METHODS",
    "BootstrapIntervals",
    "as_generator",
    "bootstrap_group_means",
    "check_bootstrap_options",
    "resolve_seed",
]

#: Interval methods :func:`bootstrap_group_means` accepts.
BOOTSTRAP_METHODS = ("percentile", "bca")

#: Upper bound on the number of cells (replicates × clusters) held at once.
_CHUNK_CELLS = 4_000_000


def as_generator(seed: Any) -> np.random.Generator:
    """Return a numpy Generator for ``seed`` (an int, a Generator, or None for fresh entropy).

    Raises
    ------
    FairnessConfigError
        When ``seed`` is of another type or a negative int.
    """
    import numpy as np

    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise FairnessConfigError(
            f"seed must be a non-negative int, a numpy.random.Generator or None; got "
            f"seed={seed!r} (type={type(seed).__name__})."
        )
    return np.random.default_rng(int(seed))


def resolve_seed(seed: Any) -> tuple[np.random.Generator, int | None]:
    """Return ``(generator, reported_seed)``.

    ``None`` draws a fresh int seed so that the result can still report (and a user
    rerun) it; a Generator is used as is and reported as ``None``.
    """
    import numpy as np

    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    rng = as_generator(seed)
    return rng, (None if isinstance(seed, np.random.Generator) else int(seed))


def check_bootstrap_options(
    n_bootstrap: Any, confidence_level: Any, interval_method: Any
) -> tuple[int, float, str]:
    """Validate the interval keywords every indicator shares.

    ``n_bootstrap=0`` switches intervals off; otherwise it must be at least 100.
    """
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, int) or n_bootstrap < 0:
        raise FairnessConfigError(
            f"n_bootstrap must be a non-negative int (0 switches intervals off); got "
            f"n_bootstrap={n_bootstrap!r}."
        )
    if 0 < n_bootstrap < 100:
        raise FairnessConfigError(
            f"n_bootstrap={n_bootstrap} is too few replicates for a stable interval; use at "
            "least 100 (1000 or more is usual), or 0 to switch intervals off."
        )
    if isinstance(confidence_level, bool) or not isinstance(confidence_level, (int, float)) or not (
        0.5 <= confidence_level < 1
    ):
        raise FairnessConfigError(
            f"confidence_level must be a float in [0.5, 1); got "
            f"confidence_level={confidence_level!r}."
        )
    if interval_method not in BOOTSTRAP_METHODS:
        raise FairnessConfigError(
            f"interval_method must be one of {BOOTSTRAP_METHODS}; got "
            f"interval_method={interval_method!r}."
        )
    return int(n_bootstrap), float(confidence_level), str(interval_method)


@dataclass(frozen=True)
class BootstrapIntervals:
    """Intervals of the per-group means, the overall mean, the gap and the ratio.

    Arrays have one row per group (``group``) and one column per metric; each entry of
    the last axis is ``(low, high)``. NaN marks an interval that cannot be computed
    (e.g. the gap with fewer than two included groups).
    """

    group: NDArray[np.float64]  # (groups, metrics, 2)
    value: NDArray[np.float64]  # (metrics, 2)
    gap: NDArray[np.float64]  # (metrics, 2)
    ratio: NDArray[np.float64]  # (metrics, 2)
    n_bootstrap: int
    confidence_level: float
    method: str

    def group_interval(self, g: int, j: int = 0) -> tuple[float, float] | None:
        """The interval of group ``g`` at metric ``j``, None when undefined."""
        return _pair(self.group[g, j])

    def interval(self, name: str, j: int = 0) -> tuple[float, float] | None:
        """The interval of ``"value"``, ``"gap"`` or ``"ratio"`` at metric ``j``."""
        return _pair(getattr(self, name)[j])

    def as_mapping(self, j: int = 0) -> dict[str, tuple[float, float]]:
        """``{"value": ..., "gap": ..., "ratio": ...}`` at metric ``j``, defined ones only."""
        out = {}
        for name in ("value", "gap", "ratio"):
            pair = self.interval(name, j)
            if pair is not None:
                out[name] = pair
        return out


def _pair(row: Any) -> tuple[float, float] | None:
    low, high = float(row[0]), float(row[1])
    if math.isnan(low) or math.isnan(high):
        return None
    return (low, high)


def _summaries(
    sums: NDArray[np.float64], counts: NDArray[np.float64], included: NDArray[np.bool_]
) -> tuple[NDArray[np.float64], ...]:
    """Group means, overall mean, gap and ratio from sums (r, G, m) and counts (r, G)."""
    import numpy as np

    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts[:, :, None]
        value = sums.sum(axis=1) / counts.sum(axis=1)[:, None]
    inc = means[:, included, :]
    enough = (~np.isnan(inc)).sum(axis=1) >= 2
    if inc.shape[1] == 0:
        nan = np.full(value.shape, np.nan)
        return means, value, nan, nan.copy()
    with np.errstate(invalid="ignore", divide="ignore"):
        filled_hi = np.where(np.isnan(inc), -np.inf, inc).max(axis=1)
        filled_lo = np.where(np.isnan(inc), np.inf, inc).min(axis=1)
        gap = np.where(enough, filled_hi - filled_lo, np.nan)
        ratio = np.where(filled_hi == 0, 1.0, filled_lo / filled_hi)
        ratio = np.where(enough & (filled_lo >= 0), ratio, np.nan)
    return means, value, gap, ratio


def _interval_from_replicates(
    boot: NDArray[np.float64],
    estimate: NDArray[np.float64],
    jack: NDArray[np.float64] | None,
    alpha: float,
    method: str,
) -> NDArray[np.float64]:
    """Intervals (..., 2) from replicates (B, ...), estimates (...) and jackknife (C, ...)."""
    import numpy as np
    from scipy.special import ndtr, ndtri

    out = np.full((*estimate.shape, 2), np.nan)
    valid = ~np.isnan(boot)
    n_valid = valid.sum(axis=0)
    flat_boot = boot.reshape(boot.shape[0], -1)
    flat_est = estimate.reshape(-1)
    flat_out = out.reshape(-1, 2)
    flat_valid = n_valid.reshape(-1)
    flat_jack = None if jack is None else jack.reshape(jack.shape[0], -1)
    for i in range(flat_est.size):
        if flat_valid[i] < 2 or math.isnan(flat_est[i]):
            continue
        reps = flat_boot[:, i]
        reps = np.sort(reps[~np.isnan(reps)])
        levels = np.array([alpha / 2, 1 - alpha / 2])
        if method == "bca" and flat_jack is not None:
            b = reps.size
            share = (np.sum(reps < flat_est[i]) + 0.5 * np.sum(reps == flat_est[i])) / b
            share = min(max(share, 0.5 / b), 1 - 0.5 / b)
            z0 = float(ndtri(share))
            theta = flat_jack[:, i]
            theta = theta[~np.isnan(theta)]
            accel = 0.0
            if theta.size >= 2:
                d = theta.mean() - theta
                denom = 6.0 * float(np.sum(d**2)) ** 1.5
                if denom > 0:
                    accel = float(np.sum(d**3)) / denom
            z = ndtri(levels)
            adjusted = z0 + (z0 + z) / (1 - accel * (z0 + z))
            levels = np.clip(ndtr(adjusted), 0.0, 1.0)
        flat_out[i] = np.quantile(reps, levels)
    return out


def bootstrap_group_means(
    values: Any,
    groups: Any,
    *,
    n_groups: int,
    included: Any,
    clusters: Any = None,
    n_bootstrap: int = 1000,
    confidence_level: float = 0.95,
    method: str = "percentile",
    seed: Any = None,
) -> BootstrapIntervals:
    r"""Bootstrap intervals of per-group means, the overall mean, the gap and the ratio.

    For units :math:`i` with values :math:`v_{ij}` (metric :math:`j`) in groups
    :math:`g(i)` and clusters :math:`c(i)`, one replicate draws :math:`C` clusters with
    replacement (weights :math:`w_c` = times drawn) and computes

    .. math::

        \bar v^*_{gj} = \frac{\sum_i w_{c(i)} [g(i) = g] v_{ij}}{\sum_i w_{c(i)} [g(i) = g]},
        \quad gap^*_j = \max_{g \in I} \bar v^*_{gj} - \min_{g \in I} \bar v^*_{gj}

    over the included groups :math:`I`. Groups absent from a replicate are skipped in it.

    Parameters
    ----------
    values : array-like of shape (n,) or (n, m)
        One value per unit (and metric).
    groups : array-like of int of shape (n,)
        Group code of each unit, in ``[0, n_groups)``.
    n_groups : int
        Number of groups.
    included : array-like of bool of shape (n_groups,)
        Groups that count for the gap and the ratio.
    clusters : array-like of shape (n,), optional
        Cluster of each unit (household, identity); each unit is its own cluster if None.
    n_bootstrap : int, default 1000
        Number of replicates.
    confidence_level : float, default 0.95
        Coverage of the intervals.
    method : {"percentile", "bca"}
        Interval method.
    seed : int, numpy.random.Generator or None
        Seed of the resampling.

    Returns
    -------
    BootstrapIntervals

    Examples
    --------
    >>> import numpy as np
    >>> values = np.r_[np.ones(40), np.zeros(10), np.ones(25), np.zeros(25)]
    >>> groups = np.r_[np.zeros(50, int), np.ones(50, int)]
    >>> b = bootstrap_group_means(values, groups, n_groups=2, included=[True, True],
    ...                           n_bootstrap=500, seed=0)
    >>> low, high = b.interval("gap")
    >>> bool(low < 0.3 < high)
    True
    """
    import numpy as np
    from scipy import sparse

    vals = np.asarray(values, dtype=np.float64)
    if vals.ndim == 1:
        vals = vals[:, None]
    n, m = vals.shape
    codes = np.asarray(groups, dtype=np.intp)
    inc = np.asarray(included, dtype=bool)
    if codes.shape != (n,) or inc.shape != (n_groups,):
        raise InvalidDataError(
            f"bootstrap_group_means needs one group code per unit and one flag per group; got "
            f"{codes.shape[0]} codes for {n} units and {inc.shape[0]} flags for {n_groups} groups."
        )
    if clusters is None:
        ccodes = np.arange(n)
        n_clusters = n
    else:
        _, ccodes = np.unique(np.asarray(clusters), return_inverse=True)
        ccodes = ccodes.reshape(-1)
        n_clusters = int(ccodes.max()) + 1
    rng = as_generator(seed)
    alpha = 1 - confidence_level

    # Per-cluster sums of values (C × G·m) and unit counts (C × G), sparse: a cluster
    # usually sits in one group.
    cols = codes[:, None] * m + np.arange(m)[None, :]
    sum_mat = sparse.csr_matrix(
        (vals.reshape(-1), (np.repeat(ccodes, m), cols.reshape(-1))),
        shape=(n_clusters, n_groups * m),
    )
    cnt_mat = sparse.csr_matrix(
        (np.ones(n), (ccodes, codes)), shape=(n_clusters, n_groups)
    )
    total_sum = np.asarray(sum_mat.sum(axis=0)).reshape(n_groups, m)
    total_cnt = np.asarray(cnt_mat.sum(axis=0)).reshape(n_groups)
    est = _summaries(total_sum[None], total_cnt[None], inc)

    chunk = max(1, min(n_bootstrap, _CHUNK_CELLS // max(n_clusters, 1)))
    boot_parts: list[list[NDArray[np.float64]]] = [[], [], [], []]
    done = 0
    while done < n_bootstrap:
        r = min(chunk, n_bootstrap - done)
        draws = rng.integers(0, n_clusters, size=(r, n_clusters))
        offsets = (np.arange(r) * n_clusters)[:, None]
        weights = np.bincount((draws + offsets).reshape(-1), minlength=r * n_clusters)
        weights = weights.reshape(r, n_clusters).astype(np.float64)
        sums = np.asarray(sum_mat.T @ weights.T).T.reshape(r, n_groups, m)
        counts = np.asarray(cnt_mat.T @ weights.T).T.reshape(r, n_groups)
        for part, array in zip(boot_parts, _summaries(sums, counts, inc)):
            part.append(array)
        done += r
    boot = [np.concatenate(p) for p in boot_parts]

    jack: list[NDArray[np.float64]] | None = None
    if method == "bca":
        jack_parts: list[list[NDArray[np.float64]]] = [[], [], [], []]
        step = max(1, _CHUNK_CELLS // max(n_groups * m, 1))
        for start in range(0, n_clusters, step):
            stop = min(start + step, n_clusters)
            sums = total_sum[None] - sum_mat[start:stop].toarray().reshape(-1, n_groups, m)
            counts = total_cnt[None] - cnt_mat[start:stop].toarray()
            for part, array in zip(jack_parts, _summaries(sums, counts, inc)):
                part.append(array)
        jack = [np.concatenate(p) for p in jack_parts]

    def interval(k: int) -> NDArray[np.float64]:
        return _interval_from_replicates(
            boot[k], est[k][0], None if jack is None else jack[k], alpha, method
        )

    return BootstrapIntervals(
        group=interval(0), value=interval(1), gap=interval(2), ratio=interval(3),
        n_bootstrap=n_bootstrap, confidence_level=confidence_level, method=method,
    )
