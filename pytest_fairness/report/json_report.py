"""``report.json``: every result of a run, with the run's metadata, in a versioned schema.

Layout (``schema`` 1)::

    {
      "format": "pytest-fairness-report",
      "schema": 1,
      "run": {"started": ..., "git_commit": ..., "checkpoint": ..., "history_run_id": ..., ...},
      "summary": {"tests": 3, "failed": 1, "results": 4, "regressions": 0},
      "tests": [
        {"nodeid": ..., "test": ..., "checkpoint": ..., "outcome": "failed",
         "results": [IndicatorResult.to_dict() + {"key": ...}, ...],   # groups, intervals,
         "checks": [CheckOutcome.to_dict(), ...],                       # curves, matrices,
         "regressions": [Comparison.to_dict(), ...],                     # tables, slices
         "model_fingerprint": ..., "dataset_fingerprint": ...,    # of the test's features
         "extractions": [{"dataset": ..., "dataset_fingerprint": ...,
                          "model_fingerprint": ..., "features_digest": ...}, ...]}
      ],
      "checkpoint_comparisons": [Comparison.to_dict(), ...]   # with 2+ --fairness-checkpoint
    }

A result computed with ``n_bootstrap`` also carries ``"replicates"`` (base64 float32, see
:func:`pytest_fairness.results.pack_replicates`), which a paired regression check reads.

Every result rebuilds with ``IndicatorResult.from_dict``; :func:`load_report` checks the
format and schema and does that for you in :func:`report_results`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_fairness.files import REPORT_FORMAT, REPORT_SCHEMA, atomic_write_text, load_report

if TYPE_CHECKING:
    from pytest_fairness.records import Comparison, TestRecord
    from pytest_fairness.results import IndicatorResult

__all__ = [
    "REPORT_FORMAT",
    "REPORT_SCHEMA",
    "atomic_write_text",
    "build_report",
    "load_report",
    "report_results",
    "write_json",
]


def build_report(
    records: Iterable[TestRecord], *, run: Mapping[str, Any] | None = None,
    checkpoints: Sequence[Comparison] = (),
) -> dict[str, Any]:
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
    document: dict[str, Any] = {
        "format": REPORT_FORMAT,
        "schema": REPORT_SCHEMA,
        "run": dict(run or {}),
        "summary": {
            "tests": len(records),
            "failed": sum(r.outcome == "failed" for r in records),
            "results": sum(len(r.results) for r in records),
            "regressions": sum(c.regressed for r in records for c in r.regressions),
        },
        "tests": [r.to_dict() for r in records],
    }
    if checkpoints:
        document["checkpoint_comparisons"] = [c.to_dict() for c in checkpoints]
    return document


def write_json(document: Mapping[str, Any], directory: str | os.PathLike[str]) -> Path:
    """Write ``report.json`` into ``directory`` (created if needed), atomically."""
    text = json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return atomic_write_text(Path(directory) / "report.json", text + "\n")


def report_results(document: Mapping[str, Any]) -> list[tuple[str, IndicatorResult]]:
    """Every result of a report as ``(nodeid, IndicatorResult)``."""
    from pytest_fairness.results import IndicatorResult

    return [(test["nodeid"], IndicatorResult.from_dict(data))
            for test in document.get("tests", []) for data in test.get("results", [])]


def records_of(document: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    """The per-test records of a report (the same shape the plugin and the store use)."""
    return list(document.get("tests", []))
