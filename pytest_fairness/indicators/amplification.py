"""Bias amplification: BiasAmp, BiasAmp→, Multi_MALS and Multi→ (seed 001).

A model amplifies bias when its predictions tie a group to an attribute (or a set of
attributes) more strongly than the training data did. Four indicators:

* :func:`bias_amp` — Zhao et al. 2017, single attributes, signed.
* :func:`directional_bias_amp` — Wang & Russakovsky 2021 (BiasAmp→), G→M or M→G, signed.
* :func:`multi_mals` — seed 001, undirected, over attribute *combinations*: mean |Δ|
  and the variance of Δ.
* :func:`multi_directional` — seed 001, directional, over attribute combinations.

Attribute combinations
    ``M`` holds the attribute sets with ``min_size <= |m| <= max_size`` that occur in at
    least ``min_count`` images of the training ground truth and of the test ground truth
    (an image "has" ``m`` when all of ``m``'s attributes are 1; every image belongs to one
    group, so this is ``Σ_g co-occur(m, g) >= min_count``). Only combinations present in
    the data are counted, never all ``2^n`` subsets: each image's label set is expanded
    (vectorised, per block of images with equal label count) into its subsets up to
    ``max_size``, each subset gets its lexicographic rank among the ``C(n, s)``
    combinations of its size, and one ``bincount`` over ``rank · |G| + group`` gives a
    dense table from which M is found and counted (a binary search replaces the table
    when it would exceed ``DENSE_BINS`` cells; packed bitsets, one AND and a popcount per
    combination over 64 images at a time, replace enumeration when images carry so many
    labels that it would cost more).

Shared work between calls
    What is derived from an attribute matrix (label lists, subsets, count tables) is kept
    in a small cache (``CACHE_ENTRIES`` matrices, ``CACHE_BYTES``) found by *content*: an
    entry holds a private copy of its matrix and is reused only when the new matrix equals
    it cell for cell, so ``multi_mals`` followed by ``multi_directional`` (or both
    directions) on the same data pay for the expansion once, and mutating an array between
    calls can never return stale numbers. ``clear_cache()`` empties it.

Tables
    ``tables["cells"]`` holds one row per group × combination, largest |Δ| first. It keeps
    the 100 largest by default (``table_rows``; a note says how many cells were left out)
    because every row is copied into the frozen result: ``table_rows=None`` keeps them all.
    The numbers and the "most amplified" note never depend on ``table_rows``.

``variant="reference"`` reproduces the released code (DESIGN.md §2.2); see each
function's notes. Its group layout is the released code's: for the SonyResearch code
(``multi_mals``, ``multi_directional``) the |G| groups become |G| − 1 indicator columns,
one per group after the first in sorted order (pass the released code's 0/1 group column
as the labels and the numbers match); for the Princeton code (``directional_bias_amp``)
every group is a column.

Several prediction sets (seeds, checkpoints) can be passed at once as a list of
prediction matrices: every number is then the mean over the runs, and
``stats[name + "_std"]`` and ``intervals[name]`` (mean ± 1.96·std/√runs, the
released code's ``conf_interval``) give the spread.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_fairness.errors import FairnessConfigError, InsufficientDataError, InvalidDataError
from pytest_fairness.indicators._common import (
    check_min_group_size,
    check_variant,
    encode_groups,
    exclusion_notes,
    make_group_stats,
    sort_keys,
)
from pytest_fairness.results import GroupKey, IndicatorResult, group_label

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["bias_amp", "directional_bias_amp", "multi_directional", "multi_mals"]

#: Most subsets the itemset expansion may produce before asking for a smaller max_size.
MAX_SUBSETS = 50_000_000
#: Most combinations listed in ``notes``.
N_NOTED = 3
#: Default rows of ``tables["cells"]`` (largest |Δ| first); ``table_rows=None`` keeps all.
TABLE_ROWS = 100
_DIRECTIONS = {"G->M": "G->M", "G→M": "G->M", "M->G": "M->G", "M→G": "M->G"}


# -- validation ---------------------------------------------------------------------------


def _attr_names(values: Any, n_attrs: int, names: Any) -> list[str]:
    if names is None:
        columns = getattr(values, "columns", None)
        names = list(columns) if columns is not None else list(range(n_attrs))
    names = [str(x) for x in names]
    if len(names) != n_attrs:
        raise FairnessConfigError(
            f"attribute_names has {len(names)} names but the attribute matrices have "
            f"{n_attrs} columns; pass one name per column."
        )
    if len(set(names)) != len(names):
        dupes = sorted({x for x in names if names.count(x) > 1})
        raise FairnessConfigError(
            f"attribute_names must be unique; {dupes} appear more than once."
        )
    return list(names)


def _binary(values: Any, name: str, threshold: Any = None) -> NDArray[np.bool_]:
    """Return a (images, attributes) bool matrix, or raise naming the bad cell."""
    array = np.asarray(values.to_numpy() if hasattr(values, "to_numpy") else values)
    if array.ndim != 2:
        raise InvalidDataError(
            f"{name} must be a 2-D 0/1 matrix of shape (images, attributes); got shape "
            f"{array.shape}."
        )
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise InsufficientDataError(
            f"{name} has shape {array.shape}; pass at least one image and one attribute."
        )
    if array.dtype == np.bool_:
        return array
    if threshold is None and array.dtype.kind in "iu" and array.min() >= 0 and (
        array.max() <= 1
    ):
        return array != 0  # 0/1 integers: two reductions instead of a cell-wise check
    if array.dtype.kind not in "biuf":
        raise InvalidDataError(
            f"{name} must hold numbers (0/1 labels or scores); got dtype {array.dtype}."
        )
    if array.dtype.kind == "f":
        bad = np.argwhere(~np.isfinite(array))
        if bad.size:
            r, c = (int(v) for v in bad[0])
            raise InvalidDataError(
                f"{name} has a non-finite value {array[r, c].item()!r} at row {r}, column {c} "
                f"({len(bad)} in all); drop those images or fill in the labels."
            )
    if threshold is not None:
        limit = np.asarray(threshold, dtype=np.float64)
        return np.asarray(array >= limit, dtype=np.bool_)
    binary = (array == 0) | (array == 1)
    if not binary.all():
        r, c = (int(v) for v in np.argwhere(~binary)[0])
        hint = (" pass threshold=<score cut-off> to binarise scores," if name.startswith("pred")
                else "")
        raise InvalidDataError(
            f"{name} must be a 0/1 matrix, but row {r}, column {c} is "
            f"{array[r, c].item()!r};{hint} "
            "or convert the labels to 0/1."
        )
    return np.asarray(array, dtype=np.bool_)


def _check_threshold(threshold: Any, n_attrs: int) -> Any:
    if threshold is None:
        return None
    try:
        array = None if isinstance(threshold, bool) else np.asarray(threshold, dtype=np.float64)
    except (TypeError, ValueError):
        array = None
    if array is None or array.ndim > 1 or (array.ndim == 1 and array.shape[0] != n_attrs) or (
        not np.isfinite(array).all()
    ):
        raise FairnessConfigError(
            f"threshold must be a finite number or one number per attribute ({n_attrs}); "
            f"got threshold={threshold!r}."
        )
    return array


def _pred_runs(values: Any) -> list[Any]:
    """Prediction matrices: one (2-D) or several runs (a 3-D array or a list of 2-D)."""
    if values is None:
        return []
    if isinstance(values, np.ndarray) and values.ndim == 3:
        return list(values)
    if isinstance(values, (list, tuple)) and values and all(np.ndim(v) == 2 for v in values):
        return list(values)
    return [values]


def _group_runs(values: Any, n_test: int) -> list[Any]:
    """Predicted groups: one label vector, or a list of them (one per run).

    A list counts as runs when each element is a sequence of ``n_test`` labels and the list
    itself is not ``n_test`` long (a nested list of ``n_test`` one-hot rows is one run).
    """
    if values is None:
        return []
    if isinstance(values, (list, tuple)) and values and len(values) != n_test and all(
        not isinstance(v, (str, bytes)) and np.ndim(v) >= 1 and len(v) == n_test for v in values
    ):
        return list(values)
    return [values]


@dataclass
class _Groups:
    keys: list[GroupKey]
    train: NDArray[np.intp]
    test: NDArray[np.intp] | None
    preds: list[NDArray[np.intp]] = field(default_factory=list)




def _declared(groups: Any, n: int, name: str) -> tuple[list[GroupKey], NDArray[np.intp]]:
    keys, codes = encode_groups(groups, n, name=name)
    array = None if isinstance(groups, Mapping) or hasattr(groups, "columns") else np.asarray(
        groups
    )
    if array is not None and array.ndim == 2 and array.shape[1] > 1:
        empty = sorted(set(range(array.shape[1])) - set(keys))
        if empty:
            raise InsufficientDataError(
                f"{name} is one-hot with {array.shape[1]} group columns, but column(s) "
                f"{empty} have no rows: every group needs images. Drop the empty columns."
            )
    return keys, codes


def _encode_all(
    train_groups: Any,
    n_train: int,
    test_groups: Any,
    n_test: int | None,
    pred_groups: list[Any],
    n_pred: int,
    *,
    need_test: bool,
) -> _Groups:
    train_keys, train_codes = _declared(train_groups, n_train, "train_groups")
    keys = list(train_keys)
    test_keys: list[GroupKey] = []
    test_codes = None
    if test_groups is not None and n_test is not None:
        test_keys, test_codes = _declared(test_groups, n_test, "test_groups")
        keys = sort_keys(list(dict.fromkeys([*train_keys, *test_keys])))
    if len(keys) < 2:
        raise InsufficientDataError(
            f"the groups have a single value {group_label(keys[0])!r}: amplification "
            "compares groups, so it needs at least two. Check the group column."
        )
    index = {k: i for i, k in enumerate(keys)}
    for split, split_keys in (("train_groups", train_keys), ("test_groups", test_keys)):
        if split == "test_groups" and not need_test:
            continue
        missing = [k for k in keys if k not in set(split_keys)]
        if missing:
            raise InsufficientDataError(
                f"group {group_label(missing[0])!r} has no rows in {split} (it occurs in the "
                "other split); every group needs images in both train and test. Drop the "
                "group or add its images."
            )
    remap_train = np.array([index[k] for k in train_keys], dtype=np.intp)
    remap_test = np.array([index[k] for k in test_keys], dtype=np.intp)
    out = _Groups(keys, remap_train[train_codes],
                  None if test_codes is None else remap_test[test_codes])
    for r, groups in enumerate(pred_groups):
        name = "pred_groups" if len(pred_groups) == 1 else f"pred_groups[{r}]"
        pred_keys, pred_codes = encode_groups(groups, n_pred, name=name)
        unknown = [k for k in pred_keys if k not in index]
        if unknown:
            raise InvalidDataError(
                f"{name} predicts group {group_label(unknown[0])!r}, which is not a group of "
                f"the ground truth ({', '.join(map(group_label, keys))}); use the same labels."
            )
        remap = np.array([index[k] for k in pred_keys], dtype=np.intp)
        out.preds.append(remap[pred_codes])
    return out


def _check_table_rows(table_rows: Any) -> int | None:
    if table_rows is None:
        return None
    if isinstance(table_rows, bool) or not isinstance(table_rows, (int, np.integer)) or (
        table_rows < 0
    ):
        raise FairnessConfigError(
            f"table_rows must be None (every cell) or an int >= 0 (default {TABLE_ROWS}); got "
            f"table_rows={table_rows!r}."
        )
    return int(table_rows)


def _check_sizes(min_size: Any, max_size: Any, min_count: Any) -> tuple[int, int | None, int]:
    def _int(value: Any, name: str, low: int) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise FairnessConfigError(
                f"{name} must be an int >= {low}; got {name}={value!r}."
            )
        return int(value)

    min_size = _int(min_size, "min_size", 1)
    if max_size is not None:
        max_size = _int(max_size, "max_size", 1)
        if max_size < min_size:
            raise FairnessConfigError(
                f"max_size={max_size} is below min_size={min_size}; pass max_size >= min_size "
                "(or None for no limit)."
            )
    return min_size, max_size, _int(min_count, "min_count", 1)


# -- itemset counting -----------------------------------------------------------------------

#: Most bins (combinations of one size × groups) of a dense count table. Above it, the
#: enumerated subsets are matched to M by binary search instead.
DENSE_BINS = 1 << 22


def _label_lists(
    x: NDArray[np.bool_],
) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp]]:
    """CSR view of a 0/1 matrix: per-row label counts, row starts, column indices."""
    flat = np.flatnonzero(x)  # row-major: each row's columns come out sorted
    rows, cols = np.divmod(flat, x.shape[1])
    counts = np.bincount(rows, minlength=x.shape[0])
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return counts, starts, cols


def _n_subsets(counts: NDArray[np.intp], sizes: Sequence[int]) -> int:
    """How many subsets with a size in ``sizes`` the label sets of ``counts`` labels have."""
    hist = np.bincount(counts) if len(counts) else np.zeros(1, np.intp)
    return sum(int(f) * sum(math.comb(c, s) for s in sizes)
               for c, f in enumerate(hist.tolist()) if f)


def _binomials(n_attrs: int, top: int) -> NDArray[np.int64] | None:
    """``table[i, j] = C(i, j)`` for ``i <= n_attrs`` and ``j <= top``; None past 62 bits.

    With it a combination ``c_0 < c_1 < … < c_{s-1}`` of ``n`` attributes gets its rank in
    lexicographic order, ``C(n, s) − 1 − Σ_j C(n − 1 − c_j, s − j)`` (the combinatorial
    number system): the ``C(n, s)`` combinations of size ``s`` are numbered without gaps,
    so they can be counted in a dense table, and sorted ranks are sorted combinations.
    """
    top = max(int(top), 1)
    if math.comb(n_attrs, min(top, n_attrs // 2)) >= 2**62:
        return None
    table = np.zeros((n_attrs + 1, top + 1), dtype=np.int64)
    table[:, 0] = 1
    for j in range(1, top + 1):  # C(i, j) = Σ_{t < i} C(t, j − 1)
        table[1:, j] = np.cumsum(table[:-1, j - 1])
    return table


def _keys(combos: NDArray[np.int64], table: NDArray[np.int64] | None) -> NDArray[Any]:
    """One key per combination (rows sorted ascending), ordered like the combinations.

    The lexicographic rank of :func:`_binomials`, or raw big-endian bytes when
    ``table is None`` (more combinations than an int64 can number).
    """
    s = combos.shape[1]
    if table is not None:
        n = table.shape[0] - 1
        keys = np.full(combos.shape[0], table[n, s] - 1, dtype=np.int64)
        for j in range(s):
            keys -= table[n - 1 - combos[:, j], s - j]
        return keys
    flat = np.ascontiguousarray(combos.astype(">i8"))
    return flat.view(np.dtype((np.void, 8 * s))).reshape(-1)


def _decode(keys: NDArray[Any], s: int, table: NDArray[np.int64] | None) -> NDArray[np.int64]:
    """The combinations of :func:`_keys`, shape (keys, s)."""
    if keys.dtype.kind == "V":
        return np.frombuffer(keys.tobytes(), dtype=">i8").reshape(-1, s).astype(np.int64)
    assert table is not None
    n = table.shape[0] - 1
    out = np.empty((keys.shape[0], s), dtype=np.int64)
    rest = table[n, s] - 1 - keys.astype(np.int64)
    for j in range(s):  # largest d with C(d, s − j) <= rest is n − 1 − c_j
        col = table[:, s - j]
        d = np.searchsorted(col, rest, side="right") - 1
        out[:, j] = n - 1 - d
        rest = rest - col[d]
    return out


@lru_cache(maxsize=256)
def _positions(c: int, s: int) -> NDArray[np.intp]:
    """Positions of the size-``s`` subsets of ``c`` sorted labels, shape (C(c, s), s)."""
    out = np.array(list(combinations(range(c), s)), dtype=np.intp).reshape(-1, s)
    out.setflags(write=False)
    return out


@dataclass
class _Subsets:
    """Every size-``s`` subset of every image's label set: its key and its image."""

    keys: NDArray[Any]
    rows: NDArray[np.intp]


def _subsets(
    x: NDArray[np.bool_], sizes: Sequence[int], name: str, table: NDArray[np.int64] | None,
    *, csr: tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp]] | None = None,
) -> dict[int, _Subsets]:
    """Enumerate the subsets of each row's label set with a size in ``sizes``.

    Rows are taken in blocks of equal label count ``c``; a block's subsets of size ``s``
    are a gather with the fixed position table of ``combinations(range(c), s)``, and
    their ranks are sums of gathered binomials (no per-image Python loop).
    """
    counts, starts, cols = _label_lists(x) if csr is None else csr
    total = _n_subsets(counts, sizes)
    if total > MAX_SUBSETS:
        raise FairnessConfigError(
            f"{name} has images with up to {int(counts.max())} labels, so the attribute "
            f"combinations of sizes {min(sizes)}..{max(sizes)} number {total:,} subsets "
            f"(limit {MAX_SUBSETS:,}). Pass a smaller max_size."
        )
    out: dict[int, _Subsets] = {}
    if 1 in sizes and table is not None:  # the rank of {c} is c: the label lists themselves
        out[1] = _Subsets(cols.astype(np.int64), np.repeat(np.arange(len(counts)), counts))
    sizes = [s for s in sizes if s not in out]
    if not sizes:
        return out
    hist = np.bincount(counts) if len(counts) else np.zeros(1, np.intp)
    classes = [c for c in np.flatnonzero(hist).tolist() if c >= min(sizes)]
    fill = {s: 0 for s in sizes}
    for s in sizes:
        total = int(sum(int(hist[c]) * math.comb(c, s) for c in classes))
        out[s] = _Subsets(np.empty(total, np.int64) if table is not None else
                          _keys(np.zeros((0, s), np.int64), None), np.empty(total, np.intp))
    for c in classes:
        usable = [s for s in sizes if s <= c]
        rows = np.flatnonzero(counts == c)
        labels = cols[starts[rows][:, None] + np.arange(c)]
        if table is not None:  # ranked[k] = C(n − 1 − label, k), see _binomials
            flipped = (table.shape[0] - 2) - labels
            ranked = {k: table[:, k][flipped] for k in range(1, max(usable) + 1)}
        for s in usable:
            pos = _positions(c, s)
            lo, hi = fill[s], fill[s] + len(rows) * len(pos)
            fill[s] = hi
            out[s].rows[lo:hi].reshape(len(rows), len(pos))[:] = rows[:, None]
            if table is None:  # keys too wide for an int64: raw bytes
                keys = _keys(labels[:, pos].reshape(-1, s).astype(np.int64), None)
                out[s].keys = np.concatenate([out[s].keys, keys])
                continue
            keys = out[s].keys[lo:hi].reshape(len(rows), len(pos))
            keys[:] = table[-1, s] - 1
            for j in range(s):
                keys -= ranked[s - j][:, pos[:, j]]
    return out


@dataclass
class _Combos:
    """The attribute combinations M, grouped by size, each block in lexicographic order."""

    by_size: dict[int, NDArray[np.int64]]
    n_attrs: int
    table: NDArray[np.int64] | None = None
    _keys: dict[int, NDArray[Any]] = field(default_factory=dict, repr=False)

    @property
    def sizes(self) -> list[int]:
        return sorted(self.by_size)

    def __len__(self) -> int:
        return sum(len(v) for v in self.by_size.values())

    def items(self) -> list[tuple[int, ...]]:
        return [tuple(row) for s in self.sizes for row in self.by_size[s].tolist()]

    def keys(self, s: int) -> NDArray[Any]:
        if s not in self._keys:
            self._keys[s] = _keys(self.by_size[s], self.table)
        return self._keys[s]

    def sizes_array(self) -> NDArray[np.intp]:
        parts = [np.full(len(self.by_size[s]), s, dtype=np.intp) for s in self.sizes]
        return np.concatenate(parts) if parts else np.zeros(1, dtype=np.intp)

    def item(self, index: int) -> tuple[int, ...]:
        """The combination at a position of :meth:`items`."""
        for s in self.sizes:
            block = self.by_size[s]
            if index < len(block):
                return tuple(block[index].tolist())
            index -= len(block)
        raise IndexError(index)

    def labels(self, indices: NDArray[np.intp], names: list[str]) -> list[str]:
        """``"a+b"`` (names sorted) for the combinations at ``indices`` of :meth:`items`."""
        sizes = self.sizes
        ends = np.cumsum([len(self.by_size[s]) for s in sizes])
        which = np.searchsorted(ends, indices, side="right")
        out = []
        for k, i in zip(which.tolist(), indices.tolist()):
            start = int(ends[k - 1]) if k else 0
            items = self.by_size[sizes[k]][i - start].tolist()
            out.append("+".join(sorted(names[a] for a in items)))
        return out


def _pack(x: NDArray[np.bool_]) -> NDArray[np.uint64]:
    """Columns of a (rows, attributes) bool matrix as bitsets of shape (attributes, words)."""
    packed = np.packbits(x.T, axis=1, bitorder="little")
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


def _pack_groups(
    x: NDArray[np.bool_], codes: NDArray[np.intp], n_groups: int
) -> tuple[NDArray[np.uint64], NDArray[np.intp], NDArray[np.intp]]:
    """Each group's images packed 64 to a word: (bits, first word of each group, groups)."""
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes, minlength=n_groups)
    present = np.flatnonzero(sizes)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    blocks, starts, offset = [], [], 0
    for g in present:
        block = _pack(x[order[bounds[g]:bounds[g + 1]]])
        blocks.append(block)
        starts.append(offset)
        offset += block.shape[1]
    return np.concatenate(blocks, axis=1), np.array(starts, dtype=np.intp), present


def _superset_counts(
    items: NDArray[np.int64], n_groups: int,
    packed: tuple[NDArray[np.uint64], NDArray[np.intp], NDArray[np.intp]],
    *, chunk_words: int = 2_000_000,
) -> NDArray[np.int64]:
    """``out[i, g]`` = images of group ``g`` whose labels include combination ``items[i]``.

    Bitsets: the images of each group are packed 64 to a word; a combination's images are
    the AND of its attributes' bitsets, counted with a popcount.
    """
    bits, start_idx, present = packed
    out = np.zeros((len(items), n_groups), dtype=np.int64)
    step = max(1, chunk_words // max(bits.shape[1], 1))
    for lo in range(0, len(items), step):
        part = items[lo:lo + step]
        acc = bits[part[:, 0]]
        for j in range(1, part.shape[1]):
            acc &= bits[part[:, j]]
        pop = np.bitwise_count(acc)
        out[lo:lo + len(part)][:, present] = np.add.reduceat(pop, start_idx, axis=1,
                                                             dtype=np.int64)
    return out


def _searched_counts(
    wanted: NDArray[Any], subsets: _Subsets, codes: NDArray[np.intp], n_groups: int,
) -> NDArray[np.int64]:
    """Per-group counts of ``wanted`` keys among enumerated subsets, by binary search."""
    order = np.argsort(wanted, kind="stable")
    ranked = wanted[order]
    pos = np.searchsorted(ranked, subsets.keys)
    pos[pos == len(ranked)] = 0
    hit = ranked[pos] == subsets.keys
    counts = np.bincount(pos[hit] * n_groups + codes[subsets.rows[hit]],
                         minlength=len(ranked) * n_groups).reshape(len(ranked), n_groups)
    out = np.empty_like(counts)
    out[order] = counts
    return out


class _Matrix:
    """What is derived from one 0/1 attribute matrix, computed once and then reused.

    Its label lists, the enumerated subsets of each image's label set (by size), dense
    count tables and packed bitsets (per group-code vector). Dense tables: every subset
    gets its rank (:func:`_binomials`), and one ``bincount`` over ``rank · |G| + group``
    fills a ``C(n_attrs, s) × |G|`` table that any M is read from.
    """

    def __init__(self, x: NDArray[np.bool_]) -> None:
        self.x: NDArray[np.bool_] = x
        self.table: NDArray[np.int64] | None = None
        self._ranks: bool | None = None  # keys are int ranks (True) or bytes (False)
        self.subsets: dict[int, _Subsets] = {}
        self._csr: tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp]] | None = None
        self._dense: dict[tuple[int, int, bytes], NDArray[np.int64]] = {}
        self._packed: dict[tuple[int, bytes], Any] = {}

    @property
    def csr(self) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp]]:
        """:func:`_label_lists` of the matrix."""
        if self._csr is None:
            self._csr = _label_lists(self.x)
        return self._csr

    def use(self, table: NDArray[np.int64] | None) -> _Matrix:
        """Key subsets with ``table`` (None: bytes) from now on; returns the matrix.

        Ranks do not depend on the table's size limit, so a larger table keeps what was
        enumerated; switching between ranks and bytes starts over.
        """
        ranks = table is not None
        if self._ranks is not None and self._ranks != ranks:
            self.subsets, self._dense = {}, {}
        if ranks != self._ranks or (table is not None and self.table is not None
                                    and table.shape[1] > self.table.shape[1]):
            self.table = table
        self._ranks = ranks
        return self

    def nbytes(self) -> int:
        parts = [self.x, *(self._csr or ()), *self._dense.values()]
        parts += [a for sub in self.subsets.values() for a in (sub.keys, sub.rows)]
        parts += [p[0] for p in self._packed.values()]
        return sum(int(a.nbytes) for a in parts)

    def enumerate(self, sizes: Sequence[int], name: str) -> None:
        new = [s for s in sizes if s not in self.subsets]
        if new:
            self.subsets.update(_subsets(self.x, new, name, self.table, csr=self.csr))

    def dense(self, s: int, codes: NDArray[np.intp], n_groups: int) -> NDArray[np.int64] | None:
        """``table[rank, g]`` for every size-``s`` combination, or None when too large.

        With ``n_groups == 1`` the codes are ignored (totals over all images).
        """
        if self.table is None or s not in self.subsets or s >= self.table.shape[1]:
            return None
        space = int(self.table[-1, s])
        if space * n_groups > DENSE_BINS:
            return None
        key = (s, n_groups, b"" if n_groups == 1 else codes.tobytes())
        if key not in self._dense:
            if len(self._dense) >= 8:
                self._dense.pop(next(iter(self._dense)))
            sub = self.subsets[s]
            bins = sub.keys if n_groups == 1 else sub.keys * n_groups + codes[sub.rows]
            self._dense[key] = np.bincount(bins, minlength=space * n_groups).reshape(
                space, n_groups)
        return self._dense[key]

    def packed(
        self, codes: NDArray[np.intp], n_groups: int
    ) -> tuple[NDArray[np.uint64], NDArray[np.intp], NDArray[np.intp]]:
        key = (n_groups, codes.tobytes())
        if key not in self._packed:
            self._packed = {key: _pack_groups(self.x, codes, n_groups)}
        return self._packed[key]


#: Matrices kept by :func:`_matrix`, and the most bytes they may hold together.
CACHE_ENTRIES = 6
CACHE_BYTES = 256 << 20
_CACHE: list[tuple[tuple[Any, ...], _Matrix]] = []
_CACHE_LOCK = threading.Lock()


def _fingerprint(x: NDArray[np.bool_]) -> tuple[Any, ...]:
    """Cheap summary that tells most different matrices apart (equal ones always match)."""
    return (x.shape, int(np.count_nonzero(x)), hash(x[::61].tobytes()))


def _matrix(x: NDArray[np.bool_]) -> _Matrix:
    """The :class:`_Matrix` of ``x``, reused when an equal matrix was seen recently.

    Found by content, never by identity: a cached entry holds a private copy of its
    matrix and is used only when it equals ``x`` cell for cell (``np.array_equal``), so
    mutating an array between calls cannot return stale numbers. This lets
    ``multi_mals`` and ``multi_directional`` (or both directions) on the same data share
    the label lists, subsets and count tables.
    """
    key = _fingerprint(x)
    with _CACHE_LOCK:
        for i, (other, entry) in enumerate(_CACHE):
            if other == key and np.array_equal(entry.x, x):
                _CACHE.append(_CACHE.pop(i))  # most recently used last
                return entry
        while _CACHE and (len(_CACHE) >= CACHE_ENTRIES
                          or sum(e.nbytes() for _, e in _CACHE) > CACHE_BYTES):
            _CACHE.pop(0)  # least recently used first
        entry = _Matrix(np.array(x, dtype=np.bool_, order="C", copy=True))
        _CACHE.append((key, entry))
        return entry


def clear_cache() -> None:
    """Forget every cached matrix (the benchmark times cold calls with it)."""
    with _CACHE_LOCK:
        _CACHE.clear()


class _Counter:
    """Counts, per group, the images of one matrix that hold each combination of M.

    Per combination size it picks the cheaper method: the matrix's enumerated subsets
    (a dense table, or a binary search into M when that table would exceed
    :data:`DENSE_BINS`), or packed bitsets when images carry so many labels that
    enumeration would cost more than ANDing M's bitsets.
    """

    def __init__(
        self, matrix: _Matrix, name: str, *, combos: _Combos | None = None,
        bitsets: bool = False,
    ) -> None:
        self.matrix, self.name = matrix, name
        self.combos = _Combos({}, matrix.x.shape[1], matrix.table)
        self.sizes: set[int] = set()  # sizes counted from enumerated subsets
        if combos is not None:
            self.plan(combos, bitsets=bitsets)

    @property
    def x(self) -> NDArray[np.bool_]:
        return self.matrix.x

    def plan(self, combos: _Combos, *, bitsets: bool = False) -> None:
        """Count ``combos`` from now on; enumerate the sizes where that is cheaper."""
        self.combos = combos
        if bitsets or not len(combos):
            self.sizes = set()
            return
        counts = self.matrix.csr[0]
        words = (self.x.shape[0] + 63) // 64
        self.sizes = {
            s for s in combos.sizes if s in self.matrix.subsets or _n_subsets(counts, [s]) <= min(
                len(combos.by_size[s]) * words * (s + 2), MAX_SUBSETS)
        }
        self.matrix.enumerate(sorted(self.sizes), self.name)

    def per_group(self, codes: NDArray[np.intp], n_groups: int) -> NDArray[np.int64]:
        combos, matrix = self.combos, self.matrix
        out = np.zeros((len(combos), n_groups), dtype=np.int64)
        row = 0
        for s in combos.sizes:
            items = combos.by_size[s]
            if s in self.sizes:
                dense = matrix.dense(s, codes, n_groups)
                block = (dense[combos.keys(s)] if dense is not None else
                         _searched_counts(combos.keys(s), matrix.subsets[s], codes, n_groups))
            else:
                block = _superset_counts(items, n_groups, matrix.packed(codes, n_groups))
            out[row:row + len(items)] = block
            row += len(items)
        return out


def _totals(table: NDArray[np.int64]) -> NDArray[np.int64]:
    """Row sums of a (combinations, groups) count table (column adds: few groups)."""
    if table.shape[1] > 8:
        return table.sum(axis=1)
    out = table[:, 0].copy()
    for g in range(1, table.shape[1]):
        out += table[:, g]
    return out


def _paper_combos(
    train: _Matrix, test: _Matrix, train_codes: NDArray[np.intp],
    test_codes: NDArray[np.intp], n_groups: int, sizes: Sequence[int], min_count: int,
) -> _Combos:
    """Combinations held by >= ``min_count`` train and test images, from their subsets.

    The per-group tables it reads are the ones the counts of M are then taken from.
    """
    train.enumerate(sizes, "train_attrs")
    test.enumerate(sizes, "test_attrs")
    by_size = {}
    for s in sizes:
        dense_train = train.dense(s, train_codes, n_groups)
        dense_test = test.dense(s, test_codes, n_groups)
        if dense_train is not None and dense_test is not None:
            common = np.flatnonzero((_totals(dense_train) >= min_count)
                                    & (_totals(dense_test) >= min_count))
        else:
            tr_keys, tr_counts = np.unique(train.subsets[s].keys, return_counts=True)
            te_keys, te_counts = np.unique(test.subsets[s].keys, return_counts=True)
            common = np.intersect1d(tr_keys[tr_counts >= min_count],
                                    te_keys[te_counts >= min_count], assume_unique=True)
        if common.size:
            by_size[s] = _decode(common, s, train.table)
    return _Combos(by_size, train.x.shape[1], train.table)


def _reference_combos(
    train: _Matrix, test: _Counter, min_size: int, max_size: int | None, min_count: int,
) -> _Combos:
    """SonyResearch ``get_multiatts``: exact training label sets also present in test."""
    n_attrs, table = train.x.shape[1], train.table
    counts, starts, cols = train.csr
    by_size = {}
    for c in np.unique(counts).tolist():
        if c < min_size or (max_size is not None and c > max_size):
            continue
        rows = np.flatnonzero(counts == c)
        labels = cols[starts[rows][:, None] + np.arange(c)].astype(np.int64)
        unique, n = np.unique(_keys(labels, table), return_counts=True)
        # The released code keeps a set once it was seen more than `thresh` times.
        kept = _decode(unique[n >= min_count], c, table)
        if kept.size:
            by_size[c] = kept
    candidates = _Combos(by_size, n_attrs, table)
    if not len(candidates):
        return candidates
    test.plan(candidates)
    present = test.per_group(np.zeros(test.x.shape[0], np.intp), 1)[:, 0] >= min_count
    out, row = {}, 0
    for s in candidates.sizes:
        block = candidates.by_size[s]
        keep = present[row:row + len(block)]
        if keep.any():
            out[s] = block[keep]
        row += len(block)
    return _Combos(out, n_attrs, table)


@dataclass
class _Setup:
    """M and the counters of the ground-truth splits."""

    combos: _Combos
    train: _Counter
    test: _Counter | None

    def counter(self, x: NDArray[np.bool_], name: str) -> _Counter:
        return _Counter(_matrix(x).use(self.combos.table), name, combos=self.combos)


def _single_setup(data: _Inputs, columns: NDArray[np.int64]) -> _Setup:
    n_attrs = data.train.shape[1]
    table = _binomials(n_attrs, 1)
    combos = _Combos({1: columns[:, None]}, n_attrs, table)
    return _Setup(
        combos, _Counter(_matrix(data.train).use(table), "train_attrs", combos=combos),
        None if data.test is None else _Counter(_matrix(data.test).use(table), "test_attrs",
                                                combos=combos),
    )


def _multi_setup(
    data: _Inputs, min_size: int, max_size: int | None, min_count: int, variant: str,
) -> _Setup:
    assert data.test is not None and data.groups.test is not None
    n_attrs = data.train.shape[1]
    train_matrix = _matrix(data.train)
    most = int(train_matrix.csr[0].max())
    top = max(min_size, most if max_size is None else min(max_size, most))
    table = _binomials(n_attrs, top)
    train_matrix.use(table)
    train = _Counter(train_matrix, "train_attrs")
    test = _Counter(_matrix(data.test).use(table), "test_attrs")
    if variant == "reference":
        combos = _reference_combos(train.matrix, test, min_size, max_size, min_count)
    else:
        combos = _paper_combos(train.matrix, test.matrix, data.groups.train, data.groups.test,
                               len(data.groups.keys), range(min_size, top + 1), min_count)
    if not len(combos):
        raise InsufficientDataError(
            f"no attribute combination of size >= {min_size}"
            f"{'' if max_size is None else f' and <= {max_size}'} occurs in at least "
            f"min_count={min_count} images of both train and test; lower min_count or "
            "min_size."
        )
    train.plan(combos)
    test.plan(combos)
    return _Setup(combos, train, test)


# -- results ----------------------------------------------------------------------------------


@dataclass
class _Run:
    """One prediction set: cell arrays of shape (combinations, evaluated groups)."""

    pred: NDArray[np.float64]
    delta: NDArray[np.float64]
    amplification: float
    signed_mean: float
    abs_mean: float
    variance: float
    group_values: NDArray[np.float64]


def _divide(num: NDArray[Any], den: NDArray[Any]) -> NDArray[np.float64]:
    den = np.broadcast_to(den, num.shape)
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _conf(values: NDArray[np.float64]) -> tuple[float, float, float]:
    """Mean, std (ddof=0) and half-width 1.96·std/√runs, as the released conf_interval."""
    mean = float(np.mean(values))
    std = float(np.std(values))
    return mean, std, 1.96 * std / math.sqrt(len(values))


def _listed(values: NDArray[np.float64]) -> list[float | None]:
    """Floats for a table column, None where undefined (NaN)."""
    return [None if v != v else v for v in values.tolist()]


def _build(
    *,
    name: str,
    metric: str,
    runs: list[_Run],
    combos: _Combos,
    names: list[str],
    group_keys: Sequence[GroupKey],
    group_n: NDArray[np.intp],
    train: NDArray[np.float64],
    test: NDArray[np.float64] | None,
    y: NDArray[np.float64] | None,
    counted: NDArray[np.bool_],
    min_group_size: int,
    params: dict[str, Any],
    notes: list[str],
    table_rows: int | None,
    extra_stats: dict[str, float] | None = None,
) -> IndicatorResult:
    n_runs = len(runs)
    stats: dict[str, float] = {}
    intervals: dict[str, tuple[float, float]] = {}
    for key in ("amplification", "signed_mean", "abs_mean", "variance"):
        values = np.array([getattr(r, key) for r in runs], dtype=np.float64)
        mean, std, half = _conf(values)
        stats[key] = mean
        if n_runs > 1:
            stats[f"{key}_std"] = std
            intervals[key] = (mean - half, mean + half)
    stats.update(n_combinations=float(len(combos)), n_cells=float(counted.sum()),
                 runs=float(n_runs), **(extra_stats or {}))
    if intervals:
        intervals["value"] = intervals["amplification"]

    per_run = np.array([r.group_values for r in runs])
    group_intervals = None
    if n_runs > 1:
        group_intervals = []
        for g in range(per_run.shape[1]):
            mean, _, half = _conf(per_run[:, g])
            group_intervals.append((mean - half, mean + half))
    groups = make_group_stats(group_keys, group_n, per_run.mean(axis=0),
                              min_group_size=min_group_size, intervals=group_intervals)

    pred = np.mean([r.pred for r in runs], axis=0)
    delta = np.mean([r.delta for r in runs], axis=0)
    spread = np.std([r.delta for r in runs], axis=0) if n_runs > 1 else None
    shown_groups = np.array([group_label(k) for k in group_keys])
    ii, jj = np.nonzero(counted)
    magnitude = np.abs(delta[ii, jj])
    magnitude = np.where(np.isnan(magnitude), -1.0, magnitude)
    n_cells = len(magnitude)
    # Largest |Δ| first, undefined cells last; ties by group, then combination order. Only
    # the rows kept (and the N_NOTED for the note) are sorted: a partition finds them.
    wanted = n_cells if table_rows is None else max(table_rows, N_NOTED)
    if wanted < n_cells:
        kth = np.partition(magnitude, n_cells - wanted)[n_cells - wanted]
        pick = np.flatnonzero(magnitude >= kth)
    else:
        pick = np.arange(n_cells)
    order = pick[np.lexsort((ii[pick], jj[pick], -magnitude[pick]))][:wanted]
    ii, jj = ii[order], jj[order]
    needed = np.unique(ii)
    label_of = dict(zip(needed.tolist(), combos.labels(needed, names)))
    columns: dict[str, list[Any]] = {
        "group": shown_groups[jj].tolist(),
        "attributes": [label_of[i] for i in ii.tolist()],
        "size": combos.sizes_array()[ii].tolist(),
        "train": _listed(train[ii, jj]),
        "test": [None] * len(ii) if test is None else _listed(test[ii, jj]),
        "pred": _listed(pred[ii, jj]),
        "delta": _listed(delta[ii, jj]),
    }
    if y is not None:
        columns["y"] = y[ii, jj].tolist()
    if spread is not None:
        columns["delta_std"] = _listed(spread[ii, jj])
    names_ = list(columns)
    rows = [dict(zip(names_, values)) for values in zip(*columns.values())]
    top = [r for r in rows[:N_NOTED] if r["delta"]]
    if top:
        shown = "; ".join(
            f"{r['group']} × {r['attributes']}: Δ={r['delta']:+.4f} (train {r['train']:.3f} → "
            f"pred {r['pred']:.3f})" for r in top
        )
        notes = [*notes, f"most amplified: {shown}"]
    if table_rows is not None and n_cells > table_rows:
        notes = [*notes, f"tables['cells'] keeps the {table_rows:,} largest |Δ| of "
                         f"{n_cells:,} cells (table_rows={table_rows}; table_rows=None keeps "
                         "every cell)."]
    rows = rows[:n_cells if table_rows is None else table_rows]
    tables: dict[str, tuple[dict[str, Any], ...]] = {"cells": tuple(rows)}
    if n_runs > 1:
        tables["runs"] = tuple(
            {"run": k, "amplification": r.amplification, "signed_mean": r.signed_mean,
             "variance": r.variance} for k, r in enumerate(runs)
        )
    return IndicatorResult(
        name=name,
        metric=metric,
        value=stats["amplification"],
        groups=groups,
        stats=stats,
        intervals=intervals,
        tables=tables,
        params=params,
        higher_is_better=False,
        min_group_size=min_group_size,
        notes=(*notes, *exclusion_notes(groups, min_group_size)),
    )


@dataclass
class _Inputs:
    train: NDArray[np.bool_]
    test: NDArray[np.bool_] | None
    preds: list[NDArray[np.bool_]]
    groups: _Groups
    names: list[str]


def _same_columns(reference: Any, other: Any, name: str) -> None:
    ours, theirs = getattr(reference, "columns", None), getattr(other, "columns", None)
    if ours is not None and theirs is not None and list(ours) != list(theirs):
        raise InvalidDataError(
            f"{name} has columns {list(theirs)[:5]}... but train_attrs has {list(ours)[:5]}...; "
            "the matrices must share their columns (same attributes, same order)."
        )


def _prepare(
    train_attrs: Any, train_groups: Any, test_attrs: Any, test_groups: Any,
    pred_attrs: Any, pred_groups: Any, *, threshold: Any, attribute_names: Any,
    need_test: bool, need_pred_attrs: bool, need_pred_groups: bool, function: str,
) -> _Inputs:
    required = [("train_attrs", train_attrs), ("train_groups", train_groups)]
    if need_test:
        required += [("test_attrs", test_attrs), ("test_groups", test_groups)]
    if need_pred_attrs:
        required.append(("pred_attrs", pred_attrs))
    if need_pred_groups:
        required.append(("pred_groups", pred_groups))
    for name, value in required:
        if value is None:
            raise FairnessConfigError(f"{function} needs {name}; got {name}=None.")
    train = _binary(train_attrs, "train_attrs")
    n_attrs = train.shape[1]
    threshold = _check_threshold(threshold, n_attrs)
    test = _binary(test_attrs, "test_attrs") if need_test else None
    pred_list = _pred_runs(pred_attrs) if need_pred_attrs else []
    labels = ["pred_attrs"] if len(pred_list) == 1 else [
        f"pred_attrs[{k}]" for k in range(len(pred_list))]
    preds = [_binary(p, label, threshold) for p, label in zip(pred_list, labels)]
    n_pred = test.shape[0] if test is not None else (preds[0].shape[0] if preds else 0)
    rows_of = "test_attrs" if test is not None else labels[0] if labels else ""
    for label, raw, x in [("test_attrs", test_attrs, test), *zip(labels, pred_list, preds)]:
        if x is None:
            continue
        _same_columns(train_attrs, raw, label)
        if x.shape[1] != n_attrs:
            raise InvalidDataError(
                f"{label} has {x.shape[1]} attribute columns but train_attrs has {n_attrs}; "
                "the matrices must share their columns (same attributes, same order)."
            )
        if x.shape[0] != n_pred:
            raise InvalidDataError(
                f"{label} has {x.shape[0]} rows but {rows_of} has {n_pred}; predictions "
                "must cover the test images, in the same order."
            )
    group_list = _group_runs(pred_groups, n_pred) if need_pred_groups else []
    if len(preds) > 1 and len(group_list) == 1:
        group_list = group_list * len(preds)
    elif len(preds) > 1 and len(group_list) not in (0, len(preds)):
        raise InvalidDataError(
            f"pred_groups holds {len(group_list)} runs but pred_attrs holds {len(preds)}; pass "
            "one group vector per prediction set, or one vector shared by all of them."
        )
    groups = _encode_all(train_groups, train.shape[0], test_groups if need_test else None,
                         n_pred if need_test else None, group_list, n_pred,
                         need_test=need_test)
    names = _attr_names(train_attrs, n_attrs, attribute_names)
    return _Inputs(train, test, preds, groups, names)


def _undefined_note(n_undefined: int, what: str) -> list[str]:
    if not n_undefined:
        return []
    return [f"{n_undefined} combination(s) {what}."]


# -- Zhao et al. 2017 and Multi_MALS -------------------------------------------------------


def _mals_run(
    bias_train: NDArray[np.float64], bias_pred: NDArray[np.float64], limit: float,
    *, reference: bool, signed_headline: bool,
) -> tuple[_Run, NDArray[np.bool_]]:
    """Δ = 1[b_train > limit]·(b_pred − b_train) and its aggregates (evaluated groups)."""
    delta = np.where(bias_train > limit, bias_pred - bias_train, 0.0)
    if reference:
        # Released code: nansum over all cells / |M|, nanvar over all cells.
        denom = delta.shape[0]
        cells = delta
        counted = np.ones(delta.shape, dtype=bool)
        variance = float(np.nanvar(delta)) if np.isfinite(delta).any() else math.nan
    else:
        defined: NDArray[np.bool_] = np.asarray(~np.isnan(bias_pred).any(axis=1))
        denom = int(defined.sum())
        cells = delta[defined]
        counted = np.repeat(defined[:, None], delta.shape[1], axis=1)
        variance = float(np.var(cells)) if denom else math.nan
    signed = np.nansum(cells, axis=0)
    absolute = np.nansum(np.abs(cells), axis=0)
    if denom:
        signed_mean, abs_mean = float(signed.sum() / denom), float(absolute.sum() / denom)
        group_values = (signed if signed_headline else absolute) / denom
    else:
        signed_mean = abs_mean = math.nan
        group_values = np.full(delta.shape[1], math.nan)
    run = _Run(pred=bias_pred, delta=delta,
               amplification=signed_mean if signed_headline else abs_mean,
               signed_mean=signed_mean, abs_mean=abs_mean, variance=variance,
               group_values=group_values)
    return run, counted


def _bias(counts: NDArray[np.int64]) -> NDArray[np.float64]:
    return _divide(counts, counts.sum(axis=1, keepdims=True))


def bias_amp(
    train_attrs: Any,
    train_groups: Any,
    pred_attrs: Any,
    pred_groups: Any,
    *,
    min_count: int = 1,
    threshold: Any = None,
    attribute_names: Sequence[str] | None = None,
    min_group_size: int = 30,
    table_rows: int | None = TABLE_ROWS,
    variant: str = "paper",
) -> IndicatorResult:
    r"""BiasAmp of Zhao et al. 2017 ("Men also like shopping"), signed.

    .. math::

        b(o, g) = \frac{c(o, g)}{\sum_{g'} c(o, g')}, \quad
        \mathrm{BiasAmp} = \frac{1}{|O|} \sum_{g} \sum_{o \in O}
            \mathbf{1}\big[b_{train}(o, g) > 1/|G|\big]\,
            \big(b_{pred}(o, g) - b_{train}(o, g)\big)

    where ``c(o, g)`` counts the images that have attribute ``o`` and group ``g`` (for the
    predictions: predicted attribute and predicted group), and ``O`` holds the attributes
    seen in at least ``min_count`` training images.

    Parameters
    ----------
    train_attrs : array-like or DataFrame of shape (n_train, attributes)
        0/1 training labels.
    train_groups : array-like of shape (n_train,) or one-hot matrix
        The training images' groups (at least two).
    pred_attrs : array-like of shape (n_test, attributes), or a list of them
        0/1 predictions (or scores with ``threshold``); a list gives several runs.
    pred_groups : array-like of shape (n_test,), or a list of them (one per run)
        Predicted groups.
    min_count : int, default 1
        Attributes in fewer training images are left out.
    threshold : float or array of shape (attributes,), optional
        Binarise score predictions as ``score >= threshold``.
    attribute_names : sequence of str, optional
        Column names for the table (default: DataFrame columns or indices).
    min_group_size : int, default 30
        Groups with fewer training images are marked excluded in the per-group table.
    table_rows : int, optional
        Rows of ``tables["cells"]``: the ``table_rows`` largest |Δ| (default 100, with a
        note when cells are left out); ``None`` keeps every group × combination cell. The
        numbers and the "most amplified" note never depend on it.
    variant : {"paper", "reference"}
        ``"paper"``: attributes never predicted have no b_pred and are left out of the
        mean (``notes`` says how many). ``"reference"`` (uclanlp/reducingbias,
        ``coco_get_bias_score``): two groups only; such attributes are skipped in the sum
        but still counted in |O|.

    Returns
    -------
    IndicatorResult
        ``value`` = ``stats["amplification"]`` = BiasAmp (positive: amplified);
        ``stats["variance"]`` the variance of Δ over all cells, ``stats["abs_mean"]`` the
        same sum over |Δ|; one group per group (value: its term of the sum);
        ``tables["cells"]`` one row per group × attribute, sorted by |Δ|.

    Examples
    --------
    >>> train = [[1], [1], [1], [1]]
    >>> pred = [[1], [1], [1], [1]]
    >>> r = bias_amp(train, ["m", "m", "m", "w"], pred, ["m", "m", "m", "m"],
    ...              min_group_size=1)
    >>> r.value, r.tables["cells"][0]["delta"]
    (0.25, 0.25)
    """
    check_variant(variant, "bias_amp")
    min_group_size = check_min_group_size(min_group_size)
    table_rows = _check_table_rows(table_rows)
    _, _, min_count = _check_sizes(1, 1, min_count)
    data = _prepare(train_attrs, train_groups, None, None, pred_attrs, pred_groups,
                    threshold=threshold, attribute_names=attribute_names, need_test=False,
                    need_pred_attrs=True, need_pred_groups=True, function="bias_amp")
    keys, n_groups = data.groups.keys, len(data.groups.keys)
    if variant == "reference" and n_groups != 2:
        raise FairnessConfigError(
            f"variant='reference' reproduces code written for exactly two groups; got "
            f"{n_groups} groups ({', '.join(map(group_label, keys))}). Use variant='paper'."
        )
    columns = np.flatnonzero(data.train.sum(axis=0) >= min_count).astype(np.int64)
    if not columns.size:
        raise InsufficientDataError(
            f"no attribute occurs in at least min_count={min_count} training images; lower "
            "min_count or check train_attrs."
        )
    setup = _single_setup(data, columns)
    bias_train = _bias(setup.train.per_group(data.groups.train, n_groups))
    runs, counted = [], np.zeros(bias_train.shape, dtype=bool)
    for pred, codes in zip(data.preds, data.groups.preds):
        bias_pred = _bias(setup.counter(pred, "pred_attrs").per_group(codes, n_groups))
        run, counted_run = _mals_run(bias_train, bias_pred, 1.0 / n_groups,
                                     reference=variant == "reference", signed_headline=True)
        runs.append(run)
        counted |= counted_run
    never = int(np.isnan(runs[0].pred).all(axis=1).sum())
    what = ("were never predicted; they are left out of the mean" if variant == "paper" else
            "were never predicted; they add 0 but count in |O| (released code)")
    return _build(
        name="bias_amp", metric="BiasAmp", runs=runs, combos=setup.combos, names=data.names,
        group_keys=keys, group_n=np.bincount(data.groups.train, minlength=n_groups),
        train=bias_train, test=None, y=None, counted=counted, min_group_size=min_group_size,
        params={"min_count": min_count, "variant": variant, "threshold": threshold,
                "n_train": data.train.shape[0], "n_test": data.preds[0].shape[0]},
        notes=_undefined_note(never, what), table_rows=table_rows,
    )


def multi_mals(
    train_attrs: Any,
    train_groups: Any,
    test_attrs: Any,
    test_groups: Any,
    pred_attrs: Any,
    pred_groups: Any,
    *,
    min_size: int = 1,
    max_size: int | None = None,
    min_count: int = 1,
    threshold: Any = None,
    attribute_names: Sequence[str] | None = None,
    min_group_size: int = 30,
    table_rows: int | None = TABLE_ROWS,
    variant: str = "paper",
) -> IndicatorResult:
    r"""Multi_MALS of seed 001: undirected multi-attribute bias amplification.

    .. math::

        \Delta_{gm} = \mathbf{1}\big[b_{train}(m, g) > 1/|G|\big]
            \big(b_{pred}(m, g) - b_{train}(m, g)\big), \quad
        X = \frac{1}{|M|} \sum_{g} \sum_{m \in M} |\Delta_{gm}|

    reported with ``variance(Δ)`` over all |G|·|M| cells. ``b`` is the bias score of
    :func:`bias_amp` for a set of attributes (an image has ``m`` when it has all of them);
    ``b_pred`` uses predicted attributes and predicted groups.

    Parameters
    ----------
    train_attrs, test_attrs : array-like or DataFrame of shape (images, attributes)
        0/1 ground truth; ``M`` is drawn from both (see the module docstring).
    train_groups, test_groups : array-like of shape (images,) or one-hot matrix
        Ground-truth groups (at least two; every group in both splits).
    pred_attrs : array-like of shape (n_test, attributes), or a list of them (runs)
        0/1 predictions on the test images, or scores with ``threshold``.
    pred_groups : array-like of shape (n_test,), or a list of them (one per run)
        Predicted groups.
    min_size, max_size : int
        Sizes of the combinations (``max_size=None``: up to the largest label set).
    min_count : int, default 1
        A combination must occur in at least this many train and test images.
    threshold : float or array of shape (attributes,), optional
        Binarise score predictions as ``score >= threshold``.
    attribute_names : sequence of str, optional
        Column names for the table.
    min_group_size : int, default 30
        Groups with fewer test images are marked excluded in the per-group table.
    table_rows : int, optional
        Rows of ``tables["cells"]``: the ``table_rows`` largest |Δ| (default 100, with a
        note when cells are left out); ``None`` keeps every group × combination cell. The
        numbers and the "most amplified" note never depend on it.
    variant : {"paper", "reference"}
        ``"paper"``: threshold 1/|G|; combinations never predicted are left out (noted).
        ``"reference"`` (SonyResearch/multi_bias_amp ``MBA.calculate_mba_mals``): M holds
        the exact training label sets with ``|m| >= min_size`` seen ``min_count`` times
        that occur in ``min_count`` test images; the |G| − 1 group columns of the released
        layout are compared with 1/(|G| − 1), so two groups always give 0 (the one scored
        group is the first); never-predicted combinations count in |M|; the variance is
        ``nanvar`` over the cells.

    Returns
    -------
    IndicatorResult
        ``value`` = ``stats["amplification"]`` = X; ``stats["variance"]`` = var(Δ),
        ``stats["signed_mean"]`` = ΣΔ/|M|; one group per evaluated group (value: its
        term of X); ``tables["cells"]`` one row per group × combination, sorted by |Δ|.

    Examples
    --------
    >>> train = [[1, 1], [1, 1], [1, 0], [0, 1]]
    >>> pred = [[1, 1], [1, 1], [1, 0], [1, 1]]
    >>> r = multi_mals(train, ["w", "m", "m", "m"], train, ["w", "m", "m", "m"],
    ...                pred, ["w", "w", "m", "m"], min_group_size=1)
    >>> round(r.value, 4), r.tables["cells"][0]["attributes"]
    (0.1667, '1')
    """
    check_variant(variant, "multi_mals")
    min_group_size = check_min_group_size(min_group_size)
    table_rows = _check_table_rows(table_rows)
    min_size, max_size, min_count = _check_sizes(min_size, max_size, min_count)
    data = _prepare(train_attrs, train_groups, test_attrs, test_groups, pred_attrs, pred_groups,
                    threshold=threshold, attribute_names=attribute_names, need_test=True,
                    need_pred_attrs=True, need_pred_groups=True, function="multi_mals")
    assert data.test is not None and data.groups.test is not None
    keys, n_groups = data.groups.keys, len(data.groups.keys)
    setup = _multi_setup(data, min_size, max_size, min_count, variant)
    notes: list[str] = []
    if variant == "reference" and n_groups == 2:
        # One 0/1 column (1 = second group); the code scores the rows whose value is 0.
        codes_of, n_codes, evaluated = np.arange(2), 2, [0]
        shown, limit = [keys[0]], 1.0
        notes.append("variant='reference' with two groups: the released code compares bias "
                     "scores with 1/(|G|-1) = 1, so every Δ is 0.")
    elif variant == "reference":
        # argmax over the |G|-1 columns: the first group (all zeros) lands on column 0.
        codes_of = np.array([0, *range(n_groups - 1)], dtype=np.intp)
        n_codes, evaluated, shown = n_groups - 1, list(range(n_groups - 1)), list(keys[1:])
        limit = 1.0 / (n_groups - 1)
        notes.append(f"variant='reference': images of group {group_label(keys[0])!r} count as "
                     f"{group_label(keys[1])!r} (argmax of an all-zero row), as in the "
                     "released code.")
    else:
        codes_of, n_codes = np.arange(n_groups), n_groups
        evaluated, shown, limit = list(range(n_groups)), list(keys), 1.0 / n_groups
    bias_train = _bias(setup.train.per_group(codes_of[data.groups.train], n_codes))[:, evaluated]
    assert setup.test is not None
    test_codes = codes_of[data.groups.test]
    bias_test = _bias(setup.test.per_group(test_codes, n_codes))[:, evaluated]
    runs, counted = [], np.zeros(bias_train.shape, dtype=bool)
    for pred, codes in zip(data.preds, data.groups.preds):
        counts = setup.counter(pred, "pred_attrs").per_group(codes_of[codes], n_codes)
        run, counted_run = _mals_run(bias_train, _bias(counts)[:, evaluated], limit,
                                     reference=variant == "reference", signed_headline=False)
        runs.append(run)
        counted |= counted_run
    never = int(np.isnan(runs[0].pred).all(axis=1).sum())
    what = ("were never predicted; they are left out of the mean" if variant == "paper" else
            "were never predicted; they add 0 but count in |M| (released code)")
    return _build(
        name="multi_mals", metric="Multi_MALS", runs=runs, combos=setup.combos,
        names=data.names, group_keys=shown,
        group_n=np.bincount(test_codes, minlength=n_codes)[evaluated],
        train=bias_train, test=bias_test, y=None, counted=counted,
        min_group_size=min_group_size,
        params={"min_size": min_size, "max_size": max_size, "min_count": min_count,
                "variant": variant, "threshold": threshold, "n_train": data.train.shape[0],
                "n_test": data.test.shape[0]},
        notes=_undefined_note(never, what) + notes, table_rows=table_rows,
    )


# -- Wang & Russakovsky 2021 and Multi→ -----------------------------------------------------


def _direction(direction: Any) -> str:
    if direction not in _DIRECTIONS:
        raise FairnessConfigError(
            f"direction must be 'G->M' (the group influences the attribute predictions) or "
            f"'M->G' (the attributes influence the group prediction); got "
            f"direction={direction!r}."
        )
    return _DIRECTIONS[direction]


def _directional(
    *,
    name: str,
    metric: str,
    data: _Inputs,
    setup: _Setup,
    direction: str,
    baseline: str,
    keep: str,
    y_mode: str,
    evaluated: slice,
    signed_headline: bool,
    min_group_size: int,
    table_rows: int | None,
    params: dict[str, Any],
) -> IndicatorResult:
    """Shared core of BiasAmp→ and Multi→ (the docstrings describe the variants).

    ``baseline``: what Δ subtracts ("test" or "train" ground truth); ``keep``: which
    training images define y ("all", "labelled", or "sony": a label or a 1 in a group
    column); ``y_mode``: "indicator" (1[·], and (1 − y)·(−Δ)) or "sign".
    """
    assert data.test is not None and data.groups.test is not None and setup.test is not None
    keys, n_groups = data.groups.keys, len(data.groups.keys)
    train_codes, test_codes = data.groups.train, data.groups.test
    kept: NDArray[np.bool_]
    if keep == "all":
        kept = np.ones(data.train.shape[0], dtype=bool)
    elif keep == "labelled":
        kept = np.asarray(data.train.any(axis=1))
    else:
        kept = np.asarray(data.train.any(axis=1) | (train_codes != 0))
    n_kept = int(kept.sum())
    if n_kept == 0:
        raise InsufficientDataError(
            "no training image has an attribute, so y (the direction of each correlation) is "
            "undefined. Check train_attrs."
        )
    # Images without labels hold no combination: dropping them changes only P(g) and n.
    counts_train = setup.train.per_group(train_codes, n_groups)
    p_g = np.bincount(train_codes[kept], minlength=n_groups) / n_kept
    p_m = counts_train.sum(axis=1, keepdims=True) / n_kept
    diff = counts_train / n_kept - p_g[None, :] * p_m
    y = np.sign(diff) if y_mode == "sign" else (diff > 0).astype(np.float64)

    counts_test = setup.test.per_group(test_codes, n_groups)
    n_g_test = np.bincount(test_codes, minlength=n_groups)
    if direction == "G->M":
        truth_test = _divide(counts_test, n_g_test[None, :])
        truth_train = _divide(counts_train, np.bincount(train_codes, minlength=n_groups)[None, :])
    else:
        truth_test = _bias(counts_test)
        truth_train = _bias(counts_train)
    base = truth_test if baseline == "test" else truth_train
    ev_y, ev_base = y[:, evaluated], base[:, evaluated]

    runs = []
    n_runs = len(data.preds) if direction == "G->M" else len(data.groups.preds)
    for k in range(n_runs):
        if direction == "G->M":
            counts = setup.counter(data.preds[k], "pred_attrs").per_group(test_codes, n_groups)
            pred = _divide(counts, n_g_test[None, :])[:, evaluated]
        else:
            counts = setup.test.per_group(data.groups.preds[k], n_groups)
            pred = _divide(counts, counts_test.sum(axis=1, keepdims=True))[:, evaluated]
        delta = pred - ev_base
        if y_mode == "sign":
            signed = ev_y * delta
        else:
            signed = ev_y * delta + (1 - ev_y) * (-delta)
        score = signed if signed_headline else np.abs(delta)
        valid = ~np.isnan(delta)
        if valid.any():
            signed_mean = float(np.nanmean(signed))
            abs_mean = float(np.nanmean(np.abs(delta)))
            variance = float(np.nanvar(delta))
        else:
            signed_mean = abs_mean = variance = math.nan
        group_values = np.array([
            float(np.mean(score[valid[:, g], g])) if valid[:, g].any() else math.nan
            for g in range(score.shape[1])
        ])
        runs.append(_Run(pred=pred, delta=delta,
                         amplification=signed_mean if signed_headline else abs_mean,
                         signed_mean=signed_mean, abs_mean=abs_mean, variance=variance,
                         group_values=group_values))
    counted = ~np.isnan(runs[0].delta)
    never = int((~counted).all(axis=1).sum())
    arrow = direction.replace("->", "→")
    return _build(
        name=name, metric=f"{metric} ({arrow})", runs=runs, combos=setup.combos,
        names=data.names, group_keys=list(keys[evaluated]),
        group_n=n_g_test[evaluated], train=truth_train[:, evaluated],
        test=truth_test[:, evaluated], y=ev_y, counted=counted,
        min_group_size=min_group_size, params=params,
        notes=_undefined_note(never, "never occur in the test ground truth; their cells are "
                              "undefined and left out"),
        extra_stats={"n_train_kept": float(n_kept)}, table_rows=table_rows,
    )


def directional_bias_amp(
    train_attrs: Any,
    train_groups: Any,
    test_attrs: Any,
    test_groups: Any,
    pred_attrs: Any = None,
    pred_groups: Any = None,
    *,
    direction: str,
    min_count: int = 1,
    threshold: Any = None,
    attribute_names: Sequence[str] | None = None,
    min_group_size: int = 30,
    table_rows: int | None = TABLE_ROWS,
    variant: str = "paper",
) -> IndicatorResult:
    r"""BiasAmp→ of Wang & Russakovsky 2021, signed, in one direction.

    .. math::

        y_{gm} = \mathbf{1}\big[P_{train}(g, m) > P_{train}(g) P_{train}(m)\big], \quad
        \mathrm{BiasAmp}_{\to} = \frac{1}{|G||M|} \sum_{g, m}
            y_{gm} \Delta_{gm} + (1 - y_{gm})(-\Delta_{gm})

    with ``Δ = P(m̂ | g) − P(m | g)`` for G→M and ``Δ = P(ĝ | m) − P(g | m)`` for M→G,
    both on the test set (predictions against the test ground truth).

    Parameters
    ----------
    train_attrs, test_attrs : array-like or DataFrame of shape (images, attributes)
        0/1 ground truth.
    train_groups, test_groups : array-like of shape (images,) or one-hot matrix
        Ground-truth groups (at least two; every group in both splits).
    pred_attrs : array-like of shape (n_test, attributes), or a list of them, optional
        Attribute predictions; needed for G→M.
    pred_groups : array-like of shape (n_test,), or a list of them, optional
        Group predictions; needed for M→G.
    direction : {"G->M", "M->G"}
        Which influence is measured ("G→M" and "M→G" are accepted too).
    min_count : int, default 1
        ``"paper"``: attributes must occur in at least this many train and test images.
    threshold : float or array of shape (attributes,), optional
        Binarise score predictions as ``score >= threshold``.
    attribute_names : sequence of str, optional
        Column names for the table.
    min_group_size : int, default 30
        Groups with fewer test images are marked excluded in the per-group table.
    table_rows : int, optional
        Rows of ``tables["cells"]``: the ``table_rows`` largest |Δ| (default 100, with a
        note when cells are left out); ``None`` keeps every group × combination cell. The
        numbers and the "most amplified" note never depend on it.
    variant : {"paper", "reference"}
        ``"reference"`` (princetonvisualai/directional-bias-amp): every attribute column is
        used (``min_count`` must stay 1), training images without labels are dropped before
        computing y, y is a sign (0 at exact independence) and the mean is ``nanmean(y·Δ)``
        with undefined cells dropped.

    Returns
    -------
    IndicatorResult
        ``value`` = ``stats["amplification"]`` = BiasAmp→ (signed); ``stats["abs_mean"]``
        = mean |Δ|, ``stats["variance"]`` = var(Δ); one group per group (value: its mean
        signed amplification); ``tables["cells"]`` sorted by |Δ|.

    Examples
    --------
    >>> train = [[1], [1], [0], [0]]
    >>> test = [[1], [1], [0], [0]]
    >>> pred = [[1], [1], [1], [0]]
    >>> r = directional_bias_amp(train, [0, 0, 1, 1], test, [0, 0, 1, 1], pred,
    ...                          direction="G->M", min_group_size=1)
    >>> r.value, r.group(1).value
    (-0.25, -0.5)
    """
    check_variant(variant, "directional_bias_amp")
    min_group_size = check_min_group_size(min_group_size)
    table_rows = _check_table_rows(table_rows)
    direction = _direction(direction)
    _, _, min_count = _check_sizes(1, 1, min_count)
    if variant == "reference" and min_count != 1:
        raise FairnessConfigError(
            f"variant='reference' uses every attribute column, as the released code does; "
            f"min_count={min_count} has no counterpart there. Leave min_count=1."
        )
    data = _prepare(train_attrs, train_groups, test_attrs, test_groups, pred_attrs, pred_groups,
                    threshold=threshold, attribute_names=attribute_names, need_test=True,
                    need_pred_attrs=direction == "G->M", need_pred_groups=direction == "M->G",
                    function=f"directional_bias_amp(direction={direction!r})")
    assert data.test is not None
    if variant == "reference":
        columns = np.arange(data.train.shape[1], dtype=np.int64)
    else:
        ok = (data.train.sum(axis=0) >= min_count) & (data.test.sum(axis=0) >= min_count)
        columns = np.flatnonzero(ok).astype(np.int64)
    if not columns.size:
        raise InsufficientDataError(
            f"no attribute occurs in at least min_count={min_count} images of both train and "
            "test; lower min_count or check the attribute matrices."
        )
    reference = variant == "reference"
    return _directional(
        name="directional_bias_amp", metric="BiasAmp", data=data,
        setup=_single_setup(data, columns), direction=direction, baseline="test",
        keep="labelled" if reference else "all", y_mode="sign" if reference else "indicator",
        evaluated=slice(None), signed_headline=True, min_group_size=min_group_size,
        table_rows=table_rows,
        params={"direction": direction, "min_count": min_count, "variant": variant,
                "threshold": threshold, "n_train": data.train.shape[0],
                "n_test": data.test.shape[0]},
    )


def multi_directional(
    train_attrs: Any,
    train_groups: Any,
    test_attrs: Any,
    test_groups: Any,
    pred_attrs: Any = None,
    pred_groups: Any = None,
    *,
    direction: str,
    min_size: int = 1,
    max_size: int | None = None,
    min_count: int = 1,
    threshold: Any = None,
    attribute_names: Sequence[str] | None = None,
    min_group_size: int = 30,
    table_rows: int | None = TABLE_ROWS,
    variant: str = "paper",
) -> IndicatorResult:
    r"""Multi→ of seed 001: directional multi-attribute bias amplification.

    .. math::

        X = \frac{1}{|G||M|} \sum_{g}\sum_{m \in M}
            y_{gm}|\Delta_{gm}| + (1 - y_{gm})|-\Delta_{gm}|
          = \operatorname{mean}_{g, m} |\Delta_{gm}|, \qquad
        \Delta_{gm} = \begin{cases}
            P_{test}(\hat m = 1 | g = 1) - P_{train}(m = 1 | g = 1) & G \to M \\
            P_{test}(\hat g = 1 | m = 1) - P_{train}(g = 1 | m = 1) & M \to G
        \end{cases}

    reported with ``variance(Δ)`` and the signed mean of ``y·Δ + (1 − y)(−Δ)`` with
    ``y = 1[P_train(g, m) > P_train(g) P_train(m)]``. G→M conditions on the test images'
    true groups, M→G on the test images that truly have ``m``.

    Parameters
    ----------
    train_attrs, test_attrs : array-like or DataFrame of shape (images, attributes)
        0/1 ground truth; ``M`` is drawn from both.
    train_groups, test_groups : array-like of shape (images,) or one-hot matrix
        Ground-truth groups (at least two; every group in both splits).
    pred_attrs : array-like of shape (n_test, attributes), or a list of them, optional
        Attribute predictions; needed for G→M.
    pred_groups : array-like of shape (n_test,), or a list of them, optional
        Group predictions; needed for M→G.
    direction : {"G->M", "M->G"}
        Which influence is measured.
    min_size, max_size, min_count : int
        As in :func:`multi_mals`.
    threshold : float or array of shape (attributes,), optional
        Binarise score predictions as ``score >= threshold``.
    attribute_names : sequence of str, optional
        Column names for the table.
    min_group_size : int, default 30
        Groups with fewer test images are marked excluded in the per-group table.
    table_rows : int, optional
        Rows of ``tables["cells"]``: the ``table_rows`` largest |Δ| (default 100, with a
        note when cells are left out); ``None`` keeps every group × combination cell. The
        numbers and the "most amplified" note never depend on it.
    variant : {"paper", "reference"}
        ``"reference"`` (SonyResearch/multi_bias_amp ``calculate_mba_gm``/``_mg``): M as in
        :func:`multi_mals`; Δ compares the predictions with the **test ground truth**;
        only the |G| − 1 group columns of the released layout (every group but the first)
        are evaluated; y is a sign over the training images that have a label or a 1 in a
        group column; the signed mean is ``nanmean(y·Δ)``.

    Returns
    -------
    IndicatorResult
        ``value`` = ``stats["amplification"]`` = X; ``stats["variance"]`` = var(Δ),
        ``stats["signed_mean"]``; one group per evaluated group (value: its mean |Δ|);
        ``tables["cells"]`` one row per group × combination, sorted by |Δ|.

    Examples
    --------
    >>> train = [[1, 1], [1, 1], [1, 0], [0, 1]]
    >>> pred = [[1, 1], [1, 0], [1, 0], [0, 1]]
    >>> r = multi_directional(train, ["w", "w", "m", "m"], train, ["w", "w", "m", "m"],
    ...                       pred, direction="G->M", min_group_size=1)
    >>> r.value, r.stats["variance"]
    (0.16666666666666666, 0.05555555555555556)
    """
    check_variant(variant, "multi_directional")
    min_group_size = check_min_group_size(min_group_size)
    table_rows = _check_table_rows(table_rows)
    direction = _direction(direction)
    min_size, max_size, min_count = _check_sizes(min_size, max_size, min_count)
    data = _prepare(train_attrs, train_groups, test_attrs, test_groups, pred_attrs, pred_groups,
                    threshold=threshold, attribute_names=attribute_names, need_test=True,
                    need_pred_attrs=direction == "G->M", need_pred_groups=direction == "M->G",
                    function=f"multi_directional(direction={direction!r})")
    assert data.test is not None
    reference = variant == "reference"
    return _directional(
        name="multi_directional", metric="Multi", data=data,
        setup=_multi_setup(data, min_size, max_size, min_count, variant), direction=direction,
        baseline="test" if reference else "train", keep="sony" if reference else "all",
        y_mode="sign" if reference else "indicator",
        evaluated=slice(1, None) if reference else slice(None), signed_headline=False,
        min_group_size=min_group_size, table_rows=table_rows,
        params={"direction": direction, "min_size": min_size, "max_size": max_size,
                "min_count": min_count, "variant": variant, "threshold": threshold,
                "n_train": data.train.shape[0], "n_test": data.test.shape[0]},
    )
