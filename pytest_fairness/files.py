"""Files written and read whole: atomic writes, and the ``report.json`` header check.

Every file pytest-fairness writes (reports, baselines, extraction receipts) goes through
:func:`atomic_write_text`, so a reader never sees half of one.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Final

from pytest_fairness.errors import FairnessConfigError

__all__ = ["REPORT_FORMAT", "REPORT_SCHEMA", "atomic_write_text", "load_report"]

#: The ``format`` field of ``report.json``.
REPORT_FORMAT: Final = "pytest-fairness-report"
#: Version of the ``report.json`` layout.
REPORT_SCHEMA: Final = 1


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
