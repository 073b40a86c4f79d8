"""The ``fairness`` namespace and the one schema of marker keywords.

``fairness.threshold(max_gap=0.05)`` returns ``pytest.mark.fairness_threshold(max_gap=0.05)``
after validating the keywords, so a typo fails at import time on the line that has it. The
plugin adds the plain ``fairness`` marker to every test that carries a threshold or
regression marker, so ``-m fairness`` selects them all. ``validate_threshold`` and
``validate_regression`` run again at setup, for marks written by hand.

This module imports nothing heavy: it is loaded with the plugin.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Final, final

import pytest

from pytest_fairness.errors import FairnessConfigError

__all__ = [
    "CONFIDENCE_MODES",
    "LIMITS",
    "MARKER_FAIRNESS",
    "MARKER_REGRESSION",
    "MARKER_THRESHOLD",
    "LimitSpec",
    "fairness",
    "validate_regression",
    "validate_threshold",
]

MARKER_FAIRNESS: Final = "fairness"
MARKER_THRESHOLD: Final = "fairness_threshold"
MARKER_REGRESSION: Final = "fairness_regression"

#: How an interval decides a limit: ``point`` ignores it; ``supported`` fails only when the
#: whole interval is beyond the limit; ``strict`` fails when any part of it is.
CONFIDENCE_MODES: Final = ("point", "supported", "strict")


@final
@dataclass(frozen=True)
class LimitSpec:
    """One limit keyword: its direction, allowed range and what it bounds."""

    name: str
    bound: str  # "max" (observed must be <=) or "min" (observed must be >=)
    low: float | None
    high: float | None
    description: str


def _spec(name: str, low: float | None, high: float | None, description: str) -> LimitSpec:
    return LimitSpec(name, name.split("_", 1)[0], low, high, description)


#: Every limit keyword of ``fairness.threshold``; the checks live in ``checks.py``.
LIMITS: Final[Mapping[str, LimitSpec]] = {
    spec.name: spec
    for spec in (
        _spec("max_gap", 0.0, None, "largest allowed max − min across included groups"),
        _spec("min_ratio", 0.0, 1.0, "smallest allowed min / max across included groups"),
        _spec("min_value", None, None, "smallest allowed value of any included group"),
        _spec("max_value", None, None, "largest allowed value of any included group"),
        _spec("max_effect_size", 0.0, None, "largest allowed |effect size|"),
        _spec("min_p_value", 0.0, 1.0, "smallest allowed p-value"),
        _spec("max_amplification", None, None, "largest allowed bias amplification"),
        _spec("max_variance", 0.0, None, "largest allowed variance of the amplification"),
        _spec("max_auc", 0.0, None, "largest allowed |AUC| of any matrix cell"),
        _spec("max_l1", 0.0, None, "largest allowed L1 norm of the AUC matrix"),
    )
}

_THRESHOLD_OPTIONS: Final = ("at", "confidence", "result")
_REGRESSION_OPTIONS: Final = ("tolerance", "metric", "result")
#: What ``fairness.no_regression(metric=...)`` may compare with the baseline.
REGRESSION_METRICS: Final = ("value", "gap", "ratio", "worst")


def _allowed(options: tuple[str, ...]) -> str:
    return ", ".join([*LIMITS, *options])


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or type(value).__name__ == "bool_" or not isinstance(value, Real):
        raise FairnessConfigError(
            f"{name} must be a number; got {name}={value!r} (type={type(value).__name__})."
        )
    if math.isnan(value):
        raise FairnessConfigError(f"{name} must be a number, not NaN; got {name}={value!r}.")
    return float(value)


def validate_threshold(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Validate the arguments of a ``fairness_threshold`` marker and return its keywords.

    Raises
    ------
    FairnessConfigError
        On positional arguments, an unknown keyword, a wrong type, a value out of range,
        contradictory limits, or no limit at all; the message names the keyword and lists
        the allowed ones.
    """
    if args:
        raise FairnessConfigError(
            f"fairness.threshold takes keyword arguments only; got positional {args!r}. "
            f"Allowed keywords: {_allowed(_THRESHOLD_OPTIONS)}."
        )
    unknown = [k for k in kwargs if k not in LIMITS and k not in _THRESHOLD_OPTIONS]
    if unknown:
        raise FairnessConfigError(
            f"fairness.threshold got unknown keyword {unknown[0]}={kwargs[unknown[0]]!r}. "
            f"Allowed keywords: {_allowed(_THRESHOLD_OPTIONS)}."
        )
    limits = {k: v for k, v in kwargs.items() if k in LIMITS}
    if not limits:
        raise FairnessConfigError(
            "fairness.threshold needs at least one limit; got "
            f"{dict(kwargs)!r}. Limits: {', '.join(LIMITS)}."
        )
    clean: dict[str, Any] = {}
    for name, value in limits.items():
        spec = LIMITS[name]
        number = _number(name, value)
        if (spec.low is not None and number < spec.low) or (
            spec.high is not None and number > spec.high
        ):
            low = "-inf" if spec.low is None else spec.low
            high = "inf" if spec.high is None else spec.high
            raise FairnessConfigError(
                f"{name} must be in [{low}, {high}] ({spec.description}); got {name}={value!r}."
            )
        clean[name] = number
    if "min_value" in clean and "max_value" in clean and clean["min_value"] > clean["max_value"]:
        raise FairnessConfigError(
            "Contradictory limits: min_value="
            f"{clean['min_value']!r} > max_value={clean['max_value']!r}; no value can pass both."
        )
    if "at" in kwargs:
        number = _number("at", kwargs["at"])
        clean["at"] = int(kwargs["at"]) if isinstance(kwargs["at"], Integral) else number
    confidence = kwargs.get("confidence", "point")
    if confidence not in CONFIDENCE_MODES:
        raise FairnessConfigError(
            f"confidence must be one of {', '.join(map(repr, CONFIDENCE_MODES))}; "
            f"got confidence={confidence!r}."
        )
    clean["confidence"] = confidence
    if "result" in kwargs:
        if not isinstance(kwargs["result"], str):
            raise FairnessConfigError(
                "result must be a str naming a returned result (its dict key or indicator "
                f"name); got result={kwargs['result']!r}."
            )
        clean["result"] = kwargs["result"]
    return clean


def validate_regression(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Validate the arguments of a ``fairness_regression`` marker and return its keywords.

    Raises
    ------
    FairnessConfigError
        On positional arguments, unknown keywords, a negative tolerance or an unknown metric.
    """
    if args:
        raise FairnessConfigError(
            f"fairness.no_regression takes keyword arguments only; got positional {args!r}. "
            f"Allowed keywords: {', '.join(_REGRESSION_OPTIONS)}."
        )
    unknown = [k for k in kwargs if k not in _REGRESSION_OPTIONS]
    if unknown:
        raise FairnessConfigError(
            f"fairness.no_regression got unknown keyword {unknown[0]}={kwargs[unknown[0]]!r}. "
            f"Allowed keywords: {', '.join(_REGRESSION_OPTIONS)}."
        )
    tolerance = _number("tolerance", kwargs.get("tolerance", 0.0))
    if tolerance < 0:
        raise FairnessConfigError(
            f"tolerance must be >= 0 (how much worse than the baseline is still accepted); "
            f"got tolerance={tolerance!r}."
        )
    metric = kwargs.get("metric", "gap")
    if metric not in REGRESSION_METRICS:
        raise FairnessConfigError(
            f"metric must be one of {', '.join(map(repr, REGRESSION_METRICS))}; "
            f"got metric={metric!r}."
        )
    clean: dict[str, Any] = {"tolerance": tolerance, "metric": metric}
    if "result" in kwargs:
        if not isinstance(kwargs["result"], str):
            raise FairnessConfigError(
                "result must be a str naming a returned result (its dict key or indicator "
                f"name); got result={kwargs['result']!r}."
            )
        clean["result"] = kwargs["result"]
    return clean


@final
class _FairnessNamespace:
    """The ``fairness`` object users import: marker factories and the inline check."""

    __slots__ = ()

    def threshold(self, **limits: Any) -> pytest.MarkDecorator:
        """Mark a test whose returned results must stay within limits.

        Parameters
        ----------
        **limits
            Any of ``max_gap``, ``min_ratio``, ``min_value``, ``max_value``,
            ``max_effect_size``, ``min_p_value``, ``max_amplification``, ``max_variance``,
            ``max_auc``, ``max_l1``; plus ``at`` (the threshold τ, K or level to check),
            ``confidence`` (``"point"``, ``"supported"`` or ``"strict"``) and ``result``
            (which returned result the limits apply to, by dict key or indicator name).

        Returns
        -------
        pytest.MarkDecorator
            ``pytest.mark.fairness_threshold(**limits)``.

        Examples
        --------
        >>> from pytest_fairness import fairness
        >>> fairness.threshold(max_gap=0.05).mark.kwargs["max_gap"]
        0.05
        """
        validate_threshold((), limits)
        return getattr(pytest.mark, MARKER_THRESHOLD)(**limits)  # type: ignore[no-any-return]

    def no_regression(self, **options: Any) -> pytest.MarkDecorator:
        """Mark a test whose results must not get worse than the baseline.

        Parameters
        ----------
        **options
            ``tolerance`` (how much worse is still accepted, default 0), ``metric``
            (``"gap"`` by default, or ``"value"``, ``"ratio"``, ``"worst"``) and ``result``.

        Returns
        -------
        pytest.MarkDecorator
            ``pytest.mark.fairness_regression(**options)``.
        """
        validate_regression((), options)
        return getattr(pytest.mark, MARKER_REGRESSION)(**options)  # type: ignore[no-any-return]

    def check(self, results: Any, **limits: Any) -> Any:
        """Check results against limits inline; see :func:`pytest_fairness.checks.check`."""
        __tracebackhide__ = True
        from pytest_fairness.checks import check

        return check(results, **limits)

    def __repr__(self) -> str:
        return "<pytest_fairness.fairness: threshold(), no_regression(), check()>"


#: The public namespace: ``fairness.threshold``, ``fairness.no_regression``, ``fairness.check``.
fairness: Final = _FairnessNamespace()
