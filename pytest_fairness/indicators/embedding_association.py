"""Image Embedding Association Test, iEAT: WEAT on image embeddings.

From "Image Representations Learned With Unsupervised Pre-Training Contain Human-like
Biases" (Steed & Caliskan, FAccT 2021); docs page "Image embedding association test (iEAT)".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_fairness.errors import (
    FairnessConfigError,
    InsufficientDataError,
    InvalidDataError,
    check_int,
    own_error,
)
from pytest_fairness.indicators._common import check_variant, embedding_matrix, row_norms
from pytest_fairness.results import GroupStat, IndicatorResult
from pytest_fairness.stats import (
    Units,
    bootstrap,
    check_bootstrap_options,
    resolve_seed,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["holm", "ieat", "ieat_battery"]

__tracebackhide__ = own_error

_EPS = float(np.finfo(np.float64).eps)
#: Largest number of half-subset sums the exact test keeps in memory (8 bytes each).
MAX_EXACT_HALF = 1 << 24
#: Rows of random keys drawn at once by the sampled test (times the item count, in keys).
_SAMPLE_KEYS_PER_CHUNK = 1 << 17


def _embeddings(values: Any, name: str) -> NDArray[np.float64]:
    """Return one set of embeddings as a float64 (items, dimensions) array, or raise."""
    array = embedding_matrix(values, name).astype(np.float64, copy=False)
    if array.shape[0] < 2:
        raise InsufficientDataError(
            f"{name} has {array.shape[0]} item(s); every iEAT set needs at least 2 images "
            "(the effect size divides by a sample standard deviation and the permutation "
            "test re-partitions the targets). Add images to the set.")
    return array / row_norms(array, name)[:, None]


def _names(names: Any) -> tuple[str, str, str, str]:
    if names is None:
        return ("X", "Y", "A", "B")
    if isinstance(names, str) or not isinstance(names, Sequence) or len(names) != 4:
        raise FairnessConfigError(
            f"names must be four labels for (X, Y, A, B); got names={names!r}.")
    labels = tuple(str(n) for n in names)
    if labels[0] == labels[1]:
        raise FairnessConfigError(
            f"names gives X and Y the same label {labels[0]!r}; the targets need distinct "
            "labels to be told apart in reports.")
    return labels  # type: ignore[return-value]


def _associations(
    X: NDArray[np.float64], Y: NDArray[np.float64], A: NDArray[np.float64],
    B: NDArray[np.float64],
) -> NDArray[np.float64]:
    """``s(w, A, B)`` for every ``w`` of X then Y, from unit-norm rows (one product)."""
    direction = A.mean(axis=0) - B.mean(axis=0)
    return np.concatenate((X, Y)) @ direction


def _tolerance(s: NDArray[np.float64], k: int, dim: int, n_attributes: int) -> float:
    """Rounding bound of a difference of two k-item sums of ``s`` (each s_i ~(dim + n_attr)ε)."""
    per_item = (dim + n_attributes + 4) * _EPS
    summation = s.size * _EPS * float(np.abs(s).sum())
    return 8.0 * (k * per_item + summation)


def _sums_by_size(values: NDArray[np.float64], max_size: int) -> list[NDArray[np.float64]]:
    """``out[j]`` = sums of all j-item subsets of ``values``, for j = 0..max_size."""
    out: list[NDArray[np.float64]] = [np.zeros(1)] + [np.empty(0)] * max_size
    for count, x in enumerate(values.tolist(), start=1):
        for j in range(min(max_size, count), 0, -1):
            out[j] = np.concatenate((out[j], out[j - 1] + x))
    return out


def _half_cost(m: int, max_size: int) -> int:
    return sum(math.comb(m, j) for j in range(max_size + 1))


def _exact_counts(
    v: NDArray[np.float64], k: int, low: float, high: float
) -> tuple[int, int, int]:
    """``(n_greater, n_tied, n_total)`` over all k-subsets of ``v`` (meet in the middle)."""
    n = v.size
    left, right = v[: n // 2], v[n // 2 :]
    lo_j = max(0, k - right.size)
    hi_j = min(left.size, k)
    cost = _half_cost(left.size, hi_j) + _half_cost(right.size, k - lo_j)
    if cost > MAX_EXACT_HALF:
        raise FairnessConfigError(
            f"the exact test over C({n}, {k}) = {math.comb(n, k):.3g} partitions would keep "
            f"{cost:.3g} partial sums in memory (limit {MAX_EXACT_HALF:.3g}); lower exact_limit "
            "below that number of partitions to use the sampled test (n_permutations).")
    left_sums = _sums_by_size(left, hi_j)
    right_sums = _sums_by_size(right, k - lo_j)
    greater = tied_or_greater = total = 0
    for j in range(lo_j, hi_j + 1):
        ls = left_sums[j]
        rs = np.sort(right_sums[k - j])
        m = rs.size
        greater += int(m * ls.size - np.searchsorted(rs, high - ls, side="right").sum())
        tied_or_greater += int(m * ls.size - np.searchsorted(rs, low - ls, side="left").sum())
        total += m * ls.size
    return greater, tied_or_greater - greater, total


def _sampled_counts(
    v: NDArray[np.float64], k: int, low: float, high: float, n_draws: int,
    rng: np.random.Generator,
) -> tuple[int, int]:
    """Among ``n_draws`` uniform k-subsets, the sums > high and within [low, high].

    A subset: the k smallest of iid integer keys; rows where keys tie at k are redrawn.
    """
    n = v.size
    dtype = np.uint16 if n <= 2048 else np.uint32
    top = int(np.iinfo(dtype).max)
    rows = max(16, min(4096, _SAMPLE_KEYS_PER_CHUNK // n))
    weights = np.column_stack((v, np.ones_like(v)))
    greater = tied = done = 0
    while done < n_draws:
        want = min(rows, n_draws - done)
        keys = rng.integers(0, top, size=(want, n), dtype=dtype, endpoint=True)
        kth = np.partition(keys, k - 1, axis=1)[:, k - 1 : k]
        # One BLAS product gives each row's sum and its subset size (exact small integers);
        # numpy's matmul on a bool matrix does not use BLAS, hence the cast.
        sums, sizes = ((keys <= kth).astype(np.float64) @ weights).T
        if not (sizes == k).all():
            sums = sums[sizes == k]
        above = sums > high
        greater += int(np.count_nonzero(above))
        tied += int(np.count_nonzero(~above & (sums >= low)))
        done += sums.size
    return greater, tied


def _bootstrap_generator(rng: np.random.Generator) -> np.random.Generator:
    """A child stream of ``rng`` (the permutation draws never shift), else ``rng`` itself."""
    try:
        return rng.spawn(1)[0]
    except TypeError:
        return rng


@dataclass(frozen=True)
class _Intervals:
    """What the bootstrap adds to an iEAT result (empty without it)."""

    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    groups: tuple[tuple[float, float] | None, ...] = (None, None)
    plan: dict[str, str] = field(default_factory=dict)
    replicates: dict[str, tuple[float, ...]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def _ieat_intervals(
    sets: Sequence[NDArray[np.float64]], tol: float, *, n_bootstrap: int,
    confidence_level: float, interval_method: str, rng: np.random.Generator,
) -> _Intervals:
    """Intervals of d, S and each target's mean association: each set redrawn within itself.

    Equally associated targets give a NaN d (left out).
    """
    x, y, a, b = sets
    n_x, n_y, n_a = x.shape[0], y.shape[0], a.shape[0]
    n_t = n_x + n_y
    targets = np.concatenate((x, y))
    c_ta, c_tb = targets @ a.T, targets @ b.T
    sizes = [m.shape[0] for m in sets]
    units = Units.of(sum(sizes), strata=np.repeat(np.arange(4), sizes))

    def statistic(w: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        w_t, w_a, w_b = w[:, :n_t], w[:, n_t : n_t + n_a], w[:, n_t + n_a :]
        s = (w_a @ c_ta.T) / w_a.sum(axis=1, keepdims=True) - (
            (w_b @ c_tb.T) / w_b.sum(axis=1, keepdims=True))
        ws = w_t * s
        count_x, count_y = w_t[:, :n_x].sum(axis=1), w_t[:, n_x:].sum(axis=1)
        sum_x, sum_y = ws[:, :n_x].sum(axis=1), ws[:, n_x:].sum(axis=1)
        mean_x, mean_y = sum_x / count_x, sum_y / count_y
        total = count_x + count_y
        centred = s - ((sum_x + sum_y) / total)[:, None]
        std = np.sqrt((w_t * centred**2).sum(axis=1) / (total - 1))
        defined = std > tol
        effect = (mean_x - mean_y) / np.where(defined, std, 1.0)
        return {"effect_size": np.where(defined, effect, np.nan), "statistic": sum_x - sum_y,
                "mean_x": mean_x, "mean_y": mean_y}

    found = bootstrap(statistic, units, n_bootstrap=n_bootstrap,
                      confidence_level=confidence_level, method=interval_method, seed=rng)
    intervals = found.defined("effect_size", "statistic")
    if "effect_size" in intervals:
        intervals["value"] = intervals["effect_size"]
    undefined = int(np.isnan(found.replicates["effect_size"]).sum())
    notes = (f"{undefined} of {n_bootstrap} bootstrap replicates drew targets that are all "
             "equally associated; their effect size is undefined and left out of its "
             "interval.",) if undefined else ()
    return _Intervals(intervals, (found.interval("mean_x"), found.interval("mean_y")),
                      {"bootstrap_plan": found.plan}, found.draws({  # every interval's
                          "value": "effect_size", "effect_size": "effect_size",
                          "statistic": "statistic", "group:0": "mean_x", "group:1": "mean_y"}),
                      notes)


@dataclass(frozen=True)
class _PermutationTest:
    """The counts behind the p-value: over every re-partition (exact) or a sample."""

    p_value: float
    exact: bool
    drawn: int
    greater: int
    tied: int
    n_partitions: int

    def notes(self, tol: float, variant: str) -> tuple[str, ...]:
        """Say how many re-partitions tie with the observed statistic, and how they count."""
        if not self.tied:
            return ()
        rule = "counted as exceeding (reference rule)" if variant == "reference" else (
            "not counted as exceeding")
        return (f"{self.tied} of {self.drawn} re-partitions tie with the observed "
                f"statistic (within {tol:.2g}); {rule}.",)


def _check_sets(X: Any, Y: Any, A: Any, B: Any, variant: str) -> list[NDArray[np.float64]]:
    """The four sets as unit-norm rows of one dimension, or raise."""
    sets = [_embeddings(v, n) for v, n in zip((X, Y, A, B), ("X", "Y", "A", "B"))]
    dims = {n: s.shape[1] for n, s in zip("XYAB", sets)}
    if len(set(dims.values())) > 1:
        shown = ", ".join(f"{n} has {d}" for n, d in dims.items())
        raise InvalidDataError(
            f"X, Y, A and B must share one embedding dimension; {shown}. Embed all four "
            "sets with the same model and layer.")
    n_x, n_y = sets[0].shape[0], sets[1].shape[0]
    if variant == "reference" and n_x != n_y:
        raise FairnessConfigError(
            f"variant='reference' reproduces code that requires |X| = |Y|; got |X|={n_x}, "
            f"|Y|={n_y}. Use variant='paper' (re-partitions keep both sizes) or equalise "
            "the sets.")
    return sets


def _permutation_test(
    s: NDArray[np.float64], n_x: int, tol: float, *, variant: str, n_permutations: int,
    exact_limit: int, rng: np.random.Generator,
) -> _PermutationTest:
    """Count the re-partitions of X ∪ Y whose statistic exceeds (or ties) the observed one."""
    n_y = s.size - n_x
    k = min(n_x, n_y)
    # A re-partition exceeds the observed one iff the sum over its X part does; count on the
    # smaller side (sum over Y' below the observed Y sum, i.e. -s above -sum_Y).
    if n_x <= n_y:
        v, observed = s, float(s[:n_x].sum())
    else:
        v, observed = -s, float(-s[n_x:].sum())
    n_partitions = math.comb(n_x + n_y, k)
    # The released weat/test.py enumerates iff C(2n, n) <= n_samples (our n_permutations).
    exact = n_partitions <= (n_permutations if variant == "reference" else exact_limit)
    low, high = observed - tol, observed + tol
    reference = variant == "reference"  # ties count as exceeding; sampled: (1 + c) / n
    if exact:
        greater, tied, drawn = _exact_counts(v, k, low, high)
        p_value = (greater + tied * reference) / drawn
    else:
        drawn = n_permutations - reference
        greater, tied = _sampled_counts(v, k, low, high, drawn, rng)
        p_value = (greater + (1 + tied) * reference) / n_permutations
    return _PermutationTest(p_value, exact, drawn, greater, tied, n_partitions)


def ieat(
    X: Any, Y: Any, A: Any, B: Any, *, n_permutations: int = 10_000,
    exact_limit: int = 10_000, seed: Any = None, variant: str = "paper",
    names: Sequence[str] | None = None, n_bootstrap: int = 1000, confidence_level: float = 0.95,
    interval_method: str = "bca",
) -> IndicatorResult:
    """Image Embedding Association Test: statistic, effect size and permutation p-value.

    From "Image Representations Learned With Unsupervised Pre-Training Contain Human-like
    Biases" (Steed & Caliskan, FAccT 2021).

    Parameters
    ----------
    X, Y, A, B : array-like of shape (items, d)
        Embeddings of the two target sets and the two attribute sets (2 items or more each).
    n_permutations, exact_limit : int, default 10_000
        Every re-partition is enumerated when there are at most ``exact_limit``; else
        ``n_permutations`` are drawn.
    seed : int, numpy.random.Generator or None
        Seed of the re-partitions and (through a child stream) of the bootstrap.
    variant : {"paper", "reference"}
        ``"reference"``: the released code's rule (ties exceed, a sampled p-value is
        ``(1 + exceedances among n − 1 draws) / n``); needs ``|X| = |Y|``.
    names : sequence of four str, optional
        Labels of X, Y, A and B for reports.
    n_bootstrap, confidence_level, interval_method
        Bootstrap intervals (1,000 replicates by default; 0: none), each set redrawn within
        itself; BCa by default (d is
        a ratio whose percentile interval is conservative), ``"percentile"`` on request.

    Returns
    -------
    IndicatorResult
        ``value`` is d; ``stats`` holds ``statistic``, ``effect_size``, ``p_value``,
        ``mean_association_x``, ``mean_association_y``, ``std_association``; the groups are
        X and Y with their mean association; ``params`` records the seed and the counts.

    Raises
    ------
    InvalidDataError, InsufficientDataError, FairnessConfigError

    Examples
    --------
    >>> X = [[1.0, 0.1], [0.9, 0.3]]
    >>> Y = [[0.1, 1.0], [0.2, 0.8]]
    >>> A = [[1.0, 0.0], [0.8, 0.2]]
    >>> B = [[0.0, 1.0], [0.3, 0.9]]
    >>> r = ieat(X, Y, A, B)
    >>> round(r.stats["effect_size"], 4), r.stats["p_value"], r.params["exact"]
    (1.7152, 0.0, True)
    >>> ieat(X, Y, A, B, variant="reference").stats["p_value"]  # 1 of 6 partitions ties
    0.16666666666666666
    """
    check_variant(variant, "ieat")
    n_permutations = check_int("n_permutations", n_permutations, low=1)
    exact_limit = check_int("exact_limit", exact_limit, low=0)
    n_bootstrap, confidence_level, interval_method = check_bootstrap_options(
        n_bootstrap, confidence_level, interval_method)
    labels = _names(names)
    sets = _check_sets(X, Y, A, B, variant)
    x, y, a, b = sets
    n_x, n_y = x.shape[0], y.shape[0]
    rng, seed_used = resolve_seed(seed)
    boot_rng = _bootstrap_generator(rng) if n_bootstrap else None

    s = _associations(x, y, a, b)
    s_x, s_y = s[:n_x], s[n_x:]
    std = float(s.std(ddof=1))
    tol = _tolerance(s, min(n_x, n_y), x.shape[1], a.shape[0] + b.shape[0])
    if std <= tol:
        raise InvalidDataError(
            f"every item of X ∪ Y has the same association s(w, A, B) = {float(s.mean()):.6g} "
            f"(standard deviation {std:.3g}), so the effect size is 0/0. This happens when "
            "X and Y hold the same images, or A and B do; check the four sets.")
    effect = float((s_x.mean() - s_y.mean()) / std)
    test = _permutation_test(s, n_x, tol, variant=variant, n_permutations=n_permutations,
                             exact_limit=exact_limit, rng=rng)
    boot = _Intervals() if boot_rng is None else _ieat_intervals(
        sets, tol, n_bootstrap=n_bootstrap, confidence_level=confidence_level,
        interval_method=interval_method, rng=boot_rng)
    return IndicatorResult(
        name="ieat", metric="effect_size", value=effect,
        groups=(GroupStat(labels[0], n_x, float(s_x.mean()), interval=boot.groups[0]),
                GroupStat(labels[1], n_y, float(s_y.mean()), interval=boot.groups[1])),
        intervals=boot.intervals,
        stats={"statistic": float(s_x.sum() - s_y.sum()), "effect_size": effect,
               "p_value": test.p_value, "mean_association_x": float(s_x.mean()),
               "mean_association_y": float(s_y.mean()), "std_association": std},
        params={
            "seed": seed_used, "n_permutations": n_permutations, "exact_limit": exact_limit,
            "exact": test.exact, "variant": variant, "names": list(labels),
            "n_x": n_x, "n_y": n_y, "n_a": a.shape[0], "n_b": b.shape[0], "dim": x.shape[1],
            "n_partitions": test.n_partitions if test.exact else test.drawn,
            "n_exceeding": test.greater, "n_ties": test.tied, "tie_tolerance": tol,
            "n_bootstrap": n_bootstrap, "confidence_level": confidence_level,
            "interval_method": interval_method, **boot.plan},
        higher_is_better=False, min_group_size=2,
        notes=(*test.notes(tol, variant), *("seed was a numpy Generator; pass an int seed to "
               "make the p-value reproducible from the result.",) * (seed_used is None),
               *boot.notes),
        replicates=boot.replicates)


def holm(p_values: Any) -> NDArray[np.float64]:
    """Holm–Bonferroni adjusted p-values, in the input order."""
    p = np.asarray(p_values, dtype=np.float64).reshape(-1)
    if p.size == 0:
        raise InsufficientDataError("p_values is empty; pass at least one p-value.")
    bad = np.flatnonzero(~((p >= 0) & (p <= 1)))
    if bad.size:
        raise InvalidDataError(
            f"p_values must lie in [0, 1]; entry {int(bad[0])} is {float(p[bad[0]])!r}.")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = scaled
    return out


def ieat_battery(
    tests: Mapping[str, Sequence[Any]], *, n_permutations: int = 10_000,
    exact_limit: int = 10_000, seed: Any = None, variant: str = "paper",
    names: Mapping[str, Sequence[str]] | None = None, n_bootstrap: int = 1000,
    confidence_level: float = 0.95, interval_method: str = "bca",
) -> dict[str, IndicatorResult]:
    """Several iEATs in one run, with Holm-adjusted p-values beside the raw ones.

    Each test runs as :func:`ieat` with its own seed drawn from ``seed`` (in its
    ``params["seed"]``); :func:`holm` over the raw p-values adds ``stats["p_value_holm"]``.

    Parameters
    ----------
    tests : mapping of str to (X, Y, A, B)
        Test name → the four embedding sets.
    n_permutations, exact_limit, variant, n_bootstrap, confidence_level, interval_method
        As in :func:`ieat`, for every test (each test's bootstrap derives from its seed).
    seed : int, numpy.random.Generator or None
        Root seed of the battery (reported as ``params["battery_seed"]``).
    names : mapping of str to four str, optional
        Test name → labels of (X, Y, A, B).

    Returns
    -------
    dict of str to IndicatorResult, in the order of ``tests``

    Examples
    --------
    >>> X = [[1.0, 0.1], [0.9, 0.3]]
    >>> Y = [[0.1, 1.0], [0.2, 0.8]]
    >>> A = [[1.0, 0.0], [0.8, 0.2]]
    >>> B = [[0.0, 1.0], [0.3, 0.9]]
    >>> out = ieat_battery({"t1": (X, Y, A, B), "t2": (Y, X, A, B)}, seed=0)
    >>> [(k, r.stats["p_value"], r.stats["p_value_holm"]) for k, r in out.items()]
    [('t1', 0.0, 0.0), ('t2', 0.8333333333333334, 0.8333333333333334)]
    """
    n_bootstrap, confidence_level, interval_method = check_bootstrap_options(
        n_bootstrap, confidence_level, interval_method)
    if not isinstance(tests, Mapping) or not tests:
        raise FairnessConfigError(
            "tests must be a non-empty mapping of test name to (X, Y, A, B); got "
            f"{type(tests).__name__} {'(empty)' if isinstance(tests, Mapping) else ''}".rstrip()
            + ".")
    names = {} if names is None else names
    unknown = sorted(set(names) - set(tests))
    if unknown:
        raise FairnessConfigError(f"names has labels for tests that are not in tests: {unknown}.")
    rng, root = resolve_seed(seed)
    seeds = rng.integers(0, 1 << 62, size=len(tests)).tolist()
    results: dict[str, IndicatorResult] = {}
    for (key, sets), child in zip(tests.items(), seeds):
        if isinstance(sets, (str, bytes)) or not isinstance(sets, Sequence) or len(sets) != 4:
            raise FairnessConfigError(
                f"tests[{key!r}] must be the four sets (X, Y, A, B); got "
                f"{type(sets).__name__}"
                + (f" of length {len(sets)}" if isinstance(sets, Sequence) else "") + ".")
        try:
            results[str(key)] = ieat(
                *sets, n_permutations=n_permutations, exact_limit=exact_limit, seed=int(child),
                variant=variant, names=names.get(key), n_bootstrap=n_bootstrap,
                confidence_level=confidence_level, interval_method=interval_method)
        except (InvalidDataError, FairnessConfigError) as exc:
            raise type(exc)(f"test {key!r}: {exc}") from None
    adjusted = holm([r.stats["p_value"] for r in results.values()])
    return {
        key: replace(
            r,
            stats={**r.stats, "p_value_holm": float(p)},
            params={**r.params, "battery_seed": root, "n_tests": len(results)})
        for (key, r), p in zip(results.items(), adjusted)}
