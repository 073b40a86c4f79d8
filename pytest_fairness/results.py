"""Frozen result types every indicator returns, with a JSON round trip.

An indicator computes one headline ``value`` and, for most families, one value per
group (:class:`GroupStat`). Gaps and ratios are derived on request from the groups that
are large enough (``n >= min_group_size``); smaller groups stay in the result, marked
``excluded``, so a report can show them without letting noise decide the gap.

The classes hold plain Python values (no numpy scalars) so that ``to_dict()`` is JSON
serialisable and crosses the pytest-xdist worker boundary unchanged. Treat the mapping
fields as read-only.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, final

from pytest_fairness.errors import FairnessConfigError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "SCHEMA_VERSION",
    "Curve",
    "GroupKey",
    "GroupStat",
    "IndicatorResult",
    "Matrix",
    "decode_float",
    "encode_float",
    "finite_or_none",
    "group_label",
    "iter_results",
    "normalize_group",
    "pack_replicates",
    "result_id",
    "unpack_replicates",
]

#: Version of the dictionary layout written by :meth:`IndicatorResult.to_dict`.
SCHEMA_VERSION = 1

Scalar = str | int | float | bool | None
GroupKey = str | int | float | bool | tuple[str | int | float | bool, ...]


_PLAIN = (str, bool, int, float, type(None))


def _scalar(value: Any) -> Any:
    """Turn numpy scalars and other number-likes into the matching Python scalar."""
    if type(value) in _PLAIN:  # exact types: numpy's str/float subclasses are converted
        return value
    item = getattr(value, "item", None)  # numpy scalars, 0-d arrays, torch scalars
    if callable(item):
        return item()
    return value


def normalize_group(key: Any) -> GroupKey:
    """Return a hashable, JSON-friendly group key (tuples stay tuples, lists become tuples)."""
    if isinstance(key, (tuple, list)):
        return tuple(_scalar(k) for k in key)
    return _scalar(key)  # type: ignore[no-any-return]


def group_label(key: GroupKey) -> str:
    """Render a group key for people: ``'female'`` or ``'female × dark'``."""
    if isinstance(key, tuple):
        return " × ".join(str(k) for k in key)
    return str(key)


def encode_float(x: float) -> float | str | None:
    """A float for JSON: None for NaN, ``"inf"``/``"-inf"`` for infinities, else itself."""
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


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
    """Bootstrap replicates as text: little-endian float32, base64 (NaN kept).

    Four bytes a replicate keep 1,000 of them in 5.4 kB of JSON, and float32's seven
    digits are far finer than any interval they give.

    Examples
    --------
    >>> unpack_replicates(pack_replicates([0.5, float("nan")]))
    (0.5, nan)
    """
    import base64
    import struct

    numbers = [float(v) for v in values]
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
        shown = repr(text) if len(repr(text)) <= 40 else repr(text)[:37] + "..."
        raise FairnessConfigError(
            f"{where} is {shown}, not bootstrap replicates (base64 of little-endian "
            "float32); regenerate the file that holds it."
        )
    return tuple(struct.unpack(f"<{len(raw) // 4}f", raw))


def decode_float(x: Any) -> float:
    """The inverse of :func:`encode_float`: NaN for None, infinities for their names."""
    if x is None:
        return math.nan
    return float(x)


def _encode_key(key: GroupKey) -> Any:
    return list(key) if isinstance(key, tuple) else key


def _jsonable(value: Any) -> Any:
    """Recursively convert params to JSON-compatible values."""
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
        kind is float and value == value
    ):
        return value  # the common case, first: detail tables can hold 10^5 cells
    if isinstance(value, (tuple, list)):
        return tuple(_cell(v) for v in value)
    value = _scalar(value)
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _encode_cell(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_encode_cell(v) for v in value]
    return encode_float(value) if isinstance(value, float) else value


def _decode_cell(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_decode_cell(v) for v in value)
    if value in ("inf", "-inf"):
        return float(value)
    return value


def _interval(value: Any) -> tuple[float, float] | None:
    if value is None:
        return None
    if len(value) != 2:
        raise FairnessConfigError(
            f"An interval is a (low, high) pair; got interval={tuple(value)!r}."
        )
    low, high = value
    return (float(_scalar(low)), float(_scalar(high)))


@final
@dataclass(frozen=True)
class GroupStat:
    """The value of an indicator for one group.

    Parameters
    ----------
    group : str, int, float, bool or tuple of those
        The group: one attribute value, or a tuple for an intersectional group.
    n : int
        Number of units the value is computed from (images, queries, households, ...).
    value : float
        The indicator's value for the group.
    interval : (float, float) or None
        Confidence interval of ``value``, when one was computed.
    excluded : bool
        True when ``n`` is below the result's ``min_group_size``: the group is shown
        but left out of gaps, ratios and worst-group limits.
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
        object.__setattr__(self, "group", normalize_group(self.group))
        n = _scalar(self.n)
        if isinstance(n, bool) or not isinstance(n, (int, float)) or n < 0 or n != int(n):
            raise FairnessConfigError(
                f"GroupStat.n is the number of units of group {self.group!r}: a whole number "
                f">= 0; got n={self.n!r}."
            )
        object.__setattr__(self, "n", int(n))
        object.__setattr__(self, "value", float(_scalar(self.value)))
        object.__setattr__(self, "interval", _interval(self.interval))
        object.__setattr__(self, "excluded", bool(self.excluded))
        object.__setattr__(
            self, "stats", {str(k): float(_scalar(v)) for k, v in self.stats.items()}
        )

    @property
    def label(self) -> str:
        """The group as people read it."""
        return group_label(self.group)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dictionary."""
        return {
            "group": _encode_key(self.group),
            "n": self.n,
            "value": encode_float(self.value),
            "interval": None
            if self.interval is None
            else [encode_float(v) for v in self.interval],
            "excluded": self.excluded,
            "stats": {k: encode_float(v) for k, v in self.stats.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GroupStat:
        """Rebuild a :class:`GroupStat` from :meth:`to_dict` output."""
        interval = data.get("interval")
        return cls(
            group=normalize_group(data["group"]),
            n=data["n"],
            value=decode_float(data["value"]),
            interval=None if interval is None else tuple(decode_float(v) for v in interval),  # type: ignore[arg-type]
            excluded=data.get("excluded", False),
            stats={k: decode_float(v) for k, v in data.get("stats", {}).items()},
        )


@final
@dataclass(frozen=True)
class Curve:
    """A curve such as a τ sweep, a Fair SA curve or an item-response curve.

    Parameters
    ----------
    x, y : tuple of float
        Coordinates, same length.
    x_label, y_label : str
        Axis names for reports.
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
                f"Curve x and y must have the same length; got len(x)={len(x)}, len(y)={len(y)}."
            )
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "y", y)
        if self.interval is not None:
            object.__setattr__(self, "interval", tuple(_interval(p) for p in self.interval))

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dictionary."""
        return {
            "x": [encode_float(v) for v in self.x],
            "y": [encode_float(v) for v in self.y],
            "x_label": self.x_label,
            "y_label": self.y_label,
            "interval": None
            if self.interval is None
            else [[encode_float(a), encode_float(b)] for a, b in self.interval],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Curve:
        """Rebuild a :class:`Curve` from :meth:`to_dict` output."""
        interval = data.get("interval")
        return cls(
            x=tuple(decode_float(v) for v in data["x"]),
            y=tuple(decode_float(v) for v in data["y"]),
            x_label=data.get("x_label", ""),
            y_label=data.get("y_label", ""),
            interval=None
            if interval is None
            else tuple((decode_float(a), decode_float(b)) for a, b in interval),
        )


@final
@dataclass(frozen=True)
class Matrix:
    """A labelled matrix, such as Fair SA's AUC matrix (rows subgroups, columns perturbations).

    Parameters
    ----------
    rows, columns : tuple of group keys
        Row and column labels.
    values : tuple of tuple of float
        ``values[i][j]`` is the cell of row ``rows[i]`` and column ``columns[j]``.
    intervals : tuple of tuple of (float, float) or None, optional
        Confidence interval of each cell, same shape as ``values``; a cell whose interval
        could not be computed holds None. None (the default) when none were computed.
    """

    rows: tuple[GroupKey, ...]
    columns: tuple[GroupKey, ...]
    values: tuple[tuple[float, ...], ...]
    intervals: tuple[tuple[tuple[float, float] | None, ...], ...] | None = None

    def __post_init__(self) -> None:
        rows = tuple(normalize_group(r) for r in self.rows)
        columns = tuple(normalize_group(c) for c in self.columns)
        values = tuple(tuple(float(_scalar(v)) for v in row) for row in self.values)
        if len(values) != len(rows) or any(len(row) != len(columns) for row in values):
            raise FairnessConfigError(
                f"Matrix values must have shape ({len(rows)}, {len(columns)}) to match its "
                f"labels; got {len(values)} rows of lengths {[len(r) for r in values]}."
            )
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "values", values)
        if self.intervals is not None:
            try:
                cells = tuple(tuple(_interval(p) for p in row) for row in self.intervals)
            except (TypeError, ValueError, FairnessConfigError):
                raise FairnessConfigError(
                    f"Matrix intervals must hold one (low, high) pair of numbers or None per "
                    f"cell; got intervals={self.intervals!r}."
                ) from None
            if [len(row) for row in cells] != [len(row) for row in values]:
                raise FairnessConfigError(
                    f"Matrix intervals must have the shape of its values ({len(rows)}, "
                    f"{len(columns)}), one (low, high) pair or None per cell; got "
                    f"{len(cells)} rows of lengths {[len(r) for r in cells]}."
                )
            object.__setattr__(self, "intervals", cells)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dictionary (``"intervals"`` only when there are some)."""
        out: dict[str, Any] = {
            "rows": [_encode_key(r) for r in self.rows],
            "columns": [_encode_key(c) for c in self.columns],
            "values": [[encode_float(v) for v in row] for row in self.values],
        }
        if self.intervals is not None:
            out["intervals"] = [[None if p is None else [encode_float(p[0]), encode_float(p[1])]
                                 for p in row] for row in self.intervals]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Matrix:
        """Rebuild a :class:`Matrix` from :meth:`to_dict` output."""
        return cls(
            rows=tuple(normalize_group(r) for r in data["rows"]),
            columns=tuple(normalize_group(c) for c in data["columns"]),
            values=tuple(tuple(decode_float(v) for v in row) for row in data["values"]),
            intervals=None if data.get("intervals") is None else tuple(
                tuple(None if p is None else (decode_float(p[0]), decode_float(p[1]))
                      for p in row) for row in data["intervals"]),
        )


@final
@dataclass(frozen=True)
class IndicatorResult:
    """What every indicator returns.

    Parameters
    ----------
    name : str
        The indicator (``"group_metrics"``, ``"precision_at_k"``, ...).
    metric : str
        What ``value`` and the group values measure (``"accuracy"``, ``"nme"``, ...).
    value : float
        The headline number.
    groups : tuple of GroupStat
        One entry per group, in a stable order.
    stats : mapping of str to float
        Named scalars (``effect_size``, ``p_value``, ``variance``, ``DA``, ...).
    intervals : mapping of str to (float, float)
        Confidence intervals of ``value`` (key ``"value"``), the ``"gap"``, the
        ``"ratio"`` or any stat, where computed.
    curves : mapping of str to Curve
        Sweeps and curves the family has.
    matrices : mapping of str to Matrix
        Matrices the family has (e.g. ``"auc"``).
    tables : mapping of str to tuple of dict
        Detail tables (rows of JSON scalars), e.g. amplification per attribute set.
    params : mapping
        Everything needed to recompute the result, seed included.
    higher_is_better : bool
        Direction of ``metric``: decides the best and worst group.
    min_group_size : int
        Groups with fewer units are ``excluded`` from gaps and worst-group limits.
    at : float, int or None
        The coordinate (threshold τ, K or level) this result is computed at, if any.
    slices : tuple of IndicatorResult
        The same indicator at other coordinates; see :meth:`select`.
    notes : tuple of str
        Remarks for reports (e.g. rows dropped while validating).
    replicates : mapping of str to tuple of float
        Bootstrap replicates of ``"value"``, ``"gap"`` and ``"ratio"`` (those the
        indicator resamples), in draw order. Two results with the same ``seed`` and
        ``bootstrap_plan`` in their params were drawn on the same resampled units, so a
        regression check pairs them: the change is bootstrapped, not each side alone.
        Kept to float32 precision and left out of ``==`` (a replicate may be NaN).
    """

    name: str
    metric: str
    value: float
    groups: tuple[GroupStat, ...] = ()
    stats: Mapping[str, float] = field(default_factory=dict)
    intervals: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    curves: Mapping[str, Curve] = field(default_factory=dict)
    matrices: Mapping[str, Matrix] = field(default_factory=dict)
    tables: Mapping[str, tuple[Mapping[str, Any], ...]] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    higher_is_better: bool = True
    min_group_size: int = 30
    at: float | int | None = None
    slices: tuple[IndicatorResult, ...] = ()
    notes: tuple[str, ...] = ()
    replicates: Mapping[str, tuple[float, ...]] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", float(_scalar(self.value)))
        object.__setattr__(self, "replicates", {  # float32, as stored: exact round trips
            str(k): tuple(array("f", map(float, v))) for k, v in self.replicates.items()})
        object.__setattr__(self, "groups", tuple(self.groups))
        object.__setattr__(
            self, "stats", {str(k): float(_scalar(v)) for k, v in self.stats.items()}
        )
        object.__setattr__(
            self, "intervals", {str(k): _interval(v) for k, v in self.intervals.items()}
        )
        object.__setattr__(
            self,
            "tables",
            {
                str(k): tuple(
                    {c if type(c) is str else str(c): _cell(v) for c, v in row.items()}
                    for row in rows
                )
                for k, rows in self.tables.items()
            },
        )
        object.__setattr__(self, "params", _jsonable(dict(self.params)))
        object.__setattr__(self, "min_group_size", int(self.min_group_size))
        object.__setattr__(self, "at", _scalar(self.at))
        object.__setattr__(self, "slices", tuple(self.slices))
        object.__setattr__(self, "notes", tuple(self.notes))
        labels = [g.group for g in self.groups]
        if len(set(labels)) != len(labels):
            dupes = sorted({group_label(k) for k in labels if labels.count(k) > 1})
            raise FairnessConfigError(
                f"IndicatorResult {self.name!r} lists a group more than once: {dupes}."
            )

    # -- groups -----------------------------------------------------------------------
    @property
    def included_groups(self) -> tuple[GroupStat, ...]:
        """Groups that count for gaps and worst-group limits (not excluded, value defined)."""
        return tuple(g for g in self.groups if not g.excluded and not math.isnan(g.value))

    @property
    def excluded_groups(self) -> tuple[GroupStat, ...]:
        """Groups left out of the gap because ``n < min_group_size``."""
        return tuple(g for g in self.groups if g.excluded)

    @property
    def best_group(self) -> GroupStat | None:
        """The included group with the best value, by ``higher_is_better``."""
        included = self.included_groups
        if not included:
            return None
        pick = max if self.higher_is_better else min
        return pick(included, key=lambda g: g.value)

    @property
    def worst_group(self) -> GroupStat | None:
        """The included group with the worst value, by ``higher_is_better``."""
        included = self.included_groups
        if not included:
            return None
        pick = min if self.higher_is_better else max
        return pick(included, key=lambda g: g.value)

    @property
    def gap(self) -> float:
        """``max − min`` of the included group values; NaN with fewer than two."""
        values = [g.value for g in self.included_groups]
        if len(values) < 2:
            return math.nan
        return max(values) - min(values)

    @property
    def ratio(self) -> float:
        """``min / max`` of the included group values, in [0, 1].

        NaN with fewer than two included groups or negative values; 1 when all are 0.
        """
        values = [g.value for g in self.included_groups]
        if len(values) < 2 or min(values) < 0:
            return math.nan
        high = max(values)
        if high == 0:
            return 1.0
        return min(values) / high

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
        raise KeyError(
            f"{key!r} is not a group of {self.name!r}; groups: {[g.group for g in self.groups]}"
        )

    # -- slices -----------------------------------------------------------------------
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
            When ``at`` is not one of :attr:`coordinates`.
        """
        for candidate in (self, *self.slices):
            if candidate.at is not None and math.isclose(
                float(candidate.at), float(at), rel_tol=1e-9, abs_tol=1e-12
            ):
                return candidate if candidate is self else replace(candidate, slices=())
        available = ", ".join(repr(c) for c in self.coordinates) or "none"
        raise FairnessConfigError(
            f"at={at!r} is not a coordinate of {self.name!r} ({self.metric}); "
            f"available: {available}. Pick one of those, or compute the indicator at {at!r}."
        )

    # -- export -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dictionary (see :data:`SCHEMA_VERSION`)."""
        return {
            "schema": SCHEMA_VERSION,
            "name": self.name,
            "metric": self.metric,
            "value": encode_float(self.value),
            "higher_is_better": self.higher_is_better,
            "min_group_size": self.min_group_size,
            "at": encode_float(self.at) if isinstance(self.at, float) else self.at,
            "groups": [g.to_dict() for g in self.groups],
            "stats": {k: encode_float(v) for k, v in self.stats.items()},
            "intervals": {
                k: [encode_float(a), encode_float(b)] for k, (a, b) in self.intervals.items()
            },
            "curves": {k: c.to_dict() for k, c in self.curves.items()},
            "matrices": {k: m.to_dict() for k, m in self.matrices.items()},
            "tables": {
                k: [{c: _encode_cell(v) for c, v in row.items()} for row in rows]
                for k, rows in self.tables.items()
            },
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
                f"of pytest-fairness reads schema {SCHEMA_VERSION}. Upgrade pytest-fairness."
            )
        return cls(
            name=data["name"],
            metric=data["metric"],
            value=decode_float(data["value"]),
            higher_is_better=data.get("higher_is_better", True),
            min_group_size=data.get("min_group_size", 30),
            at=_decode_cell(data.get("at")),
            groups=tuple(GroupStat.from_dict(g) for g in data.get("groups", ())),
            stats={k: decode_float(v) for k, v in data.get("stats", {}).items()},
            intervals={
                k: (decode_float(a), decode_float(b))
                for k, (a, b) in data.get("intervals", {}).items()
            },
            curves={k: Curve.from_dict(c) for k, c in data.get("curves", {}).items()},
            matrices={k: Matrix.from_dict(m) for k, m in data.get("matrices", {}).items()},
            tables={
                k: tuple({c: _decode_cell(v) for c, v in row.items()} for row in rows)
                for k, rows in data.get("tables", {}).items()
            },
            params=data.get("params", {}),
            slices=tuple(cls.from_dict(s) for s in data.get("slices", ())),
            notes=tuple(data.get("notes", ())),
            replicates={k: unpack_replicates(v, where=f"replicates[{k!r}]")
                        for k, v in data.get("replicates", {}).items()},
        )

    def frame(self) -> pd.DataFrame:
        """Return the per-group table as a pandas DataFrame.

        Columns: ``group``, ``n``, ``value``, ``delta_to_best``, ``interval_low``,
        ``interval_high``, ``excluded`` and one column per per-group stat.
        """
        import pandas as pd

        best = self.best_group
        rows = []
        for g in self.groups:
            low, high = g.interval if g.interval is not None else (math.nan, math.nan)
            rows.append(
                {
                    "group": g.group,
                    "n": g.n,
                    "value": g.value,
                    "delta_to_best": g.value - best.value if best is not None else math.nan,
                    "interval_low": low,
                    "interval_high": high,
                    "excluded": g.excluded,
                    **g.stats,
                }
            )
        columns = ["group", "n", "value", "delta_to_best", "interval_low", "interval_high",
                   "excluded"]
        extra = sorted({k for g in self.groups for k in g.stats})
        return pd.DataFrame(rows, columns=columns + extra)


def iter_results(obj: Any) -> Iterable[tuple[str | None, IndicatorResult]]:
    """Yield ``(key, result)`` from a result, a sequence of results or a mapping of them.

    Returns nothing for objects that hold no :class:`IndicatorResult`.
    """
    if isinstance(obj, IndicatorResult):
        yield None, obj
    elif isinstance(obj, Mapping):
        for key, value in obj.items():
            if isinstance(value, IndicatorResult):
                yield str(key), value
    elif isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):
        for value in obj:
            if isinstance(value, IndicatorResult):
                yield None, value


# -- results in records (JSON form) --------------------------------------------------------


def result_id(data: Mapping[str, Any]) -> str:
    """Name of a result within its test: its dict key, else ``indicator (metric)`` [@ at].

    ``data`` is :meth:`IndicatorResult.to_dict` output with the ``key`` the test gave it.

    Examples
    --------
    >>> result_id({"key": None, "name": "ieat", "metric": "association", "at": None})
    'ieat (association)'
    >>> result_id({"key": "overall", "name": "group_metrics", "metric": "accuracy"})
    'overall'
    """
    if data.get("key") is not None:
        return str(data["key"])
    text = f"{data['name']} ({data['metric']})"
    at = data.get("at")
    if at is not None:
        text += f" @ {at:g}" if isinstance(at, (int, float)) else f" @ {at}"
    return text
