"""The pytest plugin: its hooks and the fixtures users receive.

Loaded through the ``pytest11`` entry point. It imports nothing heavy: numpy, pandas,
torch and faiss load only when a fairness test runs. Each hook is short and hands the work
to the run's :class:`~pytest_fairness.session.FairnessSession` (per-run state, records,
baseline policy, reports), kept in ``config.stash``.

How a fairness test flows:

1. ``pytest_collection_modifyitems`` gives every test with a threshold or regression marker,
   or that calls ``fairness.check`` in its body (unless marked ``fairness_unit``), the plain
   ``fairness`` marker, and skips fairness tests unless ``--fairness`` is on.
2. ``pytest_runtest_setup`` validates the markers (hand-written ones included).
3. ``pytest_runtest_protocol`` (a wrapper) sends the progress of the extractions the test
   runs to pytest's terminal writer (:class:`~pytest_fairness.session.ProgressWriter`).
4. ``pytest_pyfunc_call`` (a wrapper) captures what the test returns and the results of
   inline ``fairness.check`` calls; the session checks them against the markers.
5. ``pytest_runtest_makereport`` attaches the test's record to the report; it crosses the
   pytest-xdist boundary with the report, and the session collects it on the controller
   for the end-of-run summary, history and reports.

Fixtures: ``fairness_model`` (override it), ``fairness_features``, ``fairness_checkpoint``
(one run per ``--fairness-checkpoint``), ``fairness_seed``, and one fixture per dataset
(``utkface``, ``celeba``, ``casual_conversations``, ``miap``, ``dollar_street``,
``fairface``, ``fitzpatrick17k``, ``fairness_manifest``) whose root comes from
``--fairness-data NAME=PATH`` or the ``fairness_data`` ini option.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn

import pytest

from pytest_fairness.checks import validate_regression, validate_threshold
from pytest_fairness.errors import FairnessConfigError, FairnessError, FairnessViolation
from pytest_fairness.markers import MARKER_LINES, calls_inline_check, is_fairness_item
from pytest_fairness.options import (
    DEFAULT_CONFIDENCE,
    MARKER_FAIRNESS,
    MARKER_REGRESSION,
    MARKER_THRESHOLD,
    MARKER_UNIT,
    add_options,
)
from pytest_fairness.progress import PROGRESS_ATTRIBUTE
from pytest_fairness.session import (
    CAPTURE_KEY,
    FAMILY_ATTRIBUTE,
    MARKER_ERROR_KEY,
    REPORT_ATTRIBUTE,
    SESSION_KEY,
    Capture,
    FairnessSession,
    session_of,
)

if TYPE_CHECKING:
    from pytest_fairness.records import TestRecord

#: The seed and inconclusive policy in force before this run, restored at its end.
_DEFAULTS_KEY: Final = pytest.StashKey[tuple[int, "str | None", bool]]()

SKIP_REASON: Final = (
    "fairness test: run with `pytest --fairness` (or set `fairness = true` in the "
    "[pytest] ini section) to enable it"
)


# -- configuration -------------------------------------------------------------------------


@pytest.hookimpl
def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Register the plugin's own hooks."""
    from pytest_fairness import hookspec

    pluginmanager.add_hookspecs(hookspec)


@pytest.hookimpl
def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--fairness`` and the other ``--fairness-*`` options, and their ini twins."""
    add_options(parser)


@pytest.hookimpl
def pytest_configure(config: pytest.Config) -> None:
    """Register the markers and the per-run state."""
    for line in MARKER_LINES:
        config.addinivalue_line("markers", line)
    state = FairnessSession(config)
    config.stash[SESSION_KEY] = state
    config.pluginmanager.register(ReportCollector(state), "fairness-session")
    from pytest_fairness.checks import set_inconclusive
    from pytest_fairness.stats import set_default_seed, set_paired_draws

    # The run's defaults for seed=None, inconclusive verdicts and how replicates are drawn
    # (on every xdist worker too).
    config.stash[_DEFAULTS_KEY] = (set_default_seed(state.settings.seed),
                                   set_inconclusive(state.settings.inconclusive),
                                   set_paired_draws(state.settings.paired))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist: tell each worker where the run's extractions meet (other checkpoints)."""
    from pytest_fairness.provenance import WORKER_INPUT

    folder = session_of(node.config).fingerprints_dir
    if folder is not None:
        node.workerinput[WORKER_INPUT] = str(folder)


@pytest.hookimpl
def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove what the run kept on disk for itself."""
    state = config.stash.get(SESSION_KEY, None)
    if state is not None:
        state.close()
    defaults = config.stash.get(_DEFAULTS_KEY, None)
    if defaults is not None:  # what they were before this run (a run inside a run: pytester)
        from pytest_fairness.checks import set_inconclusive
        from pytest_fairness.stats import set_default_seed, set_paired_draws

        set_default_seed(defaults[0])
        set_inconclusive(defaults[1])
        set_paired_draws(defaults[2])


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark threshold/regression/inline-check tests as fairness tests; skip them unless enabled.

    ``tryfirst`` so that ``-m fairness`` (applied by pytest's own implementation of this
    hook) already sees the added marker.
    """
    enabled = session_of(config).settings.enabled
    skip = pytest.mark.skip(reason=SKIP_REASON)
    for item in items:
        if not is_fairness_item(item) and (
            item.get_closest_marker(MARKER_THRESHOLD) or item.get_closest_marker(MARKER_REGRESSION)
            or (isinstance(item, pytest.Function) and not item.get_closest_marker(MARKER_UNIT)
                and calls_inline_check(item.obj))
        ):
            item.add_marker(MARKER_FAIRNESS)
        if not enabled and is_fairness_item(item):
            item.add_marker(skip)


@pytest.hookimpl
def pytest_collection_finish(session: pytest.Session) -> None:
    """Under ``--fairness-family-alpha``: the run's gated tests, the T of its Bonferroni split.

    A test is gated when a threshold or regression marker asks for ``"supported"`` or
    ``"strict"``, when it calls ``fairness.check`` in its body (its rules are known only
    when it runs), or when ``--fairness-compare-confidence`` judges its comparisons. Every
    pytest-xdist worker collects the same items, and so counts the same T.
    """
    state = session_of(session.config)
    settings = state.settings
    if settings.family_alpha is None or not settings.enabled:
        return
    compared = settings.compare_confidence != "point" and bool(settings.compare_fail)

    def gated(item: pytest.Item) -> bool:
        marks = [*item.iter_markers(MARKER_THRESHOLD), *item.iter_markers(MARKER_REGRESSION)]
        return is_fairness_item(item) and (
            compared or any(m.kwargs.get("confidence", DEFAULT_CONFIDENCE) != "point"
                            for m in marks)
            or (isinstance(item, pytest.Function) and calls_inline_check(item.obj)))

    state.family_tests = frozenset(item.nodeid for item in session.items if gated(item))
    state.family_count = len(state.family_tests)


@pytest.hookimpl
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run tests that use ``fairness_checkpoint`` once per ``--fairness-checkpoint``.

    The reference checkpoint comes first: pytest orders session-scoped parameters, so its
    tests run before the others' (serially and in each pytest-xdist worker's queue), which
    compare with their records when they finish.
    """
    if "fairness_checkpoint" not in metafunc.fixturenames:
        return
    settings = session_of(metafunc.config).settings
    if settings.checkpoints:
        pairs = list(zip(settings.checkpoints, settings.checkpoint_ids))
        pairs.sort(key=lambda pair: pair[0] != settings.reference_checkpoint)  # stable
        metafunc.parametrize("fairness_checkpoint", [c for c, _ in pairs],
                             ids=[i for _, i in pairs], indirect=True, scope="session")


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
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """Show the progress of extractions the test runs (fixtures included), without ``-s``.

    For fairness tests and tests that use ``fairness_features``; other tests' extractions
    (``extract_features`` called directly) keep its default, a bar on a terminal's stderr.
    """
    if not (is_fairness_item(item) or "fairness_features" in getattr(item, "fixturenames", ())):
        return (yield)
    session = session_of(item.config)
    from pytest_fairness.features import progress_to

    with progress_to(session.progress):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    """Capture a fairness test's return value and inline checks, then check its markers.

    The test function is wrapped so that it returns ``None`` to pytest: returning results
    is how fairness tests work, so pytest's "return not None" warning must not fire.
    """
    __tracebackhide__ = True
    session = session_of(pyfuncitem.config)
    if "fairness_model" in pyfuncitem.funcargs and len(session.settings.checkpoints) > 1:
        from pytest_fairness.provenance import note_model

        try:
            note_model(pyfuncitem, session.settings, session.fingerprints_dir)
        except FairnessError as error:  # before the test ran: no line of it to show
            _fail_plainly(error, whole=True)
    function = pyfuncitem.obj
    if not is_fairness_item(pyfuncitem) or inspect.iscoroutinefunction(function):
        return (yield)
    from pytest_fairness.checks import collecting

    capture = Capture()
    pyfuncitem.stash[CAPTURE_KEY] = capture

    @functools.wraps(function)
    def capturing(*args: Any, **kwargs: Any) -> None:
        capture.returned = function(*args, **kwargs)

    pyfuncitem.obj = capturing
    try:
        with collecting(defer=session.settings.family_alpha is not None) as inline:
            capture.inline = inline
            outcome = yield
    finally:
        pyfuncitem.obj = function
    try:
        session_of(pyfuncitem.config).check_test(pyfuncitem, capture)
    except FairnessError as error:
        pyfuncitem.stash[MARKER_ERROR_KEY] = error
        _fail_plainly(error)
    return outcome


def _fail_plainly(error: FairnessError, *, whole: bool = False) -> NoReturn:
    """Fail a test on the plugin's verdict: the message, no traceback (no line of it failed).

    A marker's failure shows its first line; the details lead the test's fairness section
    (:func:`_section`).
    """
    from pytest_fairness.errors import plain_lines

    text = str(error) if whole else str(error).partition("\n")[0]
    lines = plain_lines(text)
    raise pytest.fail.Exception(f"{type(error).__name__}: {lines}", pytrace=False) from None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach the test's record, JUnit properties and a readable section to its report."""
    session = session_of(item.config)
    record = None
    if call.when == "call" and is_fairness_item(item):
        record = session.record_for(item)
        if record is not None:
            # Before the report is made, so that it copies them (and xdist ships them).
            from pytest_fairness.report.junit import junit_properties

            item.user_properties.extend(junit_properties(record))
            section = _section(session, record, call.excinfo, item)
            if section:
                item.add_report_section("call", "fairness", section)
    report = yield
    if record is not None:
        setattr(report, REPORT_ATTRIBUTE, record.to_dict())  # for the controller
        if session.settings.family_alpha is not None:
            setattr(report, FAMILY_ATTRIBUTE, session.family_count)
    if is_fairness_item(item) and session.settings.reference_checkpoint is not None and (
            call.when == "call" or not report.passed):  # its outcome is known
        session.reference.keep(item, record, report)
    if session.is_worker and session.progress.pending:
        # A worker has no terminal: the controller prints these when the report arrives.
        setattr(report, PROGRESS_ATTRIBUTE, session.progress.take())
    return report


def _section(session: FairnessSession, record: TestRecord,
             excinfo: pytest.ExceptionInfo[BaseException] | None, item: pytest.Item) -> str:
    """The test's fairness section: a marker failure's details first, then the record."""
    from pytest_fairness.errors import plain_lines
    from pytest_fairness.report.terminal import report_section

    folder = session.settings.report_dir
    page = str(Path(folder, "report.html")) if folder else None
    error = item.stash.get(MARKER_ERROR_KEY, None)
    rest = "" if error is None else str(error).partition("\n")[2].strip("\n")
    details = plain_lines(rest) if rest else ""
    shown = error is not None or (excinfo is not None
                                  and isinstance(excinfo.value, FairnessViolation))
    text = report_section(record, baseline_source=session.baseline_source,
                          report_page=page, in_message=shown)
    return "\n\n".join(part for part in (details, text) if part)


# -- the controller: merge and summarise ---------------------------------------------------


class ReportCollector:
    """The hook that receives no config: it is registered once per run with its session."""

    def __init__(self, state: FairnessSession) -> None:
        self.state = state

    @pytest.hookimpl(tryfirst=True)  # a worker's progress lines before the test's outcome
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Show a worker's extraction lines; keep the record each test's report carries."""
        lines = getattr(report, PROGRESS_ATTRIBUTE, None)
        if lines and not self.state.is_worker:
            node = getattr(report, "node", None)
            self.state.progress.show(lines, worker=str(getattr(getattr(node, "gateway", None),
                                                               "id", "")))
        self.state.collect(report)


@pytest.hookimpl
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """On the controller: record the run, save the baseline, write the reports.

    A run-level failure (see :meth:`FairnessSession.finish`) sets the run's exit status.
    """
    state = session.config.stash.get(SESSION_KEY, None)
    if state is not None and not state.is_worker:
        session.exitstatus = state.finish(int(session.exitstatus))


@pytest.hookimpl
def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    """Print one line per fairness result of the run, then where the run was written."""
    session = session_of(config)
    if session.is_worker or not (session.records or session.lines):
        return
    from pytest_fairness.errors import plain_lines
    from pytest_fairness.report.terminal import family_lines, inconclusive_lines, summary_lines

    records = list(session.records)
    lines = summary_lines(records)
    if session.settings.family_alpha is not None:
        lines += family_lines(records, session.settings.family_alpha, session.family_count)
    if records:
        config.hook.pytest_fairness_summary(records=records, lines=lines)
    if lines:
        terminalreporter.write_sep("=", "fairness summary")
        for line in lines:
            terminalreporter.write_line(line)
    undecided = inconclusive_lines(records)
    if undecided:  # loudly: a section, and "N inconclusive" in pytest's final counts
        terminalreporter.write_sep("-", f"fairness: {len(undecided)} inconclusive")
        for line in undecided:
            terminalreporter.write_line(line)
        terminalreporter.stats.setdefault("inconclusive", []).extend(undecided)
    for text in session.lines:
        terminalreporter.write_line(plain_lines(text))  # an error's lines stay lines


# -- fixtures ----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def fairness_checkpoint(request: pytest.FixtureRequest) -> str | None:
    """The checkpoint this test runs for (``--fairness-checkpoint``), or ``None``."""
    return getattr(request, "param", None)


@pytest.fixture(scope="session")
def fairness_seed(request: pytest.FixtureRequest) -> int:
    """The run's seed (``--fairness-seed``, the ``fairness_seed`` ini value, or 0).

    Pass it to stochastic indicators so a run can be reproduced; it is recorded in the
    history with the run::

        def test_association(fairness_seed, X, Y, A, B):
            return indicators.ieat(X, Y, A, B, seed=fairness_seed)
    """
    return session_of(request.config).settings.seed


@pytest.fixture(scope="session")
def fairness_model() -> Any:
    """The model under test. Override this fixture in your ``conftest.py``."""
    pytest.skip(
        "no model to test: override the `fairness_model` fixture in conftest.py, e.g.\n"
        "    @pytest.fixture(scope='session')\n"
        "    def fairness_model(fairness_checkpoint):\n"
        "        return load_my_model(fairness_checkpoint).eval()"
    )


@pytest.fixture
def fairness_features(request: pytest.FixtureRequest,
                      fairness_checkpoint: str | None) -> Callable[..., Any]:
    """``fairness_features(dataset, *, transform=None, perturbation=None, ...)`` → Features.

    Extracts the model's outputs for every row of ``dataset`` in batches, on
    ``--fairness-device``, cached on disk (``--fairness-cache-dir``, off with
    ``--fairness-no-cache``) and in memory for the session. ``precomputed=PATH`` reads
    ``.npy``/``.npz``/``.parquet`` features instead of running the model. With
    ``--fairness-features DIR`` every call reads what ``pytest-fairness extract`` wrote
    there, and ``fairness_model`` is not requested: no model, no GPU.

    With several ``--fairness-checkpoint``, a test whose checkpoints give identical
    features from the same model fails with ``CheckpointIgnoredError``: the
    ``fairness_model`` override ignores ``fairness_checkpoint``.
    """
    session = session_of(request.config)
    ahead = session.settings.features_ahead
    model = None if ahead else request.getfixturevalue("fairness_model")
    return session.features(model, request.node)


def _dataset_fixture(fixture: str, dataset: str, what: str) -> Any:
    """A session fixture loading ``dataset`` from its ``--fairness-data`` root."""

    def load(request: pytest.FixtureRequest) -> Any:
        try:
            return session_of(request.config).dataset(dataset)
        except FairnessError as error:  # the message says it all: no plugin traceback
            raise pytest.fail.Exception(f"{type(error).__name__}: {error}",
                                        pytrace=False) from None

    load.__name__ = fixture
    load.__doc__ = f"{what} (``--fairness-data {dataset}=PATH``)."
    return pytest.fixture(scope="session", name=fixture)(load)


utkface = _dataset_fixture("utkface", "utkface", "UTKFace")
celeba = _dataset_fixture("celeba", "celeba", "CelebA")
casual_conversations = _dataset_fixture("casual_conversations", "casual_conversations",
                                        "Casual Conversations v1")
miap = _dataset_fixture("miap", "miap", "Open Images MIAP test boxes")
dollar_street = _dataset_fixture("dollar_street", "dollar_street", "Dollar Street")
fairface = _dataset_fixture("fairface", "fairface", "FairFace validation split")
fitzpatrick17k = _dataset_fixture("fitzpatrick17k", "fitzpatrick17k", "Fitzpatrick17k")
fairness_manifest = _dataset_fixture("fairness_manifest", "manifest",
                                     "Your own manifest, a CSV or Parquet file")
