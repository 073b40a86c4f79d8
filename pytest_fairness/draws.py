"""Replicate weights of the bootstrap: Poisson counts drawn in blocks, kept while small.

:func:`pytest_fairness.stats.bootstrap` resamples with these: Poisson(1) weights of units
(:func:`draw`; or their weighted sums, :func:`drawn_sums`), each kind's Poisson total
(:func:`kind_draws`), or each stratum's units with replacement (:func:`multinomial`).
"""

from __future__ import annotations

import functools
import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["BLOCK_REPS", "Drawn", "cacheable", "draw", "drawn_sums", "kind_draws", "multinomial",
           "replicate_weights", "workers"]


class Drawn(Protocol):
    """What a draw reads of its units (a :class:`pytest_fairness.stats.Units`)."""

    @property
    def codes(self) -> NDArray[np.intp]:
        """Each row's unit (cluster, row or kind)."""

    @property
    def n_clusters(self) -> int:
        """How many units."""

    @property
    def strata(self) -> tuple[NDArray[np.intp], ...]:
        """Each stratum's units."""

    @property
    def sizes(self) -> NDArray[np.float64] | None:
        """Each kind's rows (drawn row by row); None when the units are drawn themselves."""

    @property
    def plan(self) -> str:
        """A digest of what is resampled."""


#: Units and replicates per block of Poisson weights, each block drawn by its own generator;
#: replicate weights kept for reuse: at most _CACHE_BYTES in all.
_BLOCK_UNITS, BLOCK_REPS, _CACHE_BYTES = 1 << 14, 16, 512 << 20
#: Draws of at least this many weights use the worker threads, at most 4.
_THREADED, _CORES = 1 << 20, min(4, os.cpu_count() or 1)
_cache: dict[tuple[Any, ...], NDArray[np.float64]] = {}


@functools.cache
def workers() -> ThreadPoolExecutor:
    """The process's worker threads, started once, for work that lets go of the GIL.

    Numpy's draws and products here, shards' checksums and pages when read. A pool per call
    spent about 4 ms starting its threads: 0.13 s a bootstrap of 10^5 rows.
    """
    return ThreadPoolExecutor(_CORES, thread_name_prefix="pytest-fairness")


os.register_at_fork(after_in_child=workers.cache_clear)  # a forked child has no threads


@functools.cache
def _poisson_table() -> NDArray[np.float64]:
    """Poisson(1) by the inverse CDF of a 16-bit uniform (probabilities to 2**-16)."""
    import numpy as np

    k = np.arange(12)
    cdf = np.cumsum(np.exp(-1.0) / np.cumprod(np.maximum(k, 1)))
    edges = np.round(cdf * 65536).astype(np.int64)
    return np.searchsorted(edges, np.arange(65536), side="right").astype(np.float64)


def _block(key: NDArray[np.uint64], unit_block: int, rep_block: int,
           table: NDArray[np.float64], units: int) -> NDArray[np.float64]:
    """Poisson(1) weights (BLOCK_REPS, units) of one block: a function of its place alone."""
    import numpy as np

    bits = np.random.PCG64(np.random.SeedSequence([*key.tolist(), unit_block, rep_block]))
    draws = bits.random_raw(-(-units * BLOCK_REPS // 4)).view(np.uint16)  # 4 a draw
    return table[draws[:units * BLOCK_REPS].reshape(BLOCK_REPS, units)]


def draw(units: Drawn, key: NDArray[np.uint64], start: int, r: int) -> NDArray[np.float64]:
    """Weights (r, n_clusters) of replicates ``start`` to ``start + r`` (a multiple of 16).

    The Poisson bootstrap (Hanley & MacGibbon 2006; Chamandy et al. 2012): each unit (a
    cluster, or a row of a kind) weighs an independent Poisson(1) count in each replicate,
    drawn in blocks of 16 replicates by 16,384 units, each block from a generator seeded
    by (seed, block), so replicate b's weight of unit i depends on (seed, i, b) alone. A
    replicate is a resampled set whose size varies (mean: the units'; statistics are ratios
    of weighted sums); a kind weighs its rows' mean count.
    """
    import numpy as np

    table = _poisson_table()
    n, spans, pools = _spans(units)
    drawn = (np.empty if units.sizes is None else np.zeros)((r, units.n_clusters))

    def fill(q: int) -> None:  # replicates q to q + 16: disjoint rows of ``drawn``
        for (at, stop), pool in zip(spans, pools):
            block = _block(key, at // _BLOCK_UNITS, (start + q) // BLOCK_REPS, table, stop - at)
            if pool is None:
                drawn[q:q + BLOCK_REPS, at:stop] = block
            else:
                drawn[q:q + BLOCK_REPS] += block @ pool

    blocks = range(0, r, BLOCK_REPS)
    list(map(fill, blocks) if n * r < _THREADED else workers().map(fill, blocks))
    if units.sizes is not None:
        drawn /= units.sizes
    return drawn


def drawn_sums(units: Drawn, key: NDArray[np.uint64], r: int,
                totals: NDArray[np.float64]) -> NDArray[np.float64]:
    """``draw(units, key, 0, r) @ totals`` for ``r`` a multiple of 16, without the weights.

    Each block of weights is multiplied into its units' rows of ``totals`` as it is drawn, in
    products of at most 2^18 multiply-adds (OpenBLAS runs those on the calling thread; larger
    ones start its own threads, which then compete with these); rows of kinds are summed per
    kind first, as :func:`draw` sums them. The sums are those of the weights :func:`draw`
    gives, added in another order.
    """
    import numpy as np

    table = _poisson_table()
    n, spans, pools = _spans(units)
    width = totals.shape[1]
    step = max(256, (1 << 18) // (BLOCK_REPS * width))
    sums = np.empty((r, width))

    def fill(q: int) -> None:  # replicates q to q + 16
        part = np.zeros((BLOCK_REPS, width))
        kinds = np.zeros((BLOCK_REPS, 0 if units.sizes is None else units.n_clusters))
        for (at, stop), pool in zip(spans, pools):
            block = _block(key, at // _BLOCK_UNITS, q // BLOCK_REPS, table, stop - at)
            if pool is not None:
                kinds += block @ pool
                continue
            for low in range(0, stop - at, step):
                part += block[:, low:low + step] @ totals[at + low:min(at + low + step, stop)]
        sums[q:q + BLOCK_REPS] = part if units.sizes is None else kinds / units.sizes @ totals

    blocks = range(0, r, BLOCK_REPS)
    list(map(fill, blocks) if n * r < _THREADED else workers().map(fill, blocks))
    return sums


def _spans(units: Drawn) -> tuple[int, list[tuple[int, int]], list[Any]]:
    """The units drawn, their blocks of 16,384, and each block's sum per kind (or None)."""
    import numpy as np
    from scipy import sparse

    n = units.n_clusters if units.sizes is None else units.codes.size
    spans = [(at, min(at + _BLOCK_UNITS, n)) for at in range(0, n, _BLOCK_UNITS)]
    pools = [None if units.sizes is None else sparse.csr_matrix(
        (np.ones(stop - at), (np.arange(stop - at), units.codes[at:stop])),
        shape=(stop - at, units.n_clusters)) for at, stop in spans]
    return n, spans, pools


def kind_draws(units: Drawn, key: NDArray[np.uint64], r: int) -> NDArray[np.float64]:
    """Weights (r, kinds): each kind's total of its rows' Poisson(1) counts, a Poisson(size).

    The sum of independent Poisson(1) counts is Poisson of their number, so this resamples
    exactly as :func:`draw` does, at the cost of the kinds; replicate b depends on
    (seed, b) and the kinds' sizes alone.
    """
    import numpy as np

    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([*key.tolist(), 2])))
    assert units.sizes is not None
    return rng.poisson(units.sizes, size=(r, units.n_clusters)) / units.sizes


def multinomial(units: Drawn, r: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Counts (r, n_clusters) of each stratum's clusters drawn with replacement, its size kept.

    For several strata (iEAT's four sets of a few dozen stimuli), whose sizes the statistic
    needs fixed; cheap at their size.
    """
    import numpy as np

    weights = np.zeros((r, units.n_clusters))
    for members in units.strata:
        draws = rng.integers(0, members.size, size=(r, members.size), dtype=np.int32)
        for i in range(r):  # one bincount per replicate keeps its counts in cache
            weights[i, members] = np.bincount(draws[i], minlength=members.size)
    return weights


def cacheable(units: Drawn, total: int) -> bool:
    """Whether all ``total`` replicates' weights fit the cache."""
    return units.n_clusters * total * 8 <= _CACHE_BYTES


def replicate_weights(units: Drawn, key: NDArray[np.uint64], start: int, r: int,
                       total: int) -> NDArray[np.float64]:
    """:func:`draw`, kept while small: tests over the same rows and seed share their draws.

    Only draws whose ``total`` replicates all fit in the cache are kept: larger ones would
    push their own chunks out before any reuse.
    """
    if not cacheable(units, total):
        return draw(units, key, start, r)
    digest = hashlib.sha256(units.codes.tobytes()).hexdigest() if units.sizes is not None else ""
    name = (key.tobytes(), units.plan, digest, start, r)
    if name in _cache:
        _cache[name] = _cache.pop(name)  # most recently used last
        return _cache[name]
    weights = draw(units, key, start, r)
    weights.flags.writeable = False  # shared by later calls: no statistic may change it
    while _cache and sum(w.nbytes for w in _cache.values()) + weights.nbytes > _CACHE_BYTES:
        del _cache[next(iter(_cache))]
    _cache[name] = weights
    return weights
