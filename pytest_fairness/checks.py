"""Threshold semantics: the limit keywords, what each observes in a result, and the verdict.

What each limit bounds, and ``metric=`` (read by :func:`~pytest_fairness.readings.read_metric`),
are the "Limits" table of ``docs/index.md``. :func:`evaluate` returns :class:`CheckOutcome`
data and raises no violation; ``fairness.check`` or the plugin raise it for failed ones.
"""

from __future__ import annotations

import contextvars
import fnmatch
import math
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, Final

from pytest_fairness.errors import (
    FairnessConfigError,
    InsufficientDataError,
    did_you_mean,
    own_error,
    plain,
)
from pytest_fairness.options import (
    COMPARE_METRICS,
    CONFIDENCE_MODES,
    DEFAULT_CONFIDENCE,
    LIMITS,
    METRIC_LIMITS,
)
from pytest_fairness.readings import decide_line, magnitude, read_metric
from pytest_fairness.results import GroupStat, IndicatorResult, group_label, iter_results

if TYPE_CHECKING:
    from pytest_fairness.records import CheckOutcome

#: A result with its intervals at a family's level, and why the others are gone (``at_level``).
Relevelled = tuple[IndicatorResult, dict[str, str]]

__all__ = ["LIMITS", "METRIC_LIMITS", "InlineCheck", "check_metric_name", "collect",
           "collecting", "decide_line", "evaluate", "rejudge", "set_inconclusive",
           "validate_regression", "validate_threshold"]

__tracebackhide__ = own_error


def check_metric_name(metric: Any) -> str:
    """Validate ``metric=`` before any result exists: a word, or a stat some indicator offers.

    Raises
    ------
    FairnessConfigError
        Listing the words and, per indicator, the names it offers.
    """
    from pytest_fairness.indicators import INDICATORS

    offered = {name: spec.metrics for name, spec in INDICATORS.items() if spec.metrics}
    patterns = [*COMPARE_METRICS, *(p for names in offered.values() for p in names)]
    if isinstance(metric, str) and any(
        fnmatch.fnmatchcase(metric.casefold(), p.casefold()) for p in patterns
    ):
        return metric
    listing = "; ".join(f"{name}: {', '.join(names)}" for name, names in offered.items())
    raise FairnessConfigError(
        f"metric={metric!r} is not a metric any indicator offers."
        + did_you_mean(metric, patterns)
        + f" metric must be one of {', '.join(map(repr, COMPARE_METRICS))}; got "
        f"metric={metric!r}, or a stat by indicator — {listing}."
    )


# -- the markers' keywords ---------------------------------------------------------------


_THRESHOLD_OPTIONS: Final = ("at", "confidence", "result", "metric")
_REGRESSION_OPTIONS: Final = ("tolerance", "metric", "result", "confidence")


def _allowed(options: tuple[str, ...]) -> str:
    return ", ".join([*LIMITS, *options])


def _confidence(kwargs: Mapping[str, Any]) -> str:
    """The ``confidence`` keyword of a marker, checked (default ``"supported"``)."""
    confidence = kwargs.get("confidence", DEFAULT_CONFIDENCE)
    if confidence not in CONFIDENCE_MODES:
        modes = ", ".join(map(repr, CONFIDENCE_MODES))
        raise FairnessConfigError(f"confidence must be one of {modes}; got {confidence=!r}.")
    return str(confidence)


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or type(value).__name__ == "bool_" or not isinstance(value, Real):
        raise FairnessConfigError(
            f"{name} must be a number; got {name}={value!r} (type={type(value).__name__})."
        )
    if math.isnan(value):
        raise FairnessConfigError(f"{name} must be a number, not NaN; got {name}={value!r}.")
    return float(value)


def _with_result(clean: dict[str, Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``clean`` with the marker's ``result=`` (the returned result it applies to), checked."""
    if "result" in kwargs:
        if not isinstance(kwargs["result"], str):
            raise FairnessConfigError(
                "result must be a str naming a returned result (its dict key or indicator "
                f"name); got result={kwargs['result']!r}."
            )
        clean["result"] = kwargs["result"]
    return clean


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
            f"fairness.threshold got unknown keyword {unknown[0]}={kwargs[unknown[0]]!r}."
            f"{did_you_mean(unknown[0], [*LIMITS, *_THRESHOLD_OPTIONS])} "
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
    return _with_result(clean, kwargs)


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
            f"fairness.no_regression got unknown keyword {unknown[0]}={kwargs[unknown[0]]!r}."
            f"{did_you_mean(unknown[0], _REGRESSION_OPTIONS)} "
            f"Allowed keywords: {', '.join(_REGRESSION_OPTIONS)}."
        )
    tolerance = _number("tolerance", kwargs.get("tolerance", 0.0))
    if tolerance < 0:
        raise FairnessConfigError(
            f"tolerance must be >= 0 (how much worse than the baseline is still accepted); "
            f"got tolerance={tolerance!r}."
        )
    metric = check_metric_name(kwargs.get("metric", "headline"))
    clean: dict[str, Any] = {"tolerance": tolerance, "metric": metric,
                             "confidence": _confidence(kwargs)}
    return _with_result(clean, kwargs)


# -- observations ----------------------------------------------------------------------


def _needs_groups(limit: str, result: IndicatorResult) -> tuple[GroupStat, ...]:
    included = result.included_groups
    if len(included) >= 2:
        return included
    sizes = ", ".join(f"{plain(g.label)} (n={g.n})" for g in result.groups) or "none"
    raise InsufficientDataError(
        f"{limit} needs at least 2 groups with n >= min_group_size={result.min_group_size} in "
        f"{result.name!r} ({result.metric}); groups: {sizes}. Pass a smaller min_group_size "
        "to the indicator, or add data for the small groups."
    )


def _stat(limit: str, result: IndicatorResult, name: str) -> float:
    if name not in result.stats:
        have = ", ".join(sorted(result.stats)) or "none"
        raise FairnessConfigError(
            f"{limit} bounds stats[{name!r}], which {result.name!r} ({result.metric}) does not "
            f"report (its stats: {have}). Use a limit that fits this indicator, or pass "
            "result=... to apply the limits to another returned result."
        )
    return result.stats[name]


def _undefined_group(result: IndicatorResult) -> GroupStat | None:
    """The first compared group (not excluded) whose value is NaN: no limit can pass it."""
    return next((g for g in result.groups if not g.excluded and math.isnan(g.value)), None)


def _undefined_is_insufficient(
    limit: str, result: IndicatorResult, name: str, value: float
) -> float:
    """A NaN stat cannot pass or fail a limit: it means too little data, so say that."""
    if math.isnan(value):
        note = f"; {result.notes[0]}" if result.notes else ""
        raise InsufficientDataError(
            f"{limit}: stats[{name!r}] of {result.name!r} ({result.metric}) is undefined "
            f"(NaN){note}. Pass a smaller min_group_size to the indicator, or add data."
        )
    return value


def _bounded(
    limit: str, observed: float, interval: tuple[float, float] | None, confidence: str
) -> float:
    """The number the verdict uses: the estimate, or the decisive end of the interval."""
    if confidence == "point":
        return observed
    if interval is None:
        raise FairnessConfigError(
            f"confidence={confidence!r} needs an interval for {limit}, and the result has "
            "none. Compute the indicator with intervals (e.g. n_bootstrap=1000) or use "
            "confidence='point'."
        )
    low, high = interval
    upper_matters = (LIMITS[limit].bound == "max") == (confidence == "strict")
    return high if upper_matters else low


def _observe_metric(
    limit: str, result: IndicatorResult, metric: str, confidence: str
) -> tuple[float, float, tuple[float, float] | None, str]:
    """``_observe`` for ``metric=``: what :func:`read_metric` reads."""
    on_groups = limit in ("max_gap", "min_ratio")
    try:
        reading = read_metric(result, metric, over_groups=on_groups)
    except FairnessConfigError as error:
        raise FairnessConfigError(f"{limit} with {error}") from None
    if reading.groups is None:  # one number: a stat, or the headline's gap, value, ...
        observed = _undefined_is_insufficient(limit, result, reading.name, reading.number)
        return (observed, _bounded(limit, observed, reading.interval, confidence),
                reading.interval, reading.label)
    nan = _undefined_group(reading.groups)
    if nan is not None:  # fails the limit: included_groups would leave it out
        return math.nan, math.nan, None, f"group {plain(nan.label)} {reading.name}"
    _needs_groups(limit, result)
    values = reading.groups.included_groups
    if len(values) < (2 if on_groups else 1):
        raise InsufficientDataError(
            f"{limit}: {reading.name!r} is defined for {len(values)} included group(s) of "
            f"{result.name!r}; pass a smaller min_group_size or add data."
        )
    if not on_groups:  # the lowest (highest) group, bounded over groups at once
        group = (min if limit == "min_value" else max)(values, key=lambda g: g.value)
        bound = result.intervals.get(f"{limit[:3]}:{reading.name}")
        return group.value, _bounded(limit, group.value, bound, confidence), bound, (
            f"group {plain(group.label)} {reading.name}")
    interval = reading.interval if limit == "max_gap" else None
    observed = reading.number if limit == "max_gap" else reading.groups.ratio
    if math.isnan(observed):
        raise InsufficientDataError(
            f"min_ratio: the ratio of {reading.name!r} is undefined for negative values; "
            "bound the gap instead.")
    return (observed, _bounded(limit, observed, interval, confidence), interval,
            f"{reading.name} across groups")


_GROUP_LIMITS: Final = ("max_gap", "min_ratio", "min_value", "max_value")


def _observe(
    limit: str, result: IndicatorResult, confidence: str, metric: str | None = None
) -> tuple[float, float, tuple[float, float] | None, str]:
    """Return ``(observed, decisive, interval, where)`` for one limit on one result."""
    if metric is not None:
        return _observe_metric(limit, result, metric, confidence)
    nan = _undefined_group(result) if limit in _GROUP_LIMITS else None
    if nan is not None:  # fails the limit: included_groups would leave it out
        return math.nan, math.nan, None, f"group {plain(nan.label)}"
    if limit in ("max_gap", "min_ratio"):
        _needs_groups(limit, result)
        kind = "gap" if limit == "max_gap" else "ratio"
        observed = result.gap if kind == "gap" else result.ratio
        if math.isnan(observed):
            reason = ("negative or infinite values" if kind == "ratio"
                      else "infinite values")
            raise InsufficientDataError(
                f"{limit}: the {kind} of {result.name!r} ({result.metric}) is undefined for "
                f"{reason} among its groups: {[g.value for g in result.included_groups]}."
                + (" Bound the gap instead." if kind == "ratio" else "")
            )
        interval = result.intervals.get(kind)
        return observed, _bounded(limit, observed, interval, confidence), interval, ""
    if limit in ("min_value", "max_value"):
        if not result.groups:
            interval = result.intervals.get("value")
            decisive = _bounded(limit, result.value, interval, confidence)
            return result.value, decisive, interval, ""
        included = result.included_groups
        if not included:
            raise InsufficientDataError(
                f"{limit}: no group of {result.name!r} has n >= min_group_size="
                f"{result.min_group_size}; pass a smaller min_group_size or add data."
            )
        pick = min if limit == "min_value" else max
        together = result.intervals.get(limit[:3])  # simultaneous over groups, if computed
        if confidence != "point" and together is not None:
            group = pick(included, key=lambda g: g.value)
            return (group.value, _bounded(limit, group.value, together, confidence), together,
                    f"group {plain(group.label)}")
        decisive, group = pick(
            ((_bounded(limit, g.value, g.interval, confidence), g) for g in included),
            key=lambda pair: pair[0],
        )
        return group.value, decisive, group.interval, f"group {plain(group.label)}"
    if limit == "max_effect_size":
        observed = abs(_undefined_is_insufficient(
            limit, result, "effect_size", _stat(limit, result, "effect_size")))
        interval = result.intervals.get("effect_size")
        interval = None if interval is None else magnitude(interval)
        return observed, _bounded(limit, observed, interval, confidence), interval, ""
    if limit == "max_auc":
        matrix = result.matrices.get("auc")
        if matrix is None:
            raise FairnessConfigError(
                f"max_auc bounds matrices['auc'], which {result.name!r} does not report; "
                "use it with fair_sa results."
            )
        if confidence != "point" and matrix.intervals is None:
            raise FairnessConfigError(
                f"confidence={confidence!r} needs an interval for max_auc, and the AUC "
                "matrix has none. Compute fair_sa with intervals (e.g. n_bootstrap=1000) or "
                "use confidence='point'."
            )
        cells = []
        for i, (r, row) in enumerate(zip(matrix.rows, matrix.values)):
            for j, (c, v) in enumerate(zip(matrix.columns, row)):
                if math.isnan(v):
                    continue
                where = f"cell {plain(group_label(r))} × {plain(group_label(c))}"
                pair = None if matrix.intervals is None else matrix.intervals[i][j]
                if pair is None and confidence != "point":
                    raise InsufficientDataError(
                        f"max_auc with confidence={confidence!r}: {where} of {result.name!r} "
                        "has no interval (its bootstrap replicates were undefined); add "
                        "images to that subgroup or use confidence='point'."
                    )
                interval = None if pair is None else magnitude(pair)
                decisive = _bounded(limit, abs(v), interval, confidence)
                cells.append((decisive, abs(v), interval, where))
        if not cells:
            raise InsufficientDataError(f"max_auc: the AUC matrix of {result.name!r} is empty.")
        decisive, observed, interval, where = max(cells, key=lambda cell: (cell[0], cell[3]))
        return observed, decisive, interval, where
    stat = {
        "min_p_value": "p_value",
        "max_amplification": "amplification",
        "max_variance": "variance",
        "max_l1": "l1",
    }[limit]
    observed = _undefined_is_insufficient(limit, result, stat, _stat(limit, result, stat))
    interval = result.intervals.get(stat)
    return observed, _bounded(limit, observed, interval, confidence), interval, ""


def _within(observed: float, threshold: float, bound: str) -> bool:
    """Whether ``observed`` respects the limit; equal up to float rounding counts as within.

    A gap of 0.92 - 0.88 is 0.040000000000000036 in floating point; failing
    ``max_gap=0.04`` on it would be a verdict on rounding, not on the model.
    """
    if math.isclose(observed, threshold, rel_tol=1e-12, abs_tol=1e-15):
        return True
    return observed <= threshold if bound == "max" else observed >= threshold


#: What an inconclusive verdict does to a test: ``--fairness-inconclusive`` (None: by rule).
_inconclusive: str | None = None


def set_inconclusive(policy: str | None) -> str | None:
    """Make ``policy`` (``"pass"``, ``"fail"``, None) what inconclusive verdicts do; return the old.

    The plugin sets it for its run (``--fairness-inconclusive``); None is the rule's default:
    ``"supported"`` passes an inconclusive verdict, ``"strict"`` fails it.
    """
    global _inconclusive
    previous, _inconclusive = _inconclusive, policy
    return previous


_Seen = tuple[float, float, tuple[float, float] | None, str]  # what _observe returns


def _verdict(limit: str, threshold: float, result: IndicatorResult, confidence: str,
             metric: str | None) -> tuple[str, _Seen]:
    """``pass``, ``fail`` or ``inconclusive``, and what ``confidence`` observes.

    Under ``"point"`` the estimate decides. Otherwise both rules are read: the strict end of
    the bounds within the limit is a pass, the supported end beyond it a fail; between the
    two the interval straddles the limit, and these data do not decide.
    """
    bound = LIMITS[limit].bound
    if confidence == "point":
        seen = _observe(limit, result, confidence, metric)
        return ("pass" if _within(seen[1], threshold, bound) else "fail"), seen
    ends = {rule: _observe(limit, result, rule, metric)  # the asked rule first: its errors
            for rule in sorted(("supported", "strict"), key=lambda rule: rule != confidence)}
    verdict = ("pass" if _within(ends["strict"][1], threshold, bound) else
               "fail" if not _within(ends["supported"][1], threshold, bound) else
               "inconclusive")
    return verdict, ends[confidence]


def _applies(spec_result: str | None, key: str | None, result: IndicatorResult) -> bool:
    return spec_result is None or spec_result in (key, result.name)


def evaluate(results: Any, limits: Mapping[str, Any], *,
             level: float | None = None) -> list[CheckOutcome]:
    """Check results against validated limits and return every outcome, raising nothing.

    Parameters
    ----------
    results : IndicatorResult, or a sequence or mapping of them
        What a fairness test returned.
    limits : mapping
        Validated keywords of one ``fairness_threshold`` marker.
    level : float, optional
        Under ``--fairness-family-alpha``: judge ``"supported"``/``"strict"`` limits with
        their intervals recomputed at this level (:func:`~pytest_fairness.family.at_level`).

    Raises
    ------
    FairnessConfigError
        When there is no result to check, ``result=`` matches none, or a limit does not fit
        (or, with ``level``, needs an interval that cannot be recomputed at it).
    InsufficientDataError
        When the bounded number cannot be computed.
    """
    pairs = list(iter_results(results))
    if not pairs:
        raise FairnessConfigError(
            "A fairness limit needs an IndicatorResult to check, but got "
            f"{type(results).__name__}. Return the indicator's result from the test (or a "
            "list or dict of results), or pass it to fairness.check()."
        )
    wanted = limits.get("result")
    chosen = [(k, r) for k, r in pairs if _applies(wanted, k, r)]
    if not chosen:
        names = ", ".join(sorted({k or r.name for k, r in pairs}))
        raise FairnessConfigError(
            f"result={wanted!r} matches none of the returned results ({names}); use a dict key "
            "or an indicator name."
        )
    return [outcome for key, result in chosen
            for outcome in _judge(key, result.select(limits["at"]) if "at" in limits
                                  else result, limits, level)]


def _judge(key: str | None, target: IndicatorResult, limits: Mapping[str, Any],
           level: float | None, relevelled: Relevelled | None = None) -> list[CheckOutcome]:
    """Each limit's outcome on one result (``relevelled``: its ``at_level``, if known)."""
    from pytest_fairness.family import FAMILY_FIX, at_level
    from pytest_fairness.records import CheckOutcome

    confidence = limits.get("confidence", DEFAULT_CONFIDENCE)
    level = None if confidence == "point" else level
    judged, missing = (target, {}) if level is None else (
        relevelled or at_level(target, level))
    outcomes = []
    for limit in (k for k in limits if k in LIMITS):
        threshold = float(limits[limit])
        rule = confidence if LIMITS[limit].interval else "point"  # a p-value is a test
        try:
            if level is not None and limit == "max_auc":
                raise FairnessConfigError("the AUC matrix's intervals are not re-levelled")
            verdict, (observed, _, interval, where) = _verdict(
                limit, threshold, judged, rule, limits.get("metric"))
        except FairnessConfigError as error:
            if level is None or "interval" not in str(error):
                raise
            why = "; ".join(missing.values()) or str(error)
            raise FairnessConfigError(
                f"{limit}={threshold:g} (confidence={confidence!r}) on {target.name!r} "
                f"({target.metric}) is under family-wise control (--fairness-family-alpha) "
                f"and needs its interval at level {level:.6g}, which cannot be recomputed: "
                f"{why}. Fix: {FAMILY_FIX}.") from None
        passed = verdict == "pass" or (verdict == "inconclusive" and (
            _inconclusive or ("pass" if rule == "supported" else "fail")) == "pass")
        n = min((g.n for g in target.included_groups), default=None)
        decide = decide_line(threshold, observed, interval, n) if verdict == "inconclusive" else ""
        outcomes.append(CheckOutcome(
            limit, threshold, observed, passed, target, key, rule, interval, where,
            reads=limits.get("metric") or "", verdict=verdict, decide=decide,
            level=None if rule == "point" else level))
    return outcomes


def rejudge(outcomes: Iterable[CheckOutcome], level: float) -> list[CheckOutcome]:
    """Outcomes judged again at ``level`` (inline checks, under family-wise control).

    Those under ``"point"``, and those read back without their result, stay as they are.
    """
    from pytest_fairness.family import at_level

    again: list[CheckOutcome] = []
    relevelled: dict[int, Relevelled] = {}  # each result once, whatever its limits
    for o in outcomes:
        if o.confidence == "point" or o.result is None:
            again.append(o)
            continue
        limits = {o.limit: o.threshold, "confidence": o.confidence,
                  **({"metric": o.reads} if o.reads else {})}
        if id(o.result) not in relevelled:
            relevelled[id(o.result)] = at_level(o.result, level)
        again.extend(_judge(o.key, o.result, limits, level, relevelled[id(o.result)]))
    return again


# -- inline checks and collection --------------------------------------------------------

#: What one inline check leaves behind: the results it was given and its outcomes.
InlineCheck = tuple[Any, list["CheckOutcome"]]

_COLLECTOR: contextvars.ContextVar[list[InlineCheck] | None] = contextvars.ContextVar(
    "pytest_fairness_collector", default=None
)
_DEFER: contextvars.ContextVar[bool] = contextvars.ContextVar("pytest_fairness_defer",
                                                              default=False)


@contextmanager
def collecting(*, defer: bool = False) -> Iterator[list[InlineCheck]]:
    """Collect the results and outcomes of inline ``fairness.check`` calls made in the block.

    The plugin wraps each test call in it so that inline checks reach the summary; with
    ``defer`` (``--fairness-family-alpha``) their verdicts wait for the test's end, when
    the test's share of the family's alpha is known.
    """
    sink: list[InlineCheck] = []
    token = _COLLECTOR.set(sink)
    deferring = _DEFER.set(defer)
    try:
        yield sink
    finally:
        _COLLECTOR.reset(token)
        _DEFER.reset(deferring)


def collect(results: Any, outcomes: list[CheckOutcome]) -> bool:
    """Hand the results and outcomes of one inline check to the enclosing :func:`collecting`.

    Outside a :func:`collecting` block it does nothing. Returns whether the verdict waits
    for the test's end (the block's ``defer``).
    """
    sink = _COLLECTOR.get()
    if sink is not None:
        sink.append((results, outcomes))
    return sink is not None and _DEFER.get()
