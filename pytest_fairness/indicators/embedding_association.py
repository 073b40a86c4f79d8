"""Image Embedding Association Test, iEAT: WEAT on image embeddings.

The test is that of Steed & Caliskan, "Image Representations Learned With Unsupervised
Pre-Training Contain Human-like Biases" (FAccT 2021), which carries the Word Embedding
Association Test of Caliskan, Bryson & Narayanan ("Semantics derived automatically from
language corpora contain human-like biases", Science 2017) over to images.

Two target sets X and Y (e.g. images of flowers and insects) and two attribute sets A and B
(pleasant and unpleasant images) are compared through the cosine similarities of their
embeddings. Each target item gets one number, its differential association
``s(w, A, B)``; everything else — the test statistic, the effect size and the permutation
p-value — is arithmetic on that vector:

* the associations come from one matrix-vector product with the difference of the mean unit
  attribute vectors (``mean_a cos(w, a) = ŵ · mean_a â``), never one cosine per permutation;
* a re-partition of X ∪ Y is the sum of ``s`` over an index subset, so the exact test counts
  all ``C(|X| + |Y|, |X|)`` subsets by meet-in-the-middle (subset sums of two halves, sorted,
  matched by binary search), which is exact and runs in milliseconds at ``|X| = |Y| = 12``
  (2.7 million partitions) and in seconds up to about ``|X| = |Y| = 22``; the sampled test
  draws uniformly random equal-size subsets in vectorised chunks of bounded memory;
* ties are decided with an explicit rounding-error bound, not by ``==`` on floats summed in
  different orders.

``variant="reference"`` reproduces the p-value rule of the released code (ryansteed/ieat,
which calls ryansteed/weat ``weat/test.py``): ties count as exceedances, and a sampled
p-value is ``(1 + exceedances among n − 1 random partitions) / n``; it needs ``|X| = |Y|``.

Bootstrap intervals (``n_bootstrap > 0``, an addition to the published test) resample the
stimuli within each of the four sets, so X, Y, A and B keep their sizes in every replicate. The
cosine matrices target × attribute are computed once; a replicate's weights then give every
association, the weighted means over X and Y and the frequency-weighted sample standard
deviation over X ∪ Y with a few matrix products, for all replicates at once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_fairness.errors import FairnessConfigError, InsufficientDataError, InvalidDataError
from pytest_fairness.indicators._common import check_variant
from pytest_fairness.results import GroupStat, IndicatorResult
from pytest_fairness.stats import (
    Bootstrap,
    Units,
    bootstrap,
    check_bootstrap_options,
    resolve_seed,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["holm", "ieat", "ieat_battery"]

_EPS = float(np.finfo(np.float64).eps)
#: Largest number of half-subset sums the exact test keeps in memory (8 bytes each).
MAX_EXACT_HALF = 1 << 24
#: Rows of random keys drawn at once by the sampled test (times the item count, in keys).
_SAMPLE_KEYS_PER_CHUNK = 1 << 17


# -- validation ---------------------------------------------------------------------------

def _embeddings(values: Any, name: str) -> NDArray[np.float64]:
    """Return one set of embeddings as a float64 (items, dimensions) array, or raise."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidDataError(
            f"{name} must be a numeric array of embeddings with shape (items, dimensions); "
            f"converting it to float failed ({exc}). Pass the feature matrix of the images."
        ) from None
    if array.ndim != 2:
        raise InvalidDataError(
            f"{name} must be 2-D, one embedding per row (items, dimensions); got shape "
            f"{array.shape}. Stack the embeddings of the set's images into one matrix."
        )
    if array.shape[0] < 2:
        raise InsufficientDataError(
            f"{name} has {array.shape[0]} item(s); every iEAT set needs at least 2 images "
            "(the effect size divides by a sample standard deviation and the permutation "
            "test re-partitions the targets). Add images to the set."
        )
    if array.shape[1] == 0:
        raise InvalidDataError(f"{name} has 0 dimensions (shape {array.shape}); pass embeddings.")
    finite = np.isfinite(array).all(axis=1)
    if not finite.all():
        bad = np.flatnonzero(~finite)
        raise InvalidDataError(
            f"{name} has NaN or infinite values in row {int(bad[0])} ({bad.size} row(s) in "
            "all); drop those images or fix the feature extraction."
        )
    norms = np.linalg.norm(array, axis=1)
    zero = norms == 0
    if zero.any():
        bad = np.flatnonzero(zero)
        raise InvalidDataError(
            f"{name} row {int(bad[0])} is a zero vector ({bad.size} row(s) in all); its cosine "
            "similarity is undefined. Drop those images or check the feature extraction."
        )
    unit: NDArray[np.float64] = array / norms[:, None]
    return unit


def _positive_int(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise FairnessConfigError(
            f"{name} must be an int >= {minimum}; got {name}={value!r} "
            f"(type={type(value).__name__})."
        )
    return int(value)


def _names(names: Any) -> tuple[str, str, str, str]:
    if names is None:
        return ("X", "Y", "A", "B")
    if isinstance(names, str) or not isinstance(names, Sequence) or len(names) != 4:
        raise FairnessConfigError(
            f"names must be four labels for (X, Y, A, B); got names={names!r}."
        )
    labels = tuple(str(n) for n in names)
    if labels[0] == labels[1]:
        raise FairnessConfigError(
            f"names gives X and Y the same label {labels[0]!r}; the targets need distinct "
            "labels to be told apart in reports."
        )
    return labels  # type: ignore[return-value]


# -- the association vector ---------------------------------------------------------------

def _associations(
    X: NDArray[np.float64], Y: NDArray[np.float64], A: NDArray[np.float64],
    B: NDArray[np.float64],
) -> NDArray[np.float64]:
    """``s(w, A, B)`` for every ``w`` of X then Y, from unit-norm rows (one product)."""
    direction = A.mean(axis=0) - B.mean(axis=0)
    return np.concatenate((X, Y)) @ direction


def _tolerance(s: NDArray[np.float64], k: int, dim: int, n_attributes: int) -> float:
    """Bound on the rounding error of a difference of two k-item sums of ``s``.

    Each ``s_i`` is a mean of cosines of unit vectors, off by at most about
    ``(dim + n_attributes) ε``; a sum of k of them adds k of those errors plus the summation
    error ``N ε Σ|s|`` (any order). Twice that (two sums compared) with a factor 4 of slack.
    Real, distinct partition sums are many orders of magnitude further apart.
    """
    per_item = (dim + n_attributes + 4) * _EPS
    summation = s.size * _EPS * float(np.abs(s).sum())
    return 8.0 * (k * per_item + summation)


# -- exact counting: meet in the middle ----------------------------------------------------

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
    """Count k-subsets of ``v`` whose sum is > high and within [low, high], over all of them.

    Returns ``(n_greater, n_tied, n_total)``. Memory is bounded by the half-subset sums.
    """
    n = v.size
    left, right = v[: n // 2], v[n // 2 :]
    lo_j = max(0, k - right.size)
    hi_j = min(left.size, k)
    cost = _half_cost(left.size, hi_j) + _half_cost(right.size, k - lo_j)
    if cost > MAX_EXACT_HALF:
        raise FairnessConfigError(
            f"the exact test over C({n}, {k}) = {math.comb(n, k):.3g} partitions would keep "
            f"{cost:.3g} partial sums in memory (limit {MAX_EXACT_HALF:.3g}); lower exact_limit "
            "below that number of partitions to use the sampled test (n_permutations)."
        )
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


# -- sampled counting ------------------------------------------------------------------------

def _sampled_counts(
    v: NDArray[np.float64], k: int, low: float, high: float, n_draws: int,
    rng: np.random.Generator,
) -> tuple[int, int]:
    """Count, among ``n_draws`` uniform random k-subsets, sums > high and within [low, high].

    A random k-subset is the set of items holding the k smallest of iid random integer keys.
    Rows where the k-th and (k+1)-th keys tie are redrawn: that event depends only on the
    multiset of keys, so the accepted subsets stay exactly uniform.
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


# -- bootstrap intervals -------------------------------------------------------------------

def _bootstrap_generator(rng: np.random.Generator) -> np.random.Generator:
    """The bootstrap's own stream, a child of ``rng``'s: the permutation draws never shift.

    ``Generator.spawn`` derives a child from the generator's SeedSequence without drawing from
    it, so the p-value is the same with or without intervals. For an int seed the child is a
    function of that seed alone. A generator without a SeedSequence continues its own stream
    (the bootstrap runs after the permutations).
    """
    try:
        return rng.spawn(1)[0]
    except TypeError:
        return rng


def _replicate_intervals(
    sets: Sequence[NDArray[np.float64]], tol: float, *, n_bootstrap: int,
    confidence_level: float, interval_method: str, rng: np.random.Generator,
) -> Bootstrap:
    """Stratified bootstrap of the iEAT: stimuli redrawn with replacement within each set.

    With cluster weights ``w`` (replicates × stimuli, X then Y then A then B) the associations
    of every target under every replicate are
    ``s = (w_A C_TA^T) / Σw_A − (w_B C_TB^T) / Σw_B`` for the cosine matrices ``C_TA`` and
    ``C_TB`` (targets × attributes), and the effect size uses the weighted means over X and Y
    and the frequency-weighted sample variance ``Σ w (s − μ)² / (Σ w − 1)`` over X ∪ Y: the
    plain statistics of the resampled sets, duplicates included. A replicate whose drawn
    targets are all equally associated (standard deviation within ``tol``) has no effect
    size (NaN): it is left out of that interval.
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

    return bootstrap(statistic, units, n_bootstrap=n_bootstrap,
                     confidence_level=confidence_level, method=interval_method, seed=rng)


# -- public functions ------------------------------------------------------------------------

def ieat(
    X: Any,
    Y: Any,
    A: Any,
    B: Any,
    *,
    n_permutations: int = 10_000,
    exact_limit: int = 10_000,
    seed: Any = None,
    variant: str = "paper",
    names: Sequence[str] | None = None,
    n_bootstrap: int = 0,
    confidence_level: float = 0.95,
    interval_method: str = "percentile",
) -> IndicatorResult:
    r"""Image Embedding Association Test: statistic, effect size and permutation p-value.

    .. math::

        s(w, A, B) = \operatorname{mean}_{a \in A} \cos(w, a)
                     - \operatorname{mean}_{b \in B} \cos(w, b)

        S(X, Y, A, B) = \sum_{x \in X} s(x, A, B) - \sum_{y \in Y} s(y, A, B)

        d = \frac{\operatorname{mean}_{x \in X} s(x, A, B) - \operatorname{mean}_{y \in Y}
            s(y, A, B)}{\operatorname{std}_{w \in X \cup Y} s(w, A, B)}
            \quad (\text{sample std}, \text{ddof} = 1)

        p = \Pr_i\big[S(X_i, Y_i, A, B) > S(X, Y, A, B)\big]

    over the re-partitions ``(X_i, Y_i)`` of ``X ∪ Y`` with ``|X_i| = |X|``: all of them
    when there are at most ``exact_limit``, otherwise ``n_permutations`` uniformly random
    ones. A positive ``d`` means X is closer to A (and Y to B) than the reverse.

    Parameters
    ----------
    X, Y : array-like of shape (n_x, d) and (n_y, d)
        Embeddings of the two target sets (at least 2 items each; sizes may differ with
        ``variant="paper"``).
    A, B : array-like of shape (n_a, d) and (n_b, d)
        Embeddings of the two attribute sets (at least 2 items each).
    n_permutations : int, default 10_000
        Random re-partitions drawn when the exact test is too large.
    exact_limit : int, default 10_000
        Enumerate every re-partition when there are at most this many. Exact counting is
        cheap (meet in the middle): ``exact_limit=10**7`` covers ``|X| = |Y| = 12``.
    seed : int, numpy.random.Generator or None
        Seed of the random re-partitions and of the bootstrap; ``None`` draws one, which the
        result reports. The bootstrap draws from a child stream of this seed, so intervals
        never change the p-value's re-partitions.
    variant : {"paper", "reference"}
        ``"paper"``: p-value = share of re-partitions whose statistic exceeds the observed
        one (ties, within a rounding-error bound, do not exceed). ``"reference"``: the rule
        of the released code — ties count as exceedances, a sampled p-value is
        ``(1 + exceedances among n_permutations − 1 draws) / n_permutations`` — and
        ``|X| = |Y|`` is required.
    names : sequence of four str, optional
        Labels of X, Y, A and B for reports (default ``"X", "Y", "A", "B"``).
    n_bootstrap : int, default 0
        Bootstrap replicates for intervals (0: none, otherwise at least 100). Each replicate
        redraws the images of X, Y, A and B with replacement within their own set, so every
        set keeps its size. ``variant="reference"`` accepts it too: the released code has no
        intervals, and the effect size, the statistic and therefore the intervals are the
        same under both variants.
    confidence_level : float, default 0.95
        Coverage of the intervals.
    interval_method : {"percentile", "bca"}
        Bootstrap interval method.

    Returns
    -------
    IndicatorResult
        ``value`` is the effect size d; ``stats`` holds ``statistic``, ``effect_size``,
        ``p_value``, ``mean_association_x``, ``mean_association_y`` and
        ``std_association``; the two groups are X and Y with their mean association;
        ``params`` records seed, n_permutations, exact_limit, exact, variant, the set sizes
        and the counts behind the p-value, and n_bootstrap, confidence_level and
        interval_method. With ``n_bootstrap > 0``, ``intervals`` holds ``"value"`` and
        ``"effect_size"`` (the same interval of d), and ``"statistic"``; each group carries
        the interval of its mean association. Read the interval of d as indicative with
        few images per set: in simulations with 8 to 25 per set the 95 % interval covered
        the population d 96–98 % of the time at d ≈ 0.7 but only 89–94 % at d ≈ 1.7, where
        the estimate is biased towards 0 (noisy attribute means attenuate every
        association) and the percentile interval carries that bias (BCa corrects part).

    Raises
    ------
    InvalidDataError
        Non-numeric, non-2-D, NaN/infinite or zero-vector embeddings; dimensions that differ
        between sets; every item of X ∪ Y equally associated (the effect size is 0/0).
    InsufficientDataError
        A set with fewer than 2 items.
    FairnessConfigError
        Invalid ``n_permutations``, ``exact_limit``, ``seed``, ``variant``, ``names``,
        ``n_bootstrap``, ``confidence_level`` or ``interval_method``;
        ``variant="reference"`` with ``|X| != |Y|``.

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
    n_permutations = _positive_int(n_permutations, "n_permutations", 1)
    exact_limit = _positive_int(exact_limit, "exact_limit", 0)
    n_bootstrap, confidence_level, interval_method = check_bootstrap_options(
        n_bootstrap, confidence_level, interval_method)
    labels = _names(names)
    sets = [_embeddings(v, n) for v, n in zip((X, Y, A, B), ("X", "Y", "A", "B"))]
    dims = {n: s.shape[1] for n, s in zip("XYAB", sets)}
    if len(set(dims.values())) > 1:
        shown = ", ".join(f"{n} has {d}" for n, d in dims.items())
        raise InvalidDataError(
            f"X, Y, A and B must share one embedding dimension; {shown}. Embed all four "
            "sets with the same model and layer."
        )
    x, y, a, b = sets
    n_x, n_y = x.shape[0], y.shape[0]
    if variant == "reference" and n_x != n_y:
        raise FairnessConfigError(
            f"variant='reference' reproduces code that requires |X| = |Y|; got |X|={n_x}, "
            f"|Y|={n_y}. Use variant='paper' (re-partitions keep both sizes) or equalise "
            "the sets."
        )
    rng, seed_used = resolve_seed(seed)
    boot_rng = _bootstrap_generator(rng) if n_bootstrap else None

    s = _associations(x, y, a, b)
    s_x, s_y = s[:n_x], s[n_x:]
    dim = x.shape[1]
    n_attr = a.shape[0] + b.shape[0]
    std = float(s.std(ddof=1))
    k = min(n_x, n_y)
    tol = _tolerance(s, k, dim, n_attr)
    if std <= tol:
        raise InvalidDataError(
            f"every item of X ∪ Y has the same association s(w, A, B) = {float(s.mean()):.6g} "
            f"(standard deviation {std:.3g}), so the effect size is 0/0. This happens when "
            "X and Y hold the same images, or A and B do; check the four sets."
        )
    statistic = float(s_x.sum() - s_y.sum())
    effect = float((s_x.mean() - s_y.mean()) / std)

    # A re-partition exceeds the observed one iff the sum over its X part does; count on the
    # smaller side (sum over Y' below the observed Y sum, i.e. -s above -sum_Y).
    if n_x <= n_y:
        v, observed = s, float(s_x.sum())
    else:
        v, observed = -s, float(-s_y.sum())
    n_partitions = math.comb(n_x + n_y, k)
    # The released weat/test.py enumerates iff C(2n, n) <= n_samples (our n_permutations).
    exact = n_partitions <= (n_permutations if variant == "reference" else exact_limit)
    low, high = observed - tol, observed + tol
    if exact:
        greater, tied, total = _exact_counts(v, k, low, high)
        if variant == "reference":
            p_value = (greater + tied) / total
        else:
            p_value = greater / total
        drawn = total
    elif variant == "reference":
        drawn = n_permutations - 1
        greater, tied = _sampled_counts(v, k, low, high, drawn, rng)
        p_value = (1 + greater + tied) / n_permutations
    else:
        drawn = n_permutations
        greater, tied = _sampled_counts(v, k, low, high, drawn, rng)
        p_value = greater / n_permutations

    notes: list[str] = []
    if tied:
        rule = "counted as exceeding (reference rule)" if variant == "reference" else (
            "not counted as exceeding")
        notes.append(f"{tied} of {drawn} re-partitions tie with the observed statistic "
                     f"(within {tol:.2g}); {rule}.")
    if seed_used is None:
        notes.append("seed was a numpy Generator; pass an int seed to make the p-value "
                     "reproducible from the result.")
    intervals: dict[str, tuple[float, float]] = {}
    group_intervals: tuple[tuple[float, float] | None, ...] = (None, None)
    plan: dict[str, str] = {}
    replicates: dict[str, tuple[float, ...]] = {}
    if boot_rng is not None:
        found = _replicate_intervals(sets, tol, n_bootstrap=n_bootstrap,
                                     confidence_level=confidence_level,
                                     interval_method=interval_method, rng=boot_rng)
        for name in ("effect_size", "statistic"):
            pair = found.interval(name)
            if pair is not None:
                intervals[name] = pair
        if "effect_size" in intervals:
            intervals["value"] = intervals["effect_size"]
        group_intervals = (found.interval("mean_x"), found.interval("mean_y"))
        plan, replicates = {"bootstrap_plan": found.plan}, found.draws({"value": "effect_size"})
        undefined = int(np.isnan(found.replicates["effect_size"]).sum())
        if undefined:
            notes.append(f"{undefined} of {n_bootstrap} bootstrap replicates drew "
                         "targets that are all equally associated; their effect size is "
                         "undefined and left out of its interval.")
    groups = (
        GroupStat(labels[0], n_x, float(s_x.mean()), interval=group_intervals[0]),
        GroupStat(labels[1], n_y, float(s_y.mean()), interval=group_intervals[1]),
    )
    return IndicatorResult(
        name="ieat",
        metric="effect_size",
        value=effect,
        groups=groups,
        intervals=intervals,
        stats={
            "statistic": statistic,
            "effect_size": effect,
            "p_value": p_value,
            "mean_association_x": float(s_x.mean()),
            "mean_association_y": float(s_y.mean()),
            "std_association": std,
        },
        params={
            "seed": seed_used,
            "n_permutations": n_permutations,
            "exact_limit": exact_limit,
            "exact": exact,
            "variant": variant,
            "names": list(labels),
            "n_x": n_x, "n_y": n_y, "n_a": a.shape[0], "n_b": b.shape[0], "dim": dim,
            "n_partitions": n_partitions if exact else drawn,
            "n_exceeding": greater,
            "n_ties": tied,
            "tie_tolerance": tol,
            "n_bootstrap": n_bootstrap,
            "confidence_level": confidence_level,
            "interval_method": interval_method,
            **plan,
        },
        higher_is_better=False,
        min_group_size=2,
        notes=tuple(notes),
        replicates=replicates,
    )


def holm(p_values: Any) -> NDArray[np.float64]:
    r"""Holm–Bonferroni adjusted p-values, in the input order.

    .. math::

        \tilde p_{(i)} = \min\Big(1, \max_{j \le i} (m - j + 1)\, p_{(j)}\Big)

    for the p-values sorted increasingly, ``p_(1) <= ... <= p_(m)``. Rejecting where
    ``p̃ <= α`` controls the family-wise error rate at α under any dependence.

    Parameters
    ----------
    p_values : array-like of shape (m,)
        Raw p-values in [0, 1].

    Returns
    -------
    ndarray of shape (m,)
        The adjusted p-values.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64).reshape(-1)
    if p.size == 0:
        raise InsufficientDataError("p_values is empty; pass at least one p-value.")
    bad = np.flatnonzero(~((p >= 0) & (p <= 1)))
    if bad.size:
        raise InvalidDataError(
            f"p_values must lie in [0, 1]; entry {int(bad[0])} is {float(p[bad[0]])!r}."
        )
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = scaled
    return out


def ieat_battery(
    tests: Mapping[str, Sequence[Any]],
    *,
    n_permutations: int = 10_000,
    exact_limit: int = 10_000,
    seed: Any = None,
    variant: str = "paper",
    names: Mapping[str, Sequence[str]] | None = None,
    n_bootstrap: int = 0,
    confidence_level: float = 0.95,
    interval_method: str = "percentile",
) -> dict[str, IndicatorResult]:
    r"""Several iEATs in one run, with Holm-adjusted p-values beside the raw ones.

    Each test runs as :func:`ieat` with its own seed drawn from ``seed`` (recorded in its
    ``params["seed"]``, so any one result can be recomputed alone). Holm's step-down
    adjustment (:func:`holm`) over the m raw p-values is added as ``stats["p_value_holm"]``;
    ``stats["p_value"]`` stays the raw p-value.

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
    dict of str to IndicatorResult
        In the order of ``tests``.

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
            + "."
        )
    names = {} if names is None else names
    unknown = sorted(set(names) - set(tests))
    if unknown:
        raise FairnessConfigError(
            f"names has labels for tests that are not in tests: {unknown}."
        )
    rng, root = resolve_seed(seed)
    seeds = rng.integers(0, 1 << 62, size=len(tests)).tolist()
    results: dict[str, IndicatorResult] = {}
    for (key, sets), child in zip(tests.items(), seeds):
        if isinstance(sets, (str, bytes)) or not isinstance(sets, Sequence) or len(sets) != 4:
            raise FairnessConfigError(
                f"tests[{key!r}] must be the four sets (X, Y, A, B); got "
                f"{type(sets).__name__}"
                + (f" of length {len(sets)}" if isinstance(sets, Sequence) else "") + "."
            )
        try:
            results[str(key)] = ieat(*sets, n_permutations=n_permutations,
                                     exact_limit=exact_limit, seed=int(child),
                                     variant=variant, names=names.get(key),
                                     n_bootstrap=n_bootstrap,
                                     confidence_level=confidence_level,
                                     interval_method=interval_method)
        except (InvalidDataError, FairnessConfigError) as exc:
            raise type(exc)(f"test {key!r}: {exc}") from None
    adjusted = holm([r.stats["p_value"] for r in results.values()])
    return {
        key: replace(
            r,
            stats={**r.stats, "p_value_holm": float(p)},
            params={**r.params, "battery_seed": root, "n_tests": len(results)},
        )
        for (key, r), p in zip(results.items(), adjusted)
    }
