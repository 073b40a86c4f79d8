"""Extraction progress: events, where they go, and the stand-alone bar on stderr."""

from __future__ import annotations

import contextvars
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, final

from pytest_fairness.errors import FairnessConfigError, own_error

__all__ = ["ExtractionProgress", "Progress", "ProgressSink", "progress_line", "progress_to"]

__tracebackhide__ = own_error


@final
@dataclass(frozen=True)
class ExtractionProgress:
    """Where one extraction stands; sent when it starts, after every batch, and at its end.

    Parameters
    ----------
    dataset : str
        The dataset's name.
    perturbation : str or None
        The perturbation applied (``"gaussian_blur 0.5"``), or None for clean images.
    done, total : int
        Images extracted so far, and in all.
    elapsed : float
        Seconds since the extraction started.
    finished : bool
        True on an extraction's last event.

    Examples
    --------
    >>> p = ExtractionProgress("faces", None, done=50, total=100, elapsed=2.0)
    >>> p.rate, p.eta
    (25.0, 2.0)
    """

    dataset: str
    perturbation: str | None
    done: int
    total: int
    elapsed: float
    finished: bool = False

    @property
    def milestone(self) -> bool:
        """The start or the end of an extraction: what a log without a live line shows."""
        return self.finished or not self.done

    @property
    def rate(self) -> float | None:
        """Images per second so far (None before the first batch)."""
        return self.done / self.elapsed if self.done and self.elapsed > 0 else None

    @property
    def eta(self) -> float | None:
        """Seconds left at the current rate (None before the first batch)."""
        rate = self.rate
        return None if rate is None else max(self.total - self.done, 0) / rate


#: Receives the :class:`ExtractionProgress` events of extractions.
ProgressSink = Callable[[ExtractionProgress], None]

_SINK: contextvars.ContextVar[ProgressSink | None] = contextvars.ContextVar(
    "pytest_fairness_progress", default=None
)


@contextmanager
def progress_to(sink: ProgressSink | None) -> Iterator[None]:
    """Send the progress of extractions run in the block (``progress=None``) to ``sink``.

    The pytest plugin wraps each fairness test in it: progress reaches pytest's terminal.
    """
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


def _stderr_bar(event: ExtractionProgress) -> None:
    """The stand-alone progress bar: one line on stderr, rewritten in place."""
    width = 30
    filled = int(width * event.done / max(event.total, 1))
    what = event.dataset + (f" ({event.perturbation})" if event.perturbation else "")
    rate = "" if event.rate is None else f" ({event.rate:.0f}/s)"
    sys.stderr.write(f"\rfairness: extracting {what} [{'#' * filled}{'.' * (width - filled)}] "
                     f"{event.done}/{event.total} images{rate}")
    if event.finished:
        sys.stderr.write("\n")
    sys.stderr.flush()


class Progress:
    """Sends the :class:`ExtractionProgress` of one extraction to its sink (``progress=``)."""

    def __init__(self, dataset: str, perturbation: Any, total: int,
                 progress: bool | ProgressSink | None) -> None:
        sink: ProgressSink | None
        if progress is None:
            sink = _SINK.get() or (_stderr_bar if sys.stderr.isatty() else None)
        elif progress is True:
            sink = _stderr_bar
        elif progress is False:
            sink = None
        elif callable(progress):
            sink = progress
        else:
            raise FairnessConfigError(
                "progress must be True, False, None or a callable taking ExtractionProgress; "
                f"got progress={progress!r}."
            )
        self.sink = sink
        self.dataset, self.total = dataset, total
        self.perturbation = _perturbation_label(perturbation)
        self.done = 0
        self.start = time.perf_counter()

    def _send(self, finished: bool = False) -> None:
        if self.sink is not None:
            self.sink(ExtractionProgress(self.dataset, self.perturbation, self.done, self.total,
                                         time.perf_counter() - self.start, finished))

    def begin(self) -> None:
        """The extraction starts (a forward pass will run)."""
        self.done = 0
        self.start = time.perf_counter()
        self._send()

    def update(self, n: int) -> None:
        """``n`` more images are done."""
        self.done += n
        self._send()

    def close(self) -> None:
        """The extraction ended."""
        self._send(finished=True)


def _perturbation_label(perturbation: Any) -> str | None:
    """How progress lines name a perturbation: ``"gaussian_blur 0.5"``."""
    if perturbation is None:
        return None
    if isinstance(perturbation, tuple) and perturbation and isinstance(perturbation[0], str):
        label = " ".join([perturbation[0], *(f"{v:g}" if isinstance(v, float) else str(v)
                                             for v in perturbation[1:2])])
        if len(perturbation) == 3 and perturbation[2]:
            label += f" seed={perturbation[2]}"
        return label
    text = repr(perturbation)
    if " at 0x" in text or len(text) > 60:
        text = getattr(perturbation, "__name__", type(perturbation).__name__)
    return text


def _seconds(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes} min {rest:02d} s"


def progress_line(event: ExtractionProgress) -> str:
    """One line of extraction progress: what is extracted, how far, how fast, how long left."""
    what = event.dataset + (f" ({event.perturbation})" if event.perturbation else "")
    rate = event.rate
    speed = "" if rate is None else f"{rate:.3g} images/s"
    if event.finished:
        if event.done < event.total:
            return (f"fairness: extraction of {what} stopped after {event.done}/{event.total} "
                    f"images ({_seconds(event.elapsed)})")
        return (f"fairness: extracted {what}: {event.total} images in "
                f"{_seconds(event.elapsed)}" + (f" ({speed})" if speed else ""))
    if not event.done:
        return f"fairness: extracting {what}: {event.total} images"
    eta = event.eta
    return (f"fairness: extracting {what}: {event.done}/{event.total} images, {speed}"
            + ("" if eta is None else f", ETA {_seconds(eta)}"))
