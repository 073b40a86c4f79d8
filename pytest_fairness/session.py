"""Per-run state of the plugin, and the record each fairness test leaves.

:class:`FairnessSession` holds what one pytest run knows: its options (enabled, seed,
reports, history, baseline), its data and extraction settings (dataset roots, device,
cache), the datasets and features already loaded, and, on the controller, the
:class:`TestRecord` of every fairness test. The plugin keeps it in
``config.stash[SESSION_KEY]`` and registers it as a plugin, so that its
``pytest_runtest_logreport`` collects the records of every pytest-xdist worker.

A fairness test goes through here in three steps:

1. :meth:`FairnessSession.check_test` (after the test function ran) turns what it returned
   and its inline checks into a :class:`TestRecord`, checks the returned results against
   the threshold markers and the baseline, and raises one
   :class:`~pytest_fairness.errors.FairnessViolation` for everything that failed.
2. :meth:`FairnessSession.record_for` gives the record to the test report: JUnit XML
   properties (:func:`junit_properties`), a readable section, and the record's JSON form,
   which crosses the pytest-xdist boundary with the report.
3. On the controller, :meth:`FairnessSession.pytest_runtest_logreport` collects the records
   and :meth:`FairnessSession.finish` writes the history, the baseline file and the reports.

Importing this module is cheap: everything heavy loads inside the methods that need it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final, final

import pytest

from pytest_fairness.errors import FairnessConfigError, FairnessError, FairnessViolation
from pytest_fairness.markers import (
    MARKER_REGRESSION,
    MARKER_THRESHOLD,
    validate_regression,
    validate_threshold,
)
from pytest_fairness.options import (
    CACHE_DIR_INI,
    DATA_INI,
    DEFAULT_CACHE_DIR,
    ENABLE_INI,
    HISTORY_INI,
    SEED_INI,
    checkpoint_id,
    parse_data_item,
    parse_seed,
)

if TYPE_CHECKING:
    from pytest_fairness.baseline import Comparison
    from pytest_fairness.checks import CheckOutcome, InlineCheck
    from pytest_fairness.features import ExtractionProgress

__all__ = [
    "CAPTURE_KEY",
    "EXTRACTIONS_KEY",
    "MARKER_ERROR_KEY",
    "PROGRESS_ATTRIBUTE",
    "RECORD_KEY",
    "REPORT_ATTRIBUTE",
    "SESSION_KEY",
    "Capture",
    "FairnessSession",
    "ProgressWriter",
    "TestRecord",
    "identity_of",
    "junit_properties",
    "session_of",
]

#: Name of the report attribute that carries a test's record (its JSON form).
REPORT_ATTRIBUTE: Final = "fairness"
#: Name of the report attribute that carries a worker's finished-extraction lines.
PROGRESS_ATTRIBUTE: Final = "fairness_progress"
#: Seconds between two rewrites of the live progress line.
LIVE_INTERVAL: Final = 0.1
#: Prefix of the JUnit XML properties (``item.user_properties``) of fairness tests.
PROPERTY_PREFIX: Final = "fairness."


@final
@dataclass(frozen=True)
class TestRecord:
    """What one fairness test produced: its results, verdicts, comparisons and notes.

    Parameters
    ----------
    nodeid : str
        The test's node id.
    test : str
        The node id without the checkpoint parameter (the same test at every checkpoint).
    checkpoint : str or None
        The checkpoint the test ran for (``--fairness-checkpoint``).
    outcome : str
        ``"passed"``, ``"failed"`` or ``"skipped"``; set on the controller from the report.
    results : tuple of dict
        ``IndicatorResult.to_dict()`` of each result, with the ``key`` the test gave it.
    checks : tuple of dict
        ``CheckOutcome.to_dict()`` of each verdict: the markers' first, then inline ones.
    regressions : tuple of dict
        ``Comparison.to_dict()`` of each comparison with the baseline.
    notes : tuple of str
        What could not be compared, and why.
    extractions : tuple of dict
        What produced each of the test's features (``fairness_features`` calls): dataset,
        dataset and model fingerprints, features digest (see :mod:`pytest_fairness.provenance`).
    """

    __test__: ClassVar[bool] = False  # a dataclass, not a test class for pytest to collect

    nodeid: str
    test: str
    checkpoint: str | None = None
    outcome: str = ""
    results: tuple[dict[str, Any], ...] = ()
    checks: tuple[dict[str, Any], ...] = ()
    regressions: tuple[dict[str, Any], ...] = ()
    notes: tuple[str, ...] = ()
    extractions: tuple[dict[str, Any], ...] = ()

    @property
    def model_fingerprint(self) -> str | None:
        """The fingerprint of the model the test's features came from (comma-joined if several)."""
        from pytest_fairness.provenance import joined

        return joined(self.extractions, ("model_fingerprint",))

    @property
    def dataset_fingerprint(self) -> str | None:
        """The fingerprint of the datasets the test extracted features of (comma-joined)."""
        from pytest_fairness.provenance import joined

        return joined(self.extractions, ("dataset_fingerprint",))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: it crosses the xdist boundary; history, baselines, reports read it."""
        return {
            "nodeid": self.nodeid,
            "test": self.test,
            "checkpoint": self.checkpoint,
            "outcome": self.outcome,
            "results": list(self.results),
            "checks": list(self.checks),
            "regressions": list(self.regressions),
            "notes": list(self.notes),
            "model_fingerprint": self.model_fingerprint,
            "dataset_fingerprint": self.dataset_fingerprint,
            "extractions": list(self.extractions),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TestRecord:
        """Rebuild a record from :meth:`to_dict` output."""
        return cls(
            nodeid=data["nodeid"], test=data.get("test") or data["nodeid"],
            checkpoint=data.get("checkpoint"), outcome=data.get("outcome") or "",
            results=tuple(data.get("results", ())), checks=tuple(data.get("checks", ())),
            regressions=tuple(data.get("regressions", ())), notes=tuple(data.get("notes", ())),
            extractions=tuple(data.get("extractions", ())),
        )


@dataclass
class Capture:
    """What one fairness test produced: its return value and its inline checks."""

    returned: Any = None
    inline: list[InlineCheck] = field(default_factory=list)


def identity_of(item: pytest.Item) -> tuple[str, str | None]:
    """The test id without its checkpoint parameter, and the checkpoint (if any)."""
    callspec = getattr(item, "callspec", None)
    checkpoint = None if callspec is None else callspec.params.get("fairness_checkpoint")
    if checkpoint is None:
        return item.nodeid, None
    from pytest_fairness.baseline import strip_param

    text = str(checkpoint)
    return strip_param(item.nodeid, checkpoint_id(text)), text


def _record(
    item: pytest.Item, returned: Sequence[tuple[str | None, Any]],
    inline: Sequence[InlineCheck], outcomes: Sequence[CheckOutcome] = (),
) -> TestRecord:
    """The record of one test: its results (returned, then inline ones) and verdicts."""
    from pytest_fairness.results import iter_results

    results = [{**result.to_dict(), "key": key} for key, result in returned]
    checks = [o.to_dict() for o in outcomes]
    for checked, inline_outcomes in inline:
        for key, result in iter_results(checked):
            if not any(r["key"] == key and r["name"] == result.name and r["metric"] == result.metric
                       for r in results):
                results.append({**result.to_dict(), "key": key})
        checks.extend(o.to_dict() for o in inline_outcomes)
    test, checkpoint = identity_of(item)
    extractions: list[dict[str, Any]] = item.stash.get(EXTRACTIONS_KEY, [])
    return TestRecord(nodeid=item.nodeid, test=test, checkpoint=checkpoint,
                      results=tuple(results), checks=tuple(checks),
                      extractions=tuple(extractions))


def junit_properties(record: TestRecord) -> list[tuple[str, object]]:
    """JUnit XML properties of a record: indicator, metric, value, gap, limit per result.

    With several results, each name carries the result's id: ``fairness.value[overall]``.
    """
    from pytest_fairness.results import result_id, summarize

    props: list[tuple[str, object]] = []
    for data in record.results:
        suffix = f"[{result_id(data)}]" if len(record.results) > 1 else ""
        summary = summarize(data)
        props.append((f"{PROPERTY_PREFIX}indicator{suffix}", data["name"]))
        props.append((f"{PROPERTY_PREFIX}metric{suffix}", data["metric"]))
        props.append((f"{PROPERTY_PREFIX}value{suffix}", summary["value"]))
        props.append((f"{PROPERTY_PREFIX}gap{suffix}", summary["gap"]))
        metrics = {data["metric"], *(s.get("metric") for s in data.get("slices", ()))}
        for check in record.checks:
            if (check["key"], check["indicator"]) == (data.get("key"), data["name"]) and (
                    check["metric"] in metrics):
                verdict = "passed" if check["passed"] else "failed"
                prop = (f"{PROPERTY_PREFIX}limit{suffix}",
                        f"{check['limit']}={check['threshold']:g} "
                        f"observed={check['observed']} {verdict}")
                if prop not in props:  # a marker and an inline check that agree: once
                    props.append(prop)
        for c in record.regressions:
            if c["result"] == result_id(data):
                verdict = "regressed" if c["regressed"] else "ok"
                props.append((f"{PROPERTY_PREFIX}baseline{suffix}",
                              f"{c['metric']} {c['baseline']} -> {c['now']} {verdict}"))
    return props


def _absolute(path: str | os.PathLike[str], base: Path) -> Path:
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else base / candidate


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
    except argparse.ArgumentTypeError as error:
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


def _roots(config: pytest.Config) -> dict[str, Path]:
    """Dataset roots: the ini option (relative to rootdir), then the command line (to cwd)."""
    roots: dict[str, Path] = {}
    for line in config.getini(DATA_INI):
        try:
            name, path = parse_data_item(line)
        except argparse.ArgumentTypeError as exc:
            raise pytest.UsageError(f"ini option {DATA_INI}: {exc}") from None
        roots[name] = _absolute(path, config.rootpath)
    for name, path in config.getoption("fairness_data") or ():
        roots[name] = _absolute(path, Path.cwd())  # the command line wins over the ini file
    return roots


def _fingerprints_dir(config: pytest.Config, checkpoints: Sequence[str]) -> Path | None:
    """The folder where the run's extractions meet (see :func:`pytest_fairness.provenance.publish`).

    The controller makes one when there are several checkpoints and hands it to the
    pytest-xdist workers in their ``workerinput``.
    """
    from pytest_fairness.provenance import WORKER_INPUT

    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        folder = workerinput.get(WORKER_INPUT)
        return None if folder is None else Path(folder)
    return Path(tempfile.mkdtemp(prefix="pytest-fairness-")) if len(checkpoints) > 1 else None


def _cache_dir(config: pytest.Config) -> Path | None:
    if config.getoption("fairness_no_cache"):
        return None
    if config.getoption("fairness_cache_dir"):
        return _absolute(config.getoption("fairness_cache_dir"), Path.cwd())
    if config.getini(CACHE_DIR_INI):
        return _absolute(config.getini(CACHE_DIR_INI), config.rootpath)
    return config.rootpath / DEFAULT_CACHE_DIR


class ProgressWriter:
    """Shows extraction progress through pytest's terminal writer, without ``-s``.

    It is the sink (:func:`pytest_fairness.features.progress_to`) of every extraction a
    fairness test runs, and picks one of four modes when the run starts:

    * ``live``: on a terminal, one line per extraction (dataset, perturbation, images/s,
      ETA) rewritten in place, at most every :data:`LIVE_INTERVAL` seconds;
    * ``lines``: in CI logs (stdout not a terminal), one line when an extraction starts and
      one when it ends, never one per batch;
    * ``off``: with ``-q`` (or without a terminal reporter);
    * ``collect``: in a pytest-xdist worker, which has no terminal. The end line of every
      extraction is kept and attached to the test's report
      (:data:`PROGRESS_ATTRIBUTE`); the controller prints it when the report arrives (one
      line per extraction, once the test phase that ran it is over).

    Lines are written with pytest's capture suspended, as live logging does.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.pending: list[str] = []  # a worker's end lines, until the next report
        self._last = 0.0
        self._mode: str | None = None

    @property
    def mode(self) -> str:
        """``"live"``, ``"lines"``, ``"off"`` or ``"collect"`` (decided once, when first needed)."""
        if self._mode is None:
            reporter = self.config.pluginmanager.get_plugin("terminalreporter")
            if hasattr(self.config, "workerinput"):
                self._mode = "collect"
            elif reporter is None or self.config.get_verbosity() < 0:
                self._mode = "off"
            else:
                self._mode = "live" if reporter.isatty() else "lines"
        return self._mode

    def __call__(self, event: ExtractionProgress) -> None:
        """Show one progress event (see the modes above)."""
        mode = self.mode
        if mode == "off" or (mode != "live" and not event.milestone):
            return  # outside a terminal: nothing per batch
        from pytest_fairness.report.terminal import progress_line

        if mode == "collect":
            if event.finished:
                self.pending.append(progress_line(event))
            return
        now = time.perf_counter()
        if mode == "live" and event.done and not event.finished and (
                now - self._last < LIVE_INTERVAL):
            return
        self._last = now
        line = progress_line(event)
        with self._uncaptured() as reporter:
            if mode == "lines":
                reporter.write_line(line)
                return
            writer = self.config.get_terminal_writer()
            if not event.done and not event.finished:  # a new extraction: a line of its own
                reporter.ensure_newline()
                if writer.width_of_current_line:
                    reporter.write("\n")
            # Longer than the terminal, the line would wrap and \r could not rewrite it.
            reporter.rewrite(line[: max(writer.fullwidth - 1, 20)], erase=True)
            if event.finished:
                reporter.write("\n")
            reporter.flush()

    def take(self) -> list[str]:
        """A worker's end lines since the last call (to attach to a report)."""
        lines, self.pending = self.pending, []
        return lines

    def show(self, lines: Sequence[str], worker: str = "") -> None:
        """On the controller: print the end lines a worker attached to a report."""
        if self.mode == "off" or not lines:
            return
        prefix = f"[{worker}] " if worker else ""
        with self._uncaptured() as reporter:
            for line in lines:
                reporter.write_line(prefix + line)

    @contextlib.contextmanager
    def _uncaptured(self) -> Iterator[pytest.TerminalReporter]:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        assert reporter is not None  # the mode is "off" without one
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        with (capture.global_and_fixture_disabled() if capture is not None
              else contextlib.nullcontext()):
            yield reporter


class FairnessSession:
    """Per-run state: options, data settings, the baseline, and the records of the run."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.enabled = bool(config.getoption("fairness") or config.getini(ENABLE_INI))
        self.started = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime())
        self.report_dir: str | None = config.getoption("fairness_report", None)
        self.save_baseline: str | None = config.getoption("fairness_save_baseline", None)
        self.baseline_ref: str | None = config.getoption("fairness_baseline", None)
        self.compare_fail: dict[str, float] = config.getoption("fairness_compare_fail", None) or {}
        self.compare_confidence: str = config.getoption("fairness_compare_confidence", "point")
        self.label: str | None = config.getoption("fairness_run_label", None)
        self.seed = _seed(config)
        self.record_history = not config.getoption("fairness_no_history", False)
        self.history_path = _history_path(config)
        # data and extraction
        self.roots = _roots(config)
        self.strict = bool(config.getoption("fairness_strict"))
        self.device: str = config.getoption("fairness_device")
        self.cache_dir = _cache_dir(config)
        self.batch_size: int = config.getoption("fairness_batch_size")
        self.checkpoints = [
            str(_absolute(c, Path.cwd())) if _absolute(c, Path.cwd()).exists() else c
            for c in config.getoption("fairness_checkpoint") or ()
        ]
        self.fingerprints_dir = _fingerprints_dir(config, self.checkpoints)
        #: ``--fairness-features DIR``: features extracted ahead, read instead of a model.
        self.features_ahead: str | None = config.getoption("fairness_features", None)
        self.memory: dict[str, Any] = {}  # features by cache key, for this process
        self.progress = ProgressWriter(config)
        self.datasets: dict[str, Any] = {}
        # what the run produced
        self.records: list[TestRecord] = []
        self.lines: list[str] = []  # what the end of the run wrote, for the summary
        self.baseline: dict[str, Any] | None = None
        self.baseline_source = ""
        if self.compare_fail and not self.baseline_ref and len(self.checkpoints) < 2:
            raise pytest.UsageError(
                "--fairness-compare-fail needs something to compare with: add "
                "--fairness-baseline FILE.json|RUN_ID|CHECKPOINT, or give two or more "
                "--fairness-checkpoint to compare them with the first."
            )
        self.reference_checkpoint = _reference_checkpoint(config, self.checkpoints)
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

    @property
    def is_worker(self) -> bool:
        """True in a pytest-xdist worker, where nothing is printed or written."""
        return hasattr(self.config, "workerinput")

    # -- data and features --------------------------------------------------------------

    def dataset(self, name: str) -> Any:
        """The dataset ``name`` from its configured root; skip (or fail) when it has none."""
        if name in self.datasets:
            return self.datasets[name]
        root = self.roots.get(name)
        if root is None:
            message = (
                f"dataset {name!r} is not configured: pass --fairness-data {name}=PATH or add "
                f"'{name}=PATH' to the {DATA_INI} ini option"
            )
            if self.strict:
                pytest.fail(message + " (--fairness-strict turns this skip into an error)",
                            pytrace=False)
            pytest.skip(message)
        from pytest_fairness.data import LOADERS

        dataset = LOADERS[name](root)
        self.datasets[name] = dataset
        return dataset

    def features(self, model: Any, item: pytest.Item) -> Callable[..., Any]:
        """The ``fairness_features`` function of ``item`` for ``model``, with this run's settings.

        Each extraction is noted on the item (:meth:`note_features`).
        """

        def features(dataset: Any, *, transform: Any = None, perturbation: Any = None,
                     batch_size: int | None = None, normalize: Any = "imagenet",
                     layers: Any = (), amp: bool = False, num_workers: int = 0,
                     precomputed: str | os.PathLike[str] | None = None,
                     model_id: str | None = None, module: str | None = None) -> Any:
            __tracebackhide__ = True
            from pytest_fairness.features import (
                DefaultTransform,
                extract_features,
                load_precomputed,
            )

            if precomputed is not None:
                return load_precomputed(precomputed, dataset)
            if self.features_ahead is not None:
                return load_precomputed(
                    self.features_ahead, dataset,
                    perturbation=perturbation, normalize=normalize, cache_dir=self.cache_dir,
                    transform=DefaultTransform() if transform is None else transform)
            extracted = extract_features(
                model, dataset, transform=transform, perturbation=perturbation,
                normalize=normalize, layers=layers,
                batch_size=self.batch_size if batch_size is None else batch_size,
                num_workers=num_workers, device=self.device, amp=amp,
                cache_dir=self.cache_dir, model_id=model_id, module=module,
                memory=self.memory if self.cache_dir is not None else None,
            )
            self.note_features(item, extracted, model, model_id=model_id)
            return extracted

        return features

    def note_features(self, item: pytest.Item, features: Any, model: Any, *,
                      model_id: str | None) -> None:
        """Record what produced ``features`` on ``item``; fail if another checkpoint matches.

        Raises
        ------
        CheckpointIgnoredError
            When another checkpoint of the same test gave the same features from a model
            with the same fingerprint (:func:`pytest_fairness.provenance.publish`).
        """
        __tracebackhide__ = True
        from pytest_fairness.features import model_fingerprint
        from pytest_fairness.provenance import extraction, publish

        # The whole model, also under module=: checkpoints may share only a backbone.
        entry = extraction(features, model_fingerprint=model_fingerprint(model,
                                                                         model_id=model_id))
        item.stash.setdefault(EXTRACTIONS_KEY, []).append(entry)
        test, checkpoint = identity_of(item)
        if self.fingerprints_dir is not None and checkpoint is not None:
            publish(self.fingerprints_dir, test=test, checkpoint=checkpoint, entry=entry)

    # -- one test -------------------------------------------------------------------------

    def check_test(self, item: pytest.Function, capture: Capture) -> None:
        """Record what the test returned, check it against its markers and the baseline.

        Raises
        ------
        FairnessViolation
            One for every broken limit and regression together.
        FairnessConfigError
            When the test returned something that holds no result, or nothing to check.
        """
        __tracebackhide__ = True
        from pytest_fairness.checks import evaluate
        from pytest_fairness.results import iter_results

        returned = list(iter_results(capture.returned))
        if capture.returned is not None and not returned:
            raise FairnessConfigError(
                f"{item.nodeid} returned {type(capture.returned).__name__}; a fairness test "
                "returns an IndicatorResult, a list or dict of them, or None (when it checks "
                "inline with fairness.check)."
            )
        for key, result in returned:
            item.config.hook.pytest_fairness_result(item=item, key=key, result=result)
        item.stash[RECORD_KEY] = _record(item, returned, capture.inline)
        outcomes: list[CheckOutcome] = []
        try:
            for mark in reversed(list(item.iter_markers(MARKER_THRESHOLD))):
                outcomes.extend(evaluate(capture.returned, validate_threshold(mark.args,
                                                                              mark.kwargs)))
        except FairnessError as error:
            item.stash[MARKER_ERROR_KEY] = error
            raise
        record = _record(item, returned, capture.inline, outcomes)
        record, comparisons = self._compared(item, record)
        item.stash[RECORD_KEY] = record
        if not returned and item.get_closest_marker(MARKER_THRESHOLD) and not capture.inline:
            raise FairnessConfigError(
                f"{item.nodeid} has a fairness.threshold marker but returned nothing to check. "
                "Return the indicator's result (or a list or dict of results)."
            )
        parts = []
        if any(not o.passed for o in outcomes):
            from pytest_fairness.report.terminal import violation_message

            parts.append(violation_message(outcomes))
        if any(c.regressed for c in comparisons):
            from pytest_fairness.report.terminal import regression_message

            parts.append(regression_message(comparisons, source=self.baseline_source))
        if parts:
            violation = FairnessViolation("\n\n".join(parts), outcomes)
            item.stash[MARKER_ERROR_KEY] = violation
            raise violation

    def _compared(
        self, item: pytest.Item, record: TestRecord
    ) -> tuple[TestRecord, list[Comparison]]:
        """The record with its baseline comparisons and notes, and the comparisons.

        Compared: the metrics of --fairness-compare-fail and of the test's markers.
        """
        marks = [validate_regression(m.args, m.kwargs)
                 for m in item.iter_markers(MARKER_REGRESSION)]
        if not marks and not (self.compare_fail and self.baseline_ref):
            return record, []
        from pytest_fairness.baseline import compare_test

        comparisons, notes = compare_test(
            self.baseline, nodeid=item.nodeid, test=record.test, results=record.results,
            compare_fail=self.compare_fail, marks=marks, source=self.baseline_source,
            compare_confidence=self.compare_confidence)
        return replace(record, regressions=tuple(c.to_dict() for c in comparisons),
                       notes=tuple(notes)), comparisons

    def record_for(self, item: pytest.Item) -> TestRecord | None:
        """The record of a test that ran: checked, or with inline checks only; else None."""
        record = item.stash.get(RECORD_KEY, None)
        capture = item.stash.get(CAPTURE_KEY, None)
        if record is None and capture is not None and (
                capture.inline or item.stash.get(EXTRACTIONS_KEY, None)):
            # An inline check raised before the test returned: its results are still
            # compared with the baseline, as `pytest-fairness compare` compares them later.
            # Features extracted before an error are kept for the end-of-run checks.
            record = _record(item, [], capture.inline)
            try:
                record, _ = self._compared(item, record)
            except FairnessError as error:  # a bad marker: the setup already reported it
                record = replace(record, notes=(str(error),))
        return record

    def attach(self, report: pytest.TestReport, record: TestRecord,
               excinfo: pytest.ExceptionInfo[BaseException] | None, item: pytest.Item) -> None:
        """Put the record on the report (for the controller) and its readable section."""
        data = record.to_dict()
        setattr(report, REPORT_ATTRIBUTE, data)
        from pytest_fairness.report.terminal import report_section

        page = str(Path(self.report_dir, "report.html")) if self.report_dir else None
        violated = excinfo is not None and isinstance(excinfo.value, FairnessViolation)
        text = report_section(data, baseline_source=self.baseline_source,
                              report_page=page, in_message=violated)
        if text:
            report.sections.append(("fairness", text))
        if excinfo is None:
            return
        text = f"{type(excinfo.value).__name__}: {excinfo.value}"
        if excinfo.value is item.stash.get(MARKER_ERROR_KEY, None):
            # The failure comes from the marker, not from a line of the test: the traceback
            # would only show plugin frames, so the message is the whole story.
            longrepr = excinfo.getrepr(style="value")
            longrepr.reprtraceback.reprentries[-1].lines = text.split("\n")
            longrepr.reprcrash.message = text  # type: ignore[union-attr]
            report.longrepr = longrepr
        crash = getattr(report.longrepr, "reprcrash", None)
        if violated and crash is not None:
            # pytest's short summary repeats the crash message whole in CI and under -vv;
            # its first line says which limits broke, the table is in the failure above.
            crash.message = crash.message.split("\n", 1)[0]

    # -- the controller ---------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)  # a worker's progress lines before the test's outcome
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Collect the record of each test; on the xdist controller, of every worker."""
        lines = getattr(report, PROGRESS_ATTRIBUTE, None)
        if lines and not self.is_worker:
            node = getattr(report, "node", None)
            self.progress.show(lines, worker=str(getattr(getattr(node, "gateway", None), "id",
                                                         "")))
        data = getattr(report, REPORT_ATTRIBUTE, None)
        if report.when == "call" and data:
            self.records.append(TestRecord.from_dict({**data, "nodeid": report.nodeid,
                                                      "outcome": report.outcome}))

    def finish(self, exitstatus: int) -> None:
        """Record the run in the history, save the baseline, write the reports (controller)."""
        from pytest_fairness.history import collect_metadata

        records = [r.to_dict() for r in self.records]
        exitstatus = self._check_baseline_match(exitstatus)
        exitstatus = self._check_checkpoints(records, exitstatus)
        checkpoints = self._compare_checkpoints(records)
        if any(c.regressed for c in checkpoints) and self.compare_fail:
            exitstatus = self._fail_run(exitstatus, pytest.ExitCode.TESTS_FAILED)
        metadata = collect_metadata(
            records, root=self.config.rootpath, label=self.label,
            checkpoints=list(self.config.getoption("fairness_checkpoint", None) or []),
            seed=self.seed, started=self.started, exitstatus=int(exitstatus),
        )
        if self.baseline_ref:
            metadata["baseline"] = self.baseline_source
        self.config.hook.pytest_fairness_run_metadata(config=self.config, metadata=metadata)
        trends = self._write_history(metadata, records) if self.record_history else None
        if self.save_baseline:
            from pytest_fairness.baseline import save_baseline

            try:
                path = save_baseline(self.save_baseline, records, metadata={
                    k: metadata.get(k) for k in ("label", "checkpoint", "git_commit")
                })
            except (OSError, FairnessError) as error:
                self.lines.append(f"fairness baseline NOT saved to {str(self.save_baseline)!r}: "
                                  f"{error}. Pass a file you can write.")
            else:
                self.lines.append(f"fairness baseline saved: {path}")
        if self.report_dir:
            from pytest_fairness.report.html import write_html
            from pytest_fairness.report.json_report import build_report, write_json

            document = build_report(records, run=metadata)
            if checkpoints:
                document["checkpoint_comparisons"] = [c.to_dict() for c in checkpoints]
            try:
                write_json(document, self.report_dir)
                page = write_html(document, self.report_dir, trends=trends)
            except (OSError, FairnessError) as error:
                self.lines.append(f"fairness report NOT written to {str(self.report_dir)!r}: "
                                  f"{error}. Pass a folder you can write, e.g. "
                                  "--fairness-report fairness-report.")
            else:
                self.lines.append(f"fairness report: {page}")

    def _check_baseline_match(self, exitstatus: int) -> int:
        """How many tests of the run the baseline matched; none at all fails the run.

        A partial match is a summary line (``baseline matched 7/9``). No match means
        nothing was compared, which must not pass silently: the message names a few ids of
        each side and the likely cause, and the run's exit status becomes a usage error.
        Returns the (possibly changed) exit status.
        """
        if self.baseline is None:
            return exitstatus
        from pytest_fairness.baseline import (
            Comparison,
            few_ids,
            match_baseline,
            regression_tally,
            unmatched_message,
        )

        ran = [(r.nodeid, r.test) for r in self.records if r.results]
        if not ran:
            return exitstatus
        matched, unmatched = match_baseline(self.baseline, ran)
        if not matched:
            args = list(self.config.invocation_params.args)
            message = unmatched_message(
                self.baseline, [nodeid for nodeid, _ in ran], source=self.baseline_source,
                rootdir=str(self.config.rootpath), spaced="--fairness-baseline" in args,
            )
            self.lines.append(f"fairness baseline ERROR: {message}")
            return self._fail_run(exitstatus, pytest.ExitCode.USAGE_ERROR)
        line = (f"fairness baseline matched {len(matched)}/{len(ran)} tests of this run "
                f"({self.baseline_source})")
        if unmatched:
            line += f"; not in the baseline: {few_ids(unmatched)}"
        comparisons = [Comparison.from_dict(c) for r in self.records for c in r.regressions]
        if comparisons:
            line += f"; {regression_tally(comparisons)}"
        self.lines.append(line)
        return exitstatus

    def _fail_run(self, exitstatus: int, status: pytest.ExitCode) -> int:
        """Make the run exit with ``status`` unless it already fails worse."""
        session = self.config.pluginmanager.get_plugin("session")
        if session is not None and int(session.exitstatus) in (pytest.ExitCode.OK,
                                                               pytest.ExitCode.TESTS_FAILED):
            session.exitstatus = max(int(session.exitstatus), int(status))
        return max(int(exitstatus), int(status)) if int(exitstatus) in (0, 1) else exitstatus

    def _compare_checkpoints(self, records: Sequence[Mapping[str, Any]]) -> list[Comparison]:
        """Each checkpoint against the reference one, with summary lines (2+ checkpoints).

        Judged by ``--fairness-compare-fail`` when given (a regression fails the run), else
        shown on each result's headline without a verdict.
        """
        if self.reference_checkpoint is None:
            return []
        from pytest_fairness.baseline import compare_checkpoints
        from pytest_fairness.report.terminal import checkpoint_lines

        judged = bool(self.compare_fail)
        comparisons = compare_checkpoints(
            records, self.checkpoints, self.compare_fail or {"headline": 0.0},
            reference=self.reference_checkpoint,
            confidence=self.compare_confidence)
        if comparisons:
            self.lines.extend(checkpoint_lines(
                comparisons, reference=checkpoint_id(self.reference_checkpoint), judged=judged))
        return comparisons

    def _check_checkpoints(self, records: Sequence[Mapping[str, Any]], exitstatus: int) -> int:
        """Name every test whose checkpoints gave the same features; they fail the run.

        The later test of each pair already failed (:meth:`note_features`); the earlier one
        may have passed, and under pytest-xdist both may have run at once.
        Returns the (possibly changed) exit status.
        """
        from pytest_fairness.provenance import same_features

        found = same_features(records)
        for same in found:
            self.lines.append(f"fairness checkpoint ERROR in {', '.join(same.nodeids)}: "
                              f"{same.message}")
        if not found:
            return exitstatus
        return self._fail_run(exitstatus, pytest.ExitCode.TESTS_FAILED)

    def close(self) -> None:
        """Remove the folder the run's extractions met in (controller)."""
        if self.fingerprints_dir is not None and not self.is_worker:
            shutil.rmtree(self.fingerprints_dir, ignore_errors=True)

    def _write_history(
        self, metadata: dict[str, Any], records: Sequence[Mapping[str, Any]]
    ) -> list[dict[str, Any]] | None:
        import sqlite3

        from pytest_fairness.history import HistoryStore

        try:
            with HistoryStore(self.history_path) as store:
                run_id = store.record_run(metadata, records)
                metadata["history_run_id"] = run_id
                self.lines.append(f"fairness history: run {run_id} recorded in "
                                  f"{self.history_path}")
                return store.series(last=20) if self.report_dir else None
        except (OSError, sqlite3.Error, FairnessConfigError) as error:
            self.lines.append(f"fairness history NOT written to {self.history_path}: {error} "
                              "(use --fairness-history PATH or --fairness-no-history)")
            return None


def _reference_checkpoint(config: pytest.Config, checkpoints: Sequence[str]) -> str | None:
    """The checkpoint the others are compared with: named, or the first (2+ only)."""
    name = config.getoption("fairness_reference_checkpoint", None)
    if len(checkpoints) < 2:
        if name is not None:
            raise pytest.UsageError(
                "--fairness-reference-checkpoint needs two or more --fairness-checkpoint to "
                f"compare; got {len(checkpoints)}."
            )
        return None
    if name is None:
        return checkpoints[0]
    found = [c for c in checkpoints if name in (c, checkpoint_id(c))]
    if len(found) != 1:
        raise pytest.UsageError(
            f"--fairness-reference-checkpoint={name!r} names "
            f"{'none' if not found else 'more than one'} of the --fairness-checkpoint: "
            f"{', '.join(checkpoint_id(c) for c in checkpoints)}. Give one of them (a path or "
            "a file name)."
        )
    return found[0]


SESSION_KEY: Final = pytest.StashKey[FairnessSession]()
CAPTURE_KEY: Final = pytest.StashKey[Capture]()
RECORD_KEY: Final = pytest.StashKey[TestRecord]()
#: What produced each of a test's features (:func:`pytest_fairness.provenance.extraction`).
EXTRACTIONS_KEY: Final = pytest.StashKey[list[dict[str, Any]]]()
#: The error a test's markers raised (a violation or a bad marker), to report it plainly.
MARKER_ERROR_KEY: Final = pytest.StashKey[BaseException]()


def session_of(config: pytest.Config) -> FairnessSession:
    """The run's :class:`FairnessSession`."""
    return config.stash[SESSION_KEY]
