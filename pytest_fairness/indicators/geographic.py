"""Geographical diversity of object recognition (Dollar Street).

From "Fairness Indicators for Systematic Assessments of Visual Feature Extractors"
(Goyal et al., FAccT 2022), §3.2; docs page "Geographical diversity".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_fairness.data.taxonomy import label_matrix, score_matrix
from pytest_fairness.errors import FairnessConfigError, InvalidDataError, own_error
from pytest_fairness.indicators._common import (
    as_1d,
    check_min_group_size,
    check_same_length,
    check_top_k,
    check_top_k_columns,
    check_variant,
    encode_groups,
    group_array,
    group_table,
)
from pytest_fairness.results import GroupKey, IndicatorResult, group_label
from pytest_fairness.stats import IntervalOptions

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["INCOME_BUCKETS", "geodiversity", "income_bucket"]

__tracebackhide__ = own_error

#: Names of the income buckets of Goyal et al. 2022 §3.2.
INCOME_BUCKETS = {1: "low", 2: "medium", 3: "high"}
_BY = {"income": ("income",), "region": ("region",), "income_region": ("income", "region")}


def income_bucket(income: Any, *, variant: str = "paper") -> NDArray[np.intp]:
    """Income bucket ``round(ln(income) / 3)`` clipped to 1–3 (1 low, 2 medium, 3 high).

    ``variant="paper"`` rounds halves up; ``"reference"`` to even, as the released code.

    Examples
    --------
    >>> income_bucket([30, 500, 5000]).tolist()
    [1, 2, 3]
    """
    x = np.log(np.asarray(income, dtype=np.float64)) / 3
    raw = np.round(x) if variant == "reference" else np.floor(x + 0.5)
    return np.clip(raw, 1, 3).astype(np.intp)


def _truth_pairs(truth: Any, n: int) -> tuple[NDArray[np.intp], NDArray[Any]]:
    """Per-row ground truth (a label or a collection of labels) as (row, label) pairs."""
    if hasattr(truth, "to_numpy"):
        truth = truth.to_numpy()
    if isinstance(truth, np.ndarray) and truth.ndim == 2:
        items: list[Any] = [list(row) for row in truth]
    elif isinstance(truth, (str, bytes)) or not isinstance(truth, Iterable):
        raise InvalidDataError(
            f"truth must hold one ground-truth label (or a list of labels) per row; got "
            f"{type(truth).__name__}.")
    else:
        items = list(truth)
    check_same_length(truth=items, labels=range(n))
    rows, labels = [], []
    for i, item in enumerate(items):
        if isinstance(item, (list, tuple, set, frozenset, np.ndarray)):
            values = list(item)
            if not values:
                raise InvalidDataError(
                    f"truth has an empty label list at row {i}; every image needs at least "
                    "one ground-truth label (drop unlabelled images).")
        else:
            values = [item]
        for v in values:
            if v is None or (isinstance(v, float) and math.isnan(v)):
                raise InvalidDataError(
                    f"truth contains NaN/None at row {i}; drop or fix that image.")
            rows.append(i)
            labels.append(v.item() if hasattr(v, "item") else v)
    return np.asarray(rows, dtype=np.intp), np.fromiter(labels, dtype=object, count=len(labels))


def _constant_within(
    codes: NDArray[np.intp], values: NDArray[Any], what: str, owner: str, keys: list[Any]
) -> NDArray[Any]:
    """The value of each owner (household or image), raising when it varies inside one."""
    first = np.full(len(keys), -1, dtype=np.intp)
    first[codes[::-1]] = np.arange(codes.size)[::-1]
    expected = values[first[codes]]
    differs = expected != values
    if values.dtype.kind == "f":
        differs &= ~(np.isnan(expected) & np.isnan(values))
    if np.any(differs):
        row = int(np.flatnonzero(differs)[0])
        raise InvalidDataError(
            f"{owner} {group_label(keys[codes[row]])!r} has more than one {what} "
            f"({values[first[codes[row]]]!r} and {values[row]!r}, row {row}); every row of "
            f"one {owner} must carry the same {what}.")
    return values[first]


def _hits_paper(
    labels: NDArray[Any], scores: NDArray[np.float64], pair_row: NDArray[np.intp],
    pair_label: NDArray[Any], top_k: int, threshold: float,
) -> NDArray[np.bool_]:
    """Hit of each (row, truth label) pair: in the top-k by confidence with score ≥ τ."""
    order = np.argsort(-scores, axis=1, kind="stable")[:, :top_k]
    top = np.take_along_axis(labels, order, axis=1)
    ok = np.take_along_axis(scores, order, axis=1) >= threshold
    return np.any((top[pair_row] == pair_label[:, None]) & ok[pair_row], axis=1)


def _hits_reference(
    labels: NDArray[Any], scores: NDArray[np.float64], pair_row: NDArray[np.intp],
    pair_label: NDArray[Any], top_k: int, threshold: float,
) -> NDArray[np.bool_]:
    """VISSL ``_is_hit_naive``: the first matching top-k prediction decides, score > τ."""
    match = labels[pair_row, :top_k] == pair_label[:, None]
    found = match.any(axis=1)
    first = match.argmax(axis=1)
    return found & (scores[pair_row, first] > threshold)


def _check_keywords(by: str, top_k: Any, threshold: Any) -> None:
    if by not in _BY:
        raise FairnessConfigError(f"by must be one of {tuple(_BY)}; got by={by!r}.")
    check_top_k(top_k)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not (
        0 <= threshold <= 1):
        raise FairnessConfigError(
            f"threshold must be a confidence in [0, 1]; got threshold={threshold!r}.")


def _households(
    household: Any, region: Any, income: Any, labels: NDArray[Any]
) -> tuple[list[GroupKey], NDArray[np.intp], NDArray[Any], NDArray[np.float64]]:
    """Keys and codes of the households, and each household's region and income."""
    # group_array keeps mixed types apart (numpy would read [1, "1"] as two '1').
    hh = as_1d(group_array(household, "household"), "household")
    reg = as_1d(group_array(region, "region"), "region")
    inc = as_1d(income, "income")
    check_same_length(labels=labels, household=hh, region=reg, income=inc)
    try:
        inc = inc.astype(np.float64)
    except (TypeError, ValueError):
        raise InvalidDataError(f"income must be numeric; got dtype {inc.dtype}.") from None
    if not np.all(np.isfinite(inc)) or np.any(inc <= 0):
        row = int(np.flatnonzero(~(np.isfinite(inc) & (inc > 0)))[0])
        raise InvalidDataError(
            f"income must be positive (its logarithm defines the bucket); got {inc[row]!r} "
            f"at row {row}. Drop households without a known income.")
    keys, codes = encode_groups(hh, labels.shape[0], name="household")
    return (keys, codes, _constant_within(codes, reg, "region", "household", keys),
            _constant_within(codes, inc, "income", "household", keys))


def _images(
    image: Any, hh_codes: NDArray[np.intp], labels: NDArray[Any], scores: NDArray[np.float64]
) -> tuple[list[Any], NDArray[np.intp]]:
    """Rows with the same image id are one image; its household and predictions must agree."""
    n = labels.shape[0]
    if image is None:
        return list(range(n)), np.arange(n)
    img_keys, img_codes = encode_groups(image, n, name="image")
    _constant_within(img_codes, hh_codes, "household", "image", img_keys)
    for name, array in (("labels", labels), ("scores", scores)):
        first = np.full(len(img_keys), -1, dtype=np.intp)
        first[img_codes[::-1]] = np.arange(n)[::-1]
        differs = np.any(array[first[img_codes]] != array, axis=1)
        if differs.any():
            row = int(np.flatnonzero(differs)[0])
            raise InvalidDataError(
                f"image {group_label(img_keys[img_codes[row]])!r} has different {name} in "
                f"rows {int(first[img_codes[row]])} and {row}; rows of one image must "
                "carry the same predictions.")
    return img_keys, img_codes


def _breakdown(
    grouping: Callable[[str], tuple[list[GroupKey], NDArray[np.intp]]], unit: str,
    unit_value: NDArray[np.float64], unit_images: NDArray[Any],
) -> tuple[dict[str, str | float], ...]:
    """``tables["breakdown"]``: the hit rate under each of the three groupings."""
    rows: list[dict[str, str | float]] = []
    for name in _BY:
        b_keys, b_codes = grouping(name)
        b_counts = np.bincount(b_codes, minlength=len(b_keys))
        b_values = np.bincount(b_codes, weights=unit_value, minlength=len(b_keys)) / b_counts
        b_images = np.bincount(b_codes, weights=unit_images, minlength=len(b_keys))
        rows.extend(
            {"by": name, "group": group_label(key), f"{unit}s": int(b_counts[g]),
             "images": int(b_images[g]), "hit_rate": float(b_values[g])}
            for g, key in enumerate(b_keys))
    return tuple(rows)


def _units(
    variant: str, pair_hit: NDArray[np.float64], pair_img: NDArray[np.intp],
    img_hh: NDArray[np.intp], n_hh: int,
) -> tuple[NDArray[np.float64], NDArray[np.intp], NDArray[np.intp]]:
    """Each unit's hit rate, household and image count: households, or images (reference)."""
    n_img = img_hh.size
    if variant == "reference":
        # Released code: mean over the image's (image, label) records; units are images.
        value = np.bincount(pair_img, weights=pair_hit, minlength=n_img) / np.bincount(
            pair_img, minlength=n_img)
        return value, img_hh, np.ones(n_img, dtype=np.intp)
    img_hit = (np.bincount(pair_img, weights=pair_hit, minlength=n_img) > 0).astype(float)
    images = np.bincount(img_hh, minlength=n_hh)
    return np.bincount(img_hh, weights=img_hit, minlength=n_hh) / images, np.arange(n_hh), images


def geodiversity(
    labels: Any, scores: Any, *, truth: Any, household: Any, region: Any, income: Any,
    top_k: int = 5, threshold: float = 0.0, by: str = "income", image: Any = None,
    min_group_size: int = 30, variant: str = "paper", n_bootstrap: int = 1000,
    confidence_level: float = 0.95, interval_method: str = "percentile", seed: Any = None,
) -> IndicatorResult:
    """Household hit rate per income bucket, region or bucket × region (Goyal et al. 2022 §3.2).

    Parameters
    ----------
    labels, scores : array-like of shape (rows, k), and (rows, k) or (rows, classes)
        Predicted labels of each row, best first, and their confidences (or the full score
        matrix, for integer labels).
    truth : sequence of label or of list of labels, length rows
        Ground truth of each row: one label, or every label of the image.
    household, region, income : array-like of shape (rows,)
        Household id, region and (positive) income of each row, constant within a household.
    top_k, threshold : int, default 5, and float, default 0.0
        Predictions that count, and their minimum confidence τ.
    by : {"income", "region", "income_region"}
        The grouping; ``tables["breakdown"]`` always holds all three.
    image : array-like of shape (rows,), optional
        Image id of each row; rows of one image are merged and counted once.
    min_group_size : int, default 30
        In households: smaller groups are reported but excluded from the gap.
    variant : {"paper", "reference"}
        ``"reference"`` reproduces the released VISSL code (see the docs page).
    n_bootstrap, confidence_level, interval_method, seed
        Bootstrap intervals over households (1,000 replicates by default; 0: none); the seed
        is in ``params``.

    Returns
    -------
    IndicatorResult
        ``value`` is the mean household hit rate; each group's value its mean household
        hit rate (``stats["images"]``); ``tables["households"]`` lists every household.

    Examples
    --------
    >>> r = geodiversity([[1, 2], [3, 4], [5, 6], [7, 8]], [[.6, .4]] * 4,
    ...                  truth=[1, 9, 5, 7], household=["h1", "h1", "h2", "h3"],
    ...                  region=["Asia", "Asia", "Europe", "Europe"],
    ...                  income=[30, 30, 5000, 5000], top_k=2, min_group_size=1)
    >>> r.group("low").value, r.group("high").value, r.value
    (0.5, 1.0, 0.8333333333333334)
    """
    check_variant(variant, "geodiversity")
    min_group_size = check_min_group_size(min_group_size)
    options = IntervalOptions.check(n_bootstrap, confidence_level, interval_method, seed)
    _check_keywords(by, top_k, threshold)
    label_array = label_matrix(labels)
    score_array = score_matrix(scores, label_array)
    check_top_k_columns(top_k, label_array)
    n = label_array.shape[0]
    pair_row, pair_label = _truth_pairs(truth, n)
    hh_keys, hh_codes, hh_region, hh_income = _households(household, region, income, label_array)
    img_keys, img_codes = _images(image, hh_codes, label_array, score_array)
    n_img = len(img_keys)
    hit_fn = _hits_reference if variant == "reference" else _hits_paper
    pair_hit = hit_fn(label_array, score_array, pair_row, pair_label, int(top_k),
                      float(threshold)).astype(np.float64)
    img_hh = np.zeros(n_img, dtype=np.intp)
    img_hh[img_codes] = hh_codes
    unit_value, unit_hh, unit_images = _units(variant, pair_hit, img_codes[pair_row], img_hh,
                                              len(hh_keys))
    bucket = income_bucket(hh_income, variant=variant)
    clipped = int(np.sum((hh_income < math.exp(1.5)) | (hh_income >= math.exp(10.5))))
    columns = {"income": np.array([INCOME_BUCKETS[b] for b in bucket[unit_hh]], dtype=object),
               "region": hh_region[unit_hh]}

    def grouping(name: str) -> tuple[list[GroupKey], NDArray[np.intp]]:
        return encode_groups({c: columns[c] for c in _BY[name]}, unit_value.size, name=name)

    keys, codes = grouping(by)
    images = np.bincount(codes, weights=unit_images, minlength=len(keys))
    params = {
        "top_k": int(top_k), "threshold": float(threshold), "by": by,
        "min_group_size": min_group_size, "variant": variant, "rows": n, "images": n_img,
        "households": len(hh_keys)}
    table = group_table(keys, codes, {"hit_rate": (unit_value, None)},
                        min_group_size=min_group_size, options=options, params=params,
                        clusters=unit_hh if variant == "reference" else None)
    unit = "image" if variant == "reference" else "household"
    notes = [f"{unit}s (images) per group: " + ", ".join(
        f"{group_label(key)} {int(table.counts[g])} ({int(images[g])})"
        for g, key in enumerate(keys))]
    notes += [f"{n - n_img} duplicate row(s) merged into {n_img} images."] * (
        variant == "paper" and n_img < n) + [
        f"{clipped} household(s) have an income outside the 3 buckets (ln(income)/3 outside "
        "[0.5, 3.5)) and were put in the nearest one."] * bool(clipped)
    return table.result(
        name="geodiversity", metric="hit_rate", value=float(unit_value.mean()),
        group_stats=[{"images": float(images[g])} for g in range(len(keys))],
        stats={"hit_rate": float(unit_value.mean()), "households": float(len(hh_keys)),
               "images": float(n_img)},
        tables={"households": tuple(
                    {"household": str(key), "region": str(hh_region[h]),
                     "income": float(hh_income[h]), "income_bucket": INCOME_BUCKETS[int(bucket[h])],
                     "images": int(np.sum(img_hh == h)),
                     "hit_rate": float(unit_value[h] if variant == "paper" else
                                       unit_value[img_hh == h].mean())}
                    for h, key in enumerate(hh_keys)),
                "breakdown": _breakdown(grouping, unit, unit_value, unit_images)},
        params=params, higher_is_better=True, notes=notes)
