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
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_fairness.errors import FairnessConfigError

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

REPORT_FORMAT: Final = "pytest-fairness-report"
REPORT_SCHEMA: Final = 1


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


def atomic_write_text(target: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``target`` through a temporary file and ``os.replace``.

    Readers never see a half-written file; the file gets the usual permissions (umask).
    """
    path = Path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_json(document: Mapping[str, Any], directory: str | os.PathLike[str]) -> Path:
    """Write ``report.json`` into ``directory`` (created if needed), atomically."""
    text = json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return atomic_write_text(Path(directory) / "report.json", text + "\n")


def load_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read ``report.json`` (a file or the directory holding it) and check its schema.

    Raises
    ------
    FairnessConfigError
        When the file is missing, not JSON, not a report, or of a newer schema.
    """
    source = Path(path)
    if source.is_dir():
        source = source / "report.json"
    try:
        document = json.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FairnessConfigError(
            f"report {str(source)!r} does not exist; write one with "
            "`pytest --fairness --fairness-report DIR`."
        ) from None
    except json.JSONDecodeError as error:
        raise FairnessConfigError(f"report {str(source)!r} is not valid JSON ({error}).") from None
    if not isinstance(document, dict) or document.get("format") != REPORT_FORMAT:
        raise FairnessConfigError(
            f"{str(source)!r} is not a pytest-fairness report (expected format "
            f"{REPORT_FORMAT!r})."
        )
    schema = document.get("schema")
    if not isinstance(schema, int) or schema < 1 or schema > REPORT_SCHEMA:
        raise FairnessConfigError(
            f"{str(source)!r} has report schema {schema!r}; this pytest-fairness reads "
            f"1 to {REPORT_SCHEMA}. Upgrade pytest-fairness or regenerate the report."
        )
    return document


def report_results(document: Mapping[str, Any]) -> list[tuple[str, IndicatorResult]]:
    """Every result of a report as ``(nodeid, IndicatorResult)``."""
    from pytest_fairness.results import IndicatorResult

    return [(test["nodeid"], IndicatorResult.from_dict(data))
            for test in document.get("tests", []) for data in test.get("results", [])]


def records_of(document: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    """The per-test records of a report (the same shape the plugin and the store use)."""
    return list(document.get("tests", []))
