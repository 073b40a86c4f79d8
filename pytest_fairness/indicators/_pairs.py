"""Fair SA's operating points over cosine-similarity pairs: threshold at FAR, GAR at FAR."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_fairness.errors import InsufficientDataError, own_error
from pytest_fairness.stats import Units

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["Verification", "clean_threshold", "false_matches"]

__tracebackhide__ = own_error

#: Rows of the pairwise similarity matrix computed at once when deriving a threshold.
_BLOCK = 2048


def _allowed(far: float, total: Any) -> Any:
    """How many of ``total`` impostor pairs may score at or above the threshold at ``far``."""
    return np.minimum(np.floor(far * total + 1e-9), total - 1)


def _far_threshold(impostor: NDArray[np.float64], far: float, total: int | None = None) -> float:
    """The lowest threshold t with #{impostor >= t} <= far · N (the top scores suffice)."""
    total = impostor.size if total is None else total
    k = impostor.size - int(_allowed(far, total)) - 1  # position of the (allowed+1)-th largest
    return float(np.nextafter(np.partition(impostor, k)[k], np.inf))


def _clean_blocks(
    clean: NDArray[np.float64], ids: NDArray[Any] | None, upper: bool
) -> Iterator[tuple[slice, NDArray[np.float64], NDArray[np.bool_]]]:
    """Row blocks of the clean similarities with their impostor pairs (each once if ``upper``)."""
    n = clean.shape[0]
    for start in range(0, n, _BLOCK):
        rows = slice(start, min(n, start + _BLOCK))
        i, j = np.arange(rows.start, rows.stop)[:, None], np.arange(n)[None, :]
        mask = j > i if upper else j != i
        if ids is not None:
            mask &= ids[rows][:, None] != ids[None, :]
        yield rows, clean[rows] @ clean.T, mask


def clean_threshold(clean: NDArray[np.float64], ids: NDArray[Any] | None, far: float) -> float:
    """Threshold at ``far`` over clean impostor pairs, computed in row blocks (top scores only)."""
    n = clean.shape[0]
    if ids is None:
        total = n * (n - 1) // 2
    else:
        _, counts = np.unique(ids, return_counts=True)
        total = int((n * n - (counts.astype(np.int64) ** 2).sum()) // 2)
    if total == 0:
        raise InsufficientDataError(
            "no impostor pairs among the clean images (all from one identity, or a single "
            "image), so a threshold cannot be derived from far=; pass threshold=.")
    keep = int(_allowed(far, total)) + 1
    top = np.empty(0)
    for _, scores, mask in _clean_blocks(clean, ids, upper=True):
        top = np.concatenate([top, scores[mask]])
        if top.size > keep:
            top = np.partition(top, top.size - keep)[top.size - keep:]
    return _far_threshold(top, far, total)


def false_matches(
    clean: NDArray[np.float64], ids: NDArray[Any] | None, threshold: float
) -> NDArray[np.bool_]:
    """Images whose clean embedding matches another identity's at ``threshold``."""
    out = np.zeros(clean.shape[0], dtype=bool)
    for rows, scores, mask in _clean_blocks(clean, ids, upper=False):
        out[rows] = ((scores >= threshold) & mask).any(axis=1)
    return out


class Verification:
    """GAR at FAR within a subset of images, with optional pruning fixed at level 0."""

    def __init__(self, index: NDArray[np.intp], ids: NDArray[Any], far: float, name: str):
        self.index = index
        self.far = far
        same = ids[index][:, None] == ids[index][None, :]
        off = ~np.eye(index.size, dtype=bool)
        self.genuine = same & off
        self.impostor = ~same
        if not self.genuine.any() or not self.impostor.any():
            kind = "genuine (same identity)" if not self.genuine.any() else "impostor"
            raise InsufficientDataError(
                f"verification needs {kind} pairs within {name}, which has none among its "
                f"{index.size} images; each subgroup needs identities with at least two "
                "images and at least two identities. Use task='self_matching' otherwise.")
        self.pruned_pairs = 0

    def prune(self, scores: NDArray[np.float64]) -> None:
        sub = scores[np.ix_(self.index, self.index)]
        threshold = _far_threshold(sub[self.impostor], self.far)
        genuine = self.genuine & (sub >= threshold)
        impostor = self.impostor & (sub < threshold)
        self.pruned_pairs = int(self.genuine.sum() + self.impostor.sum()
                                - genuine.sum() - impostor.sum())
        self.genuine, self.impostor = genuine, impostor
        if not genuine.any():
            raise InsufficientDataError(
                "pruning removed every genuine pair of a subgroup (all are false non-matches "
                "at level 0); run without prune=True.")

    def gar(self, scores: NDArray[np.float64]) -> float:
        sub = scores[np.ix_(self.index, self.index)]
        threshold = _far_threshold(sub[self.impostor], self.far)
        return float((sub[self.genuine] >= threshold).mean())

    def weigh(self, units: Units, spare: bool) -> None:
        """Fix the (pruned) pairs' clusters: impostor pairs weigh w_a·w_b, genuine ones w_a."""
        from scipy import sparse

        rows, cols = np.nonzero(self.impostor)
        self.pair = units.codes[self.index[rows]], units.codes[self.index[cols]]
        self.counts = sparse.csr_matrix((np.ones(rows.size), self.pair),
                                        shape=(units.n_clusters,) * 2)
        self.mate = units.codes[self.index[np.nonzero(self.genuine)[0]]]
        allowed = int(_allowed(self.far, rows.size)) + 1
        # Replicates reweigh the pairs, so their threshold may lie deeper than the estimate's.
        self.top = min(rows.size, 2 * allowed + 100 if spare else allowed)

    def pairs(self, scores: NDArray[np.float64]) -> tuple[NDArray[Any], ...]:
        """The top impostor scores in decreasing order, their pair numbers, genuine scores."""
        sub = scores[np.ix_(self.index, self.index)]
        impostor = -sub[self.impostor]
        top = np.argpartition(impostor, self.top - 1)[: self.top]
        top = top[np.argsort(impostor[top], kind="stable")]
        return -impostor[top], top, sub[self.genuine]

    def weighted_gar(self, levels: list[tuple[NDArray[Any], ...]], w: NDArray[np.float64]) -> Any:
        """GAR at FAR (r, levels) of :meth:`pairs` of each level at cluster weights w.

        NaN where a replicate drew no genuine or impostor pair, or its threshold lies below
        the impostor scores kept.
        """
        total = (np.asarray(self.counts @ w.T).T * w).sum(axis=1)
        target = _allowed(self.far, total) + 1
        target[total == 0] = np.nan
        size = w.shape[1]
        done: dict[int, Any] = {}
        for level in (p for p in levels if id(p) not in done):
            scores, top, genuine = level
            k = _reaching(w, self.pair[0][top], self.pair[1][top], target)
            t = np.nextafter(scores[np.minimum(k, scores.size - 1)], np.inf)
            above = genuine >= t.max()  # for every replicate; the band between varies
            band = (genuine >= t.min()) & ~above
            with np.errstate(invalid="ignore"):
                gar = (w @ np.bincount(self.mate[above], minlength=size) + (
                    w[:, self.mate[band]] * (genuine[band] >= t[:, None])).sum(axis=1)) / (
                    w @ np.bincount(self.mate, minlength=size))
            done[id(level)] = np.where(k < scores.size, gar, np.nan)
        return np.stack([done[id(p)] for p in levels], axis=1)


def _reaching(w: NDArray[np.float64], a: NDArray[np.intp], b: NDArray[np.intp],
              target: NDArray[np.float64], block: int = 64) -> Any:
    """Per replicate r, the first p with Σ_{i <= p} w[r, a_i]·w[r, b_i] >= target[r] (or more).

    Weights are counts, so float32 sums stay exact (below 2^24).
    """
    r, pad = w.shape[0], -a.size % block
    wt = np.vstack([w.T, np.zeros((1, r))]).astype(np.float32)  # a zero cluster pads blocks
    a, b = (np.concatenate([v, np.full(pad, w.shape[1])]) for v in (a, b))
    u = (wt[a] * wt[b]).reshape(-1, block, r)
    ends = np.cumsum(u.sum(axis=1), axis=0)
    with np.errstate(invalid="ignore"):
        j = np.minimum((ends < target).sum(axis=0), ends.shape[0] - 1)
        before = np.where(j > 0, ends[j - 1, np.arange(r)], 0.0)
        inside = np.cumsum(u[j, :, np.arange(r)], axis=1) + before[:, None]
        return j * block + (inside < target[:, None]).sum(axis=1) + np.isnan(target) * a.size
