"""Attribute combinations held by images: the set M of the multi-attribute indicators.

Label sets grow one label at a time, counted by sorts and ``np.bincount``, never the ``2^n``
subsets of the vocabulary (past :data:`MAX_SUBSETS` of one size, a smaller ``max_size``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_fairness.errors import FairnessConfigError, InsufficientDataError, own_error

if TYPE_CHECKING:
    from numpy.typing import NDArray

__tracebackhide__ = own_error

MAX_SUBSETS = 50_000_000  #: most subsets of one size of one matrix (else: smaller max_size)
Combos = dict[int, "NDArray[Any]"]  # size → (combinations, size) attribute columns, sorted
Hits = tuple["NDArray[np.intp]", "NDArray[np.intp]"]  # (image, combination) pairs


def _unique(items: NDArray[Any]) -> tuple[NDArray[Any], NDArray[np.intp]]:
    """The distinct rows of ``items`` in lexicographic order, and each row's index there."""
    order = np.lexsort(items.T[::-1])
    ranked = items[order]
    new = np.ones(len(ranked), dtype=bool)
    np.any(ranked[1:] != ranked[:-1], axis=1, out=new[1:])
    inverse = np.empty(len(items), dtype=np.intp)
    inverse[order] = np.cumsum(new) - 1
    return ranked[new], inverse


def _find(table: NDArray[Any], items: NDArray[Any]) -> NDArray[np.intp]:
    """Index of each row of ``items`` in ``table`` (distinct rows), −1 where absent."""
    _, inverse = _unique(np.concatenate([table, items]))
    where = np.full(len(table) + len(items), -1, dtype=np.intp)
    where[inverse[:len(table)]] = np.arange(len(table))
    return where[inverse[len(table):]]


class Labels:
    """Images' label sets and subsets; a level: (image, columns, last label's position)."""

    def __init__(self, x: NDArray[np.bool_], name: str) -> None:
        self.rows, cols = np.nonzero(x)  # row-major: each image's columns come out sorted
        self.cols = cols.astype(np.int16 if x.shape[1] < 2**15 else np.int32)  # radix sorts
        self.counts = np.bincount(self.rows, minlength=(n := x.shape[0]))
        self.starts, self.name = np.cumsum(self.counts) - self.counts, name
        self.empty = (np.arange(n), np.empty((n, 0), self.cols.dtype), np.full(n, -1))

    def grow(self, level: tuple[Any, Any, Any], keep: Any = slice(None)) -> tuple[Any, Any, Any]:
        """Each kept subset of a level with one more label: each of its image's later ones."""
        images, items, last = (x[keep] for x in level)
        later = self.counts[images] - last - 1
        pick = np.repeat(np.arange(len(images)), later)
        last = last[pick] + 1 + np.arange(len(pick)) - np.repeat(np.cumsum(later) - later, later)
        images = images[pick]
        if len(images) > MAX_SUBSETS:
            raise FairnessConfigError(
                f"{self.name} has images with up to {int(self.counts.max())} labels: "
                f"{len(images):,} subsets of size {items.shape[1] + 1} (limit {MAX_SUBSETS:,}). "
                "Pass a smaller max_size.")
        return images, np.column_stack([items[pick], self.cols[self.starts[images] + last]]), last

    def hits(self, combos: Combos) -> Hits:
        """(image, combination) pairs, numbered by size; only beginnings of M's grow."""
        offset, found, level = 0, [], self.grow(self.empty)
        for size in range(1, max(combos) + 1):
            if size in combos:
                index = _find(combos[size], level[1])
                found.append((level[0][index >= 0], index[index >= 0] + offset))
                offset += len(combos[size])
            if size < max(combos):
                heads = np.concatenate([c[:, :size] for s, c in combos.items() if s > size])
                level = self.grow(level, _find(_unique(heads)[0], level[1]) >= 0)
        return np.concatenate([f[0] for f in found]), np.concatenate([f[1] for f in found])


def combinations(x_train: NDArray[np.bool_], x_test: NDArray[np.bool_], *, min_size: int,
                 max_size: int | None, min_count: int, reference: bool,
                 ) -> tuple[Combos, Hits, Hits]:
    """M (combinations held by ``min_count`` train and test images) and its hits there."""
    train, test = Labels(x_train, "train_attrs"), Labels(x_test, "test_attrs")
    low, high = min_size, max_size or x_train.shape[1]
    combos: Combos = {}
    if reference:  # the released get_multiatts: the exact training label sets
        for s in np.unique(train.counts[(train.counts >= low) & (train.counts <= high)]).tolist():
            unique, inverse = _unique(train.cols[train.counts[train.rows] == s].reshape(-1, s))
            combos[s] = unique[np.bincount(inverse) >= min_count]
    else:  # every subset; a rare one is part of no frequent one, so only frequent ones grow
        level, size = train.grow(train.empty), 1
        while len(level[0]) and size <= high:
            unique, inverse = _unique(level[1])
            often = np.bincount(inverse, minlength=len(unique)) >= min_count
            combos[size] = unique[often] if size >= low else unique[:0]
            level, size = train.grow(level, often[inverse]), size + 1
    combos = {s: c for s, c in combos.items() if len(c)}
    if combos:
        held = np.bincount(test.hits(combos)[1], minlength=sum(map(len, combos.values())))
        parts = np.split(held >= min_count, np.cumsum([len(c) for c in combos.values()])[:-1])
        combos = {s: c[h] for (s, c), h in zip(combos.items(), parts) if h.any()}
    if not combos:
        upto = "" if max_size is None else f" and <= {high}"
        raise InsufficientDataError(
            f"no attribute combination of size >= {low}{upto} occurs in at least min_count="
            f"{min_count} images of both train and test; lower min_count or min_size.")
    return combos, train.hits(combos), test.hits(combos)
