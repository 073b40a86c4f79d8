"""Same-attribute retrieval: Precision@K per query group (seed 000 §3.3).

Embeddings are L2-normalised and compared by cosine similarity; for each query the K most
similar database items are retrieved and Precision@K is the share of them whose ``match``
attribute equals the query's. Several K come from one search (the largest K).

Search (:func:`nearest_neighbors`): exact, by a screen and a re-scoring. Every screen
has a proven bound of its error on a cosine. Each query keeps more candidates than K; a
query whose candidates could hide a better item is screened again with more, and only
candidates that can still reach the k-th best are re-scored. The re-scored cosines
``cos(q, d) = (q · d) / (‖q‖ ‖d‖)`` are ordered by **decreasing float64 cosine, ties
broken by the lower database index**: wherever two candidates' bounds overlap near the
top K, their float64 cosines decide. The neighbours therefore equal a float64
brute-force search with that tie rule exactly, whatever the screen (``screen="exact"``
is that brute force; one that sums the products in another order can differ only
where two cosines lie within a few ulp). The query itself
(same row) is excluded when the queries are the database. Screens:

- ``"faiss"``: faiss ``IndexFlatIP`` on L2-normalised float32 rows (DESIGN §2), searched
  in blocks of queries.
- ``"float32"``: float32 BLAS products chunk by chunk, the database read in place; memory
  bounded by a block of 2^25 scores.
- ``"bfloat16"``: one bfloat16 product per block (Intel AMX or AVX512-BF16 units through
  torch), candidates re-scored in float32 (one sampled product, no gathered rows) and
  then float64 where order is in doubt.
  Its bound is wider (about 4 × 10⁻³ against 2.5 × 10⁻⁴), so about twice as many
  candidates are re-scored, from a product 5× faster.
- ``"auto"`` (default): ``"exact"`` for tiny databases, ``"bfloat16"`` where the CPU has
  bfloat16 units, else ``"faiss"``.

Measured with ``benchmarks/meta_indicators.py`` at 2,000 × 10,000 × 2,048: on 2 Sapphire
Rapids cores faiss took 0.43 s, the float32 screen 0.42 s and the bfloat16 screen 0.22 s
(at 5,000 × 10⁶ × 64: 47 s, 11 s and 7.8 s); on 2 AMD Zen 5 cores (AVX512-BF16, no AMX)
0.44 s, 0.46 s and 0.17 s, of which the bfloat16 product itself, at the cores' peak rate,
takes 87 ms. Fresh buffers are touched by one thread before torch's threads write them
(see :func:`_touched`): first writes from two threads cost up to 25 ms per block there.

``variant="reference"`` reproduces facebookresearch/vissl
``projects/fairness_indicators/similarity_search``: torch's float32 ``normalize``, a
float32 numpy similarity matrix and ``np.argsort(-similarity)`` (numpy's default sort, not
stable), without self-exclusion.

Inputs: each of ``queries`` and ``database`` is a pair ``(features, frame)`` - a 2-D array
of embeddings and a pandas DataFrame (or mapping of columns) with one row per embedding -
or any object with ``.features`` and ``.frame`` attributes (the data layer's feature sets).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_fairness.errors import FairnessConfigError, InvalidDataError
from pytest_fairness.indicators._common import (
    as_1d,
    check_min_group_size,
    check_same_length,
    check_variant,
    encode_groups,
    exclusion_notes,
    make_group_stats,
)
from pytest_fairness.results import Curve, GroupKey, IndicatorResult, group_label
from pytest_fairness.stats import bootstrap_group_means, check_bootstrap_options, resolve_seed

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["nearest_neighbors", "precision_at_k"]

def _unpack(obj: Any, name: str) -> tuple[Any, Any]:
    if hasattr(obj, "frame"):
        # fairness_features returns Features(.embeddings, .frame); other sets use .features.
        for attribute in ("embeddings", "features"):
            if hasattr(obj, attribute):
                return getattr(obj, attribute), obj.frame
    if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)) and len(obj) == 2:
        return obj[0], obj[1]
    raise FairnessConfigError(
        f"{name} must be a pair (features, frame) - an (n, d) array and a DataFrame or mapping "
        f"of attribute columns - or an object with .frame and .embeddings (what "
        f"fairness_features returns) or .features; got "
        f"{type(obj).__name__}."
    )


def _same_set(q: NDArray[Any], db: NDArray[Any]) -> bool:
    """Whether the queries are the database: the same array, or equal features."""
    return q is db or bool(q.shape == db.shape and np.array_equal(q, db))


def _features(features: Any, name: str) -> NDArray[Any]:
    if hasattr(features, "detach"):  # torch tensors
        features = features.detach().cpu().numpy()
    array = np.asarray(features)
    if array.ndim != 2 or array.shape[0] == 0 or array.shape[1] == 0:
        raise InvalidDataError(
            f"{name} features must be a non-empty 2-D array (embeddings, dimensions); got "
            f"shape {array.shape}."
        )
    if array.dtype.kind not in "fiu":
        raise InvalidDataError(f"{name} features must be numeric; got dtype {array.dtype}.")
    return array


def _column(frame: Any, column: str, name: str, n: int) -> NDArray[Any]:
    try:
        values = frame[column]
    except (KeyError, IndexError, TypeError):
        have = list(frame.columns) if hasattr(frame, "columns") else (
            list(frame) if isinstance(frame, Mapping) else [])
        raise FairnessConfigError(
            f"{name} frame has no column {column!r}; its columns are {have}."
        ) from None
    array = as_1d(values, f"{name}[{column!r}]")
    check_same_length(**{f"{name} features": range(n), f"{name}[{column!r}]": array})
    return array


#: Similarity entries screened at once (query block × database chunk): bounds the memory
#: of the search independently of the number of queries and database items.
_TILE = 2**25
#: Database entries gathered at once by the exact re-scoring (cache-sized).
_GATHER = 2**21
#: Entries converted to bfloat16 at once (2 MiB of float32; 2^17-2^22 measured alike).
_CONVERT = 2**19
#: Entries from which a sum of squares runs on two threads.
_THREADED = 2**20
#: Unit roundoff of float32.
_U32 = 2.0**-24
#: Bound of ‖û − u‖ for a float32 unit row û of _unit32 (each entry within 2 ulp).
_DELTA = 8 * _U32
#: Database sizes (rows × dimensions) at most this are scored exactly without a screen.
_EXACT_ONLY = 2**15
_SCREENS = ("auto", "exact", "faiss", "float32", "bfloat16")
#: A screen's answer: scores, database rows, and the absolute slack of its error bound.
_Screened = tuple["NDArray[np.float64]", "NDArray[np.int64]", "NDArray[np.float64] | float"]


def _sums_of_squares(rows: NDArray[Any]) -> NDArray[np.float64]:
    """Float64 sum of squares of each row; large arrays in row halves on two threads.

    numpy's einsum releases the GIL and sums each row the same way wherever the row sits
    (tested), so splitting the rows changes no value.
    """
    def one_pass(r: NDArray[Any]) -> NDArray[np.float64]:
        return np.einsum("ij,ij->i", r, r, dtype=np.float64)

    if rows.dtype != np.float32 and rows.dtype != np.float64:
        rows = rows.astype(np.float64)
    if rows.size < _THREADED or rows.shape[0] < 2:
        return one_pass(rows)
    from concurrent.futures import ThreadPoolExecutor

    half = rows.shape[0] // 2
    with ThreadPoolExecutor(2) as pool:
        return np.concatenate(list(pool.map(one_pass, (rows[:half], rows[half:]))))


def _norms64(rows: NDArray[Any], name: str, start: int) -> NDArray[np.float64]:
    """Float64 L2 norm of each row, rejecting NaN, infinities and zero vectors.

    Float32 rows are squared in float64 (exact products), so a norm is finite exactly when
    the row is, and zero exactly when every entry is.
    """
    norms = np.sqrt(_sums_of_squares(rows))
    bad = ~np.isfinite(norms) | (norms == 0)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        row = np.asarray(rows[first], dtype=np.float64)
        where = start + first
        if not np.all(np.isfinite(row)):
            raise InvalidDataError(
                f"{name} features have NaN or infinite values at row {where}; drop or fix it."
            )
        if not np.any(row):
            zero = int(np.count_nonzero(bad & ~np.any(rows, axis=1)))
            raise InvalidDataError(
                f"{name} features have a zero vector at row {where} ({zero} in this block "
                f"of rows): cosine similarity is undefined for it. Drop those embeddings."
            )
        raise InvalidDataError(
            f"{name} features at row {where} have a norm beyond float64 range (largest "
            f"|value| {np.abs(row).max():.3g}); rescale the embeddings."
        )
    return norms


def _unit32(rows: NDArray[Any], norms: NDArray[np.float64]) -> NDArray[np.float32]:
    """Rows divided by their norms, in float32 (each entry within 2 ulp of exact).

    Float32 rows are scaled by their float32 inverse norms when those are normal numbers
    (norms within 2^±100); otherwise, and for other dtypes, divided in float64.
    """
    if rows.dtype == np.float32 and _scalable32(norms):
        return rows * (1.0 / norms).astype(np.float32)[:, None]
    return (np.asarray(rows, dtype=np.float64) / norms[:, None]).astype(np.float32)


def _touched(n: int, dtype: Any) -> NDArray[Any]:
    """``np.empty(n, dtype)`` with every page already touched, by this one thread.

    A fresh buffer's pages are mapped on first write; when torch's or BLAS's threads write
    one first, their page faults contend (measured on a 2-core VM: 20 MB touched by two
    threads in ~19 ms, by one in ~1 ms, numpy's allocations using huge pages).
    """
    out = np.empty(n, dtype=dtype)
    out.fill(0)
    return out


def _within(norms: NDArray[np.float64], exponent: int) -> bool:
    """Whether every norm lies within 2^±exponent."""
    return bool(norms.min() >= 2.0**-exponent and norms.max() <= 2.0**exponent)


def _scalable32(norms: NDArray[np.float64]) -> bool:
    """Whether float32 inverse norms are normal numbers (neither overflow nor subnormal)."""
    return _within(norms, 100)


def _top_entries(tile: Any, width: int) -> tuple[Any, Any]:
    """The ``width`` largest entries of each row of a torch tile and their columns, unordered.

    One pass over the tile instead of a selection in every row: split each row into 16
    interleaved groups of columns and take each group's maximum. The ``width``-th largest
    group maximum t is at most the ``width``-th largest entry (the best ``width`` groups
    hold ``width`` distinct entries ≥ t), so an entry outside the best ``width`` groups is
    at most that entry: only those groups' entries are gathered and ranked.
    """
    import torch

    n_rows, n = tile.shape
    g = 16
    groups = n // g
    if groups < 2 * width:
        return torch.topk(tile, min(width, n), dim=1, sorted=False)
    # Group c holds columns c, c + groups, c + 2 groups, ...: a max over 16 slices.
    maxima = tile[:, :groups * g].unflatten(1, (g, groups)).amax(dim=1)
    best = torch.topk(maxima, width, dim=1, sorted=False).indices
    cols = (best[:, :, None] + groups * torch.arange(g)).flatten(1)
    if groups * g < n:  # the last few columns belong to no group: all are candidates
        cols = torch.cat([cols, torch.arange(groups * g, n).expand(n_rows, -1)], dim=1)
    values, pick = torch.topk(tile.gather(1, cols), width, dim=1, sorted=False)
    return values, cols.gather(1, pick)


def _gamma32(d: int) -> float:
    """γ_d = d u / (1 − d u): the worst relative error of a float32 sum of d terms."""
    return d * _U32 / (1 - d * _U32)


def _screen_eps(d: int) -> float:
    """The proven bound of a float32 screen's error on a cosine (see ``_Screen``)."""
    delta, gamma = _DELTA, _gamma32(d)
    return (2 * delta + (2 * gamma + 4 * _U32) * (1 + delta)
            # float32 underflow (subnormal entries and products), relative to
            # database norms >= 2^-60: at most 2^-149 absolute per operation
            + 2 * d * 2.0**-149 * 2.0**60
            + 16 * d * 2.0**-53) * 1.01


class _FaissScreen:
    """The same screen through faiss ``IndexFlatIP`` (DESIGN §2): exact float32 search.

    The database is normalised to float32 unit rows (error δ per row, as the queries) and
    added to a flat inner-product index; ``search`` returns each query's ``width`` best
    float32 scores. faiss sums the products in float32 in some order, which the bound of
    :func:`_screen_eps` covers (it holds for any summation order).
    """

    spare, rel, coarse, score_dtype = 16, 0.0, False, None

    def __init__(self, db: NDArray[Any], db_norm: NDArray[np.float64], chunk: int) -> None:
        from pytest_fairness._optional import require

        faiss = require("faiss", package="faiss-cpu", purpose="retrieval's faiss screen")
        self.eps = _screen_eps(db.shape[1])
        self.index = faiss.IndexFlatIP(db.shape[1])
        for s in range(0, db.shape[0], chunk):  # normalise in chunks: no float64 copy
            self.index.add(_unit32(np.asarray(db[s:s + chunk]), db_norm[s:s + chunk]))

    def queries(self, unit_q: NDArray[np.float32]) -> NDArray[np.float32]:
        return unit_q

    def search(self, unit_q: NDArray[np.float32], pending: NDArray[np.intp], width: int,
               chunk: int, buffer: None) -> _Screened:
        """The ``width`` best float32 scores of the pending queries, their rows, ``eps``."""
        score, rows = self.index.search(np.ascontiguousarray(unit_q[pending]), width)
        return score.astype(np.float64), rows.astype(np.int64), self.eps


class _Screen:
    """Approximate cosines with a proven error bound, from float32 matrix products.

    Each query block is normalised in float32 (rows q̂, ‖q̂ − u_q‖ ≤ δ for the exact unit
    vector u_q) and multiplied with the database chunk by chunk; the products are scaled
    by the float32 inverse norms of the database rows, and the ``width`` best scores of
    each query are kept. A float32 database is read in place (no normalised copy) when its
    norms are within 2^±60; otherwise a float32 normalised copy is made once. For any pair,

        |s̃ − u_q·u_d| ≤ 2δ + (2γ_d + 4u)(1 + δ) + (float64 re-scoring allowance) = eps

    with u = 2⁻²⁴ and γ_d = d u / (1 − d u) the worst-case error of a float32 sum of d
    products in any order (taken twice), so every item outside a query's candidates
    scores at most ``lowest candidate + eps``.
    """

    spare, rel, coarse, score_dtype = 16, 0.0, False, np.float32

    def __init__(self, db: NDArray[Any], db_norm: NDArray[np.float64], chunk: int) -> None:
        self.eps = _screen_eps(db.shape[1])
        in_place = db.dtype == np.float32 and db.flags.c_contiguous and _within(db_norm, 60)
        if in_place:
            self.db = db
            self.scale: NDArray[np.float32] | None = (1.0 / db_norm).astype(np.float32)
        else:
            self.db = np.empty(db.shape, dtype=np.float32)
            for s in range(0, db.shape[0], chunk):
                self.db[s:s + chunk] = _unit32(np.asarray(db[s:s + chunk]), db_norm[s:s + chunk])
            self.scale = None

    def queries(self, unit_q: NDArray[np.float32]) -> NDArray[np.float32]:
        return unit_q

    def search(self, unit_q: NDArray[np.float32], pending: NDArray[np.intp], width: int,
               chunk: int, buffer: NDArray[np.float32]) -> _Screened:
        """The ``width`` best approximate scores of the pending queries, their rows, ``eps``."""
        import torch

        unit_q = unit_q[pending]
        n_q = unit_q.shape[0]
        best_v = torch.empty((n_q, 0))
        best_i = torch.empty((n_q, 0), dtype=torch.int64)
        for s in range(0, self.db.shape[0], chunk):
            part = self.db[s:s + chunk]
            tile = buffer[:n_q * part.shape[0]].reshape(n_q, part.shape[0])
            np.matmul(unit_q, part.T, out=tile)
            if self.scale is not None:
                tile *= self.scale[s:s + part.shape[0]]
            value, cols = _top_entries(torch.from_numpy(tile), width)
            best_v = torch.cat([best_v, value], dim=1)
            best_i = torch.cat([best_i, cols + s], dim=1)
            if best_v.shape[1] > width:
                best_v, keep = _top_entries(best_v, width)
                best_i = best_i.gather(1, keep)
        return best_v.double().numpy(), best_i.numpy(), self.eps


#: Unit roundoff of bfloat16 (8 significant bits).
_U16 = 2.0**-8


def _resolve_screen(screen: str, n_db: int, d: int) -> str:
    """The screen ``"auto"`` stands for at this database size on this CPU."""
    if screen != "auto":
        return screen
    if n_db * d <= _EXACT_ONLY:
        return "exact"
    return "bfloat16" if _bf16_matmul_is_native() else "faiss"


def _bf16_matmul_is_native() -> bool:
    """Whether torch multiplies bfloat16 on dedicated units here (AMX or AVX512-BF16)."""
    import torch

    cpu = torch.cpu
    checks = ("_is_amx_tile_supported", "_is_avx512_bf16_supported")
    return any(bool(getattr(cpu, name, lambda: False)()) for name in checks)


class _Bf16Screen:
    """Approximate cosines from bfloat16 matrix products (AMX / AVX512-BF16 units).

    The float32 unit rows (q̂, d̂, within δ of exact, as in ``_Screen``) are rounded to
    bfloat16 once, q̃ and d̃. The rounding residuals are float32 numbers, so their norms
    are computed without error beyond the norm's own: r_q = ‖q̃ − q̂‖ per query and
    R = max ‖d̃ − d̂‖ over the database. torch multiplies bfloat16 with float32
    accumulation (products of 8-bit significands are exact in float32) and rounds each
    result to bfloat16, so for every pair

        |s̃ − u_q·u_d| ≤ (1 + δ + r_q) R + r_q (1 + δ)            (rounding to bfloat16)
                        + γ_d (1 + δ + r_q)(1 + δ + R)            (float32 sums)
                        + 2δ + δ² + allowances                     = slack_q
                        + 2u_b |s̃| / (1 − 2u_b)                   = rel · |s̃|

    with u_b = 2⁻⁸ (any rounding of the result to 8 bits). The rounding of the entries
    dominates: slack is about 4 × 10⁻³ for 2,048-d embeddings (a float32 screen's eps is
    2.5 × 10⁻⁴), so more candidates are re-scored, from a product about 5× faster where
    the CPU has bfloat16 units. When the whole database fits one tile, a query block's
    scores are kept, so widening the candidates does not repeat the product.
    """

    spare, coarse, score_dtype = 24, True, np.int16  # bfloat16 scores, stored as int16
    rel = 2 * _U16 / (1 - 2 * _U16)

    def __init__(self, db: NDArray[Any], db_norm: NDArray[np.float64], chunk: int) -> None:
        from pytest_fairness._optional import require

        self.torch = torch = require("torch", package="torch",
                                     purpose="retrieval's bfloat16 screen")
        n_db, d = db.shape
        self.d = d
        self.step = max(1, _CONVERT // d)  # rows converted at once
        self.unit = torch.empty((self.step, d))
        self.back = torch.empty((self.step, d))
        self.db = torch.from_numpy(_touched(n_db * d, np.int16)).view(torch.bfloat16).view(n_db, d)
        direct = db.dtype == np.float32 and _shares_with_torch(db) and _scalable32(db_norm)
        if direct:  # scale in torch, with the same rounding as _unit32
            source = torch.from_numpy(db)
            inverse = torch.from_numpy((1.0 / db_norm).astype(np.float32))
        resid = 0.0
        for s in range(0, n_db, self.step):
            rows = min(self.step, n_db - s)
            unit = self.unit[:rows]
            if direct:
                torch.mul(source[s:s + rows], inverse[s:s + rows, None], out=unit)
            else:
                unit.copy_(torch.from_numpy(_unit32(np.asarray(db[s:s + rows]),
                                                    db_norm[s:s + rows])))
            resid = max(resid, float(self._round(unit, self.db[s:s + rows]).max()))
        self.resid = resid
        self.tile: Any = None

    def _round(self, unit: Any, out: Any) -> NDArray[np.float64]:
        """Round float32 rows into ``out`` (bfloat16); bounds of the residuals' norms."""
        torch = self.torch
        out.copy_(unit)
        back = self.back[:unit.shape[0]]
        back.copy_(out)
        back.sub_(unit)  # exact: the residual of a rounding is a float32 number
        norm = torch.linalg.vector_norm(back, dim=1).numpy()
        # float32 sum of squares: relative error <= γ_d + 2u; squares below 2^-126 may be
        # flushed to zero (entries below 2^-63).
        return (norm.astype(np.float64) * (1 + 2 * _gamma32(self.d) + 4 * _U32)
                + math.sqrt(self.d) * 2.0**-63)

    def queries(self, unit_q: NDArray[np.float32]) -> tuple[Any, NDArray[np.float64]]:
        """A query block in bfloat16 and each query's ``slack``; forgets the last tile."""
        self.tile = None
        torch = self.torch
        rounded = torch.empty(unit_q.shape, dtype=torch.bfloat16)
        source = torch.from_numpy(unit_q)
        r_q = np.concatenate([
            self._round(source[s:s + self.step], rounded[s:s + self.step])
            for s in range(0, unit_q.shape[0], self.step)])
        d, big_r = self.d, self.resid
        delta, gamma = _DELTA, _gamma32(d)
        slack = ((1 + delta + r_q) * big_r + r_q * (1 + delta)
                 + gamma * (1 + delta + r_q) * (1 + delta + big_r)
                 + 2 * delta + delta**2
                 # flushed subnormal inputs, products and sums (2^-126 each), float64
                 # re-scoring (as _screen_eps)
                 + 4 * d * 2.0**-126 + 16 * d * 2.0**-53) * 1.01
        return rounded, slack

    def search(self, block: tuple[Any, NDArray[np.float64]], pending: NDArray[np.intp],
               width: int, chunk: int, buffer: NDArray[np.int16]) -> _Screened:
        """The ``width`` best bfloat16 scores of the pending queries, their rows, slack."""
        torch = self.torch
        unit, slack = block
        n_db = self.db.shape[0]
        scores = torch.from_numpy(buffer).view(torch.bfloat16)
        if n_db <= chunk:  # one tile per block, kept while its queries are pending
            if self.tile is None:
                self.tile = scores[:unit.shape[0] * n_db].view(unit.shape[0], n_db)
                torch.matmul(unit, self.db.T, out=self.tile)
            tile = self.tile if pending.size == unit.shape[0] else self.tile[pending]
            value, index = _top_entries(tile, width)
            return value.double().numpy(), index.numpy(), slack[pending]
        q = unit[pending]
        best_v = torch.empty((q.shape[0], 0), dtype=torch.bfloat16)
        best_i = torch.empty((q.shape[0], 0), dtype=torch.int64)
        for s in range(0, n_db, chunk):
            part = self.db[s:s + chunk]
            tile = scores[:q.shape[0] * part.shape[0]].view(q.shape[0], part.shape[0])
            torch.matmul(q, part.T, out=tile)
            value, index = _top_entries(tile, width)
            best_v = torch.cat([best_v, value], dim=1)
            best_i = torch.cat([best_i, index + s], dim=1)
            if best_v.shape[1] > width:
                best_v, keep = _top_entries(best_v, width)
                best_i = best_i.gather(1, keep)
        return best_v.double().numpy(), best_i.numpy(), slack[pending]


def _cosines(
    q: NDArray[Any], q_norm: NDArray[np.float64], db: NDArray[Any], db_norm: NDArray[np.float64],
    cand: NDArray[np.int64], need: NDArray[np.intp] | None = None, *, fast: bool = False,
) -> tuple[NDArray[np.float64], float]:
    """Cosines (q · d) / (‖q‖ ‖d‖) of each query with its first ``need`` candidates.

    Returns the cosines (entries past a query's ``need``, default all, are -inf) and a
    bound of their error against the float64 cosines. ``fast`` multiplies float32 rows
    in float32 (callers check the dtypes, that the database is shared with torch and that
    the norms lie within 2^±30) by one sampled product (:func:`_sampled_dots`); the bound
    is then γ_d (the worst case of a float32 sum of d products in any order) plus
    allowances for underflow and for the float64 cosines' own rounding. Otherwise the
    products are float64 (float32, float16 and integers up to 2^53 convert exactly) and
    the bound is 0: rows are gathered by torch, queries with similar ``need`` together,
    and multiplied by numpy's einsum, which sums each pair the same way wherever it sits
    in the batch (torch's float64 batched products do not), so identical rows get
    identical cosines and tie by index.
    """
    import torch

    n, m = cand.shape
    d = q.shape[1]
    out = np.full((n, m), -np.inf)
    need = np.full(n, m, dtype=np.intp) if need is None else need
    top = int(need.max(initial=0))
    err = (_gamma32(d) + d * 2.0**-66 + 4 * d * 2.0**-53) * 1.01 if fast else 0.0
    if top == 0:
        return out, err
    if fast:
        hit = np.arange(m) < need[:, None]
        dots = _sampled_dots(np.asarray(q, dtype=np.float32), db, cand, need, hit)
        out[hit] = dots / (np.repeat(q_norm, need) * db_norm[cand[hit]])
        return out, err
    by_need = np.argsort(need, kind="stable")
    step = max(1, _GATHER // (top * d))
    shared = _shares_with_torch(db)
    if shared:  # torch gathers on every core, into one reused buffer
        source = torch.from_numpy(db)
        buffer = torch.from_numpy(_touched(min(n, step) * top * d, db.dtype)).view(-1, d)
    for s in range(0, n, step):
        rows = by_need[s:s + step]
        width = int(need[rows[-1]])
        if width == 0:
            continue
        c = cand[rows, :width]
        flat = np.ascontiguousarray(c.reshape(-1))
        if shared:
            picked = buffer[:flat.size]
            torch.index_select(source, 0, torch.from_numpy(flat), out=picked)
            gathered = picked.numpy().reshape(rows.size, width, d)
        else:
            gathered = np.asarray(db[flat]).reshape(rows.size, width, d)
        dots = np.einsum("bkd,bd->bk", gathered, np.asarray(q[rows]), dtype=np.float64)
        score = dots / (q_norm[rows, None] * db_norm[c])
        score[np.arange(width) >= need[rows, None]] = -np.inf
        out[rows, :width] = score
    return out, err


def _sampled_dots(q: NDArray[np.float32], db: NDArray[np.float32], cand: NDArray[np.int64],
                  need: NDArray[np.intp], hit: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Float32 products ``q[i] · db[cand[i, j]]`` for ``j < need[i]``, in row-major order.

    One sampled dense-dense product (``torch.sparse.sampled_addmm`` with the candidates as
    the sparsity pattern): each pair is summed straight from the two rows, with no
    gathered copy of the database rows, by torch's vectorised float32 dot product, whose
    order depends only on the two rows (never on the batch) and which no matmul precision
    setting switches to bfloat16. About 3x faster than gathering the rows and summing
    them with numpy (2,000 queries x 19 candidates x 2,048 dimensions: 12 ms).
    """
    import warnings

    import torch

    crow = np.zeros(need.size + 1, dtype=np.int64)
    np.cumsum(need, out=crow[1:])
    col = torch.from_numpy(np.ascontiguousarray(cand[hit], dtype=np.int64))
    with warnings.catch_warnings():  # "Sparse CSR tensor support is in beta state"
        warnings.filterwarnings("ignore", "Sparse CSR tensor support", UserWarning)
        pattern = torch.sparse_csr_tensor(
            torch.from_numpy(crow), col, torch.zeros(col.numel()), (need.size, db.shape[0]),
            check_invariants=False)
        dots = torch.sparse.sampled_addmm(pattern, torch.from_numpy(np.ascontiguousarray(q)),
                                          torch.from_numpy(db).T, beta=0.0)
    return dots.values().numpy().astype(np.float64)


def _shares_with_torch(array: NDArray[Any]) -> bool:
    """Whether torch can index ``array`` in place (no copy, no read-only warning)."""
    return (isinstance(array, np.ndarray) and array.dtype in (np.float32, np.float64)
            and array.flags.c_contiguous and array.flags.writeable)


def _settle(
    q: NDArray[Any], q_norm: NDArray[np.float64], db: NDArray[Any], db_norm: NDArray[np.float64],
    rows: NDArray[np.int64], cand: NDArray[np.int64], approx: NDArray[np.float64], err: float,
    k: int, exclude_self: bool,
) -> NDArray[np.int64]:
    """The exact top ``k`` of each query among candidates whose cosines are known to ``err``.

    Candidates are ordered by ``approx``; where two neighbours in that order lie within
    ``2 err`` their order is uncertain, so they are linked, and chains of links form
    clusters. Clusters are ordered with certainty (a gap of more than ``2 err`` separates
    them); inside a cluster that reaches the first ``k`` places the float64 cosines are
    computed and decide, ties by the lower database index. The query's own row is
    excluded when asked.
    """
    if exclude_self:
        own = cand == rows[:, None]
        approx = np.where(own, -np.inf, approx)
        cand = np.where(own, np.iinfo(np.int64).max, cand)
    by_index = np.argsort(cand, axis=1, kind="stable")
    cand = np.take_along_axis(cand, by_index, axis=1)
    approx = np.take_along_axis(approx, by_index, axis=1)
    by_value = np.argsort(-approx, axis=1, kind="stable")
    cand = np.take_along_axis(cand, by_value, axis=1)
    if err == 0:
        return cand[:, :k]
    approx = np.take_along_axis(approx, by_value, axis=1)
    with np.errstate(invalid="ignore"):  # -inf minus -inf: not linked
        linked = (approx[:, :-1] - approx[:, 1:]) <= 2 * err
    cluster = np.concatenate([np.zeros((cand.shape[0], 1), np.intp),
                              np.cumsum(~linked, axis=1)], axis=1)
    shared = np.zeros(cand.shape, dtype=bool)
    shared[:, 1:] |= linked
    shared[:, :-1] |= linked
    uncertain = shared & (cluster <= cluster[:, k - 1:k])
    if not uncertain.any():
        return cand[:, :k]
    count = uncertain.sum(axis=1)
    where = np.argsort(~uncertain, axis=1, kind="stable")[:, :int(count.max())]
    exact, _ = _cosines(q, q_norm, db, db_norm, np.take_along_axis(cand, where, axis=1), count)
    value = approx.copy()
    hit = np.arange(where.shape[1]) < count[:, None]
    value[np.nonzero(hit)[0], where[hit]] = exact[hit]
    order = np.lexsort((cand, -value, cluster), axis=1)
    return np.take_along_axis(cand, order[:, :k], axis=1)


def nearest_neighbors(
    queries: Any,
    database: Any,
    *,
    k: int,
    exclude_self: bool = False,
    block_size: int = 1024,
    screen: str = "auto",
) -> NDArray[np.int64]:
    r"""Indices of the ``k`` most cosine-similar database rows of each query (exact).

    Ordered by decreasing float64 cosine :math:`(q \cdot d) / (\lVert q \rVert
    \lVert d \rVert)`, ties broken by the lower database index; with ``exclude_self``
    query ``i`` never retrieves database row ``i``.

    A screen proposes candidates with a proven error bound (see ``_Screen`` and
    ``_Bf16Screen``): a query is finished only when no item outside its candidates can
    reach its k-th best - otherwise it is screened again with twice as many candidates -
    and only candidates that can still reach the k-th best are re-scored, in float64
    wherever their order is in doubt (see ``_settle``). The neighbours are therefore
    exactly those of a float64 brute-force search, whatever the screen.

    Parameters
    ----------
    queries, database : array-like of shape (n, d)
        Embeddings (float, integer or torch tensors).
    k : int
        Neighbours per query.
    exclude_self : bool, default False
        Never return database row ``i`` for query ``i`` (queries are the database).
    block_size : int, default 1024
        Queries screened at once. Memory is bounded by blocks: about 2²⁵ float32 scores
        (128 MiB) at a time, whatever the number of queries and database items, plus a
        normalised float32 copy of the database unless it is float32 already.
    screen : {"auto", "exact", "faiss", "float32", "bfloat16"}
        ``"exact"`` scores every pair in float64 (no screen; it gathers the whole
        database per query, so it is meant for small databases and tests);
        ``"faiss"`` screens with faiss ``IndexFlatIP`` (DESIGN §2); ``"float32"`` with
        float32 BLAS products on the database in place (no index copy; faster than
        faiss's flat search at low dimensions); ``"bfloat16"`` with bfloat16 products
        (fast only on CPUs with AMX or AVX512-BF16; it keeps a bfloat16 copy of the
        database); ``"auto"`` is ``"exact"`` for databases of at most 2¹⁵ entries (rows ×
        dimensions), else ``"bfloat16"`` where the CPU has bfloat16 units, else
        ``"faiss"``. All give the same neighbours.

    Returns
    -------
    ndarray of int64, shape (queries, k)

    Examples
    --------
    >>> import numpy as np
    >>> db = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> nearest_neighbors(np.array([[1.0, 0.1]]), db, k=2).tolist()
    [[0, 3]]
    """
    q = _features(queries, "queries")
    db = _features(database, "database")
    if q.shape[1] != db.shape[1]:
        raise InvalidDataError(
            f"queries and database embeddings must have the same dimension; got "
            f"{q.shape[1]} and {db.shape[1]}."
        )
    if screen not in _SCREENS:
        raise FairnessConfigError(
            f"screen must be one of {list(_SCREENS)}; got screen={screen!r}."
        )
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise FairnessConfigError(f"block_size must be an int >= 1; got block_size={block_size!r}.")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise FairnessConfigError(f"k must be a positive int; got k={k!r}.")
    reachable = db.shape[0] - (1 if exclude_self else 0)
    if k > reachable:
        raise FairnessConfigError(
            f"k={k} exceeds the {reachable} database items a query can retrieve; use "
            f"k <= {reachable}."
        )
    if exclude_self and q.shape[0] != db.shape[0]:
        raise FairnessConfigError(
            "exclude_self=True needs the queries to be the database (same rows); got "
            f"{q.shape[0]} queries and {db.shape[0]} database items."
        )
    k = int(k)
    n_db, d = db.shape
    rows_at_once = max(1, _TILE // d)
    db_norm = np.concatenate([_norms64(np.asarray(db[s:s + rows_at_once]), "database", s)
                              for s in range(0, n_db, rows_at_once)])
    screen = _resolve_screen(screen, n_db, d)
    out = np.empty((q.shape[0], k), dtype=np.int64)
    if screen == "exact":
        _exact_neighbors(q, db, db_norm, k, exclude_self, block_size, out)
        return out
    search = _SCREEN_TYPES[screen](db, db_norm, rows_at_once)
    # Candidates are re-scored in float32 first (then float64 where order is in doubt)
    # when float32 products cannot overflow or lose the norms to underflow.
    db_fast = db.dtype == np.float32 and _shares_with_torch(db) and _within(db_norm, 30)
    width0 = min(n_db, k + (1 if exclude_self else 0) + max(search.spare, k))
    block = min(block_size, q.shape[0])
    chunk = min(n_db, max(width0, _TILE // block))
    # The screened scores of a block, reused (faiss returns its own).
    buffer = None if search.score_dtype is None else _touched(block * chunk, search.score_dtype)
    for start in range(0, q.shape[0], block):
        stop = min(start + block, q.shape[0])
        q_rows = np.asarray(q[start:stop])
        q_norm = _norms64(q_rows, "queries", start)
        fast = db_fast and q_rows.dtype == np.float32 and _within(q_norm, 30)
        unit = search.queries(_unit32(q_rows, q_norm))
        rows = np.arange(start, stop, dtype=np.int64)
        pending = np.arange(stop - start)
        width = width0
        while pending.size:
            score, cand, slack = search.search(unit, pending, width, chunk, buffer)
            own = (cand == rows[pending, None]) if exclude_self else np.zeros(cand.shape, bool)
            # Candidates by decreasing screened score, the query's own row last.
            ranked = np.argsort(np.where(own, np.inf, -score), axis=1, kind="stable")
            score = np.take_along_axis(np.where(own, -np.inf, score), ranked, axis=1)
            cand = np.take_along_axis(cand, ranked, axis=1)
            low, high = _widen(score, slack, search.rel)
            if search.coarse:
                # The k best screened candidates, re-scored (float32 when ``fast``): the
                # exact k-th best is at least the lowest of them, less their error.
                first, err = _cosines(q_rows[pending], q_norm[pending], db, db_norm,
                                      cand[:, :k], fast=fast)
                floor = np.maximum(low[:, k - 1], first.min(axis=1) - err)
            else:
                floor = low[:, k - 1]  # the exact k-th best is at least this
            # Items outside the candidates score at most the lowest candidate's bound.
            outside = np.min(np.where(np.isinf(score), np.inf, high), axis=1)
            safe = (width >= n_db) | (outside < floor)
            if safe.any():
                done = pending[safe]
                # Candidates that can still reach the k-th best: a prefix (high decreases).
                need = (high[safe] >= floor[safe, None]).sum(axis=1)
                reach = cand[safe, :max(k, int(need.max()))]
                beyond = np.arange(reach.shape[1]) >= need[:, None]
                if search.coarse:
                    rest, _ = _cosines(q_rows[done], q_norm[done], db, db_norm, reach[:, k:],
                                       np.maximum(need - k, 0), fast=fast)
                    approx = np.concatenate([first[safe], rest], axis=1)
                else:  # a float32 screen's scores are as good as float32 re-scoring
                    approx, err = score[safe, :reach.shape[1]], float(slack)
                approx = np.where(beyond, -np.inf, approx)
                out[start + done] = _settle(q_rows[done], q_norm[done], db, db_norm,
                                            rows[done], reach, approx, err, k, exclude_self)
            pending = pending[~safe]
            width = min(n_db, width * 2)
    return out


def _widen(score: NDArray[np.float64], slack: NDArray[np.float64] | float,
           rel: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Bounds of the exact cosines of items screened at ``score``: ``score ∓ err``.

    ``err = slack + rel·|score|`` (``slack`` per query row or one number). Both bounds
    increase with the score (``rel < 1``), so the bound of the lowest candidate covers
    every item screened lower. Infinite scores (the excluded own row) stay infinite.
    """
    finite = np.isfinite(score)
    err = np.asarray(slack, dtype=np.float64).reshape(-1, 1) + rel * np.abs(
        np.where(finite, score, 0.0))
    return score - err, score + err


def _exact_neighbors(
    q: NDArray[Any], db: NDArray[Any], db_norm: NDArray[np.float64], k: int,
    exclude_self: bool, block_size: int, out: NDArray[np.int64],
) -> None:
    """Every database row is a candidate: re-score them all, a few queries at a time."""
    n_db, d = db.shape
    everything = np.arange(n_db, dtype=np.int64)
    step = max(1, min(block_size, _GATHER // (n_db * d)))
    for start in range(0, q.shape[0], step):
        q_rows = np.asarray(q[start:start + step])
        q_norm = _norms64(q_rows, "queries", start)
        rows = np.arange(start, start + q_rows.shape[0], dtype=np.int64)
        cand = np.broadcast_to(everything, (q_rows.shape[0], n_db))
        score, _ = _cosines(q_rows, q_norm, db, db_norm, cand)
        out[rows] = _settle(q_rows, q_norm, db, db_norm, rows, cand, score, 0.0, k,
                            exclude_self)


def _reference_neighbors(q: NDArray[Any], db: NDArray[Any], k: int, block: int) -> Any:
    """VISSL: torch float32 normalize, numpy float32 dot, ``argsort(-similarity)``."""
    import torch
    from torch import nn

    def normalize(x: NDArray[Any]) -> NDArray[np.float32]:
        return nn.functional.normalize(torch.from_numpy(np.asarray(x)).float(), dim=1,
                                       p=2).numpy()

    train = normalize(db)
    # One product when it fits (as the released code), else row blocks of the same product.
    rows = q.shape[0] if q.shape[0] * db.shape[0] <= 2**28 else block
    out = np.empty((q.shape[0], k), dtype=np.int64)
    for start in range(0, q.shape[0], rows):
        sim = normalize(q[start:start + rows]).dot(train.T)
        out[start:start + rows] = np.argsort(-sim, axis=1)[:, :k]
    return out


def _k_values(k: Any) -> list[int]:
    values = [k] if isinstance(k, (int, np.integer)) and not isinstance(k, bool) else k
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
        raise FairnessConfigError(f"k must be a positive int or a list of them; got k={k!r}.")
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise FairnessConfigError(f"k must hold positive ints; got k={k!r}.")
        out.append(int(v))
    if len(set(out)) != len(out):
        raise FairnessConfigError(f"k has repeated values {out}; list each K once.")
    return out


def _groupings(by: Any) -> list[str | tuple[str, ...]]:
    specs = [by] if isinstance(by, (str, tuple)) else by
    if isinstance(specs, (bytes,)) or not isinstance(specs, Sequence) or not specs:
        raise FairnessConfigError(
            f"by must be a column, a tuple of columns (intersectional) or a list of those; "
            f"got by={by!r}."
        )
    out: list[str | tuple[str, ...]] = []
    for spec in specs:
        if isinstance(spec, list):
            spec = tuple(spec)
        if not isinstance(spec, (str, tuple)) or (isinstance(spec, tuple) and (
                not spec or not all(isinstance(c, str) for c in spec))):
            raise FairnessConfigError(
                f"by entries must be column names or tuples of them; got {spec!r} in by={by!r}."
            )
        out.append(spec)
    return out


def precision_at_k(
    queries: Any,
    database: Any,
    *,
    k: Any,
    match: str,
    by: Any,
    exclude_self: bool | None = None,
    min_group_size: int = 30,
    variant: str = "paper",
    block_size: int = 1024,
    screen: str = "auto",
    clusters: Any = None,
    n_bootstrap: int = 0,
    confidence_level: float = 0.95,
    interval_method: str = "percentile",
    seed: Any = None,
) -> IndicatorResult:
    r"""Precision@K of same-attribute retrieval per query group (seed 000 §3.3).

    .. math::

        P@K(q) = \frac{1}{K} \sum_{j \in N_K(q)} [a(j) = a(q)], \quad
        v_g = \frac{1}{|g|} \sum_{q \in g} P@K(q)

    where :math:`N_K(q)` are the K database items of highest cosine similarity to
    :math:`q` (ties: lower index first) and :math:`a` the ``match`` attribute.

    Parameters
    ----------
    queries, database : (features, frame) or object with ``.features`` and ``.frame``
        Embeddings of shape (n, d) and their attributes (DataFrame or mapping of columns).
    k : int or list of int
        K; with several, the first is the headline and the others are ``slices``
        (``@fairness.threshold(max_gap=0.05, at=50)``).
    match : str
        The attribute a neighbour must share with its query (a column of both frames).
    by : str, tuple of str, or list of those
        Query groups: a column, a tuple of columns (intersectional groups), or a list of
        groupings whose groups are all reported in one result (the gap then spans every
        group of every grouping: a conservative bound on each grouping's gap).
    exclude_self : bool, optional
        Skip database row i for query i; default: when the queries are the database (the
        same object, or equal features, e.g. reloaded), never in the reference variant.
    min_group_size : int, default 30
        Smaller groups are reported but excluded from the gap.
    variant : {"paper", "reference"}
        ``"reference"``: the released VISSL computation (full float32 sort, no exclusion).
    block_size : int, default 1024
        Queries searched at once; bounds memory.
    screen : {"auto", "exact", "faiss", "float32", "bfloat16"}
        The candidate search of :func:`nearest_neighbors`; every choice gives the same
        neighbours, so ``params`` records the choice as given (a baseline taken on a
        CPU without bfloat16 units compares without a caveat).
    clusters : str or array-like, optional
        A query-frame column or array of cluster ids (e.g. the participant): intervals
        resample clusters.
    n_bootstrap : int, default 0
        Bootstrap replicates over queries for intervals; 0 computes none.
    confidence_level : float, default 0.95
        Coverage of the intervals.
    interval_method : {"percentile", "bca"}
        Bootstrap interval method.
    seed : int, Generator or None
        Seed of the bootstrap; the one used is in ``params``.

    Returns
    -------
    IndicatorResult
        ``value`` is the mean Precision@K over queries, each group's value its mean;
        ``curves["precision"]`` is Precision@K against K for all queries.

    Examples
    --------
    >>> import numpy as np
    >>> db = (np.array([[1.0, 0], [0.9, 0.1], [0, 1.0], [0.1, 0.9]]),
    ...       {"gender": ["f", "f", "m", "m"]})
    >>> q = (np.array([[1.0, 0.05], [0.05, 1.0], [1.0, 0.2]]),
    ...      {"gender": ["f", "m", "m"]})
    >>> r = precision_at_k(q, db, k=[1, 2], match="gender", by="gender", min_group_size=1)
    >>> r.group("f").value, r.group("m").value, r.select(2).group("m").value
    (1.0, 0.5, 0.5)
    """
    check_variant(variant, "precision_at_k")
    min_group_size = check_min_group_size(min_group_size)
    n_bootstrap, confidence_level, interval_method = check_bootstrap_options(
        n_bootstrap, confidence_level, interval_method
    )
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise FairnessConfigError(f"block_size must be an int >= 1; got block_size={block_size!r}.")
    ks = _k_values(k)
    specs = _groupings(by)
    if not isinstance(match, str):
        raise FairnessConfigError(f"match must be a column name; got match={match!r}.")
    q_feat, q_frame = _unpack(queries, "queries")
    db_feat, db_frame = _unpack(database, "database")
    q = _features(q_feat, "queries")
    db = q if q_feat is db_feat else _features(db_feat, "database")
    if exclude_self is None:
        exclude_self = variant == "paper" and _same_set(q, db)
    elif exclude_self and variant == "reference":
        raise FairnessConfigError(
            "variant='reference' reproduces code that never excludes self-matches; use "
            "variant='paper' with exclude_self=True."
        )
    nq = q.shape[0]
    q_match = _column(q_frame, match, "queries", nq)
    db_match = _column(db_frame, match, "database", db.shape[0])
    k_max = max(ks)
    if variant == "reference":
        if q.shape[1] != db.shape[1]:
            raise InvalidDataError(
                f"queries and database embeddings must have the same dimension; got "
                f"{q.shape[1]} and {db.shape[1]}."
            )
        if k_max > db.shape[0]:
            raise FairnessConfigError(
                f"k={k_max} exceeds the {db.shape[0]} database items; use k <= {db.shape[0]}."
            )
        for array, label in ((q, "queries"), (db, "database")):
            step = max(1, _TILE // array.shape[1])
            for s in range(0, array.shape[0], step):
                _norms64(np.asarray(array[s:s + step]), label, s)
        neighbors = _reference_neighbors(q, db, k_max, block_size)
    else:
        neighbors = nearest_neighbors(q, db, k=k_max, exclude_self=bool(exclude_self),
                                      block_size=block_size, screen=screen)
    hits = db_match[neighbors] == q_match[:, None]
    cum = np.cumsum(hits, axis=1)
    precision = np.stack([cum[:, kk - 1] / kk for kk in ks], axis=1)  # (queries, len(ks))

    # Groups of every grouping, in one list; a query appears once per grouping.
    keys: list[GroupKey] = []
    unit_rows, unit_codes, grouping_of = [], [], []
    for spec in specs:
        columns = (spec,) if isinstance(spec, str) else spec
        frame = {c: _column(q_frame, c, "queries", nq) for c in columns}
        g_keys, g_codes = encode_groups(frame, nq, name="by")
        clash = set(g_keys) & set(keys)
        if clash:
            raise FairnessConfigError(
                f"groups {sorted(map(group_label, clash))} occur in more than one grouping of "
                f"by={by!r}; compute the groupings in separate calls."
            )
        unit_rows.append(np.arange(nq))
        unit_codes.append(g_codes + len(keys))
        keys.extend(g_keys)
        grouping_of.extend([spec] * len(g_keys))
    rows = np.concatenate(unit_rows)
    codes = np.concatenate(unit_codes)
    n_groups = len(keys)
    counts = np.bincount(codes, minlength=n_groups)
    sums = np.stack([np.bincount(codes, weights=precision[rows, j], minlength=n_groups)
                     for j in range(len(ks))], axis=1)
    values = sums / counts[:, None]
    included = counts >= min_group_size

    params: dict[str, Any] = {
        "k": ks, "match": match, "by": [list(s) if isinstance(s, tuple) else s for s in specs],
        "exclude_self": bool(exclude_self), "min_group_size": min_group_size,
        "variant": variant, "queries": nq, "database": int(db.shape[0]),
        "n_bootstrap": n_bootstrap, "screen": screen,
    }
    boot = None
    if n_bootstrap:
        rng, used_seed = resolve_seed(seed)
        params.update(seed=used_seed, confidence_level=confidence_level,
                      interval_method=interval_method)
        if isinstance(clusters, str):
            cluster_ids = _column(q_frame, clusters, "queries", nq)
        elif clusters is None:
            cluster_ids = np.arange(nq)
        else:
            cluster_ids = as_1d(clusters, "clusters")
            check_same_length(clusters=cluster_ids, queries=range(nq))
        _, cluster_codes = np.unique(cluster_ids, return_inverse=True)
        boot = bootstrap_group_means(
            precision[rows], codes, n_groups=n_groups, included=included,
            clusters=cluster_codes.reshape(-1)[rows], n_bootstrap=n_bootstrap,
            confidence_level=confidence_level, method=interval_method, seed=rng,
        )
    overall = precision.mean(axis=0)
    curve = Curve(tuple(float(x) for x in ks), tuple(overall), "K", "precision")
    notes: list[str] = []
    if len(specs) > 1:
        notes.append("groups of several groupings share this result: the gap spans all of "
                     "them (" + "; ".join(map(str, specs)) + ").")
    results = []
    for j, kk in enumerate(ks):
        group_stats = make_group_stats(
            keys, counts, values[:, j], min_group_size=min_group_size,
            intervals=None if boot is None else [boot.group_interval(g, j)
                                                 for g in range(n_groups)],
        )
        results.append(IndicatorResult(
            name="precision_at_k",
            metric=f"precision@{kk}",
            value=float(overall[j]),
            groups=group_stats,
            stats={f"precision@{x}": float(overall[i]) for i, x in enumerate(ks)},
            intervals={} if boot is None else _value_intervals(boot, j),
            curves={"precision": curve} if j == 0 else {},
            tables={"groupings": tuple(
                {"group": group_label(key), "by": str(grouping_of[g])}
                for g, key in enumerate(keys))} if j == 0 else {},
            params={**params, "at_k": kk},
            higher_is_better=True,
            min_group_size=min_group_size,
            at=kk,
            notes=(*exclusion_notes(group_stats, min_group_size), *notes),
        ))
    head, *rest = results
    from dataclasses import replace

    return replace(head, slices=tuple(rest))


def _value_intervals(boot: Any, j: int) -> dict[str, tuple[float, float]]:
    # With several groupings a query is counted once per grouping: the overall mean of the
    # stacked units equals the plain mean, so its interval stays valid.
    out: dict[str, tuple[float, float]] = boot.as_mapping(j)
    return {key: v for key, v in out.items() if not any(math.isnan(x) for x in v)}


_SCREEN_TYPES: dict[str, Any] = {"faiss": _FaissScreen, "float32": _Screen, "bfloat16": _Bf16Screen}
