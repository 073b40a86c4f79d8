"""What one pytest run knows about fairness, and what it writes at the end.

:class:`FairnessSession` (in ``config.stash[SESSION_KEY]``) holds the run's settings, the
datasets and features loaded, the baseline and the records of every fairness test. Each
test goes through :meth:`~FairnessSession.check_test` (markers, baseline, reference
checkpoint: one FairnessViolation for all that failed); :meth:`~FairnessSession.finish`,
on the controller, writes the history, the baseline and the reports, and sets the exit status.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from pytest_fairness.checkpoints import ReferenceRecords
from pytest_fairness.checks import validate_regression, validate_threshold
from pytest_fairness.errors import FairnessConfigError, FairnessError, FairnessViolation
from pytest_fairness.options import DATA_INI, MARKER_REGRESSION, MARKER_THRESHOLD
from pytest_fairness.progress import ProgressWriter
from pytest_fairness.provenance import EXTRACTIONS_KEY, fingerprints_dir, identity_of
from pytest_fairness.settings import Settings

if TYPE_CHECKING:
    from pytest_fairness.checks import InlineCheck
    from pytest_fairness.data import FairnessDataset
    from pytest_fairness.features import Features
    from pytest_fairness.records import Baseline, CheckOutcome, Comparison, Extraction, TestRecord

__all__ = ["CAPTURE_KEY", "FAMILY_ATTRIBUTE", "MARKER_ERROR_KEY", "RECORD_KEY",
           "REPORT_ATTRIBUTE", "SESSION_KEY", "Capture", "FairnessSession", "session_of"]

#: Report attributes: a test's record (its JSON form); the run's gated tests (family).
REPORT_ATTRIBUTE: Final = "fairness"
FAMILY_ATTRIBUTE: Final = "fairness_family"


@dataclass
class Capture:
    """What one fairness test produced: its return value and its inline checks."""

    returned: Any = None
    inline: list[InlineCheck] = field(default_factory=list)


def _record(
    item: pytest.Item, settings: Settings, returned: Sequence[tuple[str | None, Any]],
    inline: Sequence[InlineCheck], outcomes: Sequence[CheckOutcome] = (),
) -> TestRecord:
    """The record of one test: its results (returned, then inline ones) and verdicts."""
    from pytest_fairness.records import KeyedResult, TestRecord
    from pytest_fairness.results import iter_results

    results = [KeyedResult(key, result) for key, result in returned]
    checks = list(outcomes)
    for checked, inline_outcomes in inline:
        for key, result in iter_results(checked):
            if not any(r.key == key and r.result.name == result.name
                       and r.result.metric == result.metric for r in results):
                results.append(KeyedResult(key, result))
        checks.extend(inline_outcomes)
    test, checkpoint = identity_of(item, settings)
    extractions: list[Extraction] = item.stash.get(EXTRACTIONS_KEY, [])
    return TestRecord(nodeid=item.nodeid, test=test, checkpoint=checkpoint,
                      results=tuple(results), checks=tuple(checks), extractions=tuple(extractions))


class FairnessSession:
    """Per-run state: options, data settings, the baseline, and the records of the run."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.settings = Settings.from_config(config)
        self.fingerprints_dir = fingerprints_dir(config, self.settings.checkpoints)
        self.memory: dict[str, Features] = {}  # features by cache key, for this process
        self.progress = ProgressWriter(config)
        self.datasets: dict[str, FairnessDataset] = {}
        self.reference = ReferenceRecords(self.settings, self.fingerprints_dir, self.is_worker)
        self.records: list[TestRecord] = []  # what the run produced
        self.lines: list[str] = []  # what the end of the run wrote, for the summary
        self.baseline: Baseline | None = None
        self.baseline_source = ""
        self.family_tests: frozenset[str] = frozenset()  # under --fairness-family-alpha
        self.family_count = 0  # how many: on the xdist controller, from the workers' reports
        if self.settings.baseline_ref and self.settings.enabled:
            from pytest_fairness.baseline import resolve_baseline

            try:
                self.baseline, self.baseline_source = resolve_baseline(
                    self.settings.baseline_ref, self.settings.history_path, passed=True)
            except FairnessConfigError as error:
                raise pytest.UsageError(
                    f"--fairness-baseline={self.settings.baseline_ref}: {error}") from None

    @property
    def is_worker(self) -> bool:
        """True in a pytest-xdist worker, where nothing is printed or written."""
        return hasattr(self.config, "workerinput")

    # -- data and features --------------------------------------------------------------

    def dataset(self, name: str) -> FairnessDataset:
        """The dataset ``name`` from its configured root; skip (or fail) when it has none."""
        if name in self.datasets:
            return self.datasets[name]
        root = self.settings.roots.get(name)
        if root is None:
            message = (f"dataset {name!r} is not configured: pass --fairness-data {name}=PATH "
                       f"or add '{name}=PATH' to the {DATA_INI} ini option")
            if self.settings.strict:
                pytest.fail(message + " (--fairness-strict turns this skip into an error)",
                            pytrace=False)
            pytest.skip(message)
        from pytest_fairness.data import LOADERS

        return self.datasets.setdefault(name, LOADERS[name](root))

    def features(self, model: Any, item: pytest.Item) -> Callable[..., Any]:
        """The ``fairness_features`` function of ``item`` for ``model`` (run's settings)."""
        from pytest_fairness.provenance import features_function

        return features_function(self.settings, model, item, memory=self.memory,
                                 fingerprints_dir=self.fingerprints_dir)

    # -- one test -------------------------------------------------------------------------

    def check_test(self, item: pytest.Function, capture: Capture) -> None:
        """Record what the test returned; check it (markers, baseline, reference checkpoint).

        Raises a FairnessViolation for every broken limit and regression together, and a
        FairnessConfigError when the test returned no result, or nothing to check.
        """
        __tracebackhide__ = True
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
        item.stash[RECORD_KEY] = _record(item, self.settings, returned, capture.inline)
        outcomes, record, comparisons = self._judged(item, capture, returned, None)
        if self.settings.family_alpha is not None:  # again, at this test's share of alpha
            from pytest_fairness.family import level_of_test

            level = level_of_test(self.settings.family_alpha, self.family_tests, record)
            if level is not None:
                outcomes, record, comparisons = self._judged(item, capture, returned, level)
            outcomes = list(record.checks)  # inline verdicts too: deferred to here
        item.stash[RECORD_KEY] = record
        if not returned and item.get_closest_marker(MARKER_THRESHOLD) and not capture.inline:
            raise FairnessConfigError(
                f"{item.nodeid} has a fairness.threshold marker but returned nothing to check. "
                "Return the indicator's result (or a list or dict of results)."
            )
        from pytest_fairness.regression import CHECKPOINT_FIX, NOT_COMPARED, REFERENCE
        from pytest_fairness.report.terminal import regression_message, violation_message

        parts = []
        if any(not o.passed for o in outcomes):
            parts.append(violation_message(outcomes))
        if any(c.regressed for c in comparisons):
            parts.append(regression_message(comparisons, source=self.baseline_source))
        missed = [n for n in record.notes if n.startswith(NOT_COMPARED) and REFERENCE not in n]
        if missed:
            from pytest_fairness.baseline import not_compared_message

            parts.append(not_compared_message(missed, str(self.settings.baseline_ref)))
        if record.checkpoint_judged and any(c.regressed for c in record.checkpoint_comparisons):
            parts.append(regression_message(record.checkpoint_comparisons,
                                            against=REFERENCE + self.reference.name()))
        missed = [n for n in record.notes if n.startswith(NOT_COMPARED) and REFERENCE in n]
        if missed:
            parts.append("\n".join([f"{missed[0]}; {CHECKPOINT_FIX}", *missed[1:]]))
        if parts:
            raise FairnessViolation("\n\n".join(parts), outcomes)

    def _judged(self, item: pytest.Item, capture: Capture, returned: Sequence[Any],
                level: float | None) -> tuple[list[CheckOutcome], TestRecord, list[Comparison]]:
        """The markers' outcomes, the record and its comparisons, at ``level`` if given."""
        from pytest_fairness.checks import evaluate, rejudge

        outcomes: list[CheckOutcome] = []
        for mark in reversed(list(item.iter_markers(MARKER_THRESHOLD))):
            outcomes.extend(evaluate(capture.returned, validate_threshold(
                mark.args, mark.kwargs), level=level))
        inline = capture.inline if level is None else [
            (results, rejudge(checked, level)) for results, checked in capture.inline]
        record = _record(item, self.settings, returned, inline, outcomes)
        record, comparisons = self._compared(item, record, level)
        return outcomes, self._against_reference(item, record, level), comparisons

    def _compared(
        self, item: pytest.Item, record: TestRecord, level: float | None = None
    ) -> tuple[TestRecord, list[Comparison]]:
        """The record with its baseline comparisons (``--fairness-compare-fail``, markers)."""
        marks = [validate_regression(m.args, m.kwargs)
                 for m in item.iter_markers(MARKER_REGRESSION)]
        if not marks and not (self.settings.compare_fail and self.settings.baseline_ref):
            return record, []
        if not self.settings.baseline_ref and record.checkpoint is not None and (
                self.settings.reference_checkpoint is not None):
            return record, []  # compared with the reference checkpoint instead
        from pytest_fairness.regression import compare_test

        comparisons, notes = compare_test(
            self.baseline, record,
            compare_fail=self.settings.compare_fail, marks=marks, source=self.baseline_source,
            compare_confidence=self.settings.compare_confidence, level=level)
        return replace(record, regressions=tuple(comparisons),
                       notes=tuple(notes)), comparisons

    def _against_reference(self, item: pytest.Item, record: TestRecord,
                           level: float | None = None) -> TestRecord:
        """The record compared with its test at the reference checkpoint (another one's)."""
        settings = self.settings
        if settings.reference_checkpoint in (None, record.checkpoint) or not record.checkpoint:
            return record
        from pytest_fairness.regression import against_reference

        marks = [] if settings.baseline_ref else [validate_regression(m.args, m.kwargs)
                                                  for m in item.iter_markers(MARKER_REGRESSION)]
        return against_reference(
            record, self.reference.of(item, record.test), marks=marks,
            compare_fail=settings.compare_fail, compare_confidence=settings.compare_confidence,
            names=(self.reference.name(), self.reference.name(record.checkpoint)), level=level)

    def record_for(self, item: pytest.Item) -> TestRecord | None:
        """The record of a test that ran: checked, or with inline checks only; else None."""
        record = item.stash.get(RECORD_KEY, None)
        capture = item.stash.get(CAPTURE_KEY, None)
        if record is None and capture is not None and (
                capture.inline or item.stash.get(EXTRACTIONS_KEY, None)):
            # An inline check raised before the test returned: its results still compared,
            record = _record(item, self.settings, [], capture.inline)
            try:
                record, _ = self._compared(item, record)
            except FairnessError as error:  # a bad marker: the setup already reported it
                record = replace(record, notes=(str(error),))
        return record

    def collect(self, report: pytest.TestReport) -> None:
        """Keep the record a test's report carries (on the xdist controller, every worker's)."""
        data = getattr(report, REPORT_ATTRIBUTE, None)
        self.family_count = getattr(report, FAMILY_ATTRIBUTE, self.family_count)
        if report.when == "call" and data:
            from pytest_fairness.records import TestRecord

            self.records.append(TestRecord.from_dict({**data, "nodeid": report.nodeid,
                                                      "outcome": report.outcome}))

    def finish(self, exitstatus: int) -> int:
        """Record the run in the history, save the baseline, write the reports (controller).

        Returns the exit status: no result for the gates asked for, no baseline match, or
        checkpoints that gave the same features fail a passing run.
        """
        from pytest_fairness.metadata import collect_metadata
        from pytest_fairness.report.markdown import write_markdown

        records = self.records
        if not any(r.results for r in records):
            if not self.settings.gates:
                return exitstatus
            gates = self.settings.gates
            self.lines.append(
                f"fairness ERROR: {' and '.join(gates)} ask{'s' if len(gates) == 1 else ''} for "
                "a fairness verdict, but no fairness test of this run produced a result: nothing "
                "was compared or saved. Run the fairness tests (check -k, -m and the paths "
                "given) or drop those options.")
            return self._fail_run(exitstatus, pytest.ExitCode.USAGE_ERROR)
        exitstatus = self._check_baseline_match(exitstatus)
        from pytest_fairness.provenance import same_features_lines
        same = same_features_lines(records)  # the later test of each pair failed already
        self.lines.extend(same)
        if same:
            exitstatus = self._fail_run(exitstatus, pytest.ExitCode.TESTS_FAILED)
        checkpoints = self.reference.summary(records, self.lines)
        metadata = collect_metadata(
            records, root=self.config.rootpath, label=self.settings.label,
            checkpoints=list(self.config.getoption("fairness_checkpoint", None) or []),
            seed=self.settings.seed, started=self.settings.started, exitstatus=int(exitstatus),
        )
        if self.settings.baseline_ref:
            metadata["baseline"] = self.baseline_source
        if self.settings.family_alpha is not None:  # --fairness-family-alpha: α over T tests
            metadata["family"] = {"alpha": self.settings.family_alpha, "tests": self.family_count}
        self.config.hook.pytest_fairness_run_metadata(config=self.config, metadata=metadata)
        trends = None
        if self.settings.record_history:
            from pytest_fairness.history import write_run

            line, trends = write_run(self.settings.history_path, metadata, records,
                                     series=bool(self.settings.report_dir))
            self.lines.append(line)
        save = self.settings.save_baseline
        if save and int(exitstatus) != 0 and self.settings.baseline_ref and (
                Path(save).resolve() == Path(self.settings.baseline_ref).resolve()):
            self.lines.append(
                f"fairness baseline NOT saved to {save!r}: this run failed (exit status "
                f"{int(exitstatus)}) and compared with that file, which it keeps. Fix the "
                "failures, or save without comparing: pytest --fairness "
                f"--fairness-save-baseline {save}")
        elif save:
            from pytest_fairness.baseline import save_baseline

            try:
                path = save_baseline(save, records, metadata={
                    k: metadata.get(k) for k in ("label", "checkpoint", "git_commit")
                })
            except (OSError, FairnessError) as error:
                self.lines.append("fairness baseline NOT saved to "
                                  f"{str(self.settings.save_baseline)!r}: {error}. Pass a file "
                                  "you can write.")
            else:
                self.lines.append(f"fairness baseline saved: {path}")
        if self.settings.report_dir:
            from pytest_fairness.report.html import write_reports

            self.lines.append(write_reports(records, self.settings.report_dir, run=metadata,
                                            checkpoints=checkpoints, trends=trends))
        self.lines.extend(write_markdown(self.settings.markdown, records, checkpoints))
        return exitstatus

    def _check_baseline_match(self, exitstatus: int) -> int:
        """What the baseline compared (a summary line); no match, or a gap, fails the run.

        No match is a usage error naming a few ids of each side and the likely cause; a
        gated result that was not compared (its test failed already) is named.
        """
        if self.baseline is None:
            return exitstatus
        from pytest_fairness.baseline import few_ids, match_baseline, unmatched_message
        from pytest_fairness.regression import NOT_COMPARED, REFERENCE
        from pytest_fairness.report.terminal import regression_tally

        if self.baseline.metadata.get("chosen"):
            self.lines.append(f"fairness baseline: --fairness-baseline "
                              f"{self.baseline.metadata['chosen']}")
        ran = [(r.nodeid, r.test) for r in self.records if r.results]
        missed = [n.removeprefix(NOT_COMPARED) for r in self.records for n in r.notes
                  if n.startswith(NOT_COMPARED) and REFERENCE not in n]
        if not ran and not missed:
            return exitstatus
        matched, unmatched = match_baseline(self.baseline, ran)
        if ran and not matched:
            args = list(self.config.invocation_params.args)
            message = unmatched_message(
                self.baseline, [nodeid for nodeid, _ in ran], source=self.baseline_source,
                rootdir=str(self.config.rootpath), spaced="--fairness-baseline" in args,
            )
            self.lines.append(f"fairness baseline ERROR: {message}")
            return self._fail_run(exitstatus, pytest.ExitCode.USAGE_ERROR)
        comparisons = [c for r in self.records for c in r.regressions]
        compared = {(c.test, c.result) for c in comparisons}
        tests = len({test for test, _ in compared})
        line = (f"fairness baseline {self.baseline_source}: compared {len(compared)} result"
                f"{'s' * (len(compared) != 1)} of {tests} test{'s' * (tests != 1)}")
        line += f"; {regression_tally(comparisons)}" if comparisons else (
            "" if missed else " (nothing is gated: pass --fairness-compare-fail TOL or mark "
            "tests with fairness.no_regression)")
        if missed:
            line += f"; not compared: {few_ids(missed)}"
            exitstatus = self._fail_run(exitstatus, pytest.ExitCode.TESTS_FAILED)
        named = {m.partition(" :: ")[0] for m in missed}
        if [t for t in unmatched if t not in named]:
            line += f"; not in the baseline: {few_ids([t for t in unmatched if t not in named])}"
        self.lines.append(line)
        return exitstatus

    @staticmethod
    def _fail_run(exitstatus: int, status: pytest.ExitCode) -> int:
        """The run's exit status with ``status`` added, unless it already fails otherwise."""
        return max(int(exitstatus), int(status)) if int(exitstatus) in (0, 1) else exitstatus

    def close(self) -> None:
        """Remove the folder the run's extractions met in (controller)."""
        if self.fingerprints_dir is not None and not self.is_worker:
            shutil.rmtree(self.fingerprints_dir, ignore_errors=True)


SESSION_KEY: Final = pytest.StashKey[FairnessSession]()
CAPTURE_KEY: Final = pytest.StashKey[Capture]()
RECORD_KEY: Final = pytest.StashKey["TestRecord"]()
MARKER_ERROR_KEY: Final = pytest.StashKey[BaseException]()  # a marker's error, shown plainly


def session_of(config: pytest.Config) -> FairnessSession:
    """The run's :class:`FairnessSession`."""
    return config.stash[SESSION_KEY]
