"""Seeds and cluster-aware bootstrap intervals shared by the indicators.

:func:`bootstrap` resamples units (images, households, stimuli) for a statistic of unit
weights, percentile or BCa (Efron 1987); the docs page "Intervals and a calibrated gate"
says what is resampled for each indicator.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, final

from pytest_fairness.bounds import quantiles
from pytest_fairness.draws import (
    BLOCK_REPS,
    cacheable,
    drawn_sums,
    kind_draws,
    multinomial,
    replicate_weights,
)
from pytest_fairness.errors import FairnessConfigError, InvalidDataError, check_int, own_error

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["BOOTSTRAP_METHODS", "Bootstrap", "IntervalOptions", "Linear", "Units", "as_generator",
           "bootstrap", "check_bootstrap_options", "check_finite", "resolve_seed",
           "set_default_seed", "set_paired_draws"]

__tracebackhide__ = own_error

#: Interval methods :func:`bootstrap` accepts.
BOOTSTRAP_METHODS = ("percentile", "bca")

#: Kinds pool rows only when there are this many times fewer kinds than rows.
_POOLING_GAIN = 8

#: Per-cluster totals with at most this many cells are kept dense.
_DENSE_CELLS = 1 << 25

#: Upper bound on the number of cells (replicates × clusters) held at once.
_CHUNK_CELLS = 4_000_000


def check_finite(array: NDArray[Any], name: str, fix: str, *, item: str = "row") -> None:
    """Raise naming the first ``item`` (index on the first axis) holding NaN or an infinity."""
    import numpy as np

    bad = np.flatnonzero(~np.isfinite(array.reshape(len(array), -1)).all(axis=1))
    if bad.size:
        raise InvalidDataError(
            f"{name} has NaN or infinite values in {item} {int(bad[0])} ({bad.size} {item}(s) "
            f"in all); {fix}.")


def as_generator(seed: Any) -> np.random.Generator:
    """A numpy Generator for ``seed`` (an int >= 0, a Generator, or None for fresh entropy)."""
    import numpy as np

    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    return np.random.default_rng(
        check_int("seed", seed, low=0, why=", a numpy.random.Generator or None"))


#: What ``seed=None`` means: the run's seed under pytest (:func:`set_default_seed`), else 0.
_default_seed = 0


def set_default_seed(seed: int) -> int:
    """Make ``seed=None`` mean ``seed`` (the plugin sets ``--fairness-seed``); return the old.

    A fixed default makes two results computed on the same images draw the same bootstrap
    replicates, so their comparison is paired.
    """
    global _default_seed
    previous, _default_seed = _default_seed, check_int("seed", seed, low=0)
    return previous


#: Whether kinds draw row by row, so that results on the same rows pair (:func:`set_paired_draws`).
_paired_draws = False


def set_paired_draws(on: bool) -> bool:
    """Draw pooled kinds row by row (``True``: results on the same rows pair); return the old.

    By default a kind of rows (same group, same outcome) draws its total Poisson count at
    once: the same resampling, at the cost of the kinds, not the rows, but paired only with
    a result whose every row is of the same kind. The plugin turns row draws on in a run that
    compares with or saves a baseline, names checkpoints, or passes ``--fairness-paired``.
    """
    global _paired_draws
    previous, _paired_draws = _paired_draws, bool(on)
    return previous


def resolve_seed(seed: Any) -> tuple[np.random.Generator, int | None]:
    """Return ``(generator, reported_seed)``; None is the run's seed, a Generator reports None.

    Examples
    --------
    >>> resolve_seed(None)[1], resolve_seed(7)[1]
    (0, 7)
    """
    import numpy as np

    if seed is None:
        seed = _default_seed
    rng = as_generator(seed)
    return rng, (None if isinstance(seed, np.random.Generator) else int(seed))


def check_bootstrap_options(
    n_bootstrap: Any, confidence_level: Any, interval_method: Any
) -> tuple[int, float, str]:
    """Validate the interval keywords every indicator shares (``n_bootstrap`` 0 or >= 100)."""
    n_bootstrap = check_int("n_bootstrap", n_bootstrap, low=0, why=" (0 switches intervals off)")
    if 0 < n_bootstrap < 100:
        raise FairnessConfigError(
            f"n_bootstrap={n_bootstrap} is too few replicates for a stable interval; use at "
            "least 100 (1000 or more is usual), or 0 to switch intervals off.")
    if isinstance(confidence_level, bool) or not isinstance(confidence_level, (int, float)) or not (
        0.5 <= confidence_level < 1
    ):
        raise FairnessConfigError(
            f"confidence_level must be a float in [0.5, 1); got "
            f"confidence_level={confidence_level!r}.")
    if interval_method not in BOOTSTRAP_METHODS:
        raise FairnessConfigError(
            f"interval_method must be one of {BOOTSTRAP_METHODS}; got "
            f"interval_method={interval_method!r}.")
    return int(n_bootstrap), float(confidence_level), str(interval_method)


def _intervals(boot: NDArray[np.float64], estimate: NDArray[np.float64],
               jack: NDArray[np.float64] | None, alpha: float, method: str) -> NDArray[np.float64]:
    """Intervals (k, 2) from replicates (B, k), estimates (k,) and jackknife values (C, k)."""
    import numpy as np
    from scipy.special import ndtr, ndtri

    out = np.full((estimate.size, 2), np.nan)
    n_valid = (~np.isnan(boot)).sum(axis=0)
    whole = np.flatnonzero((n_valid == boot.shape[0]) & ~np.isnan(estimate))
    if method == "percentile" and whole.size:  # no NaN replicate: every entry at once
        ordered = np.sort(np.ascontiguousarray(boot[:, whole].T), axis=1).T  # rows sort faster
        out[whole] = quantiles(ordered, [alpha / 2, 1 - alpha / 2]).T
    for i in range(estimate.size):
        if (method == "percentile" and n_valid[i] == boot.shape[0]) or (
                n_valid[i] < 2 or math.isnan(estimate[i])):
            continue
        reps = np.sort(boot[~np.isnan(boot[:, i]), i])
        levels = np.array([alpha / 2, 1 - alpha / 2])
        if method == "bca" and jack is not None:
            b = reps.size
            share = (np.sum(reps < estimate[i]) + 0.5 * np.sum(reps == estimate[i])) / b
            z0 = float(ndtri(min(max(share, 0.5 / b), 1 - 0.5 / b)))
            theta = jack[~np.isnan(jack[:, i]), i]
            accel = 0.0
            if theta.size >= 2:
                d = theta.mean() - theta
                denom = 6.0 * float(np.sum(d**2)) ** 1.5
                if denom > 0:
                    accel = float(np.sum(d**3)) / denom
            z = ndtri(levels)
            levels = np.clip(ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z))), 0.0, 1.0)
        out[i] = np.quantile(reps, levels)
    return out


def _compact(codes: NDArray[np.int64], size: int) -> tuple[NDArray[np.intp], int]:
    """Codes below ``size`` renumbered 0, 1, ... in order, and how many there are."""
    import numpy as np

    if size > 4 * codes.size + 1024:  # sparse codes: sort rather than count
        inverse = np.unique(codes, return_inverse=True)[1].reshape(-1).astype(np.intp)
        return inverse, int(inverse.max()) + 1 if inverse.size else 0
    present = np.bincount(codes, minlength=size) > 0
    return (np.cumsum(present) - 1)[codes].astype(np.intp), int(present.sum())


@final
@dataclass(frozen=True)
class Units:
    """The resampling units of a bootstrap: clusters of rows, each in one stratum.

    ``codes`` gives each row's cluster (or *kind*: rows that contribute alike, ``sizes`` rows
    each, drawn as one Poisson total when ``by_kind``, else row by row); ``strata`` what each
    stratum draws. Draws depend on the seed and the :attr:`plan` only, so two results with
    both equal pair their replicates.
    """

    codes: NDArray[np.intp]
    n_clusters: int
    strata: tuple[NDArray[np.intp], ...]
    sizes: NDArray[np.float64] | None = None
    by_kind: bool = False

    @classmethod
    def of(cls, n: int, *, clusters: Any = None, strata: Any = None,
           kinds: Any = None) -> Units:
        """Units of ``n`` rows, each its own cluster unless ``clusters`` groups them.

        ``clusters``, ``strata`` (constant within a cluster; each keeps its size) and
        ``kinds`` (rows that contribute alike; not with ``clusters``) hold one label per row.
        """
        import numpy as np

        if clusters is not None and kinds is not None:
            raise FairnessConfigError("Units.of takes clusters or kinds, not both.")
        labels = clusters if kinds is None else kinds
        if labels is None:
            codes = np.arange(n, dtype=np.intp)
        else:
            array = np.asarray(labels)
            if array.shape[:1] != (n,) or array.ndim > 2:
                raise InvalidDataError(
                    f"clusters must have one label per row ({n}); got shape {array.shape}. "
                    "Pass the household or identity of each row.")
            codes, size = np.zeros(n, dtype=np.int64), 1
            for column in np.ascontiguousarray(array.reshape(n, -1).T):  # one column at a time
                numeric = column.dtype.kind in "biuf"  # ids may be strings: no min, no minus
                low, high = (column.min(), column.max()) if n and numeric else (0, 0)
                if numeric and low == high:
                    continue
                if numeric and (column.dtype.kind in "biu" or (
                        high - low < 2**20 and (column == np.floor(column)).all())):
                    inverse, distinct = (column - low).astype(np.int64), int(high - low) + 1
                else:
                    values, inverse = np.unique(column, return_inverse=True)
                    inverse, distinct = inverse.reshape(-1), values.size
                if size * distinct >= 2**62:  # keep the mixed-radix code in int64
                    codes, size = _compact(codes, size)
                codes = codes * distinct + inverse
                size *= distinct
            codes = _compact(codes, size)[0]
        n_clusters = int(codes.max()) + 1 if n else 0
        if kinds is not None and n_clusters > n // _POOLING_GAIN:
            # Nearly as many kinds as rows: pooling would not shrink the statistic's matrix.
            return cls.of(n, strata=strata)
        if kinds is not None:  # rows are drawn, each adding to its kind
            if strata is not None:
                raise FairnessConfigError("Units.of takes strata or kinds, not both.")
            return cls(codes, n_clusters, (np.arange(n, dtype=np.intp),),
                       np.bincount(codes, minlength=n_clusters).astype(np.float64),
                       by_kind=not _paired_draws)
        if strata is None:
            return cls(codes, n_clusters, (np.arange(n_clusters, dtype=np.intp),))
        stratum = np.unique(np.asarray(strata), return_inverse=True)[1].reshape(-1)
        of_cluster = np.zeros(n_clusters, dtype=np.intp)
        of_cluster[codes] = stratum
        if (of_cluster[codes] != stratum).any():
            raise InvalidDataError(
                "clusters must each lie in one stratum; a cluster spans two. Give every "
                "cluster's rows the same stratum.")
        return cls(codes, n_clusters, tuple(np.flatnonzero(of_cluster == s).astype(np.intp)
                                            for s in range(int(stratum.max()) + 1)))

    @functools.cached_property
    def plan(self) -> str:
        """A digest of what is resampled: the unit of each row, the strata and the draw."""
        import numpy as np

        if self.by_kind:  # pairs only with a result whose every row is of the same kind
            return hashlib.sha256(np.asarray(self.codes, dtype=np.int64).tobytes()
                                  + b"|poisson(kinds)").hexdigest()[:16]
        n = self.codes.size
        unit = np.arange(n) if self.sizes is not None else self.codes
        digest = hashlib.sha256(np.asarray(unit, dtype=np.int64).tobytes())
        for members in self.strata:
            digest.update(b"|" + np.asarray(members, dtype=np.int64).tobytes())
        if len(self.strata) <= 1:  # Poisson weights: replicates drawn otherwise do not pair
            digest.update(b"|poisson(1)/2")  # 2: blocks of replicates by units
        return digest.hexdigest()[:16]

    def stand_ins(self) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
        """Rows that stand for all, and how many rows each stands for (1; a kind's size).

        A kind's rows contribute alike: its first row, times its size, gives their sums.
        """
        import numpy as np

        if self.sizes is None:
            return np.arange(self.codes.size), np.ones(self.codes.size)
        first = np.empty(self.n_clusters, dtype=np.intp)
        first[self.codes[::-1]] = np.arange(self.codes.size - 1, -1, -1)
        return first, self.sizes

    def totals(self, data: Any, rows: Any, columns: Any, width: int) -> Any:
        """Per-cluster sums ``T`` (n_clusters, width) of ``data[i]`` at ``(rows[i], columns[i])``.

        Dense when small, sparse otherwise; weights ``w`` give the sums ``(T.T @ w.T).T``.
        """
        import numpy as np
        from scipy import sparse

        cells = self.codes[np.asarray(rows)]
        values = np.asarray(data, dtype=np.float64)
        if self.n_clusters * width <= _DENSE_CELLS:
            flat = np.bincount(cells * width + np.asarray(columns), weights=values,
                               minlength=self.n_clusters * width)
            return flat.reshape(self.n_clusters, width)
        return sparse.csr_matrix((values, (cells, np.asarray(columns))),
                                 shape=(self.n_clusters, width))


@final
@dataclass(frozen=True)
class Linear:
    """A statistic of weighted sums: ``finish(w @ totals)`` for weights ``w`` (r, units).

    :func:`bootstrap` may form the sums block by block as it draws the weights, without
    holding them (see :func:`~pytest_fairness.draws.drawn_sums`).
    """

    totals: Any  # (units, width): an array, or a sparse matrix (then formed from weights)
    finish: Callable[[NDArray[np.float64]], Mapping[str, NDArray[np.float64]]]

    def __call__(self, w: NDArray[np.float64]) -> Mapping[str, NDArray[np.float64]]:
        """The statistic at weights ``w``."""
        import numpy as np

        return self.finish(np.asarray(w @ self.totals))


@final
@dataclass(frozen=True)
class Bootstrap:
    """Estimates, replicates and intervals of named statistics (see :func:`bootstrap`).

    Shapes ``(1, *s)``, ``(n_bootstrap, *s)``, ``(1, *s, 2)`` (NaN where undefined).
    """

    estimate: Mapping[str, NDArray[np.float64]]
    replicates: Mapping[str, NDArray[np.float64]]
    intervals: Mapping[str, NDArray[np.float64]]
    n_bootstrap: int
    confidence_level: float
    method: str
    plan: str = ""

    def interval(self, name: str, *index: int) -> tuple[float, float] | None:
        """The interval of statistic ``name`` (at ``index`` for array statistics)."""
        low, high = (float(v) for v in self.intervals[name][(0, *index)])
        return None if math.isnan(low) or math.isnan(high) else (low, high)

    def draws(self, names: Mapping[str, str], *index: int) -> dict[str, tuple[float, ...]]:
        """Replicates of statistics (``{shown: name}``) at ``index``, in draw order."""
        at: Any = (slice(None), *index)
        return {shown: tuple(self.replicates[name][at].tolist())
                for shown, name in names.items() if name in self.replicates}

    def defined(self, *names: str) -> dict[str, tuple[float, float]]:
        """``{name: interval}`` of the scalar statistics named, those defined only."""
        pairs = {name: self.interval(name) for name in names}
        return {name: pair for name, pair in pairs.items() if pair is not None}


@final
@dataclass(frozen=True)
class IntervalOptions:
    """The interval keywords every indicator takes: :meth:`check` once, then :meth:`run`."""

    n_bootstrap: int
    confidence_level: float
    method: str
    seed: Any

    @classmethod
    def check(cls, n_bootstrap: Any, confidence_level: Any, interval_method: Any,
              seed: Any) -> IntervalOptions:
        """Validate ``n_bootstrap``, ``confidence_level``, ``interval_method`` and ``seed``."""
        checked = check_bootstrap_options(n_bootstrap, confidence_level, interval_method)
        if checked[0]:
            as_generator(0 if seed is None else seed)  # a bad seed fails before any work
        return cls(*checked, seed)

    def run(self, statistic: Any, units: Units | None, params: dict[str, Any]) -> Bootstrap | None:
        """Bootstrap ``statistic`` over ``units``, noted in ``params``; None for no replicates."""
        params["n_bootstrap"] = self.n_bootstrap
        if not self.n_bootstrap:
            return None
        assert units is not None
        rng, used = resolve_seed(self.seed)
        boot = bootstrap(statistic, units, n_bootstrap=self.n_bootstrap,
                         confidence_level=self.confidence_level, method=self.method, seed=rng)
        params.update(seed=used, confidence_level=self.confidence_level,
                      interval_method=self.method, bootstrap_plan=boot.plan,
                      **({"bootstrap_draw": "kinds"} if units.by_kind else {}))
        return boot


def bootstrap(
    statistic: Callable[[NDArray[np.float64]], Mapping[str, NDArray[np.float64]]],
    units: Units,
    *,
    n_bootstrap: int = 1000,
    confidence_level: float = 0.95,
    method: str = "percentile",
    seed: Any = None,
) -> Bootstrap:
    """Cluster (and stratified) bootstrap of ``statistic(w (r, n_clusters)) -> {name: (r, ...)}``.

    Efron & Tibshirani, *An Introduction to the Bootstrap* (1993): weights all 1 give the
    estimate; each replicate weighs every unit by a Poisson(1) count
    (:func:`~pytest_fairness.draws.draw`), or, with several strata, draws each stratum's
    clusters with replacement. Intervals are percentile or BCa (Efron 1987, jackknife
    acceleration); NaN replicates are left out.
    """
    import numpy as np

    rng = as_generator(seed)
    c = units.n_clusters
    drawn = kind_draws(units, rng.bit_generator.random_raw(2), n_bootstrap) if (
        units.by_kind) else None
    joint = None
    if drawn is not None and c * (n_bootstrap + 1) <= _CHUNK_CELLS:  # one pass: 1s, draws
        joint = {k: np.asarray(v, dtype=np.float64)
                 for k, v in statistic(np.vstack([np.ones((1, c)), drawn])).items()}
    estimate = {k: v[:1] for k, v in joint.items()} if joint is not None else {
        k: np.asarray(v, dtype=np.float64) for k, v in statistic(np.ones((1, c))).items()}

    def evaluate(weights: Iterable[NDArray[np.float64]]) -> dict[str, NDArray[np.float64]]:
        outs = [statistic(w) for w in weights]
        return {k: np.concatenate([np.asarray(out[k], dtype=np.float64) for out in outs])
                for k in estimate}

    if len(units.strata) > 1:
        chunk = max(1, min(n_bootstrap, _CHUNK_CELLS // max(c, 1)))
        replicates = evaluate(multinomial(units, min(chunk, n_bootstrap - done), rng)
                              for done in range(0, n_bootstrap, chunk))
    elif joint is not None:
        replicates = {k: v[1:] for k, v in joint.items()}
    elif drawn is not None:
        chunk = max(1, _CHUNK_CELLS // max(c, 1))
        replicates = evaluate(drawn[done:done + chunk] for done in range(0, n_bootstrap, chunk))
    else:  # Poisson weights in blocks of BLOCK_REPS replicates
        key = rng.bit_generator.random_raw(2)  # a function of an int seed alone
        blocks = -(-n_bootstrap // BLOCK_REPS)
        if (isinstance(statistic, Linear) and isinstance(statistic.totals, np.ndarray)
                and not cacheable(units, n_bootstrap)):  # too many weights to keep: never held
            sums = drawn_sums(units, key, blocks * BLOCK_REPS, statistic.totals)[:n_bootstrap]
            replicates = {k: np.asarray(v, dtype=np.float64)
                          for k, v in statistic.finish(sums).items()}
        else:  # in even chunks: the last one not mostly unused
            most = max(1, _CHUNK_CELLS // BLOCK_REPS // max(c, 1))
            chunk = BLOCK_REPS * -(-blocks // -(-blocks // most))
            replicates = evaluate(
                replicate_weights(units, key, done, chunk, n_bootstrap)[:n_bootstrap - done]
                for done in range(0, n_bootstrap, chunk))
    jack: dict[str, NDArray[np.float64]] | None = None
    if method == "bca":
        step = max(1, _CHUNK_CELLS // max(c, 1))
        # Leave one unit out: a cluster's weight drops to 0, a kind's to (size - 1) / size.
        left = np.zeros(c) if units.sizes is None else (units.sizes - 1) / units.sizes

        def leave_out(start: int) -> NDArray[np.float64]:
            stop = min(start + step, c)
            w = np.ones((stop - start, c))
            w[np.arange(stop - start), np.arange(start, stop)] = left[start:stop]
            return w

        jack = evaluate(leave_out(start) for start in range(0, c, step))
        if units.sizes is not None:
            repeat = units.sizes.astype(np.intp)
            jack = {k: np.repeat(v, repeat, axis=0) for k, v in jack.items()}
    # Every statistic's entries side by side: one pass computes all the intervals.
    names = list(estimate)
    shapes = [estimate[k].shape[1:] for k in names]

    def side_by_side(arrays: Mapping[str, NDArray[np.float64]]) -> NDArray[np.float64]:
        return np.concatenate([arrays[k].reshape(arrays[k].shape[0], -1) for k in names],
                              axis=1)

    flat = _intervals(
        side_by_side(replicates), side_by_side(estimate)[0],
        None if jack is None else side_by_side(jack), 1 - confidence_level, method)
    splits = np.cumsum([math.prod(shape) for shape in shapes])[:-1]
    intervals = {k: part.reshape(1, *shape, 2)
                 for k, shape, part in zip(names, shapes, np.split(flat, splits))}
    return Bootstrap(estimate, replicates, intervals, n_bootstrap, confidence_level, method,
                     units.plan)
