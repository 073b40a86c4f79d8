"""The timer the benchmarks share: the median of repeated calls, and the last result."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def median_time(fn: Callable[[], Any], repeat: int, *,
                warm_up: bool = False) -> tuple[float, Any]:
    """Median seconds of ``repeat`` calls of ``fn`` (after one untimed call with
    ``warm_up``), and what the last call returned."""
    if warm_up:
        fn()
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out
