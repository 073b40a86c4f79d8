"""Hooks pytest-fairness calls, for ``conftest.py`` files and other plugins.

Each docstring is a copyable example.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy
import pytest

if TYPE_CHECKING:
    from pytest_fairness.records import TestRecord
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
def pytest_fairness_summary(records: list[TestRecord], lines: list[str]) -> None:
    """Called on the controller before the end-of-run summary is printed.

    ``records`` holds one :class:`~pytest_fairness.records.TestRecord` per fairness test
    (``nodeid``, ``outcome``, ``results``, ``checks``, ``regressions``, ...), merged from
    every pytest-xdist worker; append to or edit ``lines`` to change what is printed.

    Example, in ``conftest.py``::

        def pytest_fairness_summary(records, lines):
            failed = sum(r.outcome == "failed" for r in records)
            lines.append(f"{failed} of {len(records)} fairness tests failed")
    """


@hookspec
def pytest_fairness_run_metadata(config: pytest.Config, metadata: dict[str, Any]) -> None:
    """Called on the controller at the end of a run, before the run is recorded.

    ``metadata`` is what the history store, ``report.json`` and saved baselines keep about
    the run (``label``, ``checkpoint``, ``git_commit``, ``model_fingerprint``,
    ``dataset_fingerprint``, ``seed``, ``versions``, ...); edit it in place, e.g. to name
    the model when the results do not carry its fingerprint. Extra keys are kept too.

    Example, in ``conftest.py``::

        def pytest_fairness_run_metadata(config, metadata):
            metadata["model_fingerprint"] = "resnet50-v2@sha256:1f3a..."
            metadata["experiment"] = "ablation-7"
    """
