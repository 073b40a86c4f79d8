"""Validation and grouping shared by every indicator family.

One place for the checks every family needs (lengths, NaN, group vectors) so that each
message reads the same: the parameter, the offending value or row, and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_fairness.errors import FairnessConfigError, InsufficientDataError, InvalidDataError
from pytest_fairness.results import GroupKey, GroupStat, group_label, normalize_group

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "as_1d",
    "check_min_group_size",
    "check_same_length",
    "check_variant",
    "encode_groups",
    "exclusion_notes",
    "group_array",
    "make_group_stats",
    "sort_keys",
]

VARIANTS = ("paper", "reference")


def check_variant(variant: str, function: str) -> str:
    """Validate ``variant=`` (``"paper"`` or ``"reference"``)."""
    if variant not in VARIANTS:
        raise FairnessConfigError(
            f"variant must be 'paper' (the published definition) or 'reference' (the "
            f"authors' released code) in {function}; got variant={variant!r}."
        )
    return variant


def check_min_group_size(min_group_size: Any) -> int:
    """Validate ``min_group_size`` (a positive int)."""
    if isinstance(min_group_size, bool) or not isinstance(min_group_size, (int, np.integer)):
        raise FairnessConfigError(
            f"min_group_size must be an int >= 1; got min_group_size={min_group_size!r} "
            f"(type={type(min_group_size).__name__})."
        )
    if min_group_size < 1:
        raise FairnessConfigError(
            f"min_group_size must be >= 1; got min_group_size={min_group_size!r}."
        )
    return int(min_group_size)


_NEVER_MISSING = {str, int, bool, bytes, tuple}


def _is_missing(value: Any) -> bool:
    """None, a NaN of any float type, pandas' NA or NaT."""
    if value is None:
        return True
    if isinstance(value, (float, np.floating)):
        return bool(value != value)
    return type(value).__name__ in ("NAType", "NaTType")


def _first_nan_row(values: NDArray[Any]) -> int | None:
    if values.dtype.kind == "f":
        bad = np.flatnonzero(np.isnan(values))
    elif values.dtype.kind == "O":
        if set(map(type, values)) <= _NEVER_MISSING:  # the common case, checked in C
            return None
        bad = np.flatnonzero([_is_missing(v) for v in values])
    else:
        return None
    return int(bad[0]) if bad.size else None


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
            f"{name} must be one-dimensional (one value per image); got shape {array.shape}."
        )
    if array.size == 0:
        raise InsufficientDataError(f"{name} is empty; pass at least one value per group.")
    if not allow_nan:
        row = _first_nan_row(array)
        if row is not None:
            raise InvalidDataError(
                f"{name} contains NaN/None at row {row} ({int(_count_nan(array))} missing in "
                "all); drop or impute those rows before computing the indicator."
            )
    return array


def _count_nan(array: NDArray[Any]) -> int:
    if array.dtype.kind == "f":
        return int(np.isnan(array).sum())
    return sum(_is_missing(v) for v in array)


def check_same_length(**arrays: Any) -> int:
    """Return the common length of the named arrays, or raise naming every length."""
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"len({k})={v}" for k, v in lengths.items())
        raise InvalidDataError(
            f"Inputs must have one entry per image, but lengths differ: {shown}. "
            "Align them (same images, same order) before calling the indicator."
        )
    return next(iter(lengths.values()))


def sort_keys(keys: list[GroupKey]) -> list[GroupKey]:
    """Sort group keys naturally, falling back to type name and text for mixed types."""
    try:
        return sorted(keys)  # type: ignore[type-var,unused-ignore]
    except TypeError:
        return sorted(keys, key=lambda k: (type(k).__name__, str(k)))


def group_array(values: Any, name: str) -> NDArray[Any]:
    """Group labels as an array without numpy's silent coercions.

    ``np.asarray([1, "1"])`` turns both into the string ``'1'`` and ``[True, 1]`` into two
    ones; a Python sequence of mixed types is therefore kept as an object vector, where
    :func:`_check_labels` can tell its values apart. Ragged sequences also become object
    vectors (numpy refuses them).
    """
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
                raise InvalidDataError(
                    f"{name} holds sequences (e.g. {_first_sequence(values)!r}); a list of "
                    "lists is read as a one-hot matrix (0/1, one 1 per row), which these are "
                    "not. For intersectional groups pass a DataFrame, a mapping of columns or "
                    "a pandas Series of tuples."
                )
            return array
        if len(kinds) > 1:
            out = np.empty(len(values), dtype=object)
            for i, v in enumerate(values):
                out[i] = v
            return out
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


def _first_sequence(values: Any) -> Any:
    return next(v for v in values if isinstance(v, (list, tuple, np.ndarray)))


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
    """Refuse labels that are missing, unhashable, or that would merge or print alike.

    Labels of one plain type (all ``str``, all ``int``, ...) are checked in one step; the
    row-by-row check runs only for mixed types and tuples.
    """
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
                "intersectional groups). Drop or fix that row."
            ) from None
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
                    f"Give the column one type (e.g. all strings: {name}.astype(str))."
                )


def encode_groups(
    groups: Any, n: int, *, name: str = "groups"
) -> tuple[list[GroupKey], NDArray[np.intp]]:
    """Encode group memberships as sorted keys and one integer code per row.

    Parameters
    ----------
    groups : array-like, pandas Series, pandas DataFrame, mapping of arrays, or 2-D one-hot array
        A label per row; a DataFrame or a mapping of columns gives intersectional groups
        (tuples of the column values, in column order), as does a pandas Series (or object
        array) of tuples; a 2-D array of 0/1 (or a list of 0/1 lists) with one 1 per row is
        one-hot, its groups being the column indices.
    n : int
        The number of rows the other inputs have.
    name : str
        The parameter name, for messages.

    Returns
    -------
    keys : list
        The sorted distinct groups.
    codes : ndarray of intp
        ``keys[codes[i]]`` is the group of row ``i``.

    Raises
    ------
    InvalidDataError
        When a label is missing (NaN/None) or not a label (a dict, list or set), or when
        values of different types would merge (``True`` and ``1``) or print alike (``1`` and
        ``"1"``); the message names the parameter, the rows and the values.
    """
    if isinstance(groups, Mapping) or hasattr(groups, "columns"):
        columns = list(groups.columns) if hasattr(groups, "columns") else list(groups)
        if not columns:
            raise InvalidDataError(f"{name} has no columns; pass at least one attribute.")
        parts = [as_1d(group_array(groups[c], f"{name}[{c!r}]"), f"{name}[{c!r}]")
                 for c in columns]
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
                    "1 per row); pass a label vector, or a DataFrame for intersectional groups."
                )
            valid = np.isin(array, (0, 1)).all(axis=1) & (array.sum(axis=1) == 1)
            if not valid.all():
                bad = int(np.flatnonzero(~valid)[0])
                raise InvalidDataError(
                    f"{name} is a 2-D array, read as one-hot, but row {bad} is "
                    f"{array[bad].tolist()}: each row needs exactly one 1. Pass a label "
                    "vector, or a DataFrame for intersectional groups."
                )
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
    keys: Sequence[GroupKey],
    ns: Sequence[int] | NDArray[Any],
    values: Sequence[float] | NDArray[Any],
    *,
    min_group_size: int,
    intervals: Sequence[tuple[float, float] | None] | None = None,
    stats: Sequence[Mapping[str, float]] | None = None,
) -> tuple[GroupStat, ...]:
    """Build one :class:`GroupStat` per group, marking the small ones ``excluded``."""
    return tuple(
        GroupStat(
            group=key,
            n=int(ns[i]),
            value=float(values[i]),
            interval=None if intervals is None else intervals[i],
            excluded=int(ns[i]) < min_group_size,
            stats={} if stats is None else stats[i],
        )
        for i, key in enumerate(keys)
    )


def exclusion_notes(groups: Sequence[GroupStat], min_group_size: int) -> tuple[str, ...]:
    """Say which groups were left out of the gap, for reports."""
    small = [g for g in groups if g.excluded]
    if not small:
        return ()
    shown = ", ".join(f"{group_label(g.group)} (n={g.n})" for g in small)
    return (f"{len(small)} group(s) below min_group_size={min_group_size} are shown but "
            f"excluded from the gap: {shown}",)
