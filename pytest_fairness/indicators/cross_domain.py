"""Group metrics of "Fairness meets Cross-Domain Learning" (Iurada et al. 2023).

Classification (MGA, mGA, DA, DEO, DEOdds, DTO), landmark detection (NME, SDR, MGS, mGS,
DS, DTO) and ΔDTO; the formulas and ``variant="reference"`` (iurada/fairness_crossdomain)
are on the docs page "Group metrics: classification and landmark detection".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Real
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_fairness.errors import (
    FairnessConfigError,
    InsufficientDataError,
    InvalidDataError,
    own_error,
)
from pytest_fairness.indicators._common import (
    as_1d,
    check_clusters,
    check_min_group_size,
    check_same_length,
    check_variant,
    encode_groups,
    extremes,
    group_array,
    group_table,
    spread,
)
from pytest_fairness.results import GroupKey, IndicatorResult, group_label
from pytest_fairness.stats import IntervalOptions, check_finite

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["delta_dto", "group_metrics", "landmark_metrics"]

__tracebackhide__ = own_error

#: Landmarks whose distance normalises NME in the 68-point scheme (outer eye corners).
INTEROCULAR_68 = (36, 45)


def _dto(best: float, worst: float, variant: str) -> float:
    """Distance from (best, worst) to the utopia point (1, 1), or (100, 100) in percent."""
    if variant == "reference":
        return math.hypot(100 - best * 100, 100 - worst * 100)
    return math.hypot(1 - best, 1 - worst)


def _check_groups_usable(keys: list[GroupKey], variant: str, function: str) -> None:
    if len(keys) < 2:
        raise InsufficientDataError(
            f"groups has a single value {group_label(keys[0])!r}: {function} compares groups, "
            "so it needs at least two. Check the protected attribute column.")
    if variant == "reference" and len(keys) != 2:
        raise FairnessConfigError(
            f"variant='reference' reproduces code written for exactly two groups; got "
            f"{len(keys)} groups ({', '.join(map(group_label, keys))}). Use variant='paper' "
            "for more than two.")


def _label_kinds(values: NDArray[Any]) -> dict[str, object]:
    """The kinds of label in ``values`` (number, str, bytes, ...), each with a first example."""
    kinds: dict[str, object] = {}
    for value in values.tolist() if values.dtype.kind == "O" else values[:1].tolist():
        number = isinstance(value, (int, float, np.number, np.bool_))
        kinds.setdefault("number" if number else "str" if isinstance(value, str)
                         else type(value).__name__, value)
    return kinds


def _check_label_types(y_true: NDArray[Any], y_pred: NDArray[Any]) -> None:
    """Refuse predictions of another type than the labels: none of them could ever match."""
    truth, pred = _label_kinds(y_true), _label_kinds(y_pred)
    odd = next((kind for kind in pred if kind not in truth), None)
    if odd is not None:
        seen = next(iter(truth.values()))
        raise InvalidDataError(
            f"y_true and y_pred hold different types of label: y_true is {y_true.dtype} (e.g. "
            f"{seen!r}) and y_pred is {y_pred.dtype} (e.g. {pred[odd]!r}), so no prediction "
            "can equal a label. Give both the same type, e.g. class names for class indices: "
            "np.asarray(class_names)[y_pred].")


def _check_finite(array: NDArray[Any], name: str) -> None:
    """Refuse NaN or infinite scores: argmax and thresholds would read them as a class."""
    if array.dtype.kind not in "fc" or array.ndim == 0 or array.size == 0:
        return
    bad = np.flatnonzero(~np.isfinite(array.reshape(array.shape[0], -1)).all(axis=1))
    if bad.size:
        raise InvalidDataError(
            f"{name} has NaN or infinite values in {bad.size} row(s), the first row "
            f"{int(bad[0])} ({array[bad[0]].tolist()!r}); fix the model's output for those "
            "images or drop them before computing the indicator.")


def _predictions(y_pred: Any, y_true: NDArray[Any]) -> NDArray[Any]:
    """``y_pred`` as labels: labels as given, scores (n, classes) argmaxed, P(1) cut at 0.5."""
    raw = group_array(y_pred, "y_pred")  # [1, "1"] stays two types
    if raw.ndim == 2 and raw.shape[0] == y_true.size and raw.dtype.kind in "biuf":
        _check_finite(raw, "y_pred")
        if raw.shape[1] > 1:  # logits or probabilities: column j is class j
            return raw.argmax(axis=1)
        if raw.dtype.kind == "f" and (raw != np.round(raw)).any():
            raise InvalidDataError(
                f"y_pred has shape {raw.shape}: one column of scores cannot be argmaxed into "
                "classes. Pass the probabilities of the positive class as a 1-D array "
                "(y_pred[:, 0]), or two columns (one per class).")
    _check_finite(raw, "y_pred")
    pred = as_1d(raw, "y_pred")
    if pred.dtype.kind == "f" and (pred != np.round(pred)).any():
        row = int(np.flatnonzero(pred != np.round(pred))[0])
        if not set(y_true.tolist()) <= {0, 1} or pred.min() < 0 or pred.max() > 1:
            raise InvalidDataError(
                f"y_pred holds scores (e.g. {pred[row].item()!r} at row {row}), not labels. Pass "
                "predicted labels, logits or probabilities of shape (n, classes), or, for "
                "0/1 labels in y_true, probabilities of class 1 in [0, 1].")
        return (pred > 0.5).astype(np.int64)
    return pred


def _positive_label(y_true: NDArray[Any], y_pred: NDArray[Any], pos_label: Any) -> Any:
    classes = list(dict.fromkeys(np.concatenate([y_true, y_pred]).tolist()))
    if pos_label is not None:
        if pos_label not in classes:
            raise FairnessConfigError(
                f"pos_label={pos_label!r} does not occur in y_true or y_pred (classes: "
                f"{sorted(map(str, classes))}). Pass one of the classes.")
        return pos_label
    if set(classes) <= {0, 1}:  # also covers True/False
        return 1
    raise FairnessConfigError(
        f"DEO and DEOdds need a positive class, and the labels {sorted(map(str, classes))[:10]} "
        f"are not 0/1. Pass pos_label=<the positive class> (one-vs-rest for multiclass).")


def group_metrics(
    y_true: Any, y_pred: Any, *, groups: Any, pos_label: Any = None, min_group_size: int = 30,
    variant: str = "paper", clusters: Any = None, n_bootstrap: int = 1000,
    confidence_level: float = 0.95, interval_method: str = "percentile", seed: Any = None,
) -> IndicatorResult:
    """Accuracy per group and the fairness metrics of Iurada et al. 2023.

    From "Fairness meets Cross-Domain Learning: a new perspective on Models and Metrics";
    every difference is max − min over the included groups.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        True labels.
    y_pred : array-like of shape (n,) or (n, classes)
        Predicted labels of the type of ``y_true``; or logits or probabilities, column ``j``
        being class ``j`` (argmaxed); or, for 0/1 labels, P(class 1) (1 above 0.5). NaN or
        infinite scores, one column of scores, or another type than ``y_true``: an error.
    groups : array-like of shape (n,), DataFrame, mapping or one-hot array
        The protected attribute; several columns give intersectional groups.
    pos_label : optional
        The positive class for DEO and DEOdds (default: 1 for 0/1 labels).
    min_group_size : int, default 30
        Smaller groups are reported but left out of MGA, mGA and every difference.
    variant : {"paper", "reference"}
        ``"reference"``: two groups only and DTO in percent, as the released code (which
        compares groups of any size: pass ``min_group_size=1`` to reproduce it).
    clusters : array-like of shape (n,), optional
        Identity (or household) of each image: intervals resample whole clusters.
    n_bootstrap, confidence_level, interval_method, seed
        Bootstrap intervals: 1,000 replicates by default; 0: none, the point estimate alone
        (then judge limits with ``confidence="point"``); otherwise at least 100. The seed
        used is in ``params``.

    Returns
    -------
    IndicatorResult
        ``value``: the overall accuracy; each group's value its accuracy (stats ``tpr``,
        ``fpr``); ``stats``: ``accuracy``, ``MGA``, ``mGA``, ``DA``, ``DEO``, ``DEOdds``,
        ``DTO``; ``gap`` equals DA.

    Examples
    --------
    >>> r = group_metrics([1, 0, 1, 1, 0, 1], [1, 0, 1, 0, 0, 0],
    ...                   groups=["a", "a", "a", "b", "b", "b"], min_group_size=1)
    >>> r.stats["DA"], round(r.stats["DTO"], 4)
    (0.6666666666666667, 0.6667)
    """
    check_variant(variant, "group_metrics")
    min_group_size = check_min_group_size(min_group_size)
    options = IntervalOptions.check(n_bootstrap, confidence_level, interval_method, seed)
    y_true = as_1d(group_array(y_true, "y_true"), "y_true")
    _check_finite(y_true, "y_true")
    y_pred = _predictions(y_pred, y_true)
    n = check_same_length(y_true=y_true, y_pred=y_pred)
    _check_label_types(y_true, y_pred)
    keys, codes = encode_groups(groups, n)
    _check_groups_usable(keys, variant, "group_metrics")
    positive = _positive_label(y_true, y_pred, pos_label)

    correct = (y_true == y_pred).astype(np.float64)
    is_pos = y_true == positive
    pred_pos = (y_pred == positive).astype(np.float64)
    params = {"pos_label": positive, "min_group_size": min_group_size, "variant": variant, "n": n}

    def derive(values: Mapping[str, NDArray[np.float64]],
               included: NDArray[np.bool_]) -> dict[str, NDArray[np.float64]]:
        best, worst, dto = _best_worst_dto(values["accuracy"], included, variant)
        deo = spread(values["tpr"], included)
        return {"MGA": best, "mGA": worst, "DA": best - worst, "DEO": deo,
                "DEOdds": deo + spread(values["fpr"], included), "DTO": dto}

    _check_both_classes(keys, codes, is_pos, positive, min_group_size)
    table = group_table(
        keys, codes,
        {"accuracy": (correct, None), "tpr": (pred_pos * is_pos, is_pos),
         "fpr": (pred_pos * ~is_pos, ~is_pos)},
        min_group_size=min_group_size, options=options, params=params, derive=derive,
        clusters=check_clusters(clusters, n),
        aliases={"DA": "gap", "DEO": "gap:tpr"})
    stats = {"accuracy": float(correct.mean()), **table.stats()}
    return table.result(name="group_metrics", metric="accuracy", value=stats["accuracy"],
                        stats=stats, params=params, higher_is_better=True)


def _check_both_classes(keys: list[GroupKey], codes: NDArray[np.intp], is_pos: NDArray[Any],
                        positive: Any, min_group_size: int) -> None:
    """Before any bootstrap: a compared group with one class has no TPR or FPR."""
    counts = np.bincount(codes, minlength=len(keys))
    positives = np.bincount(codes, weights=is_pos, minlength=len(keys))
    for i in np.flatnonzero((counts >= min_group_size) & ((positives == 0)
                                                          | (positives == counts))):
        missing = "positive" if positives[i] == 0 else "negative"
        raise InsufficientDataError(
            f"group {group_label(keys[i])!r} has only one class in y_true (no {missing} "
            f"samples for pos_label={positive!r}), so its "
            f"{'TPR' if missing == 'positive' else 'FPR'} and therefore DEO/DEOdds are "
            f"undefined. Add {missing} samples for that group, or raise min_group_size "
            f"above its size ({int(counts[i])}) to report it without comparing it.")


def _best_worst_dto(
    values: NDArray[np.float64], included: NDArray[np.bool_], variant: str
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Best and worst included group (MGA and mGA, or MGS and mGS) and DTO, per replicate."""
    best, worst = extremes(values, included)
    if values.shape[0] > 1:  # bootstrap replicates: numpy's hypot (may differ by an ulp)
        scale = 100.0 if variant == "reference" else 1.0
        return best, worst, np.hypot(scale - best * scale, scale - worst * scale)
    with np.errstate(invalid="ignore"):  # the estimate: exactly the scalar formula
        dto = np.frompyfunc(lambda b, w: _dto(b, w, variant), 2, 1)(best, worst)
    return best, worst, dto.astype(np.float64)


def _landmarks(values: Any, name: str) -> NDArray[np.float64]:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim == 2 and array.shape[1] % 2 == 0:
        array = array.reshape(array.shape[0], -1, 2)
    if array.ndim != 3 or array.shape[2] != 2:
        raise InvalidDataError(
            f"{name} must have shape (images, landmarks, 2) or (images, 2 * landmarks); "
            f"got shape {np.shape(values)}.")
    if array.shape[0] == 0:
        raise InsufficientDataError(f"{name} is empty; pass at least one image per group.")
    check_finite(array, name, "drop those images or fill in the landmarks", item="image")
    return array


def _normalizer(normalizer: Any, y_true: NDArray[np.float64], variant: str) -> NDArray[np.float64]:
    n, n_landmarks, _ = y_true.shape
    if isinstance(normalizer, str):
        if normalizer != "interocular":
            raise FairnessConfigError(
                f"normalizer must be 'interocular', a pair of landmark indices, or one positive "
                f"distance per image; got normalizer={normalizer!r}.")
        if n_landmarks != 68:
            raise FairnessConfigError(
                f"normalizer='interocular' uses landmarks {INTEROCULAR_68} of the 68-point "
                f"scheme, but the landmarks have {n_landmarks} points. Pass the pair of "
                "indices of the eye corners, or one distance per image.")
        normalizer = INTEROCULAR_68
    # Only a tuple names two landmarks: a list or array of two ints is two images' distances.
    if isinstance(normalizer, tuple) and len(normalizer) == 2 and all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in normalizer):
        i, j = (int(v) for v in normalizer)
        if not (0 <= i < n_landmarks and 0 <= j < n_landmarks) or i == j:
            raise FairnessConfigError(
                f"normalizer=({i}, {j}) must name two different landmarks in [0, {n_landmarks}).")
        distance = np.linalg.norm(y_true[:, i] - y_true[:, j], axis=1)
    else:
        if variant == "reference":
            raise FairnessConfigError(
                "variant='reference' normalises by the distance between two ground-truth "
                "landmarks; pass normalizer='interocular' or a pair of indices.")
        distance = as_1d(np.asarray(normalizer, dtype=np.float64), "normalizer")
        check_same_length(normalizer=distance, y_true=y_true)
    bad = np.flatnonzero(~(distance > 0))
    if bad.size:
        raise InvalidDataError(
            f"normalizer is {float(distance[bad[0]])!r} for image {int(bad[0])} ({bad.size} "
            "images in all); NME divides by it, so it must be positive. Check the landmarks "
            "of those images.")
    return distance


def _success(nme: NDArray[np.float64], threshold: float, variant: str) -> NDArray[np.float64]:
    """Whether each image is detected successfully at the threshold."""
    if variant == "reference":
        # The released compute_sdr counts NME <= the last point of an arange grid.
        edge = np.arange(0, threshold + 0.0001, 0.0001)[-1]
        return (nme <= edge).astype(np.float64)
    return (nme < threshold).astype(np.float64)


def landmark_metrics(
    y_true: Any, y_pred: Any, *, groups: Any, normalizer: Any, sdr_threshold: float = 0.08,
    min_group_size: int = 30, variant: str = "paper", clusters: Any = None,
    n_bootstrap: int = 1000, confidence_level: float = 0.95, interval_method: str = "percentile",
    seed: Any = None,
) -> IndicatorResult:
    """Landmark-detection fairness of Iurada et al. 2023: NME, SDR, MGS, mGS, DS and DTO.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n, K, 2) or (n, 2K)
        Ground-truth and predicted landmarks.
    groups : array-like of shape (n,), DataFrame, mapping or one-hot array
        The protected attribute.
    normalizer : "interocular", tuple (int, int) or array-like of shape (n,)
        ``D_i``: the distance between two ground-truth landmarks named by a tuple of their
        indices (``"interocular"`` is (36, 45) of the 68-point scheme), or one positive
        distance per image (a list or array, even of two ints).
    sdr_threshold : float, default 0.08
        The NME below which a detection succeeds.
    min_group_size, clusters, n_bootstrap, confidence_level, interval_method, seed
        As in :func:`group_metrics`.
    variant : {"paper", "reference"}
        ``"reference"``: two groups, success as ``NME <=`` the released code's grid point,
        DTO in percent.

    Returns
    -------
    IndicatorResult
        ``value``: the overall SDR; each group's value its SDR (stat ``nme``, its mean
        NME); ``stats``: ``SDR``, ``NME``, ``MGS``, ``mGS``, ``DS``, ``DTO``.

    Examples
    --------
    >>> truth = [[[0, 0], [10, 0]]] * 4
    >>> pred = [[[0, 0], [10, 0]], [[1, 0], [10, 0]], [[0, 0], [10, 0]], [[0, 0], [13, 0]]]
    >>> r = landmark_metrics(truth, pred, groups=[0, 0, 1, 1], normalizer=(0, 1),
    ...                      min_group_size=1)
    >>> r.stats["DS"], r.group(1).stats["nme"]
    (0.5, 0.075)
    """
    check_variant(variant, "landmark_metrics")
    min_group_size = check_min_group_size(min_group_size)
    options = IntervalOptions.check(n_bootstrap, confidence_level, interval_method, seed)
    if isinstance(sdr_threshold, bool) or not isinstance(sdr_threshold, Real) or not (
        sdr_threshold > 0):
        raise FairnessConfigError(
            "sdr_threshold must be a positive number (an NME); got "
            f"sdr_threshold={sdr_threshold!r}.")
    truth, pred = _landmarks(y_true, "y_true"), _landmarks(y_pred, "y_pred")
    if truth.shape != pred.shape:
        raise InvalidDataError(
            f"y_true and y_pred must have the same shape; got {truth.shape} and {pred.shape}.")
    n = truth.shape[0]
    keys, codes = encode_groups(groups, n)
    _check_groups_usable(keys, variant, "landmark_metrics")
    distance = _normalizer(normalizer, truth, variant)
    nme = np.linalg.norm(truth - pred, axis=2).mean(axis=1) / distance
    success = _success(nme, float(sdr_threshold), variant)

    params = {
        "sdr_threshold": sdr_threshold, "min_group_size": min_group_size, "variant": variant,
        "n": n, "normalizer": normalizer if isinstance(normalizer, (str, tuple, list)) else
        "per-image distances"}

    def derive(values: Mapping[str, NDArray[np.float64]],
               included: NDArray[np.bool_]) -> dict[str, NDArray[np.float64]]:
        best, worst, dto = _best_worst_dto(values["sdr"], included, variant)
        return {"MGS": best, "mGS": worst, "DS": best - worst, "DTO": dto}

    table = group_table(keys, codes, {"sdr": (success, None), "nme": (nme, None)},
                        min_group_size=min_group_size, options=options, params=params,
                        derive=derive, clusters=check_clusters(clusters, n),
                        aliases={"DS": "gap"})
    stats = {"SDR": float(success.mean()), "NME": float(nme.mean()), **table.stats()}
    return table.result(name="landmark_metrics", metric=f"sdr@{sdr_threshold:g}",
                        value=stats["SDR"], stats=stats, params=params, higher_is_better=True)


def delta_dto(result: IndicatorResult, baseline: IndicatorResult) -> IndicatorResult:
    """ΔDTO = DTO(baseline) − DTO(result): how much closer to utopia the model is.

    Parameters
    ----------
    result, baseline : IndicatorResult
        Results of :func:`group_metrics` or :func:`landmark_metrics` for the model and
        for the baseline model, computed with the same indicator and variant.

    Returns
    -------
    IndicatorResult
        ``value`` is ΔDTO (positive: the model is better than the baseline); ``stats``
        holds ``DTO`` and ``DTO_baseline``.

    Examples
    --------
    >>> base = group_metrics([1, 0, 1, 0], [1, 0, 0, 0], groups=[0, 0, 1, 1], min_group_size=1)
    >>> new = group_metrics([1, 0, 1, 0], [1, 0, 1, 0], groups=[0, 0, 1, 1], min_group_size=1)
    >>> delta_dto(new, base).value
    0.5
    """
    for name, r in (("result", result), ("baseline", baseline)):
        if not isinstance(r, IndicatorResult) or "DTO" not in r.stats:
            raise FairnessConfigError(
                f"{name} must be a result of group_metrics or landmark_metrics (it needs "
                f"stats['DTO']); got {getattr(r, 'name', type(r).__name__)!r}.")
    variants = (result.params.get("variant"), baseline.params.get("variant"))
    if result.name != baseline.name or variants[0] != variants[1]:
        raise FairnessConfigError(
            f"result and baseline must come from the same indicator and variant to compare "
            f"DTO; got {result.name!r} ({result.params.get('variant')}) and "
            f"{baseline.name!r} ({baseline.params.get('variant')}).")
    value = baseline.stats["DTO"] - result.stats["DTO"]
    return IndicatorResult(
        name="delta_dto", metric=f"delta_dto ({result.name})", value=value,
        stats={"delta_dto": value, "DTO": result.stats["DTO"],
               "DTO_baseline": baseline.stats["DTO"]},
        params={"indicator": result.name, "variant": result.params.get("variant")},
        higher_is_better=True)
