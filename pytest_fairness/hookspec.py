"""Hooks pytest-fairness calls, for ``conftest.py`` files and other plugins.

Each docstring is a copyable example.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy
import pytest

if TYPE_CHECKING:
    from pytest_fairness.results import IndicatorResult

hookspec = pluggy.HookspecMarker("pytest")


@hookspec
def pytest_fairness_result(item: pytest.Item, key: str | None, result: IndicatorResult) -> None:
    r"""Called once for every result a fairness test produced, before it is checked.

    Use it to send results elsewhere (an experiment tracker, a log). It must not change
    the result (results are frozen).

    Example, in ``conftest.py``::

        import json

        def pytest_fairness_result(item, key, result):
            with open("fairness.jsonl", "a") as f:
                f.write(json.dumps({"test": item.nodeid, **result.to_dict()}) + "\\n")
    """


@hookspec
def pytest_fairness_summary(records: list[dict[str, Any]], lines: list[str]) -> None:
    """Called on the controller before the end-of-run summary is printed.

    ``records`` holds one JSON-able dict per fairness test (``nodeid``, ``outcome``,
    ``results``, ``checks``), merged from every pytest-xdist worker; append to or edit
    ``lines`` to change what is printed.

    Example, in ``conftest.py``::

        def pytest_fairness_summary(records, lines):
            failed = sum(r["outcome"] == "failed" for r in records)
            lines.append(f"{failed} of {len(records)} fairness tests failed")
    """
