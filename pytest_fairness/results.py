"""Frozen result types every indicator returns, with a JSON round trip.

Gaps and ratios come from the groups with ``n >= min_group_size``; smaller ones stay,
marked ``excluded``. Values are plain Python (no numpy scalars), so ``to_dict()`` is JSON.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, final

from pytest_fairness.errors import FairnessConfigError, own_error, shown

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "SCHEMA_VERSION", "Curve", "GroupKey", "GroupStat", "IndicatorResult", "Matrix",
    "decode_float", "encode_float", "finite_or_none", "group_label", "iter_results",
    "normalize_group", "pack_replicates", "result_id", "unpack_replicates",
]

__tracebackhide__ = own_error

#: Version of the dictionary layout written by :meth:`IndicatorResult.to_dict`.
SCHEMA_VERSION = 1

GroupKey = str | int | float | bool | tuple[str | int | float | bool, ...]
_PLAIN = (str, bool, int, float, type(None))


def _set(obj: object, **values: Any) -> None:
    """Set fields of a frozen dataclass (in ``__post_init__``)."""
    for name, value in values.items():
        object.__setattr__(obj, name, value)


def _scalar(value: Any) -> Any:
    """Turn numpy scalars and other number-likes into the matching Python scalar."""
    if type(value) in _PLAIN:  # exact types: numpy's str/float subclasses are converted
        return value
    item = getattr(value, "item", None)  # numpy scalars, 0-d arrays, torch scalars
    return item() if callable(item) else value


def normalize_group(key: Any) -> GroupKey:
    """Return a hashable, JSON-friendly group key (tuples stay tuples, lists become tuples)."""
    return tuple(map(_scalar, key)) if isinstance(key, (tuple, list)) else _scalar(key)


def group_label(key: GroupKey) -> str:
    """Render a group key for people: ``'female'`` or ``'female × dark'``."""
    return " × ".join(map(str, key)) if isinstance(key, tuple) else str(key)


def encode_float(x: float) -> float | str | None:
    """A float for JSON: None for NaN, ``"inf"``/``"-inf"`` for infinities, else itself."""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return None if math.isnan(x) else x


def finite_or_none(x: Any) -> float | None:
    """A JSON number for stores and baselines: None for NaN, absent or non-numeric values."""
    if x is None or isinstance(x, bool):
        return None
    try:
        value = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) else value


def pack_replicates(values: Iterable[float]) -> str:
    """Bootstrap replicates as text: little-endian float32, base64 (NaN kept; 1,000 in 5.4 kB)."""
    import base64
    import struct

    numbers = list(map(float, values))
    return base64.b64encode(struct.pack(f"<{len(numbers)}f", *numbers)).decode("ascii")


def unpack_replicates(text: Any, *, where: str = "replicates") -> tuple[float, ...]:
    """Read :func:`pack_replicates` text; FairnessConfigError naming ``where`` if damaged."""
    import base64
    import binascii
    import struct

    try:
        raw = base64.b64decode(text, validate=True) if isinstance(text, str) else None
    except (binascii.Error, ValueError):
        raw = None
    if raw is None or len(raw) % 4:
        raise FairnessConfigError(f"{where} is {shown(text)}, not bootstrap replicates (base64 "
                                  "of little-endian float32); regenerate the file that holds it.")
    return tuple(struct.unpack(f"<{len(raw) // 4}f", raw))


def decode_float(x: Any) -> float:
    """The inverse of :func:`encode_float`: NaN for None, infinities for their names."""
    return math.nan if x is None else float(x)


def _floats(values: Mapping[Any, Any]) -> dict[str, float]:
    return {str(k): float(_scalar(v)) for k, v in values.items()}


class Float32s(tuple[float, ...]):
    """Replicates already rounded to float32, as results keep them: taken as they are."""

    __slots__ = ()


def float32s(values: Any) -> Float32s:
    """``values`` (numbers, or a numpy array) rounded to float32, as results keep replicates."""
    if type(values) is Float32s:
        return values
    if hasattr(values, "astype"):  # a numpy array: rounded at once
        return Float32s(values.astype("float32").tolist())
    return Float32s(array("f", map(float, values)))


def _encode_key(key: GroupKey) -> Any:
    return list(key) if isinstance(key, tuple) else key


def _jsonable(value: Any) -> Any:
    """Recursively convert params and table cells to JSON-compatible values."""
    if getattr(value, "ndim", 0):  # numpy arrays and tensors of any size
        return _jsonable(value.tolist())
    value = _scalar(value)
    if isinstance(value, float):
        return encode_float(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    tolist = getattr(value, "tolist", None)  # numpy arrays
    if callable(tolist):
        return _jsonable(tolist())
    return value


def _cell(value: Any) -> Any:
    """A table cell: a JSON scalar or a tuple of them; NaN is stored as None (missing)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None or (
            kind is float and value == value):
        return value  # the common case, first: detail tables can hold 10^5 cells
    if isinstance(value, (tuple, list)):
        return tuple(_cell(v) for v in value)
    value = _scalar(value)
    return None if isinstance(value, float) and math.isnan(value) else value


def _decode_cell(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_decode_cell(v) for v in value)
    return float(value) if value in ("inf", "-inf") else value


def _interval(value: Any) -> tuple[float, float] | None:
    if value is None:
        return None
    if len(value) != 2:
        raise FairnessConfigError(f"An interval is a (low, high) pair; got interval="
                                  f"{tuple(value)!r}.")
    return (float(_scalar(value[0])), float(_scalar(value[1])))


def _encode_pair(pair: tuple[float, float] | None) -> list[float | str | None] | None:
    return None if pair is None else [encode_float(pair[0]), encode_float(pair[1])]


def _decode_pair(pair: Any) -> Any:
    """A stored pair, decoded (its length is checked by :func:`_interval`)."""
    return None if pair is None else tuple(decode_float(v) for v in pair)


@final
@dataclass(frozen=True)
class GroupStat:
    """The value of an indicator for one group.

    Parameters
    ----------
    group : str, int, float, bool or tuple of those
        The group: one attribute value, or a tuple for an intersectional group.
    n, value : int, float
        Number of units (images, queries, households, ...) and the group's value.
    interval : (float, float) or None
        Confidence interval of ``value``, when one was computed.
    excluded : bool
        ``n`` is below ``min_group_size``: shown, but left out of gaps and worst-group limits.
    stats : mapping of str to float
        Secondary per-group numbers (e.g. ``tpr``, ``fpr``).
    """

    group: GroupKey
    n: int
    value: float
    interval: tuple[float, float] | None = None
    excluded: bool = False
    stats: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _set(self, group=normalize_group(self.group))
        n = _scalar(self.n)
        if isinstance(n, bool) or not isinstance(n, (int, float)) or n < 0 or n != int(n):
            raise FairnessConfigError(
                f"GroupStat.n is the number of units of group {self.group!r}: a whole number "
                f">= 0; got n={self.n!r}.")
        _set(self, n=int(n), value=float(_scalar(self.value)), excluded=bool(self.excluded),
             interval=_interval(self.interval), stats=_floats(self.stats))

    @property
    def label(self) -> str:
        """The group as people read it."""
        return group_label(self.group)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dictionary."""
        return {"group": _encode_key(self.group), "n": self.n, "value": encode_float(self.value),
                "interval": _encode_pair(self.interval), "excluded": self.excluded,
                "stats": {k: encode_float(v) for k, v in self.stats.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GroupStat:
        """Rebuild a :class:`GroupStat` from :meth:`to_dict` output."""
        return cls(normalize_group(data["group"]), data["n"], decode_float(data["value"]),
                   _decode_pair(data.get("interval")), data.get("excluded", False),
                   {k: decode_float(v) for k, v in data.get("stats", {}).items()})


@final
@dataclass(frozen=True)
class Curve:
    """A curve such as a τ sweep, a Fair SA curve or an item-response curve.

    Parameters
    ----------
    x, y, x_label, y_label : tuple of float, str
        Coordinates (same length) and axis names.
    interval : tuple of (float, float) or None
        Pointwise confidence band, one pair per point.
    """

    x: tuple[float, ...]
    y: tuple[float, ...]
    x_label: str = ""
    y_label: str = ""
    interval: tuple[tuple[float, float], ...] | None = None

    def __post_init__(self) -> None:
        x = tuple(float(_scalar(v)) for v in self.x)
        y = tuple(float(_scalar(v)) for v in self.y)
        if len(x) != len(y):
            raise FairnessConfigError(
                f"Curve x and y must have the same length; got len(x)={len(x)}, len(y)={len(y)}.")
        _set(self, x=x, y=y)
        if self.interval is not None:
            _set(self, interval=tuple(_interval(p) for p in self.interval))

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dictionary."""
        return {"x": [encode_float(v) for v in self.x], "y": [encode_float(v) for v in self.y],
                "x_label": self.x_label, "y_label": self.y_label,
                "interval": None if self.interval is None else [
                    _encode_pair(p) for p in self.interval]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Curve:
        """Rebuild a :class:`Curve` from :meth:`to_dict` output."""
        interval = data.get("interval")
        return cls(tuple(map(decode_float, data["x"])), tuple(map(decode_float, data["y"])),
                   data.get("x_label", ""), data.get("y_label", ""),
                   None if interval is None else tuple(map(_decode_pair, interval)))


@final
@dataclass(frozen=True)
class Matrix:
    """A labelled matrix, such as Fair SA's AUC matrix (rows subgroups, columns perturbations).

    Parameters
    ----------
    rows, columns, values : tuple of group keys, tuple of tuple of float
        Labels, and ``values[i][j]`` the cell of ``rows[i]`` and ``columns[j]``.
    intervals : tuple of tuple of (float, float) or None, optional
        Confidence interval of each cell (None where it could not be computed), or None.
    """

    rows: tuple[GroupKey, ...]
    columns: tuple[GroupKey, ...]
    values: tuple[tuple[float, ...], ...]
    intervals: tuple[tuple[tuple[float, float] | None, ...], ...] | None = None

    def __post_init__(self) -> None:
        rows = tuple(map(normalize_group, self.rows))
        columns = tuple(map(normalize_group, self.columns))
        values = tuple(tuple(float(_scalar(v)) for v in row) for row in self.values)
        if len(values) != len(rows) or any(len(row) != len(columns) for row in values):
            raise FairnessConfigError(
                f"Matrix values must have shape ({len(rows)}, {len(columns)}) to match its "
                f"labels; got {len(values)} rows of lengths {[len(r) for r in values]}.")
        _set(self, rows=rows, columns=columns, values=values)
        if self.intervals is not None:
            try:
                cells = tuple(tuple(_interval(p) for p in row) for row in self.intervals)
            except (TypeError, ValueError, FairnessConfigError):
                raise FairnessConfigError(
                    f"Matrix intervals must hold one (low, high) pair of numbers or None per "
                    f"cell; got intervals={self.intervals!r}.") from None
            if [len(row) for row in cells] != [len(row) for row in values]:
                raise FairnessConfigError(
                    f"Matrix intervals must have the shape of its values ({len(rows)}, "
                    f"{len(columns)}), one (low, high) pair or None per cell; got "
                    f"{len(cells)} rows of lengths {[len(r) for r in cells]}.")
            _set(self, intervals=cells)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dictionary (``"intervals"`` only when there are some)."""
        intervals = {} if self.intervals is None else {"intervals": [
            [_encode_pair(p) for p in row] for row in self.intervals]}
        return {"rows": [_encode_key(r) for r in self.rows],
                "columns": [_encode_key(c) for c in self.columns],
                "values": [[encode_float(v) for v in row] for row in self.values], **intervals}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Matrix:
        """Rebuild a :class:`Matrix` from :meth:`to_dict` output."""
        intervals = data.get("intervals")
        return cls(tuple(map(normalize_group, data["rows"])),
                   tuple(map(normalize_group, data["columns"])),
                   tuple(tuple(map(decode_float, row)) for row in data["values"]),
                   None if intervals is None else tuple(
                       tuple(map(_decode_pair, row)) for row in intervals))


@final
@dataclass(frozen=True)
class IndicatorResult:
    """What every indicator returns.

    Parameters
    ----------
    name, metric, value : str, str, float
        The indicator (``"group_metrics"``), what it measures (``"accuracy"``), the headline.
    groups : tuple of GroupStat
        One entry per group, in a stable order.
    stats, intervals : mapping of str to float, of str to (float, float)
        Named scalars (``effect_size``, ``p_value``, ...), and confidence intervals of
        ``"value"``, ``"gap"``, ``"ratio"`` or any stat, where computed.
    curves, matrices, tables : mapping of str to Curve, Matrix, tuple of dict
        The family's curves, matrices (``"auc"``) and detail tables (rows of JSON scalars).
    params : mapping
        Everything needed to recompute the result, seed included.
    higher_is_better, min_group_size : bool, int
        Direction of ``metric`` (decides the best and worst group); groups with fewer
        units are ``excluded`` from gaps and worst-group limits.
    at, slices : float, int or None; tuple of IndicatorResult
        The coordinate (τ, K or level) of this result, and the same indicator at others
        (see :meth:`select`).
    notes : tuple of str
        Remarks for reports (e.g. rows dropped while validating).
    replicates : mapping of str to tuple of float
        Bootstrap replicates of ``"value"``, ``"gap"``, ``"ratio"``, in draw order, as
        float32, left out of ``==`` (see "CI gating and history" for their pairing).
    """

    name: str
    metric: str
    value: float
    groups: tuple[GroupStat, ...] = ()
    stats: Mapping[str, float] = field(default_factory=dict)
    intervals: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    curves: Mapping[str, Curve] = field(default_factory=dict)
    matrices: Mapping[str, Matrix] = field(default_factory=dict)
    tables: Mapping[str, tuple[Mapping[str, object], ...]] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    higher_is_better: bool = True
    min_group_size: int = 30
    at: float | int | None = None
    slices: tuple[IndicatorResult, ...] = ()
    notes: tuple[str, ...] = ()
    replicates: Mapping[str, tuple[float, ...]] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        _set(self, value=float(_scalar(self.value)), groups=tuple(self.groups),
             replicates={str(k): float32s(v) for k, v in self.replicates.items()},
             stats=_floats(self.stats),
             intervals={str(k): _interval(v) for k, v in self.intervals.items()},
             tables={str(k): tuple({c if type(c) is str else str(c): _cell(v)
                                    for c, v in row.items()} for row in rows)
                     for k, rows in self.tables.items()},
             params=_jsonable(dict(self.params)), min_group_size=int(self.min_group_size),
             at=_scalar(self.at), slices=tuple(self.slices), notes=tuple(self.notes))
        labels = [g.group for g in self.groups]
        if len(set(labels)) != len(labels):
            dupes = sorted({group_label(k) for k in labels if labels.count(k) > 1})
            raise FairnessConfigError(
                f"IndicatorResult {self.name!r} lists a group more than once: {dupes}.")

    @property
    def included_groups(self) -> tuple[GroupStat, ...]:
        """Groups that count for gaps and worst-group limits (not excluded, value defined)."""
        return tuple(g for g in self.groups if not g.excluded and not math.isnan(g.value))

    @property
    def excluded_groups(self) -> tuple[GroupStat, ...]:
        """Groups left out of the gap because ``n < min_group_size``."""
        return tuple(g for g in self.groups if g.excluded)

    def _pick(self, best: bool) -> GroupStat | None:
        pick = max if best == self.higher_is_better else min
        return pick(self.included_groups, key=lambda g: g.value, default=None)

    @property
    def best_group(self) -> GroupStat | None:
        """The included group with the best value, by ``higher_is_better``."""
        return self._pick(best=True)

    @property
    def worst_group(self) -> GroupStat | None:
        """The included group with the worst value, by ``higher_is_better``."""
        return self._pick(best=False)

    @property
    def gap(self) -> float:
        """``max − min`` of the included group values; NaN with fewer than two."""
        values = [g.value for g in self.included_groups]
        return max(values) - min(values) if len(values) >= 2 else math.nan

    @property
    def ratio(self) -> float:
        """``min / max`` of the included group values, in [0, 1].

        NaN with fewer than two included groups or negative values; 1 when all are 0.
        """
        values = [g.value for g in self.included_groups]
        if len(values) < 2 or min(values) < 0:
            return math.nan
        return 1.0 if max(values) == 0 else min(values) / max(values)

    def group(self, key: Any) -> GroupStat:
        """Return the :class:`GroupStat` of one group.

        Raises
        ------
        KeyError
            When the group is absent; the message lists the groups.
        """
        key = normalize_group(key)
        for g in self.groups:
            if g.group == key:
                return g
        raise KeyError(f"{key!r} is not a group of {self.name!r}; groups: "
                       f"{[g.group for g in self.groups]}")

    @property
    def coordinates(self) -> tuple[float | int, ...]:
        """Every coordinate (τ, K or level) :meth:`select` accepts."""
        own = () if self.at is None else (self.at,)
        return own + tuple(s.at for s in self.slices if s.at is not None)

    def select(self, at: float | int) -> IndicatorResult:
        """Return the result at one threshold τ, K or level.

        Raises
        ------
        FairnessConfigError
            When ``at`` is not one of :attr:`coordinates` (the message lists them).
        """
        for candidate in (self, *self.slices):
            if candidate.at is not None and math.isclose(float(candidate.at), float(at),
                                                         rel_tol=1e-9, abs_tol=1e-12):
                return candidate if candidate is self else replace(candidate, slices=())
        available = ", ".join(repr(c) for c in self.coordinates) or "none"
        raise FairnessConfigError(
            f"at={at!r} is not a coordinate of {self.name!r} ({self.metric}); "
            f"available: {available}. Pick one of those, or compute the indicator at {at!r}.")

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dictionary (see :data:`SCHEMA_VERSION`)."""
        return {
            "schema": SCHEMA_VERSION, "name": self.name, "metric": self.metric,
            "value": encode_float(self.value), "higher_is_better": self.higher_is_better,
            "min_group_size": self.min_group_size,
            "at": encode_float(self.at) if isinstance(self.at, float) else self.at,
            "groups": [g.to_dict() for g in self.groups],
            "stats": {k: encode_float(v) for k, v in self.stats.items()},
            "intervals": {k: _encode_pair(p) for k, p in self.intervals.items()},
            "curves": {k: c.to_dict() for k, c in self.curves.items()},
            "matrices": {k: m.to_dict() for k, m in self.matrices.items()},
            "tables": {k: [_jsonable(row) for row in rows] for k, rows in self.tables.items()},
            "params": _jsonable(dict(self.params)),
            "slices": [s.to_dict() for s in self.slices],
            "notes": list(self.notes),
            **({"replicates": {k: pack_replicates(v) for k, v in self.replicates.items()}}
               if self.replicates else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> IndicatorResult:
        """Rebuild an :class:`IndicatorResult` from :meth:`to_dict` output."""
        schema = data.get("schema", SCHEMA_VERSION)
        if schema != SCHEMA_VERSION:
            raise FairnessConfigError(
                f"Cannot read an IndicatorResult written with schema {schema!r}; this version "
                f"of pytest-fairness reads schema {SCHEMA_VERSION}. Upgrade pytest-fairness.")
        return cls(
            name=data["name"], metric=data["metric"], value=decode_float(data["value"]),
            higher_is_better=data.get("higher_is_better", True),
            min_group_size=data.get("min_group_size", 30),
            at=_decode_cell(data.get("at")),
            groups=tuple(GroupStat.from_dict(g) for g in data.get("groups", ())),
            stats={k: decode_float(v) for k, v in data.get("stats", {}).items()},
            intervals={k: _decode_pair(p) for k, p in data.get("intervals", {}).items()},
            curves={k: Curve.from_dict(c) for k, c in data.get("curves", {}).items()},
            matrices={k: Matrix.from_dict(m) for k, m in data.get("matrices", {}).items()},
            tables={k: tuple({c: _decode_cell(v) for c, v in row.items()} for row in rows)
                    for k, rows in data.get("tables", {}).items()},
            params=data.get("params", {}),
            slices=tuple(cls.from_dict(s) for s in data.get("slices", ())),
            notes=tuple(data.get("notes", ())),
            replicates={k: unpack_replicates(v, where=f"replicates[{k!r}]")
                        for k, v in data.get("replicates", {}).items()},
        )

    def frame(self) -> pd.DataFrame:
        """The per-group table as a pandas DataFrame (one row a group, one column a stat)."""
        import pandas as pd

        best = self.best_group
        rows = [{"group": g.group, "n": g.n, "value": g.value,
                 "delta_to_best": g.value - best.value if best is not None else math.nan,
                 "interval_low": (g.interval or (math.nan, math.nan))[0],
                 "interval_high": (g.interval or (math.nan, math.nan))[1],
                 "excluded": g.excluded, **g.stats} for g in self.groups]
        columns = ["group", "n", "value", "delta_to_best", "interval_low", "interval_high",
                   "excluded"]
        extra = sorted({k for g in self.groups for k in g.stats})
        return pd.DataFrame(rows, columns=columns + extra)


def iter_results(obj: Any) -> Iterable[tuple[str | None, IndicatorResult]]:
    """Yield ``(key, result)`` from a result, a sequence or a mapping of them (else nothing)."""
    if isinstance(obj, IndicatorResult):
        yield None, obj
    elif isinstance(obj, Mapping):
        yield from ((str(k), v) for k, v in obj.items() if isinstance(v, IndicatorResult))
    elif isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):
        yield from ((None, v) for v in obj if isinstance(v, IndicatorResult))


def result_id(data: Mapping[str, object]) -> str:
    """Name of a result within its test: its dict key, else ``indicator (metric)`` [@ at]."""
    if data.get("key") is not None:
        return str(data["key"])
    text = f"{data['name']} ({data['metric']})"
    at = data.get("at")
    if at is not None:
        text += f" @ {at:g}" if isinstance(at, (int, float)) else f" @ {at}"
    return text
