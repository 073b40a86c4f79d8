"""Unit tests of geodiversity."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_fairness import fairness
from pytest_fairness.errors import FairnessConfigError, InvalidDataError
from pytest_fairness.indicators import geodiversity
from pytest_fairness.indicators.geographic import income_bucket

LABELS = [[1, 2], [3, 4], [5, 6], [7, 8], [1, 9]]
SCORES = [[0.6, 0.4]] * 5
BASE = dict(
    truth=[1, 9, 5, 7, 2],
    household=["h1", "h1", "h2", "h3", "h3"],
    region=["Asia", "Asia", "Europe", "Europe", "Europe"],
    income=[30, 30, 5000, 5000, 5000],
    top_k=2,
    min_group_size=1,
)


def _run(**kw):
    args = {**BASE, **kw}
    return geodiversity(args.pop("labels", LABELS), args.pop("scores", SCORES), **args)


def test_hand_computed_households() -> None:
    r = _run()
    # h1: hits [1, 0] -> 0.5; h2: [1] -> 1; h3: [1, 0] -> 0.5.
    assert r.group("low").value == 0.5
    assert r.group("high").value == 0.75
    assert r.group("high").n == 2 and r.group("high").stats["images"] == 3
    assert r.value == pytest.approx(2 / 3)
    rows = {row["household"]: row for row in r.tables["households"]}
    assert rows["h3"]["hit_rate"] == 0.5 and rows["h3"]["images"] == 2
    assert {row["by"] for row in r.tables["breakdown"]} == {"income", "region", "income_region"}


def test_by_region_and_intersection() -> None:
    assert _run(by="region").group("Asia").value == 0.5
    assert _run(by="income_region").group(("high", "Europe")).value == 0.75


def test_threshold_counts_confident_predictions_only() -> None:
    assert _run(threshold=0.6).value == pytest.approx(2 / 3)  # confidence >= τ counts
    assert _run(threshold=0.7).value == 0.0
    second = _run(truth=[2, 9, 5, 7, 2])  # row 0 now hit by its second prediction (0.4)
    assert second.group("low").value == 0.5
    assert _run(truth=[2, 9, 5, 7, 2], threshold=0.5).group("low").value == 0.0


def test_duplicate_image_counted_once_as_hit_if_any_label() -> None:
    labels = [[1, 2], [1, 2], [3, 4]]
    kw = dict(household=["h", "h", "h"], region=["Asia"] * 3, income=[30] * 3, top_k=2,
              min_group_size=1)
    merged = geodiversity(labels, [[0.6, 0.4]] * 3, truth=[9, 2, 5], image=["a", "a", "b"], **kw)
    as_list = geodiversity([[1, 2], [3, 4]], [[0.6, 0.4]] * 2, truth=[[9, 2], [5]],
                           household=["h", "h"], region=["Asia"] * 2, income=[30] * 2,
                           top_k=2, min_group_size=1)
    assert merged.value == as_list.value == 0.5
    assert any("merged" in n for n in merged.notes)


def test_reference_variant_averages_labels_per_image_and_is_strict() -> None:
    labels = [[1, 2], [3, 4]]
    kw = dict(household=["h", "h"], region=["Asia"] * 2, income=[30] * 2, top_k=2,
              min_group_size=1)
    ref = geodiversity(labels, [[0.6, 0.4]] * 2, truth=[[1, 9], [3]], variant="reference", **kw)
    assert ref.value == pytest.approx((0.5 + 1.0) / 2)  # per image: mean over its labels
    strict = geodiversity(labels, [[0.6, 0.4]] * 2, truth=[[1], [3]], threshold=0.6,
                          variant="reference", **kw)
    assert strict.value == 0.0  # score > τ, strictly
    loose = geodiversity(labels, [[0.6, 0.4]] * 2, truth=[[1], [3]], threshold=0.6, **kw)
    assert loose.value == 1.0


def test_income_bucket_rounding() -> None:
    half = np.exp(4.5)  # ln/3 == 1.5 up to float error
    assert income_bucket([np.exp(0.3), np.exp(12)]).tolist() == [1, 3]
    assert income_bucket([half], variant="paper")[0] in (1, 2)
    assert np.round(2.5) == 2.0 and income_bucket([np.exp(7.5)], variant="reference")[0] in (2, 3)


def test_clipped_income_noted() -> None:
    r = _run(income=[2, 2, 5000, 5000, 5000])
    assert any("outside the 3 buckets" in n for n in r.notes)


def test_intervals_resample_households_and_failure_shows_counts() -> None:
    rng = np.random.default_rng(0)
    n = 300
    hh = rng.integers(0, 60, n)
    income = np.where(hh < 30, 50.0, 5000.0)
    labels = rng.integers(0, 4, size=(n, 2))
    r = geodiversity(labels, np.tile([0.6, 0.3], (n, 1)), truth=rng.integers(0, 4, n),
                     household=hh, region=np.where(hh % 2 == 0, "Asia", "Africa"),
                     income=income, top_k=2, n_bootstrap=200, seed=1, min_group_size=5)
    assert "gap" in r.intervals and r.group("low").interval is not None
    with pytest.raises(AssertionError, match=r"households \(images\) per group"):
        fairness.check(r, max_gap=0.0, confidence="point")


@pytest.mark.parametrize(
    ("kw", "err", "fragment"),
    [
        (dict(by="country"), FairnessConfigError, r"by='country'"),
        (dict(top_k=0), FairnessConfigError, r"top_k=0"),
        (dict(top_k=3), FairnessConfigError, r"top_k=3"),
        (dict(threshold=2.0), FairnessConfigError, r"threshold=2\.0"),
        (dict(truth=5), InvalidDataError, r"one ground-truth label"),
        (dict(truth=[1, 2]), InvalidDataError, r"lengths differ"),
        (dict(truth=[[], 1, 1, 1, 1]), InvalidDataError, r"empty label list at row 0"),
        (dict(truth=[None, 1, 1, 1, 1]), InvalidDataError, r"NaN/None at row 0"),
        (dict(income=["x"] * 5), InvalidDataError, r"income must be numeric"),
        (dict(income=[0, 0, 1, 1, 1]), InvalidDataError, r"income must be positive"),
        (dict(income=[30, 40, 5000, 5000, 5000]), InvalidDataError,
         r"'h1' has more than one income"),
        (dict(region=["Asia", "Africa", "Europe", "Europe", "Europe"]), InvalidDataError,
         r"more than one region"),
        (dict(household=["h1"]), InvalidDataError, r"lengths differ"),
        (dict(image=["a", "a", "b", "c", "d"]), InvalidDataError,
         r"image 'a' has different labels"),
        (dict(image=["a", "b", "c", "d", "a"], labels=[[1, 2]] * 5), InvalidDataError,
         r"image 'a' has more than one household"),
        (dict(variant="vissl"), FairnessConfigError, r"variant='vissl'"),
        (dict(n_bootstrap=10), FairnessConfigError, r"at least 100"),
    ],
)
def test_validation(kw: dict, err: type, fragment: str) -> None:
    with pytest.raises(err, match=fragment):
        _run(**kw)


def test_image_scores_must_agree() -> None:
    with pytest.raises(InvalidDataError, match=r"different scores"):
        geodiversity([[1, 2]] * 2, [[0.6, 0.4], [0.5, 0.4]], truth=[1, 2], image=["a", "a"],
                     household=["h", "h"], region=["Asia"] * 2, income=[30] * 2, top_k=2)


# -- malformed inputs (#17) ---------------------------------------------------------------------
@pytest.mark.parametrize("labels, fragment", [
    ([[1.0, 2.0], [3.0, np.nan], [5.0, 6.0], [7.0, 8.0], [1.0, 9.0]], r"labels\[1, 1\] is NaN"),
    ([[1, 2], [3, 4], [None, 6], [7, 8], [1, 9]], r"labels\[2, 0\] is None"),
])
def test_missing_predicted_labels_name_the_row(labels: list[list[object]], fragment: str) -> None:
    with pytest.raises(InvalidDataError, match=fragment):
        _run(labels=labels)


@pytest.mark.parametrize("key, values, fragment", [
    ("region", [1, 1, "1", "1", "1"], r"mixes value types: 1 \(int, row 0\) and '1' \(str"),
    ("household", [{"h": 1}] * 5, r"household row 0: the value \{'h': 1\} is a dict"),
    ("household", ["h1", "h1", None, "h3", "h3"], r"household contains NaN/None at row 2"),
])
def test_bad_group_inputs_are_named(key: str, values: list[object], fragment: str) -> None:
    with pytest.raises(InvalidDataError, match=fragment):
        _run(**{key: values})


# -- the review's findings (intervals resample households) ----------------------------------------


def test_geodiversity_intervals_resample_households_not_images() -> None:
    """§2: intervals resample households. Duplicating every household's images (new image
    ids, same predictions) leaves each household rate, and so every interval, unchanged."""
    rng = np.random.default_rng(3)
    n_hh = 12
    household = np.repeat([f"h{i}" for i in range(n_hh)], 2)
    income = np.repeat(np.where(np.arange(n_hh) < 6, 30.0, 5000.0), 2)
    region = np.repeat(["Asia", "Europe"] * (n_hh // 2), 2)
    labels = rng.integers(0, 5, (2 * n_hh, 2))
    truth = rng.integers(0, 5, 2 * n_hh)
    scores = [[0.6, 0.4]] * (2 * n_hh)
    kw = dict(top_k=2, min_group_size=1, n_bootstrap=200, seed=7)
    once = geodiversity(labels, scores, truth=truth, household=household, region=region,
                        income=income, **kw)
    twice = geodiversity(np.r_[labels, labels], scores * 2, truth=np.r_[truth, truth],
                         household=np.r_[household, household], region=np.r_[region, region],
                         income=np.r_[income, income], **kw)
    assert [g.value for g in twice.groups] == [g.value for g in once.groups]
    assert [g.interval for g in twice.groups] == [g.interval for g in once.groups]
    assert twice.intervals == once.intervals
    assert [g.n for g in twice.groups] == [g.n for g in once.groups]  # households, not images
