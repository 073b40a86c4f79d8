"""What ``metric=`` names in a result: one answer for limits and regressions alike.

Used by ``fairness.threshold(metric=...)``, ``fairness.no_regression(metric=...)``,
``--fairness-compare-fail METRIC:TOL`` and ``pytest-fairness compare --fail``.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Final, final

from pytest_fairness.errors import FairnessConfigError, did_you_mean, own_error
from pytest_fairness.indicators.registry import Headline, headline
from pytest_fairness.options import COMPARE_METRICS
from pytest_fairness.results import IndicatorResult

__all__ = ["Reading", "decide_line", "magnitude", "read_metric"]

__tracebackhide__ = own_error

#: Stats that are levels of a result's values (overall, best or worst group, a rate): better
#: by ``higher_is_better``. p-values are better larger; other stats (gaps, distances) smaller.
_LEVELS: Final = ("accuracy", "SDR", "MGA", "mGA", "MGS", "mGS", "*hit_rate", "precision@*")


@final
@dataclass(frozen=True)
class Reading:
    """What a metric name reads in a result (:func:`read_metric`).

    ``name`` is as the result spells it (``"tpr"`` for ``"TPR"``), ``label`` where reports
    say the number comes from; ``number`` (NaN when undefined) is what a regression compares.
    ``groups``, for a per-group stat, is the result with that stat as its group values.
    """

    name: str
    label: str
    number: float
    lower_is_better: bool
    magnitude: bool = False
    interval: tuple[float, float] | None = None
    replicates: tuple[float, ...] | None = None
    groups: IndicatorResult | None = None


def magnitude(interval: tuple[float, float]) -> tuple[float, float]:
    """The interval of ``|x|`` from that of ``x`` (from 0 when it straddles 0)."""
    low, high = interval
    return (0.0 if low <= 0 <= high else min(abs(low), abs(high)), max(abs(low), abs(high)))


def decide_line(threshold: float, observed: float, interval: tuple[float, float] | None,
                n: int | None) -> str:
    """What would decide an inconclusive verdict: a distance, and roughly how many images.

    ``h`` is the interval's half-width on the limit's side of the estimate, ``e`` the
    estimate's distance from the limit, ``n`` the smallest compared group's size (None
    without groups); the data decide an estimate at least ``h`` from the limit, and
    intervals shrink like 1/√n, so about ``n·(h/e)²`` images per group would decide it.

    Examples
    --------
    >>> print(decide_line(0.05, 0.06, (0.03, 0.09), 100))  # doctest: +NORMALIZE_WHITESPACE
    undecided: these data decide only at least 0.03 from the limit (the interval's
    half-width on its side); the estimate is 0.01 from it: about 900 images per group (now
    100 in the smallest) would decide it (an estimate: intervals shrink like 1/√n)
    """
    if interval is None or math.isnan(observed):
        return ""
    low, high = interval
    e = abs(observed - threshold)
    h = (high - observed) if threshold >= observed else (observed - low)
    text = (f"undecided: these data decide only at least {h:.3g} from the limit (the "
            "interval's half-width on its side)")
    if not e:
        return text + "; the estimate is on the limit: no sample size decides it"
    text += f"; the estimate is {e:.3g} from it"
    if not n or h <= e:
        return text
    need = math.ceil(round(n * (h / e) ** 2, 6))  # 900, not 901 from float noise
    return (text + f": about {need:,} images per group (now {n:,} in the smallest) would "
            "decide it (an estimate: intervals shrink like 1/√n)")


def _find(name: str, names: Iterable[str]) -> str | None:
    """``name`` among ``names``: exactly, else case-insensitively when that is unambiguous."""
    names = list(names)
    if name in names:
        return name
    folded = [n for n in names if n.casefold() == name.casefold()]
    return folded[0] if len(folded) == 1 else None


def _reading(result: IndicatorResult, name: str, label: str, number: float, lower: bool,
             magnitude_of: bool = False, key: str | None = None) -> Reading:
    """A :class:`Reading` of ``result``, its interval and replicates under ``key``."""
    interval = result.intervals.get(key or name)
    replicates = result.replicates.get(key or name)
    if magnitude_of:
        number = abs(number)
        interval = None if interval is None else magnitude(interval)
        replicates = None if replicates is None else tuple(map(abs, replicates))
    return Reading(name, label, number, lower, magnitude_of, interval, replicates)


def _word(result: IndicatorResult, metric: str, head: Headline) -> Reading:
    """The readings of :data:`~pytest_fairness.options.COMPARE_METRICS`."""
    lower = not result.higher_is_better
    if metric == "headline" and head.metric == "gap":
        return _reading(result, "gap", head.label, result.gap, head.lower_is_better)
    if metric == "headline":
        key = head.metric if head.metric in result.intervals else "value"
        return _reading(result, "value", head.label, result.value, head.lower_is_better,
                        head.magnitude, key)
    if metric in ("gap", "ratio"):
        return _reading(result, metric, "", getattr(result, metric), metric == "gap")
    worst = result.worst_group if metric == "worst" else None
    if worst is not None:
        return Reading("worst", f"group {worst.label}", worst.value, lower,
                       interval=worst.interval, replicates=result.replicates.get("worst"))
    by_size = metric == "value" and head.magnitude  # iEAT's d: its sign is a direction
    return _reading(result, "value", f"|{result.metric}|" if by_size else "", result.value,
                    lower, by_size)  # the value; the worst "group" of a result without any


def read_metric(result: IndicatorResult, metric: str, *, over_groups: bool = False) -> Reading:
    """What ``metric=`` names in ``result``, the same for every marker and option.

    A word of :data:`~pytest_fairness.options.COMPARE_METRICS`, else a whole-result stat
    (``DEO``), else a per-group stat (``TPR``: its gap over groups), case-insensitively when
    unambiguous; ``over_groups`` (limits on a gap or ratio) looks at per-group stats only.
    A name the result lacks is a FairnessConfigError listing what it offers.
    """
    head = headline(result.name)
    if metric in COMPARE_METRICS and not over_groups:
        return _word(result, metric, head)
    stat = None if over_groups else _find(metric, result.stats)
    if stat is not None:
        if stat == head.metric:
            lower, by_size = head.lower_is_better, head.magnitude
        else:
            level = any(fnmatch.fnmatchcase(stat, p) for p in (result.metric, *_LEVELS))
            lower = (not result.higher_is_better if level
                     else not stat.startswith("p_value"))
            by_size = False
        return _reading(result, stat, stat, result.stats[stat], lower, by_size)
    per_group = sorted({k for g in result.groups for k in g.stats})
    found = _find(metric, per_group)
    if found is None:
        offered = (sorted(result.stats) if not over_groups else []) + per_group
        kinds = ("its groups' stats (the gap and ratio are over groups)" if over_groups
                 else "its stats or its groups' stats")
        raise FairnessConfigError(
            f"metric={metric!r}: {result.name!r} ({result.metric}) has no such name among "
            f"{kinds}; it offers: {', '.join(offered) or 'none'}"
            + ("" if over_groups else f" (and {', '.join(COMPARE_METRICS)})")
            + "." + did_you_mean(metric, [*COMPARE_METRICS, *offered]))
    view = replace(result, groups=tuple(
        replace(g, value=g.stats.get(found, math.nan), interval=None) for g in result.groups))
    reading = _reading(result, found, f"gap of {found} across groups", view.gap,
                       True, key=f"gap:{found}")
    return replace(reading, groups=view)
