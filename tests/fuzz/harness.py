"""What the fuzz suites share: the table of outcomes and the slow tier's run over readers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence


def table(counts: Mapping[str, Counter[str]], outcomes: Sequence[str],
          names: Iterable[str] | None = None) -> str:
    """The outcome counts of each reader as a Markdown table."""
    rows = [f"| reader | {' | '.join(outcomes)} |", "|---" * (len(outcomes) + 1) + "|"]
    for name in names or list(counts):
        rows.append(f"| {name} | " + " | ".join(str(counts[name][o]) for o in outcomes) + " |")
    return "\n".join(rows)


def run_every_reader(fuzz: Callable[[str, int], None], counts: Mapping[str, Counter[str]],
                     examples: int) -> list[str]:
    """Fuzz every reader afresh with ``examples`` inputs; return the names that failed."""
    for name in counts:
        counts[name].clear()
    failed = []
    for name in counts:
        try:
            fuzz(name, examples)
        except AssertionError:
            failed.append(name)
    return failed
