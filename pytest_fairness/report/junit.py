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
            verdict = "passed" if check.passed else "failed"
            prop = (f"{PROPERTY_PREFIX}limit{suffix}", f"{check.limit}={check.threshold:g} "
                    f"observed={encode_float(check.observed)} {verdict}")
            if prop not in props:  # a marker and an inline check that agree: once
                props.append(prop)
        for c in record.regressions:
            if c.result == keyed.id:
                verdict = "regressed" if c.regressed else "ok"
                props.append((f"{PROPERTY_PREFIX}baseline{suffix}",
                              f"{c.metric} {c.baseline} -> {c.now} {verdict}"))
    return props
