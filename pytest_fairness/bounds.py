"""Simultaneous bootstrap bounds on the spread and the extremes of several values.

:func:`simultaneous` gives the gap, ratio, ``min`` and ``max`` intervals of every
indicator with a group table, and re-levels them for a run's family-wise control.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["quantiles", "simultaneous"]

#: Upper bound on the number of cells (replicates × pairs) held at once.
_CHUNK_CELLS = 4_000_000


def quantiles(ordered: NDArray[np.float64], levels: Any) -> NDArray[np.float64]:
    """Quantiles (len(levels), ...) of sorted columns: numpy's default (linear) method."""
    import numpy as np

    at = (ordered.shape[0] - 1) * np.asarray(levels, dtype=np.float64)
    low = np.floor(at).astype(np.intp)
    t = (at - low).reshape(-1, *[1] * (ordered.ndim - 1))
    below, above = ordered[low], ordered[np.minimum(low + 1, ordered.shape[0] - 1)]
    out: NDArray[np.float64] = np.where(t >= 0.5, above - (above - below) * (1 - t),
                                        below + (above - below) * t)
    return out


def _sd(columns: NDArray[np.float64]) -> NDArray[np.float64]:
    """Bootstrap SD of each row of ``columns`` (p, B), its NaN replicates left out."""
    import warnings

    import numpy as np

    if columns.shape[1] < 2:
        return np.full(columns.shape[0], np.nan)
    if np.isnan(columns).any():
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a row with under two replicates
            sd: NDArray[np.float64] = np.nanstd(columns, axis=1, ddof=1)
            return sd
    centred = columns - columns.mean(axis=1, keepdims=True)
    sd = np.sqrt(np.einsum("ij,ij->i", centred, centred) / (columns.shape[1] - 1))
    return sd


def _studentized_max(estimate: NDArray[np.float64], columns: NDArray[np.float64],
                     s: NDArray[np.float64]) -> NDArray[np.float64]:
    """``max |x* − x| / s`` of each replicate over p statistics (``columns`` (p, B), SDs ``s``).

    NaN replicates and statistics with ``s`` 0 or NaN are left out of the maximum (-inf
    where a replicate has none).
    """
    import numpy as np

    scale = np.full(s.shape, np.nan)
    np.divide(1.0, s, out=scale, where=s > 0)
    t = np.abs(columns - estimate[:, None])
    t *= scale[:, None]
    top: NDArray[np.float64] = np.fmax.reduce(t, axis=0, initial=-np.inf)  # NaN passed over
    return top


def _critical(tops: NDArray[np.float64], confidence_level: float) -> float:
    """The ``confidence_level`` quantile of the finite maxima (0 when there are none)."""
    import numpy as np

    finite = tops[np.isfinite(tops)]
    if not finite.size:
        return 0.0
    at = (finite.size - 1) * confidence_level  # numpy's default (linear) quantile
    low = int(at)
    high = min(low + 1, finite.size - 1)
    ordered = np.partition(finite, (low, high))
    below, above, t = float(ordered[low]), float(ordered[high]), at - low
    return above - (above - below) * (1 - t) if t >= 0.5 else below + (above - below) * t


@functools.lru_cache(maxsize=64)
def _pairs(k: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Each pair (i < j) of k values: ``np.triu_indices(k, 1)``, read-only."""
    import numpy as np

    pairs = np.triu_indices(k, 1)
    for part in pairs:
        part.flags.writeable = False
    return pairs


def simultaneous(replicates: NDArray[np.float64], estimate: NDArray[np.float64],
                 confidence_level: float, *, weights: NDArray[np.float64] | None = None,
                 extremes: bool = True) -> NDArray[np.float64]:
    """Simultaneous bounds (3, 2) on the spread, the lowest and the highest of k values.

    A bootstrap maxT construction (Romano & Wolf, "Exact and approximate stepdown methods
    for multiple hypothesis testing", 2005; Efron & Tibshirani, *An Introduction to the
    Bootstrap*, 1993): for each pair of values the difference ``d_ij = v_i − v_j``, its
    bootstrap SD ``s_ij`` from the joint replicates, and one critical value ``c``, the
    ``confidence_level`` quantile of ``max_ij |d*_ij − d_ij| / s_ij``, so that every
    ``d_ij ± c s_ij`` holds at once. The true spread ``max_ij |δ_ij|`` then lies in
    ``[max(0, max_ij(|d_ij| − c s_ij)), max_ij(|d_ij| + c s_ij)]``. The lowest and highest
    value are bounded alike over the values themselves: ``min_g(v_g ∓ c' s_g)``,
    ``max_g(v_g ∓ c' s_g)``, kept within the range the values and replicates reach (a
    rate's bounds stay in [0, 1]). Unlike the percentile interval of the range recomputed in each
    replicate, which repeats the upward bias of a range of noisy values, these bounds keep
    their coverage with many groups; with two values they are ``|d| ± c s``.

    With ``weights`` (the data behind each value: its images, or the sum of its
    denominators), each SD is floored at the pooled one scaled to its weight,
    ``f_g = sqrt(σ² / w_g)`` with ``σ² = Σ w_g² s_g² / Σ w_g`` (each pair at
    ``sqrt(f_i² + f_j²)``): a small group whose proportion is by chance near 0 or 1 has a
    bootstrap SD near 0 that understates its error; the floor is what its SD would be were
    it like the others (exact when all groups are equal).

    Parameters
    ----------
    replicates : ndarray (B, k)
        Joint bootstrap replicates of the k values (NaN where a replicate leaves one
        undefined: it is left out of the pairs it is in).
    estimate : ndarray (k,)
        The values; NaN ones are left out.
    confidence_level : float
        The simultaneous coverage, e.g. 0.95.
    weights : ndarray (k,), optional
        The data behind each value, for the SD floor; None: no floor.
    extremes : bool, default True
        False: the spread only (the lowest and highest value's rows stay NaN).

    Returns
    -------
    ndarray (3, 2)
        Rows: the spread (max − min), the lowest value, the highest value; NaN where fewer
        than two (spread) or no (extremes) values are defined.

    Examples
    --------
    >>> import numpy as np
    >>> reps = np.array([[0.6, 0.5], [0.7, 0.5], [0.6, 0.4], [0.5, 0.5], [0.6, 0.6]])
    >>> simultaneous(reps, np.array([0.6, 0.5]), 0.8).round(3).tolist()
    [[0.0, 0.2], [0.4, 0.6], [0.5, 0.7]]
    """
    import numpy as np

    keep = ~np.isnan(estimate)
    v = estimate[keep]
    out = np.full((3, 2), np.nan)
    if not v.size:
        return out
    columns = np.ascontiguousarray(replicates[:, keep].T)  # (k, B): reductions along rows
    own, floor = _sd(columns), np.zeros(v.size)
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)[keep]
        if (w > 0).all():
            floor = np.sqrt(np.sum(w**2 * np.where(np.isnan(own), 0.0, own)**2) / w.sum() / w)
    if extremes:  # within what the replicates reach (a rate's bound stays in [0, 1])
        s = np.fmax(own, floor)
        c = _critical(_studentized_max(v, columns, s), confidence_level)
        s = np.where(np.isnan(s), 0.0, s)
        low, high = v - c * s, v + c * s
        out[1:] = ((low.min(), high.min()), (low.max(), high.max()))
        if np.isfinite(columns).any():
            out[1:] = np.clip(out[1:], min(np.nanmin(columns), v.min()),
                              max(np.nanmax(columns), v.max()))
    if v.size < 2:
        return out
    # Pairs in chunks of about _CHUNK_CELLS cells: k = 200 groups has 19,900 pairs.
    first, second = _pairs(v.size)
    step = max(1, _CHUNK_CELLS // max(columns.shape[1], 1))
    sds, tops = [], np.full(columns.shape[1], -np.inf)
    for at in range(0, first.size, step):
        i, j = first[at:at + step], second[at:at + step]
        diff = columns[i] - columns[j]
        pair_s = np.fmax(_sd(diff), np.hypot(floor[i], floor[j]))
        tops = np.maximum(tops, _studentized_max(v[i] - v[j], diff, pair_s))
        sds.append(np.where(np.isnan(pair_s), 0.0, pair_s))
    c = _critical(tops, confidence_level)
    d, s = np.abs(v[first] - v[second]), np.concatenate(sds)
    out[0] = (max(0.0, float(np.max(d - c * s))), float(np.max(d + c * s)))
    return out
