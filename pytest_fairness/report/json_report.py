"""``report.json``: every result of a run, with the run's metadata, in a versioned schema.

The layout is :class:`ReportDocument`; :func:`pytest_fairness.files.load_report` reads a file
back and checks its format and schema, :func:`report_results` rebuilds its results.
"""

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
    """The run's counts: tests, failed tests, results and regressions."""

    tests: int
    failed: int
    results: int
    regressions: int


class _Report(TypedDict):
    format: str  # REPORT_FORMAT
    schema: int  # REPORT_SCHEMA
    run: dict[str, object]  # started, git_commit, checkpoint, history_run_id, ...
    summary: ReportSummary
    tests: list[dict[str, object]]  # TestRecord.to_dict() of each test


class ReportDocument(_Report, total=False):
    """The ``report.json`` document (``schema`` 1).

    Each of ``tests`` is :meth:`~pytest_fairness.records.TestRecord.to_dict` (results with
    their ``key``, checks, regressions, fingerprints, extractions); a result computed with
    ``n_bootstrap`` also carries ``"replicates"`` (base64 float32, see
    :func:`pytest_fairness.results.pack_replicates`), which a paired regression check reads.
    ``checkpoint_comparisons`` (``Comparison.to_dict()`` each) is there with two or more
    ``--fairness-checkpoint``.
    """

    checkpoint_comparisons: list[dict[str, object]]


def build_report(records: Iterable[TestRecord], *, run: Mapping[str, object] | None = None,
                 checkpoints: Sequence[Comparison] = ()) -> ReportDocument:
    """Build the report document from the run's records, its metadata and its comparisons.

    ``checkpoints`` are the comparisons of each checkpoint with the reference one (two or
    more ``--fairness-checkpoint``); the document has ``checkpoint_comparisons`` only then.

    Examples
    --------
    >>> from pytest_fairness.records import TestRecord
    >>> doc = build_report([TestRecord("t.py::test", "t.py::test", outcome="passed")])
    >>> doc["format"], doc["schema"], doc["summary"]["tests"]
    ('pytest-fairness-report', 1, 1)
    """
    records = list(records)
    summary = ReportSummary(tests=len(records), failed=sum(r.outcome == "failed" for r in records),
                            results=sum(len(r.results) for r in records),
                            regressions=sum(c.regressed for r in records for c in r.regressions))
    document = ReportDocument(format=REPORT_FORMAT, schema=REPORT_SCHEMA, run=dict(run or {}),
                              summary=summary, tests=[r.to_dict() for r in records])
    if checkpoints:
        document["checkpoint_comparisons"] = [c.to_dict() for c in checkpoints]
    return document


def write_json(document: Mapping[str, object], directory: str | os.PathLike[str]) -> Path:
    """Write ``report.json`` into ``directory`` (created if needed), atomically."""
    text = json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return atomic_write_text(Path(directory) / "report.json", text + "\n")


def report_results(document: Mapping[str, Any]) -> list[tuple[str, IndicatorResult]]:
    """Every result of a report (as :func:`~pytest_fairness.files.load_report` reads it).

    Returns ``(nodeid, IndicatorResult)`` pairs.
    """
    from pytest_fairness.results import IndicatorResult

    return [(test["nodeid"], IndicatorResult.from_dict(data))
            for test in document.get("tests", []) for data in test.get("results", [])]
