"""Seed 003 group metrics against hand-computed cases, and their input validation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pytest_fairness import FairnessConfigError, InsufficientDataError, InvalidDataError
from pytest_fairness import indicators as ind
from pytest_fairness.indicators import landmark_metrics

# Group a: accuracy 3/4, TPR 2/3, FPR 0.  Group b: accuracy 2/4, TPR 0, FPR 1/3.
Y = [1, 0, 1, 1, 0, 1, 0, 0]
P = [1, 0, 1, 0, 0, 0, 0, 1]
G = ["a", "a", "a", "a", "b", "b", "b", "b"]


def test_hand_computed_classification() -> None:
    r = ind.group_metrics(Y, P, groups=G, min_group_size=1)
    assert r.value == pytest.approx(5 / 8)
    assert r.group("a").value == 0.75 and r.group("b").value == 0.5
    assert r.group("a").stats == pytest.approx({"tpr": 2 / 3, "fpr": 0.0})
    assert r.group("b").stats == pytest.approx({"tpr": 0.0, "fpr": 1 / 3})
    assert r.stats["MGA"] == 0.75 and r.stats["mGA"] == 0.5
    assert r.stats["DA"] == pytest.approx(0.25) == r.gap
    assert r.stats["DEO"] == pytest.approx(2 / 3)
    assert r.stats["DEOdds"] == pytest.approx(2 / 3 + 1 / 3)
    assert r.stats["DTO"] == pytest.approx(math.sqrt(0.25**2 + 0.5**2))
    assert r.worst_group is not None and r.worst_group.group == "b"


def test_three_groups_use_max_minus_min() -> None:
    r = ind.group_metrics(Y + [1, 0], P + [1, 0], groups=G + ["c", "c"], min_group_size=1)
    assert r.stats["DA"] == pytest.approx(0.5)  # c is perfect (1.0), b is 0.5
    assert r.stats["DEO"] == pytest.approx(1.0)  # TPR: c 1, b 0
    assert r.stats["DEOdds"] == pytest.approx(1.0 + 1 / 3)


def test_small_group_is_reported_but_excluded() -> None:
    r = ind.group_metrics(Y + [1, 0], P + [1, 0], groups=G + ["c", "c"], min_group_size=3)
    assert r.group("c").excluded and not r.group("a").excluded
    assert r.stats["DA"] == pytest.approx(0.25)
    assert r.notes and "c (n=2)" in r.notes[0]


def test_reference_variant_reports_dto_in_percent() -> None:
    r = ind.group_metrics(Y, P, groups=G, min_group_size=1, variant="reference")
    assert r.stats["DTO"] == pytest.approx(math.sqrt(25**2 + 50**2))
    assert r.stats["DA"] == pytest.approx(0.25)


def test_delta_dto() -> None:
    base = ind.group_metrics(Y, P, groups=G, min_group_size=1)
    better = ind.group_metrics(Y, Y, groups=G, min_group_size=1)
    d = ind.delta_dto(better, base)
    assert better.stats["DTO"] == 0.0
    assert d.value == pytest.approx(base.stats["DTO"])
    assert ind.delta_dto(base, better).value == pytest.approx(-base.stats["DTO"])


def test_pos_label_and_string_labels() -> None:
    yt = ["cat" if v else "dog" for v in Y]
    yp = ["cat" if v else "dog" for v in P]
    r = ind.group_metrics(yt, yp, groups=G, pos_label="cat", min_group_size=1)
    assert r.stats["DEO"] == pytest.approx(2 / 3)
    flipped = ind.group_metrics(yt, yp, groups=G, pos_label="dog", min_group_size=1)
    assert flipped.group("a").stats["tpr"] == pytest.approx(1.0)  # the one "dog" in a is right


def test_intersectional_groups_from_a_frame() -> None:
    frame = pd.DataFrame({"gender": ["f", "f", "m", "m"] * 2, "tone": ["I"] * 4 + ["VI"] * 4})
    r = ind.group_metrics([1, 0] * 4, [1, 0, 1, 0, 0, 0, 1, 1], groups=frame, min_group_size=1,
                          pos_label=1)
    assert [g.group for g in r.groups] == [("f", "I"), ("f", "VI"), ("m", "I"), ("m", "VI")]
    assert r.group(("f", "VI")).value == 0.5


def test_one_hot_groups_match_labels() -> None:
    onehot = np.array([[1, 0] if g == "a" else [0, 1] for g in G])
    a = ind.group_metrics(Y, P, groups=onehot, min_group_size=1)
    b = ind.group_metrics(Y, P, groups=G, min_group_size=1)
    assert a.stats == b.stats
    assert [g.group for g in a.groups] == [0, 1]


def test_landmarks_hand_computed() -> None:
    truth = np.array([[[0, 0], [10, 0]]] * 4, dtype=float)
    pred = truth.copy()
    pred[1, 0, 0] = 1.0  # NME (1 + 0) / 2 / 10 = 0.05: success
    pred[3, 1, 0] = 13.0  # NME (0 + 3) / 2 / 10 = 0.15: failure
    r = ind.landmark_metrics(truth, pred, groups=[0, 0, 1, 1], normalizer=(0, 1), min_group_size=1)
    assert r.group(0).value == 1.0 and r.group(1).value == 0.5
    assert r.group(0).stats["nme"] == pytest.approx(0.025)
    assert r.group(1).stats["nme"] == pytest.approx(0.075)
    assert r.stats["SDR"] == 0.75 and r.stats["NME"] == pytest.approx(0.05)
    assert (r.stats["MGS"], r.stats["mGS"], r.stats["DS"]) == (1.0, 0.5, 0.5)
    assert r.stats["DTO"] == pytest.approx(0.5)
    per_image = ind.landmark_metrics(truth, pred, groups=[0, 0, 1, 1], normalizer=[10.0] * 4,
                                     min_group_size=1)
    assert per_image.stats == r.stats
    flat = ind.landmark_metrics(truth.reshape(4, 4), pred.reshape(4, 4), groups=[0, 0, 1, 1],
                                normalizer=(0, 1), min_group_size=1)
    assert flat.stats == r.stats


def test_sdr_threshold_is_strict_in_the_paper_and_inclusive_in_the_reference() -> None:
    truth = np.zeros((4, 68, 2))
    truth[:, 45, 0] = 1.0  # interocular distance 1
    pred = truth.copy()
    pred[0, :, 0] += 0.0625  # NME exactly 0.0625 (exact in binary)
    groups = [0, 0, 1, 1]
    paper = ind.landmark_metrics(truth, pred, groups=groups, normalizer="interocular",
                                 sdr_threshold=0.0625, min_group_size=1)
    reference = ind.landmark_metrics(truth, pred, groups=groups, normalizer="interocular",
                                     sdr_threshold=0.0625, min_group_size=1, variant="reference")
    assert paper.group(0).value == 0.5
    assert reference.group(0).value == 1.0
    assert reference.stats["DTO"] == 0.0


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"y_true": [1, 0, 1], "y_pred": [1, 0]}, InvalidDataError,
         r"len\(y_true\)=3, len\(y_pred\)=2"),
        ({"y_true": [1.0, math.nan, 0, 1], "y_pred": [1, 0, 0, 1]}, InvalidDataError,
         "y_true contains NaN/None at row 1"),
        ({"y_true": [], "y_pred": []}, InsufficientDataError, "y_true is empty"),
        ({"groups": ["a"] * 4}, InsufficientDataError, "single value 'a'"),
        ({"groups": ["a", "a", "b"]}, InvalidDataError, r"len\(groups\)=3"),
        ({"groups": ["a", None, "b", "b"]}, InvalidDataError, "groups contains NaN/None at row 1"),
        ({"y_true": [0, 1, 2, 1], "y_pred": [0, 1, 2, 2]}, FairnessConfigError,
         "Pass pos_label=<the positive class>"),
        ({"pos_label": 7}, FairnessConfigError, "pos_label=7 does not occur"),
        ({"variant": "authors"}, FairnessConfigError, "variant must be 'paper'"),
        ({"min_group_size": 0}, FairnessConfigError, "int >= 1; got min_group_size=0"),
        ({"min_group_size": 2.5}, FairnessConfigError, "min_group_size must be an int"),
        ({"groups": np.array([[1, 0], [1, 1], [0, 1], [0, 1]])}, InvalidDataError, "row 1 is"),
    ],
)
def test_bad_classification_input(kwargs: dict, error: type[Exception], match: str) -> None:
    args = {"y_true": [1, 0, 1, 0], "y_pred": [1, 0, 0, 0], "groups": ["a", "a", "b", "b"],
            "min_group_size": 1, **kwargs}
    with pytest.raises(error, match=match):
        ind.group_metrics(args.pop("y_true"), args.pop("y_pred"), **args)


def test_group_with_one_class_is_named() -> None:
    with pytest.raises(InsufficientDataError, match="group 'b' has only one class.*no positive"):
        ind.group_metrics([1, 0, 0, 0], [1, 0, 0, 1], groups=["a", "a", "b", "b"], min_group_size=1)
    # Large enough groups are compared; a tiny one-class group is only reported.
    r = ind.group_metrics([1, 0, 0, 0], [1, 0, 0, 1], groups=["a", "a", "b", "b"], min_group_size=3)
    assert math.isnan(r.group("b").stats["tpr"]) and r.group("b").excluded


def test_reference_needs_two_groups() -> None:
    with pytest.raises(FairnessConfigError, match="exactly two groups; got 3"):
        ind.group_metrics([1, 0, 1], [1, 0, 1], groups=["a", "b", "c"], variant="reference")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"y_true": np.zeros((4, 3))}, InvalidDataError, r"shape \(images, landmarks, 2\)"),
        ({"y_pred": np.zeros((4, 3, 2))}, InvalidDataError, "same shape"),
        ({"normalizer": "interocular"}, FairnessConfigError, "68-point scheme"),
        ({"normalizer": "eyes"}, FairnessConfigError, "normalizer must be 'interocular'"),
        ({"normalizer": (0, 0)}, FairnessConfigError, "two different landmarks"),
        ({"normalizer": (0, 9)}, FairnessConfigError, "two different landmarks"),
        ({"normalizer": [1.0, 0.0, 1.0, 1.0]}, InvalidDataError, "normalizer is 0.0 for image 1"),
        ({"normalizer": [1.0, 1.0]}, InvalidDataError, r"len\(normalizer\)=2"),
        ({"sdr_threshold": 0}, FairnessConfigError, "sdr_threshold must be a positive"),
        ({"variant": "reference", "normalizer": [1.0] * 4}, FairnessConfigError, "pair of indices"),
    ],
)
def test_bad_landmark_input(kwargs: dict, error: type[Exception], match: str) -> None:
    truth = np.zeros((4, 2, 2))
    truth[:, 1, 0] = 1.0
    args = {"y_true": truth, "y_pred": truth.copy(), "groups": [0, 0, 1, 1],
            "normalizer": (0, 1), "min_group_size": 1, **kwargs}
    with pytest.raises(error, match=match):
        ind.landmark_metrics(args.pop("y_true"), args.pop("y_pred"), **args)


def test_nan_landmarks_are_named() -> None:
    truth = np.zeros((3, 2, 2))
    truth[:, 1, 0] = 1.0
    pred = truth.copy()
    pred[2, 0, 1] = np.nan
    with pytest.raises(InvalidDataError, match="y_pred has NaN or infinite values in image 2"):
        ind.landmark_metrics(truth, pred, groups=[0, 1, 1], normalizer=(0, 1))


def test_delta_dto_rejects_mismatched_results() -> None:
    cls = ind.group_metrics(Y, P, groups=G, min_group_size=1)
    ref = ind.group_metrics(Y, P, groups=G, min_group_size=1, variant="reference")
    with pytest.raises(FairnessConfigError, match="same indicator and variant"):
        ind.delta_dto(cls, ref)
    with pytest.raises(FairnessConfigError, match="baseline must be a result"):
        ind.delta_dto(cls, "baseline")  # type: ignore[arg-type]


# -- the review's findings (per-image distances) --------------------------------------------------


def test_two_per_image_distances_are_not_read_as_landmark_indices() -> None:
    truth = np.array([[[0, 0], [10, 0], [20, 0]]] * 2, dtype=float)
    pred = truth.copy()
    pred[:, 0, 0] += 1.0  # one landmark off by 1 pixel: mean error 1/3 per image
    r = landmark_metrics(truth, pred, groups=[0, 1], normalizer=[2, 1], min_group_size=1)
    assert r.group(0).stats["nme"] == pytest.approx(1 / 3 / 2)
    assert r.group(1).stats["nme"] == pytest.approx(1 / 3 / 1)


def test_float_per_image_distances_with_two_images_are_distances() -> None:
    """The same input as floats is read as distances: the ambiguity is only for ints."""
    truth = np.array([[[0, 0], [10, 0], [20, 0]]] * 2, dtype=float)
    pred = truth.copy()
    pred[:, 0, 0] += 1.0
    r = landmark_metrics(truth, pred, groups=[0, 1], normalizer=[2.0, 1.0], min_group_size=1)
    assert r.group(0).stats["nme"] == pytest.approx(1 / 6)
    assert r.group(1).stats["nme"] == pytest.approx(1 / 3)


def test_string_cluster_ids_resample_like_their_integer_codes() -> None:
    """clusters= given as household ids (strings) bootstraps as their sorted codes do."""
    ids = [f"h{i // 2}" for i in range(40)]
    kw = dict(groups=["a", "a", "b", "b"] * 10, n_bootstrap=200, seed=0, min_group_size=1)
    named = ind.group_metrics([1, 0, 1, 0] * 10, [1, 0, 0, 1] * 10, clusters=ids, **kw)
    coded = ind.group_metrics([1, 0, 1, 0] * 10, [1, 0, 0, 1] * 10,
                              clusters=np.unique(ids, return_inverse=True)[1], **kw)
    assert named.intervals and named.to_dict() == coded.to_dict()


def test_logits_are_argmaxed_and_probabilities_of_class_1_cut_at_one_half() -> None:
    """Scores (n, classes) give class j for column j; P(class 1) predicts 1 above 0.5."""
    labels = ind.group_metrics(Y, P, groups=G, min_group_size=1).stats  # DA 0.25
    logits = np.array([[0.1, 2.0], [3.0, -1.0], [0.2, 0.5], [0.0, -2.0],
                       [1.0, 0.0], [2.0, 1.0], [0.5, 0.4], [0.0, 5.0]])
    assert ind.group_metrics(Y, logits, groups=G, min_group_size=1).stats == labels
    probabilities = [0.9, 0.2, 0.7, 0.5, 0.1, 0.4, 0.3, 0.51]  # 0.5 is not above 0.5
    assert ind.group_metrics(Y, probabilities, groups=G, min_group_size=1).stats == labels
    assert labels["DA"] == 0.25


@pytest.mark.parametrize(
    ("y_pred", "match"),
    [
        ([[0.1, 0.9], [np.nan, 1.0], [0.3, 0.2], [np.inf, 1.0]],
         r"y_pred has NaN or infinite values in 2 row\(s\), the first row 1 \(\[nan, 1.0\]\)"),
        ([1.0, -np.inf, 0.0, 0.0], r"y_pred has NaN or infinite values in 1 row\(s\), the "
         r"first row 1 \(-inf\)"),
        ([[2.3], [-1.0], [0.4], [0.1]], r"y_pred has shape \(4, 1\): one column of scores "
         r"cannot be argmaxed.*probabilities of the positive class as a 1-D array"),
        ([0.3, 1.7, 0.0, 1.0], r"y_pred holds scores \(e.g. 0.3 at row 0\), not labels"),
    ],
)
def test_bad_scores_are_named(y_pred: list, match: str) -> None:
    """NaN or infinite scores, one column of logits, scores that are not probabilities."""
    with pytest.raises(InvalidDataError, match=match):
        ind.group_metrics([1, 0, 1, 0], y_pred, groups=["a", "a", "b", "b"], min_group_size=1)


@pytest.mark.parametrize(
    ("y_true", "y_pred", "match"),
    [
        (["no", "yes", "no", "yes"], [0, 1, 0, 1],
         r"y_true is <U3 \(e.g. 'no'\) and y_pred is int64 \(e.g. 0\)"),
        (["no", "yes", "no", "yes"], [[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.1, 0.9]],
         r"y_true is <U3 \(e.g. 'no'\) and y_pred is int64 \(e.g. 0\)"),
        ([0, 1, 0, 1], ["0", "1", "0", "1"], r"y_true is int64 \(e.g. 0\) and y_pred is <U1 "
         r"\(e.g. '0'\)"),
        (["no", "yes", "no", "yes"], ["no", "yes", 1, "yes"],
         r"y_true is <U3 \(e.g. 'no'\) and y_pred is object \(e.g. 1\)"),
    ],
)
def test_labels_and_predictions_of_different_types_are_named(
        y_true: list, y_pred: list, match: str) -> None:
    """Not "no positive samples": both dtypes and an example of each."""
    with pytest.raises(InvalidDataError, match="different types of label: " + match):
        ind.group_metrics(y_true, y_pred, groups=["a", "a", "b", "b"], min_group_size=1)


def test_infinite_labels_are_named() -> None:
    with pytest.raises(InvalidDataError, match=r"y_true has NaN or infinite values in 1 row"):
        ind.group_metrics([1.0, np.inf, 0, 1], [1, 0, 0, 1], groups=["a", "a", "b", "b"],
                          min_group_size=1)
