"""What the fuzz suites share: the hypothesis run, the table of outcomes, the slow tier."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st


def fuzz(attempt: Callable[[Any], str], failures: list[str], examples: int, *,
         explore: bool = False, shrink: bool = True) -> None:
    """Draw ``examples`` damaged inputs into ``attempt``; fail on a traceback or wrong result.

    Under pytest the inputs are the same every run (``derandomize``), so CI never fails on
    a draw it has not seen before; ``explore=True`` (the command line) draws new ones.
    ``shrink=False`` reports the first failing input as drawn (stores take minutes to shrink).
    """
    phases = tuple(Phase) if shrink else (Phase.explicit, Phase.reuse, Phase.generate)

    @settings(max_examples=examples, deadline=None, database=None, derandomize=not explore,
              suppress_health_check=list(HealthCheck), phases=phases)
    @given(st.data())
    def run(data: st.DataObject) -> None:
        outcome = attempt(data)
        assert outcome not in ("traceback", "silent wrong"), failures[-1]

    run()


def table(counts: Mapping[str, Counter[str]], outcomes: Sequence[str],
          names: Iterable[str] | None = None) -> str:
    """The outcome counts of each reader as a Markdown table."""
    rows = [f"| reader | {' | '.join(outcomes)} |", "|---" * (len(outcomes) + 1) + "|"]
    for name in names or list(counts):
        rows.append(f"| {name} | " + " | ".join(str(counts[name][o]) for o in outcomes) + " |")
    return "\n".join(rows)


def slow_tier(fuzz_one: Callable[[str, int], None], counts: Mapping[str, Counter[str]],
              outcomes: Sequence[str], failures: Mapping[str, list[str]], examples: int,
              capsys: pytest.CaptureFixture[str]) -> None:
    """Fuzz every reader afresh with ``examples`` inputs, print the table, fail on any."""
    for name in counts:
        counts[name].clear()
    failed = []
    for name in counts:
        try:
            fuzz_one(name, examples)
        except AssertionError:
            failed.append(name)
    with capsys.disabled():
        print("\n" + table(counts, outcomes))
    assert not failed, {name: failures[name][-1] for name in failed}
