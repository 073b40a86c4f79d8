"""Validation, grouping and the per-group core (:func:`group_table`) of every indicator."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, final

import numpy as np

from pytest_fairness.bounds import simultaneous
from pytest_fairness.errors import (
    FairnessConfigError,
    InsufficientDataError,
    InvalidDataError,
    check_int,
    own_error,
)
from pytest_fairness.results import (
    GroupKey,
    GroupStat,
    IndicatorResult,
    float32s,
    group_label,
    normalize_group,
)
from pytest_fairness.stats import Bootstrap, IntervalOptions, Linear, Units, check_finite

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "GroupTable", "as_1d", "check_clusters", "check_min_group_size", "check_same_length",
    "check_top_k", "check_top_k_columns", "check_variant", "embedding_matrix", "encode_groups",
    "exclusion_notes", "extremes", "group_array", "group_table", "make_group_stats", "row_norms",
    "sort_keys", "spread"]

__tracebackhide__ = own_error

VARIANTS = ("paper", "reference")


def check_variant(variant: str, function: str) -> str:
    """Validate ``variant=`` (``"paper"`` or ``"reference"``)."""
    if variant not in VARIANTS:
        raise FairnessConfigError(
            f"variant must be 'paper' (the published definition) or 'reference' (the "
            f"authors' released code) in {function}; got variant={variant!r}.")
    return variant


def check_min_group_size(min_group_size: Any) -> int:
    """Validate ``min_group_size`` (a positive int)."""
    return check_int("min_group_size", min_group_size, low=1)


def check_top_k(top_k: Any) -> int:
    """Validate ``top_k`` (an int >= 1)."""
    return check_int("top_k", top_k, low=1)


def check_top_k_columns(top_k: int, labels: NDArray[Any]) -> None:
    """Refuse a ``top_k`` above the number of predicted labels per image."""
    if top_k > labels.shape[1]:
        raise FairnessConfigError(
            f"top_k={top_k} but labels has only {labels.shape[1]} column(s) per image; "
            f"pass the top-{top_k} predictions or top_k={labels.shape[1]}.")


def check_clusters(clusters: Any, n: int) -> Any:
    """Validate ``clusters=`` (one label per row, no NaN), or pass None through."""
    if clusters is None:
        return None
    array = as_1d(group_array(clusters, "clusters"), "clusters")
    check_same_length(clusters=array, rows=range(n))
    return array


_NEVER_MISSING = {str, int, bool, bytes, tuple}


def _is_missing(value: Any) -> bool:
    """None, a NaN of any float type, pandas' NA or NaT."""
    if value is None:
        return True
    if isinstance(value, (float, np.floating)):
        return bool(value != value)
    return type(value).__name__ in ("NAType", "NaTType")


def _missing(values: NDArray[Any]) -> NDArray[np.bool_] | None:
    """Which entries are missing; None where none can be."""
    if values.dtype.kind == "f":
        return np.isnan(values)
    if values.dtype.kind != "O" or set(map(type, values)) <= _NEVER_MISSING:  # checked in C
        return None
    return np.fromiter(map(_is_missing, values), dtype=bool, count=values.size)


def as_1d(values: Any, name: str, *, allow_nan: bool = False) -> NDArray[Any]:
    """Return ``values`` as a 1-D numpy array, rejecting other shapes, emptiness and NaN."""
    if hasattr(values, "to_numpy"):  # pandas Series / Index
        array = values.to_numpy()
    else:
        array = np.asarray(values)
    if array.ndim == 2 and 1 in array.shape and array.size > 0:
        array = array.reshape(-1)
    if array.ndim != 1:
        raise InvalidDataError(
            f"{name} must be one-dimensional (one value per image); got shape {array.shape}.")
    if array.size == 0:
        raise InsufficientDataError(f"{name} is empty; pass at least one value per group.")
    missing = None if allow_nan else _missing(array)
    if missing is not None and missing.any():
        raise InvalidDataError(
            f"{name} contains NaN/None at row {int(np.argmax(missing))} ({int(missing.sum())} "
            "missing in all); drop or impute those rows before computing the indicator.")
    return array


def embedding_matrix(values: Any, name: str) -> NDArray[Any]:
    """``values`` (an array or a tensor) as a numeric (items, dimensions) array, or raise."""
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    try:
        array = np.asarray(values)
        kind = f"dtype {array.dtype}"
    except ValueError as exc:  # ragged rows
        kind = str(exc)
    if not kind.startswith("dtype") or array.dtype.kind not in "fiu":
        raise InvalidDataError(
            f"{name} must be a numeric array of embeddings (items, dimensions); got {kind}. "
            "Pass the feature matrix of the images.")
    if array.ndim != 2 or array.shape[1] == 0:
        raise InvalidDataError(
            f"{name} must be a 2-D array, one embedding per row (items, dimensions); got shape "
            f"{array.shape}. Stack the embeddings of the images into one matrix.")
    if array.shape[0] == 0:
        raise InsufficientDataError(f"{name} has 0 items; pass one embedding per image.")
    return array


def row_norms(rows: NDArray[Any], name: str,
              norms: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """L2 norm of each row (``norms`` if computed already); NaN, inf, zero rows, overflow raise."""
    if norms is None:
        norms = np.linalg.norm(rows.astype(np.float64, copy=False), axis=1)
    bad = np.flatnonzero(~np.isfinite(norms) | (norms == 0))
    if bad.size:
        check_finite(rows, name, "drop those images or fix the feature extraction")
        zero = np.flatnonzero(~rows.any(axis=1))
        if zero.size:
            raise InvalidDataError(
                f"{name} has a zero vector in row {int(zero[0])} ({zero.size} in all): its "
                "cosine similarity is undefined. Drop those images or check the model output.")
        raise InvalidDataError(
            f"{name} row {int(bad[0])} has a norm beyond float64 range (largest |value| "
            f"{np.abs(rows[bad[0]]).max():.3g}); rescale the embeddings.")
    return norms


def check_same_length(**arrays: Any) -> int:
    """Return the common length of the named arrays, or raise naming every length."""
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"len({k})={v}" for k, v in lengths.items())
        raise InvalidDataError(
            f"Inputs must have one entry per image, but lengths differ: {shown}. "
            "Align them (same images, same order) before calling the indicator.")
    return next(iter(lengths.values()))


def sort_keys(keys: list[GroupKey]) -> list[GroupKey]:
    """Sort group keys naturally, falling back to type name and text for mixed types."""
    try:
        return sorted(keys)  # type: ignore[type-var,unused-ignore]
    except TypeError:
        return sorted(keys, key=lambda k: (type(k).__name__, str(k)))


def group_array(values: Any, name: str) -> NDArray[Any]:
    """Group labels as an array without numpy's silent coercions (``[1, "1"]``, ``[True, 1]``)."""
    if hasattr(values, "to_numpy"):  # pandas Series / Index
        return np.asarray(values.to_numpy())
    if isinstance(values, (list, tuple)):
        types = set(map(type, values))
        if types <= {str} or types <= {int, float} or types <= {bool}:
            return np.asarray(values)
        kinds = {"sequence" if isinstance(v, tuple) else _kind(v) for v in values}
        if "sequence" in kinds:
            try:
                array = np.asarray(values)
            except ValueError:  # ragged
                array = None
            if array is None or array.ndim != 2 or array.dtype.kind not in "biuf":
                first = next(v for v in values if isinstance(v, (list, tuple, np.ndarray)))
                raise InvalidDataError(
                    f"{name} holds sequences (e.g. {first!r}); a list of "
                    "lists is read as a one-hot matrix (0/1, one 1 per row), which these are "
                    "not. For intersectional groups pass a DataFrame, a mapping of columns or "
                    "a pandas Series of tuples.")
            return array
        if len(kinds) > 1:
            return np.fromiter(values, dtype=object, count=len(values))
    return np.asarray(values)


def _kind(value: Any) -> str:
    """Which values compare or print alike: bool, number, str, bytes, tuple, sequence, ..."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return "number"
    if isinstance(value, (str, bytes, tuple)):
        return type(value).__name__ if not isinstance(value, str) else "str"
    if isinstance(value, (list, np.ndarray)):
        return "sequence"
    return type(value).__name__


class _BadLabel(Exception):
    def __init__(self, value: Any, problem: str) -> None:
        super().__init__(problem)
        self.value = value
        self.problem = problem


def _strict(value: Any) -> Any:
    """A key that tells apart values Python deems equal (True == 1) or that print alike."""
    if isinstance(value, tuple):
        return ("tuple", tuple(_strict(v) for v in value))
    if _is_missing(value):
        raise _BadLabel(value, "is missing (NaN/None)")
    kind = _kind(value)
    if kind == "sequence" or isinstance(value, (dict, set, frozenset)):
        raise _BadLabel(value, f"is a {type(value).__name__}, not a group label")
    try:
        hash(value)
    except TypeError:
        raise _BadLabel(value, f"is an unhashable {type(value).__name__}") from None
    return (kind, value)


def _check_labels(labels: list[Any], name: str) -> None:
    """Refuse labels that are missing, unhashable, or that would merge or print alike."""
    kinds = set(map(type, labels))
    if len(kinds) == 1:
        kind = next(iter(kinds))
        if kind in (str, int, bool, bytes):
            return
        if kind is float:
            row = next((i for i, v in enumerate(labels) if v != v), None)
            if row is None:
                return
    first: dict[Any, int] = {}
    for row, value in enumerate(labels):
        try:
            strict = _strict(value)
        except _BadLabel as bad:
            shown = f" in {value!r}" if bad.value is not value else ""
            raise InvalidDataError(
                f"{name} row {row}: the value {bad.value!r}{shown} {bad.problem}; every row "
                "needs a label (a string, number, bool, or a tuple of them for "
                "intersectional groups). Drop or fix that row.") from None
        first.setdefault(strict, row)
    by_value: dict[Any, tuple[Any, int]] = {}
    by_label: dict[str, tuple[Any, int]] = {}
    for strict, row in first.items():
        value = labels[row]
        for table, key, clash in ((by_value, value, "are equal in Python, so they would "
                                   "merge into one group"),
                                  (by_label, group_label(value), "print the same, so the "
                                   f"report would show two groups named {group_label(value)!r}")):
            other = table.setdefault(key, (strict, row))
            if other[0] != strict:
                seen = labels[other[1]]
                raise InvalidDataError(
                    f"{name} mixes value types: {seen!r} ({type(seen).__name__}, row "
                    f"{other[1]}) and {value!r} ({type(value).__name__}, row {row}) {clash}. "
                    f"Give the column one type (e.g. all strings: {name}.astype(str)).")


def encode_groups(
    groups: Any, n: int, *, name: str = "groups"
) -> tuple[list[GroupKey], NDArray[np.intp]]:
    """Sorted keys and one code per row (``keys[codes[i]]``) of labels, columns or one-hot."""
    if isinstance(groups, Mapping) or hasattr(groups, "columns"):
        columns = list(groups.columns) if hasattr(groups, "columns") else list(groups)
        if not columns:
            raise InvalidDataError(f"{name} has no columns; pass at least one attribute.")
        parts = [as_1d(group_array(groups[c], f"{name}[{c!r}]"), f"{name}[{c!r}]") for c in columns]
        check_same_length(**{f"{name}[{c!r}]": p for c, p in zip(columns, parts)}, rows=range(n))
        if len(parts) == 1:
            return encode_groups(parts[0], n, name=f"{name}[{columns[0]!r}]")
        normalized = []
        for c, part in zip(columns, parts):
            values = [normalize_group(v) for v in part.tolist()]
            # Tuples clash only where one column does: checking each column suffices.
            _check_labels(values, f"{name}[{c!r}]")
            normalized.append(values)
        labels: list[GroupKey] = [tuple(row) for row in zip(*normalized)]
    else:
        array = group_array(groups, name)
        if array.ndim == 2 and array.shape[1] > 1:
            check_same_length(**{name: array}, rows=range(n))
            if array.dtype.kind not in "biuf":
                raise InvalidDataError(
                    f"{name} is a 2-D array of {array.dtype} values, read as one-hot (0/1, one "
                    "1 per row); pass a label vector, or a DataFrame for intersectional groups.")
            valid = np.isin(array, (0, 1)).all(axis=1) & (array.sum(axis=1) == 1)
            if not valid.all():
                bad = int(np.flatnonzero(~valid)[0])
                raise InvalidDataError(
                    f"{name} is a 2-D array, read as one-hot, but row {bad} is "
                    f"{array[bad].tolist()}: each row needs exactly one 1. Pass a label "
                    "vector, or a DataFrame for intersectional groups.")
            flat = array.argmax(axis=1)
        else:
            flat = as_1d(array, name)
            check_same_length(**{name: flat}, rows=range(n))
            if flat.dtype.kind in "biufUS":
                # Vectorised: normalise the distinct values only, then map every row.
                distinct, inverse = np.unique(flat, return_inverse=True)
                keys = [normalize_group(v) for v in distinct.tolist()]
                return keys, inverse.reshape(-1).astype(np.intp)
        labels = [normalize_group(v) for v in flat.tolist()]
        _check_labels(labels, name)
    keys = sort_keys(list(dict.fromkeys(labels)))
    index = {k: i for i, k in enumerate(keys)}
    codes = np.fromiter((index[v] for v in labels), dtype=np.intp, count=n)
    return keys, codes


def make_group_stats(
    keys: Sequence[GroupKey], ns: Sequence[int] | NDArray[Any],
    values: Sequence[float] | NDArray[Any], *, min_group_size: int,
    intervals: Sequence[tuple[float, float] | None] | None = None,
    stats: Sequence[Mapping[str, float]] | None = None,
) -> tuple[GroupStat, ...]:
    """Build one :class:`GroupStat` per group, marking the small ones ``excluded``."""
    return tuple(
        GroupStat(group=key, n=int(ns[i]), value=float(values[i]),
                  interval=None if intervals is None else intervals[i],
                  excluded=int(ns[i]) < min_group_size, stats={} if stats is None else stats[i])
        for i, key in enumerate(keys))


def exclusion_notes(groups: Sequence[GroupStat], min_group_size: int) -> tuple[str, ...]:
    """Say which groups were left out of the gap, for reports."""
    small = [g for g in groups if g.excluded]
    if not small:
        return ()
    shown = ", ".join(f"{group_label(g.group)} (n={g.n})" for g in small)
    return (f"{len(small)} group(s) below min_group_size={min_group_size} are shown but "
            f"excluded from the gap: {shown}",)


# -- the per-group core ---------------------------------------------------------------------

#: ``derive(values, included) -> {name: array (r, m)}``: whole-result statistics (DEO, DTO,
#: ...) from per-group values ``{column: array (r, groups, m)}`` of r replicates.
Derive = Callable[[Mapping[str, "NDArray[np.float64]"], "NDArray[np.bool_]"],
                  Mapping[str, "NDArray[np.float64]"]]


def extremes(
    values: NDArray[np.float64], included: NDArray[np.bool_]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Highest and lowest non-NaN value over the included groups of ``values`` (r, groups, m).

    NaN where fewer than two groups have a value (a replicate may draw a group empty).
    """
    inc = np.moveaxis(values, 1, 0)[included]  # (groups, r, m): reduced row by row, fast
    enough = np.count_nonzero(~np.isnan(inc), axis=0) >= 2
    high = np.fmax.reduce(inc, axis=0, initial=-np.inf)  # NaN passed over
    low = np.fmin.reduce(inc, axis=0, initial=np.inf)
    return np.where(enough, high, np.nan), np.where(enough, low, np.nan)


def spread(values: NDArray[np.float64], included: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Max − min over the included groups (see :func:`extremes`)."""
    high, low = extremes(values, included)
    return high - low


def _ratio(values: NDArray[np.float64], included: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Min / max over the included groups (1 when all are 0); NaN for negative values."""
    high, low = extremes(values, included)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(high == 0, 1.0, low / high)
    return np.where(low >= 0, ratio, np.nan)


@final
@dataclass(frozen=True)
class GroupTable:
    """Per-group values (groups, m) of each column (the first: the headline), derived stats."""

    keys: list[GroupKey]
    counts: NDArray[np.intp]
    values: Mapping[str, NDArray[np.float64]]
    derived: Mapping[str, NDArray[np.float64]]
    included: NDArray[np.bool_]
    min_group_size: int
    boot: Bootstrap | None
    #: Names a derived stat shares an interval with (``{"DEO": "gap:tpr"}``).
    aliases: Mapping[str, str] = field(default_factory=dict)
    #: The data behind each value (groups, m) of each column: the sum of its denominators.
    weights: Mapping[str, NDArray[np.float64]] = field(default_factory=dict)

    @property
    def headline(self) -> str:
        return next(iter(self.values))

    def group_stats(
        self, j: int = 0, stats: Sequence[Mapping[str, float]] | None = None
    ) -> tuple[GroupStat, ...]:
        """One :class:`GroupStat` per group at entry ``j``; other columns are its stats."""
        head, boot, groups = self.headline, self.boot, range(len(self.keys))
        return make_group_stats(
            self.keys, self.counts, self.values[head][:, j],
            min_group_size=self.min_group_size,
            intervals=None if boot is None else [boot.interval(f"group:{head}", g, j)
                                                 for g in groups],
            stats=[{**{c: float(v[g, j]) for c, v in self.values.items() if c != head},
                    **({} if stats is None else stats[g])} for g in groups])

    def stats(self, j: int = 0) -> dict[str, float]:
        """The derived statistics at entry ``j`` as floats."""
        return {name: float(v[j]) for name, v in self.derived.items()}

    def intervals(self, j: int = 0) -> dict[str, tuple[float, float]]:
        """Defined intervals at entry ``j``: value, gap, ratio, gap:<column>, derived."""
        if self.boot is None:
            return {}
        head = self.headline
        names = {"value": "value", "gap": f"gap:{head}", "ratio": "ratio",
                 **{f"gap:{c}": f"gap:{c}" for c in self.values if c != head},
                 **{d: d for d in self.derived}}
        found = {shown: pair for shown, name in names.items()
                 if (pair := self.boot.interval(name, j)) is not None}
        found.update(self.simultaneous(j))
        found.update({alias: found[name] for alias, name in self.aliases.items()
                      if name in found})
        return found

    def _log_ratio(self, j: int) -> bool:
        """Whether the ratio at ``j`` has a simultaneous interval: every value above 0."""
        assert self.boot is not None
        head = self.headline
        reps = self.boot.replicates[f"group:{head}"][:, self.included, j]
        values = self.values[head][self.included, j]
        return bool((values > 0).all() and not (reps <= 0).any())

    def simultaneous(self, j: int = 0) -> dict[str, tuple[float, float]]:
        """Simultaneous intervals at ``j`` (:func:`~pytest_fairness.stats.simultaneous`).

        Of the gap of every column, of the headline's lowest and highest group (``min``,
        ``max``) and of the ratio (on the log scale, where every value is above 0).
        """
        assert self.boot is not None
        head, inc, level, found = self.headline, self.included, self.boot.confidence_level, {}
        weights = {c: w[inc, j] for c, w in self.weights.items()}
        for column, values in self.values.items():
            gap, low, high = simultaneous(self.boot.replicates[f"group:{column}"][:, inc, j],
                                          values[inc, j], level, weights=weights.get(column))
            tag = "" if column == head else f":{column}"
            found.update({f"gap{tag}": gap, f"min{tag}": low, f"max{tag}": high})
        if self._log_ratio(j):  # the headline on the log scale: the ratio's bounds
            with np.errstate(divide="ignore", invalid="ignore"):
                low, high = simultaneous(
                    np.log(self.boot.replicates[f"group:{head}"][:, inc, j]),
                    np.log(self.values[head][inc, j]), level, weights=weights.get(head),
                    extremes=False)[0]
            found["ratio"] = np.array([np.exp(-high), np.exp(-low)])
        return {name: (float(pair[0]), float(pair[1])) for name, pair in found.items()
                if not np.isnan(pair).any()}

    def replicates(self, j: int = 0, higher_is_better: bool = True
                   ) -> dict[str, tuple[float, ...]]:
        """Replicates at entry ``j`` (none without), to judge changes and re-level intervals.

        ``value``, ``gap``, ``ratio``, ``gap:<column>``, every derived stat (those sharing an
        interval under their own name too), ``worst`` (the worst included group's headline),
        and ``group:<i>``: the headline of each included group (``i`` its place in the
        result's groups), from which simultaneous intervals are recomputed at another level.
        """
        if self.boot is None:
            return {}
        reps, head = self.boot.replicates, self.headline
        own = {"value": "value", "gap": f"gap:{head}", "ratio": "ratio",
               **{f"gap:{c}": f"gap:{c}" for c in self.values if c != head},
               **{d: d for d in self.derived}}
        names = {**own, **{alias: own.get(to, to) for alias, to in self.aliases.items()}}
        kept = {name: float32s(reps[name][:, j]) for name in set(names.values()) if name in reps}
        found: dict[str, tuple[float, ...]] = {
            shown: kept[name] for shown, name in names.items() if name in kept}
        heads = np.ascontiguousarray(reps[f"group:{head}"][:, self.included, j].T)  # (k, B)
        found.update({f"group:{g}": float32s(row)
                      for g, row in zip(np.flatnonzero(self.included), heads)})
        if heads.shape[0]:  # the worst included group's value, replicate by replicate
            worst = (np.fmin if higher_is_better else np.fmax).reduce(heads, axis=0)
            found["worst"] = float32s(worst)
        return found

    def notes(self) -> tuple[str, ...]:
        """Groups left out of the gap (:func:`exclusion_notes`); a ratio not simultaneous."""
        notes = exclusion_notes(self.group_stats(), self.min_group_size)
        m = next(iter(self.values.values())).shape[1]
        if self.boot is not None and not all(self._log_ratio(j) for j in range(m)):
            notes += ("the ratio's interval is the percentile one of min / max, not "
                      "simultaneous: a group's value is 0 in the data or a replicate",)
        return notes

    def result(self, j: int = 0, *, group_stats: Sequence[Mapping[str, float]] | None = None,
               notes: Sequence[str] = (), **fields: Any) -> IndicatorResult:
        """The result at entry ``j``: its groups, intervals, replicates and notes from here."""
        return IndicatorResult(
            groups=self.group_stats(j, group_stats), intervals=self.intervals(j),
            replicates=self.replicates(j, fields.get("higher_is_better", True)),
            min_group_size=self.min_group_size,
            notes=(*self.notes(), *notes), **fields)


def group_table(
    keys: list[GroupKey], codes: NDArray[np.intp], columns: Mapping[str, tuple[Any, Any]], *,
    min_group_size: int, options: IntervalOptions, params: dict[str, Any],
    derive: Derive | None = None, clusters: Any = None, aliases: Mapping[str, str] | None = None,
) -> GroupTable:
    """Per group, sum(a) / sum(b) of each column's (numerator, denominator (None: 1)) per row.

    Intervals resample rows (whole clusters when given); ``derive`` adds whole-result stats,
    ``aliases`` the derived stats whose interval is another's (``{"DEO": "gap:tpr"}``).
    """
    k, n = len(keys), codes.size
    ratios: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]] = {}
    for name, (num, den) in columns.items():
        a = np.asarray(num, dtype=np.float64).reshape(n, -1)
        ratios[name] = (a, np.ones_like(a) if den is None else np.broadcast_to(
            np.asarray(den, dtype=np.float64).reshape(n, -1), a.shape))
    counts = np.bincount(codes, minlength=k)
    included = counts >= min_group_size

    def per_group(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.stack([np.bincount(codes, weights=x[:, j], minlength=k)
                         for j in range(x.shape[1])], axis=1)

    weights = {name: per_group(b) for name, (_, b) in ratios.items()}
    with np.errstate(invalid="ignore", divide="ignore"):
        values = {name: per_group(a) / weights[name] for name, (a, _) in ratios.items()}
    derived = {} if derive is None else {
        name: np.asarray(v, dtype=np.float64)[0]
        for name, v in derive({c: v[None] for c, v in values.items()}, included).items()}
    units = statistic = None
    if options.n_bootstrap:
        # Without clusters, rows that contribute alike (same group, same numerators and
        # denominators) are pooled into kinds: the same resampling, drawn per kind.
        varying = [codes, *(ratios[name][i] for name, (_, den) in columns.items()
                            for i in ((0,) if den is None else (0, 1)))]  # not the 1s
        kinds = None if clusters is not None else np.column_stack(varying)
        units = Units.of(n, clusters=clusters, kinds=kinds)
        # Every numerator and denominator of every group in one sparse matrix (units ×
        # cells): one product per chunk of replicates gives all their weighted sums.
        data, rows, cells, slices, start = [], [], [], {}, 0
        read, times = units.stand_ins()
        for name, (a, b) in ratios.items():
            m = a.shape[1]
            cell = (codes[read][:, None] * m + np.arange(m)).reshape(-1)
            for offset, part in ((start, a), (start + k * m, b)):
                data.append((part[read] * times[:, None]).reshape(-1))
                rows.append(np.repeat(read, m))
                cells.append(cell + offset)
            slices[name] = (start, m)
            start += 2 * k * m
        totals = units.totals(np.concatenate(data), np.concatenate(rows),
                              np.concatenate(cells), start)
        head = next(iter(columns))

        def finish(sums: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
            r = sums.shape[0]
            out, reps = {}, {}
            for name, (at, m) in slices.items():
                top = sums[:, at:at + k * m].reshape(r, k, m)
                bottom = sums[:, at + k * m:at + 2 * k * m].reshape(r, k, m)
                with np.errstate(invalid="ignore", divide="ignore"):
                    reps[name] = top / bottom
                    if name == head:
                        out["value"] = top.sum(axis=1) / bottom.sum(axis=1)
                out[f"group:{name}"] = reps[name]
                out[f"gap:{name}"] = spread(reps[name], included)
            out["ratio"] = _ratio(reps[head], included)
            if derive is not None:
                out.update(derive(reps, included))
            return out

        statistic = Linear(totals, finish)
    boot = options.run(statistic, units, params)
    return GroupTable(keys, counts, values, derived, included, min_group_size, boot,
                      dict(aliases or {}), weights)
