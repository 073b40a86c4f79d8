"""Simultaneous bootstrap bounds on the spread and the extremes of several values.

:func:`simultaneous` gives the gap, ratio, ``min`` and ``max`` intervals of every
indicator with a group table, and re-levels them for a run's family-wise control.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["quantiles", "simultaneous", "simultaneous_sets"]

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


def _sd(replicates: NDArray[np.float64]) -> NDArray[np.float64]:
    """Bootstrap SD of each column, its NaN replicates left out."""
    import warnings

    import numpy as np

    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a column with under two replicates
        if np.isnan(replicates).any():
            sd: NDArray[np.float64] = np.nanstd(replicates, axis=0, ddof=1)
            return sd
        centred = replicates - replicates.mean(axis=0)
        sd = np.sqrt(np.einsum("ij,ij->j", centred, centred) / (len(replicates) - 1))
        return sd


def _studentized_max(estimate: NDArray[np.float64], replicates: NDArray[np.float64],
                     s: NDArray[np.float64]) -> NDArray[np.float64]:
    """``max |x* − x| / s`` of each replicate over p statistics of SDs ``s`` (p,).

    NaN replicates and statistics with ``s`` 0 or NaN are left out of the maximum (-inf
    where a replicate has none).
    """
    import numpy as np

    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.abs(replicates - estimate) / np.where(s > 0, s, np.nan)
    top: NDArray[np.float64] = np.fmax.reduce(t, axis=1, initial=-np.inf)  # NaN passed over
    return top


def _critical(tops: NDArray[np.float64], confidence_level: float) -> float:
    """The ``confidence_level`` quantile of the finite maxima (0 when there are none)."""
    import numpy as np

    finite = np.sort(tops[np.isfinite(tops)]).tolist()
    if not finite:
        return 0.0
    at = (len(finite) - 1) * confidence_level  # numpy's default (linear) quantile
    low = int(at)
    below, above, t = finite[low], finite[min(low + 1, len(finite) - 1)], at - low
    return float(above - (above - below) * (1 - t) if t >= 0.5 else below + (above - below) * t)


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
    v, reps = estimate[keep], replicates[:, keep]
    out = np.full((3, 2), np.nan)
    if not v.size:
        return out
    own, floor = _sd(reps), np.zeros(v.size)
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)[keep]
        if (w > 0).all():
            floor = np.sqrt(np.sum(w**2 * np.nan_to_num(own)**2) / w.sum() / w)
    if extremes:  # within what the replicates reach (a rate's bound stays in [0, 1])
        s = np.fmax(own, floor)
        c = _critical(_studentized_max(v, reps, s), confidence_level)
        s = np.nan_to_num(s)
        out[1] = (np.min(v - c * s), np.min(v + c * s))
        out[2] = (np.max(v - c * s), np.max(v + c * s))
        if np.isfinite(reps).any():
            out[1:] = np.clip(out[1:], min(np.nanmin(reps), v.min()), max(np.nanmax(reps), v.max()))
    if v.size < 2:
        return out
    # Pairs in chunks of about _CHUNK_CELLS cells: k = 200 groups has 19,900 pairs.
    first, second = np.triu_indices(v.size, 1)
    step = max(1, _CHUNK_CELLS // max(reps.shape[0], 1))
    sds, tops = [], np.full(reps.shape[0], -np.inf)
    for at in range(0, first.size, step):
        i, j = first[at:at + step], second[at:at + step]
        diff = reps[:, i] - reps[:, j]
        pair_s = np.fmax(_sd(diff), np.hypot(floor[i], floor[j]))
        tops = np.maximum(tops, _studentized_max(v[i] - v[j], diff, pair_s))
        sds.append(np.nan_to_num(pair_s))
    c = _critical(tops, confidence_level)
    d, s = np.abs(v[first] - v[second]), np.concatenate(sds)
    out[0] = (max(0.0, float(np.max(d - c * s))), float(np.max(d + c * s)))
    return out


def simultaneous_sets(
    sets: Sequence[tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64] | None]],
    confidence_level: float,
) -> list[NDArray[np.float64]]:
    """:func:`simultaneous` of several sets ``(replicates, estimate, weights)``, each its own.

    Sets of the same size without NaN (a group table's columns) are bounded in one pass.
    """
    import numpy as np

    if len({len(e) for _, e, _ in sets}) != 1 or not len(sets[0][1]):
        return [simultaneous(r, e, confidence_level, weights=w) for r, e, w in sets]
    reps = np.stack([r for r, _, _ in sets])  # (sets, B, k): reductions run along rows
    v = np.stack([e for _, e, _ in sets])  # (sets, k)
    if np.isnan(reps).any() or np.isnan(v).any():
        return [simultaneous(r, e, confidence_level, weights=w) for r, e, w in sets]
    (_n, b, k), out = reps.shape, np.full((len(sets), 3, 2), np.nan)

    def sd(x: NDArray[np.float64]) -> NDArray[np.float64]:  # over replicates, as _sd
        centred = x - x.mean(axis=1, keepdims=True)
        spread: NDArray[np.float64] = np.sqrt(np.einsum("sbk,sbk->sk", centred, centred) / (b - 1))
        return spread

    def critical(x: NDArray[np.float64], d: NDArray[np.float64],
                 s: NDArray[np.float64]) -> NDArray[np.float64]:  # as _critical, per set
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.abs(x - d[:, None]) / np.where(s > 0, s, np.nan)[:, None]
        return _criticals(np.fmax.reduce(t, axis=2, initial=-np.inf).T, confidence_level)

    own = sd(reps)
    w = np.stack([np.full(k, np.nan) if x is None else np.asarray(x, dtype=np.float64)
                  for _, _, x in sets])
    with np.errstate(invalid="ignore", divide="ignore"):
        floor = np.where((w > 0).all(axis=1, keepdims=True), np.sqrt(
            np.sum(w**2 * own**2, axis=1, keepdims=True) / w.sum(axis=1, keepdims=True) / w),
            0.0)
    s = np.fmax(own, floor)
    c = critical(reps, v, s)[:, None] * s
    reach = (np.minimum(reps.min(axis=(1, 2)), v.min(axis=1))[:, None],
             np.maximum(reps.max(axis=(1, 2)), v.max(axis=1))[:, None])
    for row, pick in ((1, np.min), (2, np.max)):  # within reach, as simultaneous()
        out[:, row] = np.clip(np.stack([pick(v - c, axis=1), pick(v + c, axis=1)], -1), *reach)
    if k > 1:
        first, second = np.triu_indices(k, 1)
        diff, d = reps[:, :, first] - reps[:, :, second], v[:, first] - v[:, second]
        pair_s = np.fmax(sd(diff), np.hypot(floor[:, first], floor[:, second]))
        c = critical(diff, d, pair_s)[:, None] * pair_s
        out[:, 0] = np.stack([np.maximum(0.0, (np.abs(d) - c).max(axis=1)),
                              (np.abs(d) + c).max(axis=1)], -1)
    return list(out)


def _criticals(tops: NDArray[np.float64], confidence_level: float) -> NDArray[np.float64]:
    """:func:`_critical` of each column of ``tops`` (B, sets) at once."""
    import numpy as np

    finite = np.isfinite(tops)
    ordered = np.sort(np.where(finite, tops, np.inf), axis=0)  # the finite ones first
    n = finite.sum(axis=0)
    at = np.maximum(n - 1, 0) * confidence_level
    low = np.floor(at).astype(np.intp)
    below = np.take_along_axis(ordered, low[None], 0)[0]
    above = np.take_along_axis(ordered, np.minimum(low + 1, np.maximum(n - 1, 0))[None], 0)[0]
    t = at - low
    with np.errstate(invalid="ignore"):
        c = np.where(t >= 0.5, above - (above - below) * (1 - t), below + (above - below) * t)
    out: NDArray[np.float64] = np.where(n > 0, c, 0.0)
    return out
