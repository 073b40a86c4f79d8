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
import time
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from pytest_fairness.errors import FairnessConfigError, FairnessError, FairnessViolation
from pytest_fairness.markers import (
    MARKER_FAIRNESS,
    MARKER_REGRESSION,
    MARKER_THRESHOLD,
    validate_regression,
    validate_threshold,
)
from pytest_fairness.options import parse_compare_fail, parse_run_ref, parse_seed

if TYPE_CHECKING:
    from pytest_fairness.baseline import Comparison

pytest_plugins = ["pytest_fairness._fixtures"]

ENABLE_OPTION: Final = "--fairness"
ENABLE_INI: Final = "fairness"
SKIP_REASON: Final = (
    "fairness test: run with `pytest --fairness` (or set `fairness = true` in the "
    "[pytest] ini section) to enable it"
)
#: Name of the report attribute that carries a test's fairness record (JSON-able).
REPORT_ATTRIBUTE: Final = "fairness"
HISTORY_INI: Final = "fairness_history"
SEED_INI: Final = "fairness_seed"
#: Prefix of the JUnit XML properties (``item.user_properties``) of fairness tests.
PROPERTY_PREFIX: Final = "fairness."


class _Capture:
    """What one fairness test produced: its return value and its inline checks."""

    __slots__ = ("inline", "returned")

    def __init__(self) -> None:
        self.returned: Any = None
        self.inline: list[Any] = []


class FairnessSession:
    """Per-run state: options, the baseline, and the records the controller merged."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.enabled: bool = bool(
            config.getoption("fairness") or config.getini(ENABLE_INI)
        )
        self.records: list[dict[str, Any]] = []
        self.started = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime())
        self.report_dir: str | None = config.getoption("fairness_report", None)
        self.save_baseline: str | None = config.getoption("fairness_save_baseline", None)
        self.baseline_ref: str | None = config.getoption("fairness_baseline", None)
        self.compare_fail: dict[str, float] = config.getoption("fairness_compare_fail", None) or {}
        self.label: str | None = config.getoption("fairness_run_label", None)
        self.seed: int = _seed(config)
        self.record_history = not config.getoption("fairness_no_history", False)
        self.history_path = _history_path(config)
        self.baseline: dict[str, Any] | None = None
        self.baseline_source = ""
        self.lines: list[str] = []  # what the end of the run wrote, for the summary
        if self.compare_fail and not self.baseline_ref:
            raise pytest.UsageError(
                "--fairness-compare-fail needs a baseline to compare with; add "
                "--fairness-baseline FILE.json|RUN_ID|CHECKPOINT."
            )
        if self.baseline_ref and self.enabled:
            from pytest_fairness.baseline import resolve_baseline

            try:
                self.baseline, self.baseline_source = resolve_baseline(
                    self.baseline_ref, self.history_path
                )
            except FairnessConfigError as error:
                raise pytest.UsageError(
                    f"--fairness-baseline={self.baseline_ref}: {error}"
                ) from None

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

    def finish(self, exitstatus: int) -> None:
        """Record the run in the history, save the baseline, write the reports (controller)."""
        from pytest_fairness.history import collect_metadata

        checkpoint = self.config.getoption("fairness_checkpoint", None) or []
        seed = self.seed
        metadata = collect_metadata(
            self.records, root=self.config.rootpath, label=self.label,
            checkpoints=list(checkpoint), seed=seed, started=self.started,
            exitstatus=int(exitstatus),
        )
        if self.baseline_ref:
            metadata["baseline"] = self.baseline_source
        self.config.hook.pytest_fairness_run_metadata(config=self.config, metadata=metadata)
        trends = None
        if self.record_history:
            trends = self._write_history(metadata)
        if self.save_baseline:
            from pytest_fairness.baseline import save_baseline

            path = save_baseline(self.save_baseline, self.records, metadata={
                k: metadata.get(k) for k in ("label", "checkpoint", "git_commit")
            })
            self.lines.append(f"fairness baseline saved: {path}")
        if self.report_dir:
            from pytest_fairness.report.html import write_html
            from pytest_fairness.report.json_report import build_report, write_json

            document = build_report(self.records, run=metadata)
            write_json(document, self.report_dir)
            page = write_html(document, self.report_dir, trends=trends)
            self.lines.append(f"fairness report: {page}")

    def _write_history(self, metadata: dict[str, Any]) -> list[dict[str, Any]] | None:
        import sqlite3

        from pytest_fairness.history import HistoryStore

        try:
            with HistoryStore(self.history_path) as store:
                run_id = store.record_run(metadata, self.records)
                metadata["history_run_id"] = run_id
                self.lines.append(f"fairness history: run {run_id} recorded in {self.history_path}")
                return store.series(last=20) if self.report_dir else None
        except (OSError, sqlite3.Error, FairnessConfigError) as error:
            self.lines.append(f"fairness history NOT written to {self.history_path}: {error} "
                              "(use --fairness-history PATH or --fairness-no-history)")
            return None


def _seed(config: pytest.Config) -> int:
    """``--fairness-seed``, else the ini value, else 0 (gates must be reproducible)."""
    seed = config.getoption("fairness_seed", None)
    if seed is not None:
        return int(seed)
    from_ini = str(config.getini(SEED_INI)).strip()
    if not from_ini:
        return 0
    try:
        return parse_seed(from_ini)
    except Exception as error:  # argparse.ArgumentTypeError
        raise pytest.UsageError(f"ini {SEED_INI} = {from_ini}: {error}") from None


def _history_path(config: pytest.Config) -> Path:
    """``--fairness-history``, else the ini value (relative to the ini file), else the default."""
    from_option = config.getoption("fairness_history", None)
    if from_option:
        return Path(config.invocation_params.dir, from_option)
    from_ini = config.getini(HISTORY_INI)
    if from_ini:
        base = config.inipath.parent if config.inipath is not None else config.rootpath
        return Path(base, str(from_ini))
    return config.rootpath / ".fairness" / "history.sqlite"


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
    parser.addini(ENABLE_INI, type="bool", default=False,
                  help="run fairness tests (like --fairness).")
    group.addoption("--fairness-report", metavar="DIR", default=None, dest="fairness_report",
                    help="write report.json and a self-contained report.html into DIR.")
    group.addoption("--fairness-history", metavar="PATH", default=None, dest="fairness_history",
                    help="SQLite history store (default: .fairness/history.sqlite in the rootdir).")
    group.addoption("--fairness-no-history", action="store_true", default=False,
                    dest="fairness_no_history", help="do not record this run in the history.")
    group.addoption("--fairness-save-baseline", metavar="FILE.json", default=None,
                    dest="fairness_save_baseline",
                    help="write (or update) a committable baseline of this run's results.")
    group.addoption("--fairness-baseline", metavar="FILE.json|RUN_ID|CHECKPOINT", default=None,
                    dest="fairness_baseline", type=parse_run_ref,
                    help="compare results with this baseline (a file, or a run id, label or "
                         "checkpoint in the history); see --fairness-compare-fail.")
    group.addoption("--fairness-compare-fail", metavar="METRIC:TOL[,...]", default=None,
                    dest="fairness_compare_fail", type=parse_compare_fail,
                    help="fail each test whose results got worse than the baseline by more than "
                         "the tolerance, e.g. gap:0.01,value:0.02 (metrics: gap, ratio, value, "
                         "worst; each in its own direction).")
    group.addoption("--fairness-run-label", metavar="LABEL", default=None,
                    dest="fairness_run_label",
                    help="name this run in the history (e.g. a checkpoint or an experiment).")
    group.addoption("--fairness-seed", metavar="INT", default=None, dest="fairness_seed",
                    type=parse_seed,
                    help="seed of the fairness_seed fixture (bootstrap, permutations, noise); "
                         "default: the fairness_seed ini value, else 0.")
    parser.addini(SEED_INI, default="", help="seed of the fairness_seed fixture (default 0).")
    parser.addini(HISTORY_INI, default="",
                  help="history store path, relative to the ini file (like --fairness-history).")


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
        "than the baseline (--fairness-baseline); use fairness.no_regression(...) to write it.",
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
    """Record what the test returned, check it against its thresholds and the baseline."""
    __tracebackhide__ = True
    from pytest_fairness.checks import evaluate
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
    item.stash[RECORD_KEY] = _record(item, returned, capture.inline, [])
    outcomes = []
    try:
        for mark in reversed(list(item.iter_markers(MARKER_THRESHOLD))):
            limits = validate_threshold(mark.args, mark.kwargs)
            outcomes.extend(evaluate(capture.returned, limits))
    except FairnessError as error:
        error.from_marker = True  # type: ignore[attr-defined]
        raise
    record = _record(item, returned, capture.inline, outcomes)
    comparisons = _compare(item, record)
    record["regressions"] = [c.to_dict() for c in comparisons]
    item.stash[RECORD_KEY] = record
    if not returned and item.get_closest_marker(MARKER_THRESHOLD) and not capture.inline:
        raise FairnessConfigError(
            f"{item.nodeid} has a fairness.threshold marker but returned nothing to check. "
            "Return the indicator's result (or a list or dict of results)."
        )
    _raise_failures(item, outcomes, comparisons)


def _raise_failures(item: pytest.Item, outcomes: list[Any], comparisons: list[Comparison]) -> None:
    """One FairnessViolation for broken limits and regressions together, if any."""
    __tracebackhide__ = True
    parts = []
    if any(not o.passed for o in outcomes):
        from pytest_fairness.report.terminal import violation_message

        parts.append(violation_message(outcomes))
    if any(c.regressed for c in comparisons):
        from pytest_fairness.baseline import regression_message

        parts.append(regression_message(comparisons, source=_session(item.config).baseline_source))
    if parts:
        violation = FairnessViolation("\n\n".join(parts), outcomes)
        violation.from_marker = True  # type: ignore[attr-defined]
        raise violation


def _identity(item: pytest.Item) -> tuple[str, str | None]:
    """The test id without its checkpoint parameter, and the checkpoint (if any)."""
    callspec = getattr(item, "callspec", None)
    checkpoint = None if callspec is None else callspec.params.get("fairness_checkpoint")
    if checkpoint is None:
        return item.nodeid, None
    from pytest_fairness.baseline import strip_param

    text = str(checkpoint)
    return strip_param(item.nodeid, Path(text).name or text), text


def _compare(item: pytest.Item, record: dict[str, Any]) -> list[Comparison]:
    """Compare the test's results with the baseline: --fairness-compare-fail and the marker."""
    session = _session(item.config)
    marks = [validate_regression(m.args, m.kwargs) for m in item.iter_markers(MARKER_REGRESSION)]
    if not marks and not session.compare_fail:
        return []
    if session.baseline is None:
        record["notes"].append("fairness.no_regression: no baseline to compare with; pass "
                               "--fairness-baseline FILE.json|RUN_ID|CHECKPOINT.")
        return []
    from pytest_fairness.baseline import compare_results, find_entry, result_id, summarize

    entry = find_entry(session.baseline, item.nodeid, record.get("test"))
    if entry is None:
        record["notes"].append(f"not in the baseline {session.baseline_source}: not compared.")
        return []
    comparisons = []
    for data in record["results"]:
        rid = result_id(data)
        tolerances = dict(session.compare_fail)
        for mark in marks:
            if mark.get("result") in (None, data.get("key"), data["name"]):
                metric = mark["metric"]
                tolerances[metric] = min(tolerances.get(metric, mark["tolerance"]),
                                         mark["tolerance"])
        if not tolerances:
            continue
        old = entry.get("results", {}).get(rid)
        if old is None:
            record["notes"].append(f"{rid}: not in the baseline {session.baseline_source}: "
                                   "not compared.")
            continue
        comparisons.extend(compare_results(old, summarize(data), tolerances,
                                           test=item.nodeid, result=rid))
    return comparisons


def _record(
    item: pytest.Item, returned: list[tuple[str | None, Any]], inline: list[Any],
    outcomes: list[Any],
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
    test, checkpoint = _identity(item)
    return {"results": results, "checks": checks, "regressions": [], "notes": [],
            "test": test, "checkpoint": checkpoint}


def _properties(record: dict[str, Any]) -> list[tuple[str, object]]:
    """JUnit XML properties of a record: indicator, metric, value, gap, limit per result.

    With several results, each name carries the result's id: ``fairness.value[overall]``.
    """
    from pytest_fairness.baseline import result_id, summarize

    results = record.get("results", [])
    props: list[tuple[str, object]] = []
    for data in results:
        suffix = f"[{result_id(data)}]" if len(results) > 1 else ""
        summary = summarize(data)
        props.append((f"{PROPERTY_PREFIX}indicator{suffix}", data["name"]))
        props.append((f"{PROPERTY_PREFIX}metric{suffix}", data["metric"]))
        props.append((f"{PROPERTY_PREFIX}value{suffix}", summary["value"]))
        props.append((f"{PROPERTY_PREFIX}gap{suffix}", summary["gap"]))
        for check in record.get("checks", []):
            if check["indicator"] == data["name"] and check["metric"] == data["metric"]:
                verdict = "passed" if check["passed"] else "failed"
                props.append((f"{PROPERTY_PREFIX}limit{suffix}",
                              f"{check['limit']}={check['threshold']:g} "
                              f"observed={check['observed']} {verdict}"))
        for c in record.get("regressions", []):
            if c["result"] == result_id(data):
                verdict = "regressed" if c["regressed"] else "ok"
                props.append((f"{PROPERTY_PREFIX}baseline{suffix}",
                              f"{c['metric']} {c['baseline']} -> {c['now']} {verdict}"))
    return props


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach the test's fairness record, JUnit properties and a readable section to its report."""
    record = None
    if call.when == "call" and is_fairness_item(item):
        record = item.stash.get(RECORD_KEY, None)
        capture = item.stash.get(CAPTURE_KEY, None)
        if record is None and capture is not None and capture.inline:
            record = _record(item, [], capture.inline, [])
        if record is not None:
            # Before the report is made, so that it copies them (and xdist ships them).
            item.user_properties.extend(_properties(record))
    report = yield
    if record is None:
        return report
    setattr(report, REPORT_ATTRIBUTE, record)
    from pytest_fairness.report.terminal import section_text

    text = section_text(record)
    extra = [f"note: {note}" for note in record.get("notes", [])]
    if record.get("regressions"):
        from pytest_fairness.baseline import Comparison, comparison_lines

        extra.append(f"baseline: {_session(item.config).baseline_source}")
        for data in record["regressions"]:
            extra.extend("  " + line for line in
                         comparison_lines(Comparison.from_dict(data), groups=False))
    report_dir = _session(item.config).report_dir
    if report_dir:
        extra.append(f"HTML report with plots: {Path(report_dir, 'report.html')}")
    text = "\n".join(part for part in (text, *extra) if part)
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
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """On the controller: record the run, save the baseline, write the reports."""
    state = session.config.stash.get(SESSION_KEY, None)
    if state is None or state.is_worker or not state.records:
        return
    state.finish(exitstatus)


@pytest.hookimpl
def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    """Print one line per fairness result of the run, then where the run was written."""
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
    for line in session.lines:
        terminalreporter.write_line(line)
