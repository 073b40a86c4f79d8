"""JUnit XML properties of a fairness test: what CI dashboards read of its results."""

from __future__ import annotations

from typing import Final

from pytest_fairness.records import TestRecord
from pytest_fairness.report.terminal import checks_of
from pytest_fairness.results import encode_float, finite_or_none

__all__ = ["PROPERTY_PREFIX", "junit_properties"]

#: Prefix of the JUnit XML properties (``item.user_properties``) of fairness tests.
PROPERTY_PREFIX: Final = "fairness."


def junit_properties(record: TestRecord) -> list[tuple[str, object]]:
    """JUnit XML properties of a record: indicator, metric, value, gap, limit per result.

    A limit's value ends in ``passed`` or ``failed`` (the test's verdict on it), then
    ``inconclusive`` when its interval straddles it; ``fairness.inconclusive`` then says
    what would decide it.

    With several results, each name carries the result's id: ``fairness.value[overall]``.
    """
    props: list[tuple[str, object]] = []
    for keyed in record.results:
        result = keyed.result
        suffix = f"[{keyed.id}]" if len(record.results) > 1 else ""
        gap = finite_or_none(result.gap) if len(result.included_groups) >= 2 else None
        props.append((f"{PROPERTY_PREFIX}indicator{suffix}", result.name))
        props.append((f"{PROPERTY_PREFIX}metric{suffix}", result.metric))
        props.append((f"{PROPERTY_PREFIX}value{suffix}", finite_or_none(result.value)))
        props.append((f"{PROPERTY_PREFIX}gap{suffix}", gap))
        for check in checks_of(keyed, record.checks):
            verdict = ("passed" if check.passed else "failed") + (
                " inconclusive" if check.verdict == "inconclusive" else "")
            limit = f"{check.limit}={check.threshold:g}"
            found = [(f"{PROPERTY_PREFIX}limit{suffix}",
                      f"{limit} observed={encode_float(check.observed)} {verdict}")]
            if check.level is not None:  # --fairness-family-alpha: the interval's level
                found.append((f"{PROPERTY_PREFIX}level{suffix}", f"{limit}: {check.level:.6g}"))
            if check.decide:  # what would decide an inconclusive verdict
                found.append((f"{PROPERTY_PREFIX}inconclusive{suffix}",
                               f"{limit}: {check.decide}"))
            # a marker and an inline check that agree: once
            props.extend(prop for prop in found if prop not in props)
        for c in record.regressions:
            if c.result == keyed.id:
                verdict = "regressed" if c.regressed else "ok"
                props.append((f"{PROPERTY_PREFIX}baseline{suffix}",
                              f"{c.metric} {c.baseline} -> {c.now} {verdict}"
                              + ("" if c.level is None else f" level={c.level:.6g}")))
    return props
