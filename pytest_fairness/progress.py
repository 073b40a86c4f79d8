"""Extraction progress through pytest's terminal writer, without ``-s``.

:class:`ProgressWriter` is the sink (:func:`pytest_fairness.features.progress_to`) of every
extraction a fairness test runs; under pytest-xdist a worker attaches its lines to the
test's report (:data:`PROGRESS_ATTRIBUTE`) and the controller prints them.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Final

import pytest

if TYPE_CHECKING:
    from pytest_fairness.features import ExtractionProgress

__all__ = ["LIVE_INTERVAL", "PROGRESS_ATTRIBUTE", "ProgressWriter"]

#: Name of the report attribute that carries a worker's finished-extraction lines.
PROGRESS_ATTRIBUTE: Final = "fairness_progress"
#: Seconds between two rewrites of the live progress line.
LIVE_INTERVAL: Final = 0.1


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
        from pytest_fairness.features.progress import progress_line

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
