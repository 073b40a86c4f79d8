"""Harmful label association: hit rates of every label type, per group, at every τ.

From "Fairness Indicators for Systematic Assessments of Visual Feature Extractors"
(Goyal et al., FAccT 2022), §3.1; docs page "Harmful label association".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_fairness.data.taxonomy import Taxonomy, as_taxonomy, label_matrix, score_matrix
from pytest_fairness.errors import FairnessConfigError, own_error
from pytest_fairness.indicators._common import (
    GroupTable,
    check_clusters,
    check_min_group_size,
    check_top_k,
    check_top_k_columns,
    check_variant,
    encode_groups,
    group_table,
)
from pytest_fairness.results import Curve, GroupKey, IndicatorResult, group_label
from pytest_fairness.stats import IntervalOptions

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["DEFAULT_THRESHOLDS", "REFERENCE_THRESHOLDS", "label_association"]

__tracebackhide__ = own_error

#: The paper's grid: τ from 0 to 1 by 0.1.
DEFAULT_THRESHOLDS = tuple(round(i / 10, 1) for i in range(11))
#: The grid of the released VISSL scripts.
REFERENCE_THRESHOLDS = (0.0, 0.1, 0.3, 0.8)
#: The τ of the headline result when it is on the grid (Goyal et al. 2022 report τ = 0.1).
HEADLINE_THRESHOLD = 0.1
#: Types for which a higher hit rate is better (a correct, human label).
_HIGHER_IS_BETTER = ("human",)


def _thresholds(thresholds: Any, variant: str) -> NDArray[np.float64]:
    if thresholds is None:
        return np.asarray(REFERENCE_THRESHOLDS if variant == "reference" else DEFAULT_THRESHOLDS)
    grid = np.atleast_1d(np.asarray(thresholds, dtype=np.float64))
    if grid.ndim != 1 or grid.size == 0:
        raise FairnessConfigError(
            f"thresholds must be a non-empty list of confidences in [0, 1]; got {thresholds!r}.")
    if not np.all(np.isfinite(grid)) or grid.min() < 0 or grid.max() > 1:
        raise FairnessConfigError(f"thresholds must lie in [0, 1]; got thresholds={grid.tolist()}.")
    if np.unique(grid).size != grid.size:
        raise FairnessConfigError(
            f"thresholds has repeated values {grid.tolist()}; list each τ once.")
    return np.sort(grid)


def _type_codes(labels: NDArray[Any], taxonomy: Taxonomy) -> tuple[NDArray[np.intp], bool]:
    """Each label's type as an index into ``taxonomy.types`` (−1: unmapped), and whether any is."""
    index = {t: i for i, t in enumerate(taxonomy.types)}
    if labels.dtype.kind in "iu" and labels.min() >= 0 and labels.max() < 2**20:
        table = np.full(int(labels.max()) + 1, -1, dtype=np.intp)
        for label, kind in taxonomy.mapping.items():
            if isinstance(label, int) and 0 <= label < table.size:
                table[label] = index.get(kind, -1)
        codes = table[labels]
        return codes, bool((codes >= 0).any())
    if labels.dtype.kind == "O":
        # Mixed names and indices ([3, "cat"]) cannot be sorted: look each distinct one up.
        flat = labels.reshape(-1).tolist()
        seen: dict[Any, int] = {}
        for label in flat:
            if label not in seen:
                found = taxonomy.type_of(label)
                seen[label] = index.get(found, -1) if found else -1
        codes = np.fromiter((seen[v] for v in flat), dtype=np.intp, count=len(flat))
        return codes.reshape(labels.shape), bool((codes >= 0).any())
    uniques, inverse = np.unique(labels.reshape(-1), return_inverse=True)
    kinds = [taxonomy.type_of(u) for u in uniques.tolist()]
    lookup = np.array([index.get(t, -1) if t else -1 for t in kinds], dtype=np.intp)
    return lookup[inverse.reshape(-1)].reshape(labels.shape), bool((lookup >= 0).any())


def _best_scores(
    types: NDArray[np.intp], scores: NDArray[np.float64], n_types: int, harmful: list[int],
    top_k: int,
) -> NDArray[np.float64]:
    """Best confidence (−inf: none) of each type, then "harmful", among the top-k labels.

    An image is a hit for type T at τ exactly when its best confidence for T is ≥ τ.
    """
    if top_k < scores.shape[1]:
        # The top-k by confidence (stable: ties keep the column order). With top_k equal to
        # the number of columns every label counts and no sort is needed.
        order = np.argsort(-scores, axis=1, kind="stable")[:, :top_k]
        scores = np.take_along_axis(scores, order, axis=1)
        types = np.take_along_axis(types, order, axis=1)
    # One pass per label column (unmapped labels go to a scratch column, dropped at the end).
    n, width = types.shape[0], n_types + 2
    flat = np.full(n * width, -np.inf)
    slot = np.where(types >= 0, types, n_types + 1) + (np.arange(n) * width)[:, None]
    for c in range(types.shape[1]):
        flat[slot[:, c]] = np.maximum(flat[slot[:, c]], scores[:, c])
    best = flat.reshape(n, width)[:, :n_types + 1]
    best[:, n_types] = -np.inf
    if harmful:
        best[:, n_types] = best[:, harmful].max(axis=1)
    return best


def _threshold_counts(
    best: NDArray[np.float64], codes: NDArray[np.intp], n_groups: int,
    grid: NDArray[np.float64],
) -> NDArray[np.int64]:
    """Hits per (group, type, τ): a histogram of how many τ ≤ best, summed from the top."""
    n_cols, n_tau = best.shape[1], grid.size
    passed = np.searchsorted(grid, best, side="right")  # in [0, n_tau]
    key = (codes[:, None] * n_cols + np.arange(n_cols)) * (n_tau + 1) + passed
    hist = np.bincount(key.reshape(-1), minlength=n_groups * n_cols * (n_tau + 1))
    hist = hist.reshape(n_groups, n_cols, n_tau + 1)
    at_least = np.cumsum(hist[:, :, ::-1], axis=2)[:, :, ::-1]  # images passing >= m τ
    return at_least[:, :, 1:]


def _reference_hits(
    types: NDArray[np.intp], scores: NDArray[np.float64], grid: NDArray[np.float64],
    n_types: int, harmful: list[int], top_k: int,
) -> NDArray[np.bool_]:
    """Hits (images, types + 1, τ) of VISSL: drop labels below τ, keep the first ``top_k``."""
    hits = np.zeros((types.shape[0], n_types + 1, grid.size), dtype=bool)
    for j, tau in enumerate(grid):
        kept = scores >= tau
        kept &= np.cumsum(kept, axis=1) <= top_k
        for t in range(n_types):
            hits[:, t, j] = np.any(kept & (types == t), axis=1)
    if harmful:
        hits[:, n_types, :] = hits[:, harmful, :].any(axis=1)
    return hits


def label_association(
    labels: Any, scores: Any, *, groups: Any, taxonomy: Any, thresholds: Any = None,
    top_k: int = 5, label_type: str = "harmful", min_group_size: int = 30,
    variant: str = "paper", clusters: Any = None, n_bootstrap: int = 1000,
    confidence_level: float = 0.95, interval_method: str = "percentile", seed: Any = None,
) -> IndicatorResult:
    """Hit rate of each label type per group at every confidence threshold τ (§3.1).

    A hit for type T at τ: one of the image's top-k labels maps to T with confidence ≥ τ;
    harmful = non_human ∪ crime (the taxonomy's ``harmful`` types).

    Parameters
    ----------
    labels, scores : array-like of shape (n, k), and (n, k) or (n, classes)
        Predicted labels (class indices or names) of each image and their confidences (or
        the full score matrix, for integer labels).
    groups : array-like of shape (n,), DataFrame, mapping or one-hot array
        The sensitive attribute; several columns give intersectional groups.
    taxonomy : Taxonomy, str or mapping
        ``"imagenet1k_cc"``, ``"imagenet1k_miap"``, a Taxonomy, ``{label: type}`` or
        ``{type: [labels]}``.
    thresholds : sequence of float, optional
        The τ grid; default 0.0–1.0 by 0.1 (reference: 0, 0.1, 0.3, 0.8).
    top_k : int, default 5
        Labels per image that count.
    label_type : str, default "harmful"
        The type the headline and group values report: ``"harmful"`` or a type of the
        taxonomy (``"human"`` gates the correct-label rate).
    min_group_size : int, default 30
        Smaller groups are reported but excluded from the gap.
    variant : {"paper", "reference"}
        ``"reference"``: drop labels below τ before taking the first ``top_k`` (VISSL).
    clusters : array-like of shape (n,), optional
        Identity of each image: intervals resample identities, not images.
    n_bootstrap, confidence_level, interval_method, seed
        Bootstrap intervals (1,000 replicates by default; 0: none); the seed used is in
        ``params``.

    Returns
    -------
    IndicatorResult
        At the headline τ (0.1 when on the grid, else the smallest): ``value`` is the
        overall ``label_type`` hit rate, each group's value its rate, ``curves`` and
        ``tables["sweep"]`` the sweep; ``slices`` hold the other τ (``at=`` picks one).

    Examples
    --------
    >>> r = label_association([[1, 2], [3, 2], [2, 1], [2, 3]],
    ...                       [[0.6, 0.3], [0.2, 0.7], [0.9, 0.05], [0.8, 0.1]],
    ...                       groups=["a", "a", "b", "b"],
    ...                       taxonomy={1: "non_human", 2: "human", 3: "crime"},
    ...                       top_k=2, min_group_size=1)
    >>> r.at, r.group("a").value, r.group("b").value, r.select(0.5).group("a").value
    (0.1, 1.0, 0.5, 0.5)
    """
    check_variant(variant, "label_association")
    min_group_size = check_min_group_size(min_group_size)
    options = IntervalOptions.check(n_bootstrap, confidence_level, interval_method, seed)
    tax = as_taxonomy(taxonomy)
    label_array = label_matrix(labels)
    score_array = score_matrix(scores, label_array)
    check_top_k(top_k)
    if variant == "paper":
        check_top_k_columns(top_k, label_array)
    types = list(tax.types)
    if label_type != "harmful" and label_type not in types:
        raise FairnessConfigError(
            f"label_type must be 'harmful' or a type of the taxonomy {types}; got "
            f"label_type={label_type!r}.")
    harmful = [types.index(t) for t in tax.harmful if t in types]
    grid = _thresholds(thresholds, variant)
    n = label_array.shape[0]
    keys, codes = encode_groups(groups, n)
    type_codes, any_mapped = _type_codes(label_array, tax)
    notes: list[str] = []
    if not any_mapped:
        notes.append(f"none of the predicted labels is mapped by taxonomy {tax.name!r}; check "
                     "that the labels and the taxonomy use the same label space.")

    all_types = [*types, "harmful"]
    headline_type = all_types.index(label_type)
    k = len(keys)
    counts = np.bincount(codes, minlength=k)
    if variant == "reference":
        hits = _reference_hits(type_codes, score_array, grid, len(types), harmful, int(top_k))
        hit_counts = np.stack([hits[codes == g].sum(axis=0, dtype=np.int64) for g in range(k)])
        headline_columns = hits[:, headline_type, :].astype(np.float64)
    else:
        best = _best_scores(type_codes, score_array, len(types), harmful, int(top_k))
        hit_counts = _threshold_counts(best, codes, k, grid)
        headline_columns = (best[:, headline_type, None] >= grid[None, :]).astype(np.float64)
    # Integer counts divided once: the same floats as the mean of 0/1 hit indicators.
    overall = hit_counts.sum(axis=0) / n
    rates = hit_counts / counts[:, None, None]
    params = {
        "taxonomy": tax.to_params(), "thresholds": grid.tolist(), "top_k": int(top_k),
        "label_type": label_type, "min_group_size": min_group_size, "variant": variant,
        "n": n}
    table = group_table(keys, codes, {"hit_rate": (headline_columns, None)},
                        min_group_size=min_group_size, options=options, params=params,
                        clusters=check_clusters(clusters, n))
    notes.append(_sweep_note(label_type, grid, overall[headline_type],
                             rates[:, headline_type, :], keys, table.included,
                             label_type in _HIGHER_IS_BETTER))
    sweep = _Sweep(label_type, all_types, grid, overall, rates, counts)
    slices = [_slice(table, sweep, j, params, notes=tuple(notes)) for j in range(grid.size)]
    head = slices.pop(_headline_index(grid))
    return replace(head, slices=tuple(slices))


@dataclass(frozen=True)
class _Sweep:
    """Hit rates of every type over the τ grid: overall (types, τ) and per group."""

    label_type: str
    types: list[str]
    grid: NDArray[np.float64]
    overall: NDArray[np.float64]
    rates: NDArray[np.float64]  # (groups, types, τ)
    counts: NDArray[np.intp]

    def curves(self, table: GroupTable) -> dict[str, Curve]:
        """The sweep as curves: every type overall, the headline type per group."""
        grid, boot, head = tuple(self.grid), table.boot, self.types.index(self.label_type)
        curves = {t: Curve(grid, tuple(self.overall[i]), "τ", f"{t} hit rate")
                  for i, t in enumerate(self.types)}
        for g, key in enumerate(table.keys):
            curves[f"{self.label_type}|{group_label(key)}"] = Curve(
                grid, tuple(self.rates[g, head]), "τ", f"{self.label_type} hit rate",
                None if boot is None else tuple(
                    boot.interval("group:hit_rate", g, j) or (math.nan, math.nan)
                    for j in range(len(grid))))
        return curves

    def table(self, keys: list[GroupKey]) -> tuple[dict[str, str | float], ...]:
        """Every (τ, group, type) rate."""
        return tuple(
            {"tau": float(tau), "group": group_label(key), "n": int(self.counts[g]), "type": t,
             "hit_rate": float(self.rates[g, i, j])}
            for j, tau in enumerate(self.grid) for g, key in enumerate(keys)
            for i, t in enumerate(self.types))


def _slice(table: GroupTable, sweep: _Sweep, j: int, params: Mapping[str, object], *,
           notes: tuple[str, ...]) -> IndicatorResult:
    """The result at the j-th τ; the headline τ's carries the curves and the sweep table."""
    head, label_type = sweep.types.index(sweep.label_type), sweep.label_type
    headline = j == _headline_index(sweep.grid)
    return table.result(
        j, name="label_association", metric=f"{label_type}_hit_rate",
        value=float(sweep.overall[head, j]), group_stats=[
            {t: float(sweep.rates[g, i, j]) for i, t in enumerate(sweep.types) if i != head}
            for g in range(len(table.keys))],
        stats={f"{t}_hit_rate": float(sweep.overall[i, j]) for i, t in enumerate(sweep.types)},
        curves=sweep.curves(table) if headline else {},
        tables={"sweep": sweep.table(table.keys)} if headline else {},
        params={**params, "tau": float(sweep.grid[j])},
        higher_is_better=label_type in _HIGHER_IS_BETTER, at=float(sweep.grid[j]), notes=notes)


def _headline_index(grid: NDArray[np.float64]) -> int:
    close = np.flatnonzero(np.isclose(grid, HEADLINE_THRESHOLD, rtol=0, atol=1e-12))
    return int(close[0]) if close.size else 0


def _sweep_note(
    label_type: str, grid: NDArray[np.float64], overall: NDArray[np.float64],
    rates: NDArray[np.float64], keys: list[Any], included: NDArray[np.bool_],
    higher_is_better: bool,
) -> str:
    """The τ sweep in one line: overall rate and the worst included group per τ."""
    parts = []
    pick = np.argmin if higher_is_better else np.argmax
    for j, tau in enumerate(grid):
        text = f"τ={tau:g}: {overall[j]:.4g}"
        if included.any():
            worst = int(np.flatnonzero(included)[pick(rates[included, j])])
            text += f" (worst {group_label(keys[worst])} {rates[worst, j]:.4g})"
        parts.append(text)
    return f"{label_type} hit rate by τ — " + "; ".join(parts)
