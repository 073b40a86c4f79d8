"""Family-wise control over a run (``--fairness-family-alpha``): levels and re-levelled intervals.

Bonferroni over the run, decided as tests run: each of the T gated tests gets α/T, split
equally over the m interval-judged checks it makes, so each check is judged one-sided at
α/(T·m), with its interval at the two-sided level :func:`family_level`. The interval a check
needs at that level is recomputed from what the result stores (:func:`interval_at`):
percentile intervals from their replicates, simultaneous ones (gap, ratio, lowest and
highest group) with :func:`~pytest_fairness.stats.simultaneous` on the stored replicates of
each included group. What cannot be recomputed fails closed.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.results import IndicatorResult

if TYPE_CHECKING:
    from pytest_fairness.records import TestRecord

__all__ = ["FAMILY_FIX", "at_level", "family_checks", "family_level", "interval_at",
           "level_of_test"]

#: What to do when a check under family control cannot be re-levelled.
FAMILY_FIX: Final = ("compute the indicator with n_bootstrap=1000 (interval_method="
                     "'percentile' where it offers one), use confidence='point' (outside the "
                     "family), or drop --fairness-family-alpha")
_SIMULTANEOUS: Final = {"gap": 0, "min": 1, "max": 2}
_BOUNDED: Final = (*_SIMULTANEOUS, "ratio")  # simultaneous over the included groups


def family_level(alpha: float, tests: int, checks: int) -> float:
    """The two-sided level of each check's interval: 1 − 2α/(T·m).

    ``tests`` (T) is the number of gated tests of the run, ``checks`` (m) the number of
    interval-judged checks of this test; each is judged one-sided at α/(T·m), so the chance
    of any false alarm over the run is at most α (Bonferroni).

    Examples
    --------
    >>> family_level(0.05, 20, 1)
    0.995
    >>> round(family_level(0.05, 10, 4), 6)
    0.9975
    """
    if not 0 < alpha <= 0.5 or tests < 1 or checks < 1:
        raise FairnessConfigError(
            f"family_level needs alpha in (0, 0.5] and at least one test and check; got "
            f"alpha={alpha!r}, tests={tests!r}, checks={checks!r}.")
    return 1 - 2 * alpha / (tests * checks)


def _percentile(result: IndicatorResult, name: str, level: float) -> tuple[float, float]:
    """The percentile interval of ``replicates[name]`` at ``level``."""
    import numpy as np

    method = result.params.get("interval_method")
    reps = result.replicates.get(name)
    if method != "percentile" or reps is None:
        why = (f"its interval is {method!r}, re-levelled only when 'percentile'"
               if reps is not None else
               f"it keeps no replicates of {name!r}" + (" (only the headline's per group)"
                                                        if name.startswith("gap:") else ""))
        raise FairnessConfigError(f"{name!r} of {result.name!r}: {why}")
    draws = np.asarray(reps, dtype=np.float64)
    draws = draws[~np.isnan(draws)]
    if draws.size < 2:
        raise FairnessConfigError(f"{name!r} of {result.name!r}: too few defined replicates")
    low, high = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def _simultaneous_bounds(result: IndicatorResult, level: float
                         ) -> dict[str, tuple[float, float] | None]:
    """``gap``, ``min``, ``max`` and ``ratio`` (None where a value is not above 0) at ``level``.

    One :func:`~pytest_fairness.stats.simultaneous` call on the stored replicates of the
    included groups, as the indicator made it.
    """
    import numpy as np

    from pytest_fairness.bounds import simultaneous

    places = [i for i, g in enumerate(result.groups) if not g.excluded]
    reps = [result.replicates.get(f"group:{i}") for i in places]
    if not places or any(r is None for r in reps):
        raise FairnessConfigError(
            f"the gap, ratio, min and max intervals of {result.name!r} are simultaneous over its "
            "groups, and the result keeps no replicates of its groups to recompute them")
    values = np.array([result.groups[i].value for i in places], dtype=np.float64)
    draws = np.array(reps, dtype=np.float64).T  # (B, groups)
    # The SD floor's weights: the data behind each headline value, its rows (the headline
    # of every group table is a mean over rows), as when the indicator computed it.
    weights = np.array([result.groups[i].n for i in places], dtype=np.float64)
    rows = simultaneous(draws, values, level, weights=weights)
    bounds: dict[str, tuple[float, float] | None] = {
        name: (float(rows[at][0]), float(rows[at][1])) for name, at in _SIMULTANEOUS.items()}
    bounds["ratio"] = None
    if (values > 0).all() and not (draws <= 0).any():
        logged = simultaneous(np.log(draws), np.log(values), level, weights=weights)[0]
        bounds["ratio"] = (math.exp(-logged[1]), math.exp(-logged[0]))
    return bounds


def _pick(result: IndicatorResult, name: str, level: float,
          bounds: dict[str, tuple[float, float] | None]) -> tuple[float, float]:
    """``name`` from :func:`_simultaneous_bounds`; a ratio without one is the percentile's."""
    pair = bounds[name]
    if pair is None:  # a value at 0: the ratio's interval is the percentile one
        return _percentile(result, "ratio", level)
    if math.isnan(pair[0]) or math.isnan(pair[1]):
        raise FairnessConfigError(f"the {name} interval of {result.name!r} is undefined")
    return pair


def _bounded_as(result: IndicatorResult, name: str) -> str:
    """What ``name``'s interval is: its own, or the gap whose interval it shares (``DA``).

    Raises
    ------
    FairnessConfigError
        For bounds over groups of a per-group stat (``gap:tpr``, ``min:tpr``, ``DEO``): the
        result keeps only its headline per group, from which nothing else is re-levelled.
    """
    mine = result.intervals.get(name)
    shared = name if mine is None else next(
        (other for other in ("gap", *sorted(result.intervals)) if other != name
         and other.startswith("gap") and result.intervals.get(other) == mine), name)
    if shared.startswith(("gap:", "min:", "max:")):
        raise FairnessConfigError(
            f"{name!r} of {result.name!r}: its interval is bounded over the groups of a "
            "per-group stat, and the result keeps only the headline's per group replicates")
    return shared


def interval_at(result: IndicatorResult, name: str, level: float) -> tuple[float, float]:
    """The interval ``name`` of ``result`` (a key of its ``intervals``) at ``level``.

    ``gap``, ``min``, ``max`` and ``ratio`` (where every value is above 0) are simultaneous
    over the included groups, recomputed with
    :func:`~pytest_fairness.stats.simultaneous` from their stored replicates; any other
    name is a percentile interval of its replicates (``group:<i>``: group ``i``'s).

    Raises
    ------
    FairnessConfigError
        Saying why the interval cannot be recomputed at ``level``.

    Examples
    --------
    >>> from pytest_fairness.results import GroupStat
    >>> r = IndicatorResult("demo", "accuracy", 0.5, params={"interval_method": "percentile"},
    ...                     replicates={"value": (0.4, 0.5, 0.6, 0.7, 0.3)})
    >>> tuple(round(v, 3) for v in interval_at(r, "value", 0.5))
    (0.4, 0.6)
    """
    name = _bounded_as(result, name)
    if name not in _BOUNDED:
        return _percentile(result, name, level)
    return _pick(result, name, level, _simultaneous_bounds(result, level))


def at_level(result: IndicatorResult, level: float) -> tuple[IndicatorResult, dict[str, str]]:
    """``result`` with each interval (its groups' too) at ``level``, and why others are gone.

    An interval that cannot be recomputed (:func:`interval_at`) is dropped, and its name
    maps to the reason: a limit that needs it then fails closed. The simultaneous ones come
    from one computation.
    """
    intervals, missing = {}, {}
    bounds: dict[str, tuple[float, float] | None] | str | None = None
    for name in result.intervals:
        try:
            as_ = _bounded_as(result, name)
            if as_ not in _BOUNDED:
                intervals[name] = _percentile(result, as_, level)
                continue
            if bounds is None:
                try:
                    bounds = _simultaneous_bounds(result, level)
                except FairnessConfigError as error:
                    bounds = str(error)
            if isinstance(bounds, str):
                raise FairnessConfigError(bounds)
            intervals[name] = _pick(result, as_, level, bounds)
        except FairnessConfigError as error:
            missing[name] = str(error)
    groups = []
    for i, group in enumerate(result.groups):
        try:
            interval = None if group.interval is None or group.excluded else _percentile(
                result, f"group:{i}", level)
        except FairnessConfigError as error:
            interval, missing[f"group {group.label}"] = None, str(error)
        groups.append(replace(group, interval=interval))
    return replace(result, intervals=intervals, groups=tuple(groups)), missing


def family_checks(record: TestRecord) -> int:
    """How many checks of a test its intervals judge (m): limits and comparisons alike."""
    return (sum(o.confidence != "point" for o in record.checks)
            + sum(c.confidence != "point" for c in record.regressions)
            + sum(c.confidence != "point" for c in record.checkpoint_comparisons
                  if record.checkpoint_judged))


def level_of_test(alpha: float, tests: frozenset[str], record: TestRecord) -> float | None:
    """The level of a test's interval-judged checks (None: it makes none).

    ``tests`` are the ids of the run's gated tests, counted at collection.

    Raises
    ------
    FairnessConfigError
        When the test makes such checks and the count missed it: the control would not hold.
    """
    checks = family_checks(record)
    if not checks:
        return None
    if record.nodeid not in tests:
        raise FairnessConfigError(
            f"{record.nodeid} makes {checks} interval-judged check(s) that the count of the "
            "run's family (--fairness-family-alpha) missed at collection: put its limits in "
            "fairness.threshold markers, or call fairness.check in the test's own body.")
    return family_level(alpha, len(tests), checks)
