"""Same-attribute retrieval: Precision@K per query group.

From "Fairness Indicators for Systematic Assessments of Visual Feature Extractors" (Goyal
et al., FAccT 2022); docs page "Same-attribute retrieval" (``variant="reference"``: VISSL).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_fairness.errors import (
    FairnessConfigError,
    InvalidDataError,
    check_int,
    own_error,
    require,
)
from pytest_fairness.indicators._common import (
    as_1d,
    check_clusters,
    check_min_group_size,
    check_same_length,
    check_variant,
    embedding_matrix,
    encode_groups,
    group_table,
    row_norms,
)
from pytest_fairness.results import Curve, GroupKey, IndicatorResult, group_label
from pytest_fairness.stats import IntervalOptions

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["nearest_neighbors", "precision_at_k"]

__tracebackhide__ = own_error

_BLOCK = 4096  #: queries searched at once (faiss's own query block)
_ENTRIES = 2**22  #: scores or gathered values held at once by a step; bounds memory
_MARGIN = 16  #: faiss returns k + max(k, _MARGIN) candidates at first
_COLUMNS = 4096  #: numpy sums a row alike wherever it sits up to 8,192 columns (float64)


def _unpack(obj: Any, name: str) -> tuple[NDArray[Any], Any]:
    for attribute in ("embeddings", "features") if hasattr(obj, "frame") else ():
        if hasattr(obj, attribute):
            return embedding_matrix(getattr(obj, attribute), name), obj.frame
    if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)) and len(obj) == 2:
        return embedding_matrix(obj[0], name), obj[1]
    raise FairnessConfigError(
        f"{name} must be a pair (features, frame) - an (n, d) array and a DataFrame or mapping "
        f"of attribute columns - or an object with .frame and .embeddings (what "
        f"fairness_features returns) or .features; got {type(obj).__name__}.")


def _column(frame: Any, column: str, name: str, n: int) -> NDArray[Any]:
    try:
        values = frame[column]
    except (KeyError, IndexError, TypeError):
        have = list(frame.columns) if hasattr(frame, "columns") else (
            list(frame) if isinstance(frame, Mapping) else [])
        raise FairnessConfigError(
            f"{name} frame has no column {column!r}; its columns are {have}.") from None
    array = as_1d(values, f"{name}[{column!r}]")
    check_same_length(**{f"{name} features": range(n), f"{name}[{column!r}]": array})
    return array


def _check_search(q: NDArray[Any], db: NDArray[Any], k: Any, exclude_self: bool) -> int:
    if q.shape[1] != db.shape[1]:
        raise InvalidDataError(f"queries and database embeddings must have the same dimension;"
                               f" got {q.shape[1]} and {db.shape[1]}.")
    reachable = db.shape[0] - int(exclude_self)
    k = check_int("k", k, low=1)
    if k > reachable:
        raise FairnessConfigError(f"k={k} exceeds the {reachable} database items a query can "
                                  f"retrieve; use k <= {reachable}.")
    if exclude_self and q.shape[0] != db.shape[0]:
        raise FairnessConfigError(
            "exclude_self=True needs the queries to be the database (same rows); got "
            f"{q.shape[0]} queries and {db.shape[0]} database items.")
    return k


def _dots(spec: str, a: NDArray[Any], b: NDArray[Any]) -> NDArray[np.float64]:
    """``np.einsum(spec, a, b)`` in float64, by ``_COLUMNS``: identical rows, identical sums."""
    return np.asarray(sum(np.einsum(spec, a[..., s:s + _COLUMNS], b[..., s:s + _COLUMNS],
                                    dtype=np.float64) for s in range(0, a.shape[-1], _COLUMNS)))


def _norms(rows: NDArray[Any], name: str) -> NDArray[np.float64]:
    """Float64 L2 norm of each row, rejecting NaN, infinities and zero vectors."""
    return row_norms(rows, name, np.sqrt(_dots("ij,ij->i", rows, rows)))


def _unit32(rows: NDArray[Any], norms: NDArray[np.float64]) -> NDArray[np.float32]:
    """Rows over their norms in float32, each entry within 3u of exact (two roundings)."""
    if rows.dtype == np.float32 and norms.min() >= 2.0**-100 and norms.max() <= 2.0**100:
        return rows * (1.0 / norms).astype(np.float32)[:, None]  # normal float32 inverses
    return (rows / norms[:, None]).astype(np.float32)


def _error_bound(d: int, smallest_norm: float) -> float:
    """Bound on faiss's float32 cosine error, inf where it does not hold (all are re-ranked).

    ε(d) = 2δ + δ² + γ(1 + δ)² + (2d + 8)·2⁻⁵³, δ = 3·2⁻²⁴, γ = d·2⁻²⁴ / (1 − d·2⁻²⁴).
    """
    u = 2.0**-24
    if d * u >= 0.5 or smallest_norm < 2.0**-400:
        return math.inf
    delta = 3 * u + math.sqrt(d) * 2.0**-149  # a unit row, subnormal entries included
    gamma = d * u / (1 - d * u)
    faiss = 2 * delta + delta**2 + gamma * (1 + delta) ** 2 + 4 * d * 2.0**-126  # (flushed)
    cosine = (2 * d + 8) * 2.0**-53 + 3 * d * 2.0**-1074 / smallest_norm**2  # (subnormal)
    return 1.01 * (faiss + cosine)


def nearest_neighbors(
    queries: Any, database: Any, *, k: int, exclude_self: bool = False
) -> NDArray[np.int64]:
    """Indices (queries, k) of each query's ``k`` most cosine-similar database rows, exact.

    As a float64 brute-force search (ties: the lower index): faiss ``IndexFlatIP`` float32
    candidates, re-ranked in float64, certified by :func:`_error_bound` or searched again
    wider. ``exclude_self``: never row ``i`` for query ``i``.
    """
    q, db = embedding_matrix(queries, "queries"), embedding_matrix(database, "database")
    k = _check_search(q, db, k, exclude_self)
    faiss = require("faiss", purpose="retrieval (the nearest-neighbour search)")

    (n, d), db_norm, q_norm = db.shape, _norms(db, "database"), _norms(q, "queries")
    index = faiss.IndexFlatIP(d)
    index.add(_unit32(db, db_norm))
    eps = _error_bound(d, float(min(db_norm.min(), q_norm.min())))
    out = np.empty((q.shape[0], k), dtype=np.int64)
    todo = [(np.arange(q.shape[0]), min(n, k + max(k, _MARGIN) + int(exclude_self)))]
    while todo:  # (queries, candidates per query); the uncertified come back, wider
        rows, width = todo.pop()
        step = max(1, min(_BLOCK, _ENTRIES // width))
        for part in (rows[i:i + step] for i in range(0, rows.size, step)):
            score, found = index.search(_unit32(q[part], q_norm[part]), width)
            last = score.min(axis=1).astype(np.float64)  # no missed item scores higher
            score = np.where(found == part[:, None], -np.inf, score) if exclude_self else score
            order = np.argsort(-score, axis=1, kind="stable")
            score, found = np.take_along_axis(score, order, 1), np.take_along_axis(found, order, 1)
            # Float64 cosines above s_k - 2 eps (others -inf); queries grouped by how many.
            need = (score >= score[:, k - 1:k].astype(np.float64) - 2 * eps).sum(axis=1)
            cos, by_need = np.full(found.shape, -np.inf), np.argsort(need, kind="stable")
            chunk = max(1, _ENTRIES // (int(need.max()) * d))
            for r in (by_need[i:i + chunk] for i in range(0, part.size, chunk)):
                c, who = found[r, :need[r[-1]]], part[r]
                cos[r, :c.shape[1]] = _dots("nmd,nd->nm", db[c], q[who]) / (
                    q_norm[who, None] * db_norm[c])
            if exclude_self:  # a query grouped with others may have its own row re-ranked
                cos[found == part[:, None]] = -np.inf
            pick = np.lexsort((found, -cos), axis=1)[:, :k]
            out[part] = np.take_along_axis(found, pick, axis=1)
            kth = np.take_along_axis(cos, pick[:, -1:], axis=1)[:, 0]
            if width < n and not (kth > last + eps).all():
                todo.append((part[~(kth > last + eps)], min(n, 2 * width)))
    return out


def _reference_neighbors(q: NDArray[Any], db: NDArray[Any], k: int) -> NDArray[np.int64]:
    """VISSL: torch float32 normalize, numpy float32 dot, ``argsort(-similarity)``."""
    _check_search(q, db, k, False), _norms(q, "queries"), _norms(db, "database")
    torch = require("torch", purpose='retrieval with variant="reference" (VISSL\'s normalize)')

    def normalize(x: NDArray[Any]) -> Any:
        return torch.nn.functional.normalize(torch.from_numpy(x).float(), dim=1, p=2).numpy()

    train = normalize(db)
    # One product when it fits (as the released code), else row blocks of the same product.
    rows = q.shape[0] if q.shape[0] * db.shape[0] <= 2**28 else _BLOCK
    return np.concatenate([np.argsort(-normalize(q[s:s + rows]).dot(train.T), axis=1)[:, :k]
                           for s in range(0, q.shape[0], rows)])


def _k_values(k: Any) -> list[int]:
    values = [k] if isinstance(k, (int, np.integer)) else k
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
        raise FairnessConfigError(f"k must be an int >= 1 or a list of them; got k={k!r}.")
    out = [check_int("k", v, low=1, why=" (or a list of them)") for v in values]
    if len(set(out)) != len(out):
        raise FairnessConfigError(f"k has repeated values {out}; list each K once.")
    return out


def _groupings(by: Any) -> list[str | tuple[str, ...]]:
    specs = [by] if isinstance(by, (str, tuple)) else by
    if isinstance(specs, bytes) or not isinstance(specs, Sequence) or not specs:
        raise FairnessConfigError(f"by must be a column, a tuple of columns (intersectional) "
                                  f"or a list of those; got by={by!r}.")
    out = [tuple(spec) if isinstance(spec, list) else spec for spec in specs]
    for spec in out:
        if not isinstance(spec, str) and not (isinstance(spec, tuple) and spec and all(
                isinstance(c, str) for c in spec)):
            raise FairnessConfigError(f"by entries must be column names or tuples of them; "
                                      f"got {spec!r} in by={by!r}.")
    return out


def precision_at_k(
    queries: Any, database: Any, *, k: Any, match: str, by: Any,
    exclude_self: bool | None = None, min_group_size: int = 30, variant: str = "paper",
    clusters: Any = None, n_bootstrap: int = 1000, confidence_level: float = 0.95,
    interval_method: str = "percentile", seed: Any = None,
) -> IndicatorResult:
    """Precision@K of same-attribute retrieval per query group (Goyal et al. 2022).

    The share of a query's K nearest database items whose ``match`` attribute equals its own.

    Parameters
    ----------
    queries, database : (features, frame) or object with ``.frame`` and ``.embeddings``
        Embeddings (n, d) and a DataFrame or mapping of attribute columns.
    k : int or list of int
        K; with several, the first is the headline, the others ``slices`` (``at=50``).
    match : str
        The attribute a neighbour must share with its query (a column of both frames).
    by : str, tuple of str, or list of those
        Query groups: a column, a tuple of columns (intersectional), or a list of groupings
        reported in one result (the gap then spans all their groups, a conservative bound).
    exclude_self : bool, optional
        Skip row i for query i; default: when the queries are (equal to) the database.
    min_group_size : int, default 30
        Smaller groups are reported but excluded from the gap.
    variant : {"paper", "reference"}
        ``"reference"``: the released VISSL computation (full float32 sort, no exclusion).
    clusters : str or array-like, optional
        Query-frame column or array of cluster ids (e.g. the participant) to resample.
    n_bootstrap, confidence_level, interval_method, seed
        Bootstrap intervals (1,000 replicates by default; 0: none); the seed used is in
        ``params``.

    Returns
    -------
    IndicatorResult
        ``value``: mean Precision@K over queries (per group: over its queries);
        ``curves["precision"]``: Precision@K against K.

    Examples
    --------
    >>> import numpy as np
    >>> db = (np.array([[1.0, 0], [0.9, 0.1], [0, 1.0], [0.1, 0.9]]), {"g": list("ffmm")})
    >>> q = (np.array([[1.0, 0.05], [0.05, 1.0], [1.0, 0.2]]), {"g": list("fmm")})
    >>> r = precision_at_k(q, db, k=[1, 2], match="g", by="g", min_group_size=1)
    >>> r.group("f").value, r.group("m").value, r.select(2).group("m").value
    (1.0, 0.5, 0.5)
    """
    check_variant(variant, "precision_at_k")
    min_group_size = check_min_group_size(min_group_size)
    options = IntervalOptions.check(n_bootstrap, confidence_level, interval_method, seed)
    ks, specs = _k_values(k), _groupings(by)
    if not isinstance(match, str):
        raise FairnessConfigError(f"match must be a column name; got match={match!r}.")
    (q, q_frame), (db, db_frame) = _unpack(queries, "queries"), _unpack(database, "database")
    if exclude_self is None:  # the queries are the database: the same array, or equal
        exclude_self = variant == "paper" and (q is db or bool(np.array_equal(q, db)))
    elif exclude_self and variant == "reference":
        raise FairnessConfigError(
            "variant='reference' reproduces code that never excludes self-matches; use "
            "variant='paper' with exclude_self=True.")
    nq = q.shape[0]
    q_match, db_match = _column(q_frame, match, "queries", nq), _column(
        db_frame, match, "database", db.shape[0])
    neighbors = (_reference_neighbors(q, db, max(ks)) if variant == "reference" else
                 nearest_neighbors(q, db, k=max(ks), exclude_self=bool(exclude_self)))
    cum = np.cumsum(db_match[neighbors] == q_match[:, None], axis=1)
    precision = np.stack([cum[:, kk - 1] / kk for kk in ks], axis=1)  # (queries, len(ks))

    # Groups of every grouping, in one list; a query counts once per grouping.
    keys: list[GroupKey] = []
    codes, grouping_of = [], []
    for spec in specs:
        columns = (spec,) if isinstance(spec, str) else spec
        frame = {c: _column(q_frame, c, "queries", nq) for c in columns}
        g_keys, g_codes = encode_groups(frame, nq, name="by")
        if set(g_keys) & set(keys):
            raise FairnessConfigError(
                f"groups {sorted(map(group_label, set(g_keys) & set(keys)))} occur in more "
                f"than one grouping of by={by!r}; compute the groupings in separate calls.")
        codes.append(g_codes + len(keys))
        keys.extend(g_keys)
        grouping_of.extend([spec] * len(g_keys))
    rows, code = np.tile(np.arange(nq), len(specs)), np.concatenate(codes)
    params = {
        "k": ks, "match": match, "by": [list(s) if isinstance(s, tuple) else s for s in specs],
        "exclude_self": bool(exclude_self), "min_group_size": min_group_size, "variant": variant,
        "queries": nq, "database": int(db.shape[0])}
    # A query counted once per grouping is one unit: resampled once, in all its groups.
    ids = (np.arange(nq) if clusters is None else _column(q_frame, clusters, "queries", nq)
           if isinstance(clusters, str) else check_clusters(clusters, nq))
    table = group_table(keys, code, {"precision": (precision[rows], None)},
                        min_group_size=min_group_size, options=options, params=params,
                        clusters=np.unique(ids, return_inverse=True)[1].reshape(-1)[rows])
    overall = precision.mean(axis=0)
    stats = {f"precision@{x}": float(v) for x, v in zip(ks, overall)}
    # What the headline K carries:
    curves = {"precision": Curve(tuple(map(float, ks)), tuple(overall), "K", "precision")}
    groupings = tuple({"group": group_label(key), "by": str(grouping_of[g])}
                      for g, key in enumerate(keys))
    notes = () if len(specs) == 1 else (  # the same small groups at every K
        "groups of several groupings share this result: the gap spans all of them ("
        + "; ".join(map(str, specs)) + ").",)
    results = [table.result(
        j, name="precision_at_k", metric=f"precision@{kk}", value=float(overall[j]),
        stats=stats, params={**params, "at_k": kk}, higher_is_better=True, at=kk, notes=notes,
        curves=curves if j == 0 else {}, tables={"groupings": groupings} if j == 0 else {})
        for j, kk in enumerate(ks)]
    return replace(results[0], slices=tuple(results[1:]))
