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

from typing import TYPE_CHECKING, Any, Final, final

import pytest

from pytest_fairness.checks import (
    collect,
    evaluate,
    validate_regression,
    validate_threshold,
)
from pytest_fairness.errors import FairnessViolation, own_error
from pytest_fairness.options import (
    MARKER_FAIRNESS,
    MARKER_REGRESSION,
    MARKER_THRESHOLD,
    MARKER_UNIT,
)

if TYPE_CHECKING:
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

__tracebackhide__ = own_error

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
        When any limit is broken; it is an ``AssertionError``, so pytest reports a failure
        (under ``--fairness-family-alpha``, when the test ends).
    FairnessConfigError
        On invalid limits.

    Examples
    --------
    >>> from pytest_fairness import GroupStat, IndicatorResult, fairness, indicators
    >>> y, groups = [1, 0] * 100, ["a"] * 100 + ["b"] * 100
    >>> wrong = range(100, 120, 2)  # 10 of group b's 100 images; none of group a's
    >>> r = indicators.group_metrics(y, [1 - v if i in wrong else v for i, v in enumerate(y)],
    ...                              groups=groups)
    >>> round(r.gap, 2), tuple(round(x, 3) for x in r.intervals["gap"])  # 1,000 replicates
    (0.1, (0.039, 0.161))
    >>> [(o.verdict, o.passed) for o in fairness.check(r, max_gap=0.2)]
    [('pass', True)]
    >>> [(o.verdict, o.passed) for o in fairness.check(r, max_gap=0.05)]  # straddles 0.05
    [('inconclusive', True)]
    >>> hand = IndicatorResult("demo", "accuracy", 0.9, min_group_size=1,
    ...                        groups=(GroupStat("a", 10, 0.92), GroupStat("b", 10, 0.88)))
    >>> [o.passed for o in fairness.check(hand, max_gap=0.05, confidence="point")]
    [True]
    """
    __tracebackhide__ = True
    outcomes = evaluate(results, validate_threshold((), limits))
    if not collect(results, outcomes) and any(not o.passed for o in outcomes):
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
            ``confidence`` (``"supported"``, the default: fail when the interval shows the
            limit broken, inconclusive when it straddles it; ``"strict"``: fail unless the
            interval shows it kept; ``"point"``: the estimate alone) and ``result``
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
            ``"gap"``, ``"value"``, ``"ratio"``, ``"worst"``, or a stat the result names:
            ``"DEO"``, or ``"TPR"`` for the gap of a per-group stat, as ``metric=`` of
            ``threshold``), ``result``, and
            ``confidence``: ``"supported"`` (default) fails only when the whole interval of
            the change lies beyond the tolerance, ``"strict"`` when any of it does,
            ``"point"`` judges the change itself. The interval is bootstrapped from both
            results' replicates (indicators keep 1,000 by default); it is *paired* when
            both were drawn on the same images (a run that compares draws image by image),
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
