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


def _first_nan_row(values: NDArray[Any]) -> int | None:
    if values.dtype.kind == "f":
        bad = np.flatnonzero(np.isnan(values))
    elif values.dtype.kind == "O":
        bad = np.flatnonzero([v is None or (isinstance(v, float) and v != v) for v in values])
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
    return sum(v is None or (isinstance(v, float) and v != v) for v in array)


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


def encode_groups(
    groups: Any, n: int, *, name: str = "groups"
) -> tuple[list[GroupKey], NDArray[np.intp]]:
    """Encode group memberships as sorted keys and one integer code per row.

    Parameters
    ----------
    groups : array-like, pandas Series, pandas DataFrame, mapping of arrays, or 2-D one-hot array
        A label per row; a DataFrame or a mapping of columns gives intersectional groups
        (tuples of the column values, in column order); a 2-D numpy array of 0/1 with one 1
        per row is one-hot, its groups being the column indices.
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
    """
    if isinstance(groups, Mapping) or hasattr(groups, "columns"):
        columns = list(groups.columns) if hasattr(groups, "columns") else list(groups)
        if not columns:
            raise InvalidDataError(f"{name} has no columns; pass at least one attribute.")
        parts = [as_1d(groups[c], f"{name}[{c!r}]") for c in columns]
        check_same_length(**{f"{name}[{c!r}]": p for c, p in zip(columns, parts)}, rows=range(n))
        if len(parts) == 1:
            return encode_groups(parts[0], n, name=f"{name}[{columns[0]!r}]")
        labels = [normalize_group(tuple(p[i] for p in parts)) for i in range(n)]
    else:
        array = np.asarray(groups.to_numpy() if hasattr(groups, "to_numpy") else groups)
        if array.ndim == 2 and array.shape[1] > 1:
            check_same_length(**{name: array}, rows=range(n))
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
