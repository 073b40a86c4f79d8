"""``report.json``: every result of a run, with the run's metadata, in a versioned schema."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from pytest_fairness.files import REPORT_FORMAT, REPORT_SCHEMA, atomic_write_text

if TYPE_CHECKING:
    from pytest_fairness.records import Comparison, TestRecord
    from pytest_fairness.results import IndicatorResult

__all__ = ["ReportDocument", "ReportSummary", "build_report", "report_results", "write_json"]


class ReportSummary(TypedDict):
    """The run's counts: tests, failed tests, results, regressions, inconclusive verdicts."""

    tests: int
    failed: int
    results: int
    regressions: int
    inconclusive: int


class _Report(TypedDict):
    format: str  # REPORT_FORMAT
    schema: int  # REPORT_SCHEMA
    run: dict[str, object]  # started, git_commit, checkpoint, history_run_id, ...
    summary: ReportSummary
    tests: list[dict[str, object]]  # TestRecord.to_dict() of each test


class ReportDocument(_Report, total=False):
    """The ``report.json`` document (``schema`` 1); ``tests`` are ``TestRecord.to_dict()``.

    ``checkpoint_comparisons`` is there with two or more ``--fairness-checkpoint``: each
    comparison with the reference checkpoint, its ``judged`` and its ``verdict``
    (``REGRESSED``, ``ok`` or ``not judged``).
    """

    checkpoint_comparisons: list[dict[str, object]]


def build_report(records: Iterable[TestRecord], *, run: Mapping[str, object] | None = None,
                 checkpoints: Sequence[tuple[Comparison, bool]] = ()) -> ReportDocument:
    """The report document of the run's records, metadata and checkpoint comparisons.

    ``checkpoints``: each comparison with the reference checkpoint, and whether it is judged;
    the judged regressions count among the summary's ``regressions``.
    """
    from pytest_fairness.report.terminal import checkpoint_verdict

    records = list(records)
    regressions = sum(c.regressed for r in records for c in r.regressions)
    summary = ReportSummary(tests=len(records), failed=sum(r.outcome == "failed" for r in records),
                            results=sum(len(r.results) for r in records),
                            regressions=regressions + sum(c.regressed and judged
                                                          for c, judged in checkpoints),
                            inconclusive=sum(c.verdict == "inconclusive"
                                             for r in records for c in r.checks))
    document = ReportDocument(format=REPORT_FORMAT, schema=REPORT_SCHEMA, run=dict(run or {}),
                              summary=summary, tests=[r.to_dict() for r in records])
    if checkpoints:
        document["checkpoint_comparisons"] = [
            {**c.to_dict(), "judged": judged, "verdict": checkpoint_verdict(c, judged)}
            for c, judged in checkpoints]
    return document


def write_json(document: Mapping[str, object], directory: str | os.PathLike[str]) -> Path:
    """Write ``report.json`` into ``directory`` (created if needed), atomically."""
    text = json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return atomic_write_text(Path(directory) / "report.json", text + "\n")


def report_results(document: Mapping[str, Any]) -> list[tuple[str, IndicatorResult]]:
    """``(nodeid, IndicatorResult)`` of every result of a report (as ``load_report`` reads it)."""
    from pytest_fairness.results import IndicatorResult

    return [(test["nodeid"], IndicatorResult.from_dict(data))
            for test in document.get("tests", []) for data in test.get("results", [])]
