"""The ``fairness`` namespace, the marker names, and the validation of marker keywords.

``fairness.threshold(max_gap=0.05)`` returns ``pytest.mark.fairness_threshold(max_gap=0.05)``
after validating the keywords, so a typo fails at import time on the line that has it. The
plugin adds the plain ``fairness`` marker to every test that carries a threshold or
regression marker, so ``-m fairness`` selects them all. ``validate_threshold`` and
``validate_regression`` run again at setup, for marks written by hand. The limit keywords
and their meaning are :data:`pytest_fairness.checks.LIMITS`.

:func:`check` (also ``fairness.check``) is the inline form: it evaluates the limits with
:func:`pytest_fairness.checks.evaluate` and raises the rendered violation.

This module imports nothing heavy: it is loaded with the plugin.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any, Final, final

import pytest

from pytest_fairness.checks import (
    CONFIDENCE_MODES,
    LIMITS,
    METRIC_LIMITS,
    check_metric_name,
    collect,
    evaluate,
)
from pytest_fairness.errors import FairnessConfigError, FairnessViolation
from pytest_fairness.options import COMPARE_METRICS
from pytest_fairness.records import CheckOutcome

__all__ = [
    "MARKER_FAIRNESS",
    "MARKER_LINES",
    "MARKER_REGRESSION",
    "MARKER_THRESHOLD",
    "MARKER_UNIT",
    "calls_inline_check",
    "check",
    "fairness",
    "is_fairness_item",
    "validate_regression",
    "validate_threshold",
]

MARKER_FAIRNESS: Final = "fairness"
MARKER_THRESHOLD: Final = "fairness_threshold"
MARKER_REGRESSION: Final = "fairness_regression"
MARKER_UNIT: Final = "fairness_unit"
#: The ``markers`` ini lines that register them (``--strict-markers`` needs them).
MARKER_LINES: Final = (
    f"{MARKER_FAIRNESS}: a fairness test (skipped unless --fairness is given).",
    f"{MARKER_THRESHOLD}(**limits): fail when the returned results break the limits; "
    "use fairness.threshold(...) to write it.",
    f"{MARKER_REGRESSION}(tolerance=0.0, metric='headline', confidence='point'): fail when "
    "the results are worse than the baseline (--fairness-baseline); use "
    "fairness.no_regression(...) to write it.",
    f"{MARKER_UNIT}: a unit test of fairness code (of fairness.check itself, say), not a "
    "fairness test: it runs without --fairness even when it calls fairness.check.",
)

_THRESHOLD_OPTIONS: Final = ("at", "confidence", "result", "metric")
_REGRESSION_OPTIONS: Final = ("tolerance", "metric", "result", "confidence")


def _allowed(options: tuple[str, ...]) -> str:
    return ", ".join([*LIMITS, *options])


def _confidence(kwargs: Mapping[str, Any]) -> str:
    """The ``confidence`` keyword of a marker, checked (default ``"point"``)."""
    confidence = kwargs.get("confidence", "point")
    if confidence not in CONFIDENCE_MODES:
        raise FairnessConfigError(
            f"confidence must be one of {', '.join(map(repr, CONFIDENCE_MODES))}; "
            f"got confidence={confidence!r}."
        )
    return str(confidence)


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
    if "metric" in kwargs:
        clean["metric"] = check_metric_name(kwargs["metric"])
        other = next((k for k in limits if k not in METRIC_LIMITS), None)
        if other is not None:
            raise FairnessConfigError(
                f"metric= picks the number that {', '.join(METRIC_LIMITS)} bound; {other} "
                f"bounds its own ({LIMITS[other].description}). Put {other} in a separate "
                "fairness.threshold."
            )
    clean["confidence"] = _confidence(kwargs)
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
    metric = kwargs.get("metric", "headline")
    if metric not in COMPARE_METRICS:
        raise FairnessConfigError(
            f"metric must be one of {', '.join(map(repr, COMPARE_METRICS))}; "
            f"got metric={metric!r}."
        )
    clean: dict[str, Any] = {"tolerance": tolerance, "metric": metric,
                             "confidence": _confidence(kwargs)}
    if "result" in kwargs:
        if not isinstance(kwargs["result"], str):
            raise FairnessConfigError(
                "result must be a str naming a returned result (its dict key or indicator "
                f"name); got result={kwargs['result']!r}."
            )
        clean["result"] = kwargs["result"]
    return clean


def is_fairness_item(item: pytest.Item) -> bool:
    """Whether the test is a fairness test (it carries the ``fairness`` marker)."""
    return item.get_closest_marker(MARKER_FAIRNESS) is not None


def calls_inline_check(function: Any) -> bool:
    """Whether a test function calls ``fairness.check`` (or ``check``) in its own body.

    Read from the compiled code, nested functions and comprehensions included: a global it
    names is this module's :func:`check` (under any name), or the code names ``check`` and
    one of its globals is the ``fairness`` namespace or the ``pytest_fairness`` package.
    The plugin gives such tests the ``fairness`` marker, so that, like marked tests, they
    run only with ``--fairness`` and are recorded; mark a test ``fairness_unit`` to keep it
    an ordinary test. A check hidden in a helper function is not seen.

    Examples
    --------
    >>> from pytest_fairness import fairness
    >>> def test_inline(result=None):
    ...     fairness.check(result, max_gap=0.1)
    >>> calls_inline_check(test_inline), calls_inline_check(lambda: None)
    (True, False)
    """
    import inspect
    import sys
    import types

    function = inspect.unwrap(function)
    code = getattr(function, "__code__", None)
    if code is None:
        return False
    names: set[str] = set()
    pending = [code]
    while pending:
        current = pending.pop()
        names.update(current.co_names)
        pending.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    namespace = getattr(function, "__globals__", {})
    if any(namespace.get(name) is check for name in names):  # check(...), under any name
        return True
    owners = [o for o in (fairness, sys.modules.get("pytest_fairness")) if o is not None]
    return "check" in names and any(namespace.get(name) is o for name in names for o in owners)


def check(results: Any, **limits: Any) -> tuple[CheckOutcome, ...]:
    """Check results against limits, raising :class:`FairnessViolation` on any breach.

    Parameters
    ----------
    results : IndicatorResult, or a sequence or mapping of them
        The results to check.
    **limits
        The keywords of ``fairness.threshold`` (``max_gap=0.05``, ``at=0.5``, ...).

    Returns
    -------
    tuple of CheckOutcome
        Every outcome, when all passed.

    Raises
    ------
    FairnessViolation
        When any limit is broken; it is an ``AssertionError``, so pytest reports a failure.
    FairnessConfigError
        On invalid limits.

    Examples
    --------
    >>> from pytest_fairness import GroupStat, IndicatorResult, fairness
    >>> r = IndicatorResult("demo", "accuracy", 0.9, min_group_size=1,
    ...                     groups=(GroupStat("a", 10, 0.92), GroupStat("b", 10, 0.88)))
    >>> [o.passed for o in fairness.check(r, max_gap=0.05)]
    [True]
    """
    __tracebackhide__ = True
    outcomes = evaluate(results, validate_threshold((), limits))
    collect(results, outcomes)
    if any(not o.passed for o in outcomes):
        from pytest_fairness.report.terminal import violation_message

        raise FairnessViolation(violation_message(outcomes), outcomes)
    return tuple(outcomes)


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
            (``"headline"`` by default: what each indicator is judged on, the gap of group
            indicators, iEAT's |effect size|, the amplification, Fair SA's L1; or
            ``"gap"``, ``"value"``, ``"ratio"``, ``"worst"``), ``result``, and
            ``confidence``: ``"point"`` (default) judges the change itself;
            ``"supported"`` fails only when the whole interval of the change lies beyond
            the tolerance, ``"strict"`` when any of it does. The interval is bootstrapped
            from both results' replicates (compute the indicator with ``n_bootstrap=1000``
            and a fixed ``seed``); it is *paired* when both were drawn on the same images,
            so the noise two checkpoints share on them cancels.

        Returns
        -------
        pytest.MarkDecorator
            ``pytest.mark.fairness_regression(**options)``.

        Examples
        --------
        >>> from pytest_fairness import fairness
        >>> fairness.no_regression(tolerance=0.01, confidence="supported").mark.kwargs
        {'tolerance': 0.01, 'confidence': 'supported'}
        """
        validate_regression((), options)
        return getattr(pytest.mark, MARKER_REGRESSION)(**options)  # type: ignore[no-any-return]

    def check(self, results: Any, **limits: Any) -> tuple[CheckOutcome, ...]:
        """Check results against limits inline; see :func:`pytest_fairness.check`."""
        __tracebackhide__ = True
        return check(results, **limits)

    def __repr__(self) -> str:
        return "<pytest_fairness.fairness: threshold(), no_regression(), check()>"


#: The public namespace: ``fairness.threshold``, ``fairness.no_regression``, ``fairness.check``.
fairness: Final = _FairnessNamespace()
