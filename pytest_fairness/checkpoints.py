"""The reference checkpoint: each test's record there, and the others compared with it.

With several ``--fairness-checkpoint`` the reference checkpoint's tests run first (it is
parametrized first). Each keeps its record (:meth:`ReferenceRecords.keep`), in the process
and, under pytest-xdist, in the run's shared folder; the same test at another checkpoint
is compared with it when it finishes (:func:`~pytest_fairness.regression.against_reference`),
so a regression fails that test.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_fairness.provenance import identity_of, publish_reference, read_reference

if TYPE_CHECKING:
    from pytest_fairness.records import Comparison, TestRecord
    from pytest_fairness.settings import Settings

__all__ = ["ReferenceRecords"]

class ReferenceRecords:
    """The records of the reference checkpoint's tests, kept for the other checkpoints'."""

    def __init__(self, settings: Settings, shared: Path | None, is_worker: bool) -> None:
        self.settings = settings
        self.fingerprints_dir = shared  # the run's shared folder (2+ checkpoints)
        self.is_worker = is_worker
        # each test's record at the reference checkpoint (or why it has none), by test id
        self.references: dict[str, TestRecord | str] = {}
        self._reference_tests: set[str] | None = None  # the tests that run there

    def name(self, checkpoint: str | None = None) -> str:
        """The id of ``checkpoint`` (default: the reference one) in test ids and reports."""
        settings = self.settings
        index = settings.checkpoints.index(checkpoint or str(settings.reference_checkpoint))
        return settings.checkpoint_ids[index]

    def of(self, item: pytest.Item, test: str) -> TestRecord | str:
        """``test``'s record at the reference checkpoint, or why there is none.

        A serial run has it already (the reference checkpoint's tests run first); a
        pytest-xdist worker waits for the file another worker writes, up to a bound.
        """
        if test in self.references:
            return self.references[test]
        if self._reference_tests is None:
            reference = self.settings.reference_checkpoint
            self._reference_tests = {
                t for t, c in (identity_of(i, self.settings) for i in item.session.items)
                if c == reference}
        if test not in self._reference_tests:
            return ("its test did not run: deselected or not collected; run it too, check -k, "
                    "-m and the paths given")
        if not self.is_worker or self.fingerprints_dir is None:
            return "its test had not run before this one"
        kept = self.references[test] = read_reference(self.fingerprints_dir, test=test)
        return kept

    def keep(self, item: pytest.Item, record: TestRecord | None,
             report: pytest.TestReport) -> None:
        """Keep a test's record at the reference checkpoint for the other checkpoints' tests.

        Called when the test's outcome is known (its call, or a setup that did not pass);
        under pytest-xdist the record goes to the run's shared folder as well.
        """
        test, checkpoint = identity_of(item, self.settings)
        if checkpoint is None or checkpoint != self.settings.reference_checkpoint or (
                test in self.references):
            return
        done = "was skipped" if report.skipped else f"{report.outcome}"
        where = " in its setup" if report.when == "setup" else ""
        why = f"its test {done}{where} before it returned a result"
        kept = record if record is not None and record.results else why
        self.references[test] = kept
        if self.is_worker and self.fingerprints_dir is not None:
            publish_reference(self.fingerprints_dir, test=test, kept=kept)

    def summary(self, records: Sequence[TestRecord], lines: list[str]
                ) -> list[tuple[Comparison, bool]]:
        """The records' comparisons with the reference checkpoint, with summary lines.

        Each is ``(comparison, judged)``: judged by ``--fairness-compare-fail`` or the test's
        ``no_regression`` (a regression failed its test), else shown without a verdict.
        """
        if self.settings.reference_checkpoint is None:
            return []
        from pytest_fairness.report.terminal import checkpoint_lines

        given = {c: i for i, c in enumerate(self.settings.checkpoints)}
        ordered = sorted(records, key=lambda r: (r.test, given.get(str(r.checkpoint), 0)))
        pairs = [(c, r.checkpoint_judged) for r in ordered for c in r.checkpoint_comparisons]
        if pairs:
            lines.extend(checkpoint_lines([c for c, _ in pairs], reference=self.name(None),
                                          judged=[judged for _, judged in pairs]))
        return pairs
