"""Unit tests of the ``fairness`` namespace and the marker keyword schema."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.markers import (
    MARKER_REGRESSION,
    MARKER_THRESHOLD,
    fairness,
    validate_regression,
    validate_threshold,
)
from pytest_fairness.options import CONFIDENCE_MODES, LIMITS

ALL_LIMITS = ["max_gap", "min_ratio", "min_value", "max_value", "max_effect_size",
              "min_p_value", "max_amplification", "max_variance", "max_auc", "max_l1"]


def test_limits_schema() -> None:
    assert list(LIMITS) == ALL_LIMITS
    for name, spec in LIMITS.items():
        assert spec.name == name
        assert spec.bound == name.split("_")[0] and spec.bound in ("min", "max")
    assert CONFIDENCE_MODES == ("point", "supported", "strict")


# -- fairness.threshold -------------------------------------------------------------------


def test_threshold_returns_the_threshold_mark_with_kwargs() -> None:
    deco = fairness.threshold(max_gap=0.05, min_ratio=0.8, at=10, confidence="strict",
                              result="acc")
    assert isinstance(deco, pytest.MarkDecorator)
    assert deco.mark.name == MARKER_THRESHOLD == "fairness_threshold"
    assert deco.mark.args == ()
    assert deco.mark.kwargs == {"max_gap": 0.05, "min_ratio": 0.8, "at": 10,
                                "confidence": "strict", "result": "acc"}


def test_threshold_mark_decorates_a_function() -> None:
    @fairness.threshold(max_gap=0.1)
    def test_x() -> None: ...

    marks = test_x.pytestmark  # type: ignore[attr-defined]
    assert [m.name for m in marks] == ["fairness_threshold"]


def test_validate_threshold_returns_floats_and_default_confidence() -> None:
    clean = validate_threshold((), {"max_gap": 0, "min_value": -1})
    assert clean == {"max_gap": 0.0, "min_value": -1.0, "confidence": "supported"}
    assert type(clean["max_gap"]) is float


@pytest.mark.parametrize("at, kind", [(10, int), (0.5, float), (0, int)])
def test_at_keeps_its_type(at: float, kind: type) -> None:
    clean = validate_threshold((), {"max_gap": 0.1, "at": at})
    assert clean["at"] == at and type(clean["at"]) is kind


def test_unknown_keyword_lists_allowed_keywords() -> None:
    with pytest.raises(FairnessConfigError,
                       match=r"unknown keyword max_gapp=0\.1\. Did you mean 'max_gap'\? "
                             r"Allowed keywords: max_gap, min_ratio, .*max_l1, at, "
                             r"confidence, result, metric\."):
        fairness.threshold(max_gapp=0.1)


def test_positional_arguments_are_rejected() -> None:
    with pytest.raises(FairnessConfigError,
                       match=r"keyword arguments only; got positional \(0\.1,\).*Allowed"):
        validate_threshold((0.1,), {"max_gap": 0.1})


@pytest.mark.parametrize("limit", ALL_LIMITS)
@pytest.mark.parametrize(
    "value, fragment",
    [("0.1", r"must be a number; got {0}='0\.1' \(type=str\)"),
     (None, r"must be a number; got {0}=None \(type=NoneType\)"),
     (True, r"must be a number; got {0}=True \(type=bool\)"),
     (False, r"must be a number; got {0}=False \(type=bool\)"),
     ([0.1], r"must be a number; got {0}=\[0\.1\] \(type=list\)"),
     (math.nan, r"{0} must be a number, not NaN; got {0}=nan")],
    ids=["str", "none", "true", "false", "list", "nan"],
)
def test_limit_types(limit: str, value: Any, fragment: str) -> None:
    with pytest.raises(FairnessConfigError, match=fragment.format(limit)):
        fairness.threshold(**{limit: value})


@pytest.mark.parametrize(
    "limit, value, fragment",
    [("min_ratio", 1.5, r"min_ratio must be in \[0\.0, 1\.0\] \(smallest allowed min / max"),
     ("min_ratio", -0.1, r"min_ratio must be in \[0\.0, 1\.0\].*got min_ratio=-0\.1"),
     ("max_gap", -0.01, r"max_gap must be in \[0\.0, inf\].*got max_gap=-0\.01\."),
     ("max_gap", -math.inf, r"max_gap must be in \[0\.0, inf\]"),
     ("min_p_value", 2, r"min_p_value must be in \[0\.0, 1\.0\].*got min_p_value=2\."),
     ("min_p_value", -1e-9, r"min_p_value must be in \[0\.0, 1\.0\]"),
     ("max_effect_size", -0.5, r"max_effect_size must be in \[0\.0, inf\]"),
     ("max_variance", -1, r"max_variance must be in \[0\.0, inf\]"),
     ("max_auc", -0.1, r"max_auc must be in \[0\.0, inf\]"),
     ("max_l1", -0.1, r"max_l1 must be in \[0\.0, inf\]")],
)
def test_out_of_range(limit: str, value: float, fragment: str) -> None:
    with pytest.raises(FairnessConfigError, match=fragment):
        fairness.threshold(**{limit: value})


@pytest.mark.parametrize(
    "limit, value",
    [("min_ratio", 0), ("min_ratio", 1), ("max_gap", 0), ("max_gap", 5), ("min_p_value", 0),
     ("min_p_value", 1.0), ("min_value", -3), ("max_value", 2), ("max_amplification", -0.5),
     ("max_auc", 0), ("max_gap", math.inf)],
)
def test_range_boundaries_are_accepted(limit: str, value: float) -> None:
    assert validate_threshold((), {limit: value})[limit] == value


def test_contradictory_min_and_max_value() -> None:
    with pytest.raises(FairnessConfigError,
                       match=r"Contradictory limits: min_value=0\.9 > max_value=0\.5"):
        fairness.threshold(min_value=0.9, max_value=0.5)


def test_equal_min_and_max_value_are_allowed() -> None:
    assert validate_threshold((), {"min_value": 0.5, "max_value": 0.5})["max_value"] == 0.5


@pytest.mark.parametrize("kwargs", [{}, {"at": 0.5}, {"confidence": "strict", "result": "a"}])
def test_no_limit(kwargs: dict[str, Any]) -> None:
    with pytest.raises(FairnessConfigError, match=r"needs at least one limit.*Limits: max_gap, "):
        fairness.threshold(**kwargs)


@pytest.mark.parametrize("confidence", ["Strict", "loose", None, 0.95])
def test_bad_confidence(confidence: Any) -> None:
    with pytest.raises(FairnessConfigError,
                       match=r"confidence must be one of 'point', 'supported', 'strict'; "
                             r"got confidence="):
        fairness.threshold(max_gap=0.1, confidence=confidence)


@pytest.mark.parametrize("confidence", CONFIDENCE_MODES)
def test_good_confidence(confidence: str) -> None:
    assert validate_threshold((), {"max_gap": 0.1, "confidence": confidence})["confidence"] \
        == confidence


@pytest.mark.parametrize(
    "at, fragment",
    [("0.5", r"at must be a number; got at='0\.5' \(type=str\)"),
     (True, r"at must be a number; got at=True \(type=bool\)"),
     (math.nan, r"at must be a number, not NaN")],
)
def test_bad_at(at: Any, fragment: str) -> None:
    with pytest.raises(FairnessConfigError, match=fragment):
        fairness.threshold(max_gap=0.1, at=at)


@pytest.mark.parametrize("result", [1, None, ["a"]])
def test_bad_result(result: Any) -> None:
    with pytest.raises(FairnessConfigError, match=r"result must be a str naming a returned"):
        fairness.threshold(max_gap=0.1, result=result)


def test_numpy_numbers_are_accepted() -> None:
    clean = validate_threshold((), {"max_gap": np.float32(0.25), "at": np.int64(10)})
    assert clean["max_gap"] == 0.25 and type(clean["max_gap"]) is float
    assert clean["at"] == 10 and type(clean["at"]) is int
    assert type(validate_threshold((), {"max_gap": 0.1, "at": np.float64(0.5)})["at"]) is float


@pytest.mark.parametrize("value", [np.bool_(True), np.array([0.1]), 1 + 0j])
def test_numpy_bools_arrays_and_complex_are_rejected(value: Any) -> None:
    with pytest.raises(FairnessConfigError, match=r"max_gap must be a number; got max_gap="):
        fairness.threshold(max_gap=value)


def test_threshold_validates_at_creation_not_later() -> None:
    with pytest.raises(FairnessConfigError, match="min_ratio=2"):
        fairness.threshold(max_gap=0.1, min_ratio=2)


# -- fairness.no_regression ---------------------------------------------------------------


def test_no_regression_returns_the_regression_mark() -> None:
    deco = fairness.no_regression(tolerance=0.01, metric="worst", result="acc")
    assert deco.mark.name == MARKER_REGRESSION == "fairness_regression"
    assert deco.mark.kwargs == {"tolerance": 0.01, "metric": "worst", "result": "acc"}


def test_no_regression_defaults() -> None:
    assert fairness.no_regression().mark.kwargs == {}
    assert validate_regression((), {}) == {"tolerance": 0.0, "metric": "headline",
                                           "confidence": "supported"}


@pytest.mark.parametrize("metric", ["headline", "value", "gap", "ratio", "worst"])
def test_no_regression_metrics(metric: str) -> None:
    assert validate_regression((), {"metric": metric})["metric"] == metric


@pytest.mark.parametrize(
    "args, kwargs, fragment",
    [((0.1,), {}, r"no_regression takes keyword arguments only; got positional \(0\.1,\)"),
     ((), {"tol": 0.1}, r"unknown keyword tol=0\.1\. Allowed keywords: tolerance, metric, "
                        r"result, confidence\."),
     ((), {"tolerance": -0.01}, r"tolerance must be >= 0.*got tolerance=-0\.01"),
     ((), {"tolerance": "0.1"}, r"tolerance must be a number; got tolerance='0\.1'"),
     ((), {"tolerance": True}, r"tolerance must be a number; got tolerance=True"),
     ((), {"tolerance": math.nan}, r"tolerance must be a number, not NaN"),
     ((), {"metric": "auc"}, r"metric must be one of 'headline', 'gap', 'ratio', 'value', 'worst'; "
                             r"got metric='auc'")],
    ids=["positional", "unknown", "negative", "str", "bool", "nan", "metric"],
)
def test_no_regression_validation(args: tuple[Any, ...], kwargs: dict[str, Any],
                                  fragment: str) -> None:
    with pytest.raises(FairnessConfigError, match=fragment):
        validate_regression(args, kwargs)
    if not args:
        with pytest.raises(FairnessConfigError, match=fragment):
            fairness.no_regression(**kwargs)


def test_no_regression_rejects_non_str_result() -> None:
    with pytest.raises(FairnessConfigError, match="result must be a str"):
        fairness.no_regression(result=3)


def test_namespace_repr_names_the_verbs() -> None:
    assert "threshold()" in repr(fairness) and "no_regression()" in repr(fairness)


# -- calls_inline_check: which unmarked tests are fairness tests -----------------------------

import pytest_fairness  # noqa: E402
from pytest_fairness import check as bare_check  # noqa: E402
from pytest_fairness.markers import calls_inline_check  # noqa: E402


class _Other:
    def check(self, *args: object, **kwargs: object) -> None:
        pass


other = _Other()


def _via_namespace() -> None:
    fairness.check(None, max_gap=0.1)


def _via_bare_name() -> None:
    bare_check(None, max_gap=0.1)


def _via_package() -> None:
    pytest_fairness.fairness.check(None, max_gap=0.1)


def _in_a_nested_function() -> None:
    def inner() -> None:
        fairness.check(None, max_gap=0.1)

    inner()


def _another_check() -> None:
    other.check(None)


def _hidden_in_a_helper() -> None:
    _via_namespace()


@pytest.mark.parametrize("function, expected", [
    (_via_namespace, True), (_via_bare_name, True), (_via_package, True),
    (_in_a_nested_function, True), (_another_check, False), (_hidden_in_a_helper, False),
    (len, False),
])
def test_calls_inline_check(function: object, expected: bool) -> None:
    assert calls_inline_check(function) is expected
