"""The pytest plugin: options, markers, the result checks around each fairness test, reports.

Loaded through the ``pytest11`` entry point. It imports nothing heavy: numpy, pandas,
torch and faiss load only when a fairness test runs.

How a fairness test flows:

1. ``pytest_collection_modifyitems`` gives every test with a threshold or regression marker
   the plain ``fairness`` marker, and skips fairness tests unless ``--fairness`` is on.
2. ``pytest_runtest_setup`` validates the markers (hand-written ones included).
3. ``pytest_pyfunc_call`` (a wrapper) captures what the test returns and the results of
   inline ``fairness.check`` calls, then checks the returned results against the markers.
4. ``pytest_runtest_makereport`` attaches a JSON-able record to the report; it crosses the
   pytest-xdist boundary with the report, and the controller collects it in
   ``pytest_runtest_logreport`` for the end-of-run summary.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Generator
from typing import Any, Final

import pytest

from pytest_fairness.errors import FairnessConfigError, FairnessError, FairnessViolation
from pytest_fairness.markers import (
    MARKER_FAIRNESS,
    MARKER_REGRESSION,
    MARKER_THRESHOLD,
    validate_regression,
    validate_threshold,
)

pytest_plugins = ["pytest_fairness._fixtures"]

ENABLE_OPTION: Final = "--fairness"
ENABLE_INI: Final = "fairness"
SKIP_REASON: Final = (
    "fairness test: run with `pytest --fairness` (or set `fairness = true` in the "
    "[pytest] ini section) to enable it"
)
#: Name of the report attribute that carries a test's fairness record (JSON-able).
REPORT_ATTRIBUTE: Final = "fairness"


class _Capture:
    """What one fairness test produced: its return value and its inline checks."""

    __slots__ = ("inline", "returned")

    def __init__(self) -> None:
        self.returned: Any = None
        self.inline: list[Any] = []


class FairnessSession:
    """Per-run state: whether fairness tests run, and the records the controller merged."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.enabled: bool = bool(
            config.getoption("fairness") or config.getini(ENABLE_INI)
        )
        self.records: list[dict[str, Any]] = []

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Collect the fairness record of each test; on the xdist controller, of every worker."""
        record = getattr(report, REPORT_ATTRIBUTE, None)
        if report.when == "call" and record:
            self.records.append({"nodeid": report.nodeid, "outcome": report.outcome, **record})

    @property
    def is_worker(self) -> bool:
        """True in a pytest-xdist worker, where nothing is printed or written."""
        return hasattr(self.config, "workerinput")


SESSION_KEY: Final = pytest.StashKey[FairnessSession]()
CAPTURE_KEY: Final = pytest.StashKey[_Capture]()
RECORD_KEY: Final = pytest.StashKey[dict[str, Any]]()


def _session(config: pytest.Config) -> FairnessSession:
    return config.stash[SESSION_KEY]


def is_fairness_item(item: pytest.Item) -> bool:
    """Whether the test is a fairness test (it carries the ``fairness`` marker)."""
    return item.get_closest_marker(MARKER_FAIRNESS) is not None


# -- configuration -------------------------------------------------------------------------


@pytest.hookimpl
def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Register the plugin's own hooks."""
    from pytest_fairness import hookspec

    pluginmanager.add_hookspecs(hookspec)


@pytest.hookimpl
def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--fairness`` and its ini twin."""
    group = parser.getgroup("fairness", "fairness indicators (pytest-fairness)")
    group.addoption(
        ENABLE_OPTION,
        action="store_true",
        dest="fairness",
        default=False,
        help="run fairness tests (they are skipped otherwise).",
    )
    parser.addini(ENABLE_INI, type="bool", default=False, help="run fairness tests (like --fairness).")


@pytest.hookimpl
def pytest_configure(config: pytest.Config) -> None:
    """Register the markers and the per-run state."""
    config.addinivalue_line(
        "markers", f"{MARKER_FAIRNESS}: a fairness test (skipped unless --fairness is given)."
    )
    config.addinivalue_line(
        "markers",
        f"{MARKER_THRESHOLD}(**limits): fail when the returned results break the limits; "
        "use fairness.threshold(...) to write it.",
    )
    config.addinivalue_line(
        "markers",
        f"{MARKER_REGRESSION}(tolerance=0.0, metric='gap'): fail when the results are worse "
        "than the baseline; use fairness.no_regression(...) to write it.",
    )
    session = FairnessSession(config)
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(session, "fairness-session")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark threshold/regression tests as fairness tests; skip them all unless enabled.

    ``tryfirst`` so that ``-m fairness`` (applied by pytest's own implementation of this
    hook) already sees the added marker.
    """
    enabled = _session(config).enabled
    skip = pytest.mark.skip(reason=SKIP_REASON)
    for item in items:
        if not is_fairness_item(item) and (
            item.get_closest_marker(MARKER_THRESHOLD) or item.get_closest_marker(MARKER_REGRESSION)
        ):
            item.add_marker(MARKER_FAIRNESS)
        if not enabled and is_fairness_item(item):
            item.add_marker(skip)


@pytest.hookimpl
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Validate fairness markers, hand-written ones included, before the test runs."""
    try:
        for mark in item.iter_markers(MARKER_THRESHOLD):
            validate_threshold(mark.args, mark.kwargs)
        for mark in item.iter_markers(MARKER_REGRESSION):
            validate_regression(mark.args, mark.kwargs)
    except FairnessConfigError as error:
        pytest.fail(f"invalid fairness marker on {item.nodeid}: {error}", pytrace=False)


# -- running a test ---------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    """Capture a fairness test's return value and inline checks, then check its markers.

    The test function is wrapped so that it returns ``None`` to pytest: returning results
    is how fairness tests work, so pytest's "return not None" warning must not fire.
    """
    __tracebackhide__ = True
    function = pyfuncitem.obj
    if not is_fairness_item(pyfuncitem) or inspect.iscoroutinefunction(function):
        return (yield)
    from pytest_fairness.checks import collecting

    capture = _Capture()
    pyfuncitem.stash[CAPTURE_KEY] = capture

    @functools.wraps(function)
    def capturing(*args: Any, **kwargs: Any) -> None:
        capture.returned = function(*args, **kwargs)

    pyfuncitem.obj = capturing
    try:
        with collecting() as inline:
            capture.inline = inline
            outcome = yield
    finally:
        pyfuncitem.obj = function
    _check_returned(pyfuncitem, capture)
    return outcome


def _check_returned(item: pytest.Function, capture: _Capture) -> None:
    """Record what the test returned and check it against every fairness_threshold marker."""
    __tracebackhide__ = True
    from pytest_fairness.checks import evaluate, raise_on_violation
    from pytest_fairness.results import iter_results

    returned = list(iter_results(capture.returned))
    if capture.returned is not None and not returned:
        raise FairnessConfigError(
            f"{item.nodeid} returned {type(capture.returned).__name__}; a fairness test returns "
            "an IndicatorResult, a list or dict of them, or None (when it checks inline with "
            "fairness.check)."
        )
    for key, result in returned:
        item.config.hook.pytest_fairness_result(item=item, key=key, result=result)
    item.stash[RECORD_KEY] = _record(returned, capture.inline, [])
    outcomes = []
    try:
        for mark in reversed(list(item.iter_markers(MARKER_THRESHOLD))):
            limits = validate_threshold(mark.args, mark.kwargs)
            outcomes.extend(evaluate(capture.returned, limits))
    except FairnessError as error:
        error.from_marker = True  # type: ignore[attr-defined]
        raise
    item.stash[RECORD_KEY] = _record(returned, capture.inline, outcomes)
    if not returned and item.get_closest_marker(MARKER_THRESHOLD) and not capture.inline:
        raise FairnessConfigError(
            f"{item.nodeid} has a fairness.threshold marker but returned nothing to check. "
            "Return the indicator's result (or a list or dict of results)."
        )
    try:
        raise_on_violation(outcomes)
    except FairnessViolation as violation:
        violation.from_marker = True  # type: ignore[attr-defined]
        raise


def _record(
    returned: list[tuple[str | None, Any]], inline: list[Any], outcomes: list[Any]
) -> dict[str, Any]:
    """The JSON-able record of one test: its results (returned and inline) and checks."""
    from pytest_fairness.results import iter_results

    results: list[dict[str, Any]] = []
    checks = [o.to_dict() for o in outcomes]
    for key, result in returned:
        results.append({**result.to_dict(), "key": key})
    for checked, inline_outcomes in inline:
        for key, result in iter_results(checked):
            if not any(r["key"] == key and r["name"] == result.name and r["metric"] == result.metric
                       for r in results):
                results.append({**result.to_dict(), "key": key})
        checks.extend(o.to_dict() for o in inline_outcomes)
    return {"results": results, "checks": checks}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach the test's fairness record and a readable section to its report."""
    report = yield
    if call.when != "call" or not is_fairness_item(item):
        return report
    record = item.stash.get(RECORD_KEY, None)
    capture = item.stash.get(CAPTURE_KEY, None)
    if record is None and capture is not None and capture.inline:
        record = _record([], capture.inline, [])
    if record is None:
        return report
    setattr(report, REPORT_ATTRIBUTE, record)
    from pytest_fairness.report.terminal import section_text

    text = section_text(record)
    if text:
        report.sections.append(("fairness", text))
    excinfo = call.excinfo
    if excinfo is not None and getattr(excinfo.value, "from_marker", False):
        # The violation comes from the marker, not from a line of the test: the traceback
        # would only show plugin frames, so the message is the whole story.
        report.longrepr = f"{type(excinfo.value).__name__}: {excinfo.value}"
    return report


# -- the controller: merge and summarise ---------------------------------------------------


@pytest.hookimpl
def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    """Print one line per fairness result of the run, passed ones too."""
    session = _session(config)
    if session.is_worker or not session.records:
        return
    from pytest_fairness.report.terminal import summary_lines

    lines = summary_lines(session.records)
    config.hook.pytest_fairness_summary(records=session.records, lines=lines)
    if lines:
        terminalreporter.write_sep("=", "fairness summary")
        for line in lines:
            terminalreporter.write_line(line)
