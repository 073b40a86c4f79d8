"""Same-attribute retrieval: Precision@K per query group (seed 000 §3.3).

Embeddings are L2-normalised and compared by cosine similarity; for each query the K most
similar database items are retrieved and Precision@K is the share of them whose ``match``
attribute equals the query's. Several K come from one search (the largest K).

Search: a faiss ``IndexFlatIP`` (exact) over the float32-normalised database, queried in
blocks of ``block_size`` queries so memory stays bounded. faiss proposes candidates (a few
more than K); the candidates are then re-scored in float64 as
``cos(q, d) = (q · d) / (‖q‖ ‖d‖)`` and ordered by **decreasing cosine, ties broken by
the lower database index**. A query whose candidate list could hide a better item within
float32 error is searched again with more candidates, so the neighbours equal a float64
brute-force search with that tie rule exactly. The query itself (same row) is excluded
when the queries are the database.

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

from pytest_fairness.errors import FairnessConfigError, InvalidDataError, MissingDependencyError
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

#: Rows of the float64 re-scoring gathered at once (bounds its memory).
_RESCORE_ROWS = 64


def _unpack(obj: Any, name: str) -> tuple[Any, Any]:
    if hasattr(obj, "features") and hasattr(obj, "frame"):
        return obj.features, obj.frame
    if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)) and len(obj) == 2:
        return obj[0], obj[1]
    raise FairnessConfigError(
        f"{name} must be a pair (features, frame) - an (n, d) array and a DataFrame or mapping "
        f"of attribute columns - or an object with .features and .frame; got "
        f"{type(obj).__name__}."
    )


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


def _norms(x: NDArray[Any], name: str, block: int) -> NDArray[np.float64]:
    """Float64 L2 norm of each row, rejecting NaN, infinities and zero vectors."""
    out = np.empty(x.shape[0])
    for start in range(0, x.shape[0], block):
        rows = np.asarray(x[start:start + block], dtype=np.float64)
        if not np.all(np.isfinite(rows)):
            bad = start + int(np.flatnonzero(~np.isfinite(rows).all(axis=1))[0])
            raise InvalidDataError(
                f"{name} features have NaN or infinite values at row {bad}; drop or fix it."
            )
        out[start:start + block] = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    zero = np.flatnonzero(out == 0)
    if zero.size:
        raise InvalidDataError(
            f"{name} features have a zero vector at row {int(zero[0])} ({zero.size} in all): "
            "cosine similarity is undefined for it. Drop those embeddings."
        )
    return out


def _faiss() -> Any:
    try:
        import faiss
    except ImportError:  # pragma: no cover - faiss-cpu is a dependency
        raise MissingDependencyError(
            "precision_at_k needs faiss; install it with pip install faiss-cpu."
        ) from None
    return faiss


def _rescore(
    q: NDArray[Any], q_norm: NDArray[np.float64], db: NDArray[Any], db_norm: NDArray[np.float64],
    cand: NDArray[np.int64],
) -> NDArray[np.float64]:
    """Float64 cosine of each query with its candidates, (q · d) / (‖q‖ ‖d‖)."""
    out = np.empty(cand.shape)
    for s in range(0, cand.shape[0], _RESCORE_ROWS):
        c = cand[s:s + _RESCORE_ROWS]
        rows = np.asarray(db[c.reshape(-1)], dtype=np.float64).reshape(*c.shape, -1)
        qq = np.asarray(q[s:s + _RESCORE_ROWS], dtype=np.float64)
        dots = np.einsum("bkd,bd->bk", rows, qq)
        out[s:s + _RESCORE_ROWS] = dots / (q_norm[s:s + _RESCORE_ROWS, None] * db_norm[c])
    return out


def _order(cand: NDArray[np.int64], score: NDArray[np.float64], k: int) -> NDArray[np.int64]:
    """The first ``k`` candidates by decreasing score, ties by lower index."""
    by_index = np.argsort(cand, axis=1, kind="stable")
    cand = np.take_along_axis(cand, by_index, axis=1)
    score = np.take_along_axis(score, by_index, axis=1)
    by_score = np.argsort(-score, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(cand, by_score, axis=1)


def nearest_neighbors(
    queries: Any,
    database: Any,
    *,
    k: int,
    exclude_self: bool = False,
    block_size: int = 1024,
) -> NDArray[np.int64]:
    """Indices of the ``k`` most cosine-similar database rows of each query (exact).

    Ordered by decreasing cosine, ties broken by the lower database index; with
    ``exclude_self`` query ``i`` never retrieves database row ``i``. See the module
    docstring for how faiss and the float64 re-scoring share the work.

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
    n_db = db.shape[0] - (1 if exclude_self else 0)
    if k > n_db:
        raise FairnessConfigError(
            f"k={k} exceeds the {n_db} database items a query can retrieve; use k <= {n_db}."
        )
    if exclude_self and q.shape[0] != db.shape[0]:
        raise FairnessConfigError(
            "exclude_self=True needs the queries to be the database (same rows); got "
            f"{q.shape[0]} queries and {db.shape[0]} database items."
        )
    faiss = _faiss()
    d = db.shape[1]
    q_norm = _norms(q, "queries", block_size)
    db_norm = q_norm if (exclude_self and q is db) else _norms(db, "database", block_size)
    index = faiss.IndexFlatIP(d)
    for start in range(0, db.shape[0], block_size * 16):
        chunk = np.asarray(db[start:start + block_size * 16], dtype=np.float32)
        index.add(np.ascontiguousarray(chunk / db_norm[start:start + chunk.shape[0], None]
                                       .astype(np.float32)))
    # Float32 inner products of unit vectors are within ~d·2^-24 of the exact value.
    tol = max(1e-6, 4.0 * d * 2.0**-24)
    extra = 1 if exclude_self else 0
    out = np.empty((q.shape[0], k), dtype=np.int64)
    for start in range(0, q.shape[0], block_size):
        stop = min(start + block_size, q.shape[0])
        xq = np.asarray(q[start:stop], dtype=np.float32) / q_norm[start:stop, None].astype(
            np.float32)
        xq = np.ascontiguousarray(xq, dtype=np.float32)
        rows = np.arange(start, stop)
        pending = np.arange(stop - start)
        width = min(db.shape[0], k + extra + max(8, k))
        while pending.size:
            dist, cand = index.search(xq[pending], width)
            if exclude_self:
                # Rank without the query's own row: it sorts last.
                neg = np.sort(np.where(cand == rows[pending, None], np.inf, -dist), axis=1)
                kth, last = -neg[:, k - 1], -np.max(np.where(np.isinf(neg), -np.inf, neg), axis=1)
            else:
                kth, last = dist[:, k - 1], dist[:, -1]
            safe = (width >= db.shape[0]) | (last < kth - tol)
            done = pending[safe]
            if done.size:
                c = cand[safe].astype(np.int64)
                score = _rescore(q[rows[done]], q_norm[rows[done]], db, db_norm, c)
                if exclude_self:
                    score = np.where(c == rows[done, None], -np.inf, score)
                    c = np.where(c == rows[done, None], np.iinfo(np.int64).max, c)
                out[rows[done]] = _order(c, score, k)
            pending = pending[~safe]
            width = min(db.shape[0], width * 2)
    return out


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
        Skip database row i for query i; default: when ``queries is database`` or both
        hold the same features array (never in the reference variant).
    min_group_size : int, default 30
        Smaller groups are reported but excluded from the gap.
    variant : {"paper", "reference"}
        ``"reference"``: the released VISSL computation (full float32 sort, no exclusion).
    block_size : int, default 1024
        Queries searched at once; bounds memory.
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
    same = queries is database or q_feat is db_feat
    if exclude_self is None:
        exclude_self = same and variant == "paper"
    elif exclude_self and variant == "reference":
        raise FairnessConfigError(
            "variant='reference' reproduces code that never excludes self-matches; use "
            "variant='paper' with exclude_self=True."
        )
    q = _features(q_feat, "queries")
    db = _features(db_feat, "database")
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
        _norms(q, "queries", block_size)
        _norms(db, "database", block_size)
        neighbors = _reference_neighbors(q, db, k_max, block_size)
    else:
        neighbors = nearest_neighbors(q, db, k=k_max, exclude_self=bool(exclude_self),
                                      block_size=block_size)
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
        "n_bootstrap": n_bootstrap,
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
