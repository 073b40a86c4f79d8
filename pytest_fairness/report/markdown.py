r"""A short markdown summary of a run, for a pull request (``--fairness-markdown FILE``).

The verdict, the failing tests with the group table of each failing result, and the
regressions with their intervals, as link-free GitHub-flavoured tables that render on GitHub
and GitLab: every cell escapes markdown's punctuation (``|`` as ``\|``, ``<`` as ``\<``)
and control characters (:func:`~pytest_fairness.errors.plain`), so a label renders as the
text it is, never as a link, HTML or a broken table.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_fairness.errors import plain

if TYPE_CHECKING:
    from pytest_fairness.records import Comparison, TestRecord
    from pytest_fairness.results import IndicatorResult

__all__ = ["STEP_SUMMARY", "cell", "markdown_summary", "markdown_table", "write_markdown"]

#: The file GitHub Actions shows on the job's summary page; the summary is appended to it too.
STEP_SUMMARY = "GITHUB_STEP_SUMMARY"
#: Rows of one table at most (a pull-request comment holds 65,536 characters).
MAX_ROWS = 40
# Markdown's punctuation; ``_`` only where it could start or end emphasis (not in snake_case).
_SPECIAL = re.compile(r"[\\`*<>\[\]|&~!#]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


def cell(text: object) -> str:
    r"""``text`` as the content of a table cell: plain, with markdown punctuation escaped.

    Examples
    --------
    >>> cell("a|b <i>")
    'a\\|b \\<i\\>'
    """
    return _SPECIAL.sub(lambda match: "\\" + match.group(), plain(str(text)))


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """A GitHub-flavoured table (header, separator, rows), each cell escaped; MAX_ROWS rows."""
    rows = list(rows)
    lines = [f"| {' | '.join(map(cell, header))} |", f"|{'---|' * len(header)}"]
    lines.extend(f"| {' | '.join(cell(c) for c in row)} |" for row in rows[:MAX_ROWS])
    if len(rows) > MAX_ROWS:
        lines.extend(["", f"… and {len(rows) - MAX_ROWS} more (the run's log has them all)."])
    return lines


def _failures(records: Sequence[TestRecord]) -> tuple[list[list[str]], list[list[str]]]:
    """The failing tests' rows (what broke), and each failing result's group table."""
    from pytest_fairness.report.terminal import checks_of, format_number, limit_name, observed_text

    rows, tables = [], []
    for record in records:
        if record.outcome != "failed":
            continue
        broken = [c for c in record.checks if not c.passed]
        for c in broken:
            bound = "≤" if c.limit.startswith("max") else "≥"
            rows.append([record.nodeid, c.label, limit_name(c), observed_text(c),
                         f"{bound} {format_number(c.threshold)}"])
        for r in (r for r in record.regressions if r.regressed):
            where = f" ({r.where})" if r.where else ""
            rows.append([record.nodeid, r.result, f"no regression ({r.metric}{where})",
                         f"{format_number(r.now)} (was {format_number(r.baseline)})",
                         f"worse by ≤ {format_number(r.tolerance)}"])
        if not rows or rows[-1][0] != record.nodeid:
            rows.append([record.nodeid, ", ".join(r.result.name for r in record.results) or "-",
                         "the test failed: see its log", "", ""])
        for keyed in record.results:
            for at in dict.fromkeys(c.at for c in checks_of(keyed, broken)):
                result = keyed.result
                shown = result if at is None or at == result.at else result.select(at)
                key = f"{keyed.key}: " if keyed.key is not None else ""
                tables.append([f"{record.nodeid} :: {key}{shown.name} ({shown.metric})"
                               + ("" if shown.at is None else f" at {shown.at:g}"),
                               *_group_rows(shown)])
    return rows, tables


def _group_rows(result: IndicatorResult) -> list[str]:
    """The group table of one result: group, n, value, Δ best (worst and excluded named)."""
    from pytest_fairness.report.terminal import format_number, group_deltas

    _, worst, deltas = group_deltas(result)
    rows = []
    for g, delta in zip(result.groups, deltas):
        label = g.label + (f" (excluded: n < {result.min_group_size})" if g.excluded else
                           " (worst)" if g is worst and len(result.included_groups) > 1 else "")
        rows.append([label, str(g.n), format_number(g.value), delta])
    return markdown_table(["group", "n", "value", "Δ best"], rows) if rows else []


def _regression_rows(records: Sequence[TestRecord],
                     checkpoints: Sequence[tuple[Comparison, bool]]) -> list[list[str]]:
    """The regressions: each baseline and judged checkpoint comparison that got worse."""
    from pytest_fairness.report.terminal import fmt_signed, format_number

    found = [(c, "baseline") for r in records for c in r.regressions if c.regressed]
    found += [(c, "reference checkpoint") for c, judged in checkpoints if judged and c.regressed]
    rows = []
    for c, against in found:
        change = "n/a" if c.worse_by is None else f"{fmt_signed(c.worse_by)} worse"
        interval = "" if c.interval is None else (
            f"[{fmt_signed(c.interval[0])}, {fmt_signed(c.interval[1])}]")
        paired = {True: "yes", False: "no", None: ""}[c.paired]
        where = f" ({c.where})" if c.where else ""
        rows.append([c.test, c.result, against, c.metric + where,
                     f"{format_number(c.baseline)} → {format_number(c.now)}",
                     f"{change} (tolerance {format_number(c.tolerance)})", interval, paired])
    return rows


def markdown_summary(records: Sequence[TestRecord],
                     checkpoints: Sequence[tuple[Comparison, bool]] = ()) -> str:
    """The run's summary as markdown: verdict, failing tests and their groups, regressions.

    ``checkpoints``: each comparison with the reference checkpoint, and whether it is judged
    (only judged regressions are listed).
    """
    from pytest_fairness.report.terminal import limit_name, observed_text

    failed = sum(r.outcome == "failed" for r in records)
    passed = sum(r.outcome == "passed" for r in records)
    regressions = _regression_rows(records, checkpoints)
    compared = sum(len(r.regressions) for r in records) + sum(j for _, j in checkpoints)
    verdict = "failed" if failed or regressions else "passed"
    tally = f"{failed} failed, {passed} passed" + (
        f", {len(records) - failed - passed} other" if len(records) > failed + passed else "")
    results = sum(len(r.results) for r in records)
    lines = [f"## Fairness: {verdict}", "",
             f"{tally} of {len(records)} fairness test{'s' * (len(records) != 1)}; "
             f"{results} result{'s' * (results != 1)}"
             + (f"; {len(regressions) or 'no'} regression{'s' * (len(regressions) > 1)} in "
                f"{compared} comparison{'s' * (compared != 1)}" if compared else "") + "."]
    levels = [x.level for r in records for x in r.checks if x.level] + [
        c.level for r in records for c in (*r.regressions, *r.checkpoint_comparisons) if c.level]
    if levels:  # --fairness-family-alpha
        lines.extend(["", f"Family-wise control: {len(levels)} interval-judged "
                      f"check{'s' * (len(levels) != 1)} at level {min(levels):.6g}"
                      + (f" to {max(levels):.6g}" if max(levels) != min(levels) else "")
                      + " (Bonferroni over the run; `--fairness-family-alpha`)."])
    rows, tables = _failures(records)
    if rows:
        lines.extend(["", "### Failing tests", "",
                      *markdown_table(["test", "indicator", "what broke", "observed", "limit"],
                                      rows)])
    for title, *table in tables[:MAX_ROWS]:
        lines.extend(["", f"**{cell(title)}**", "", *table])
    undecided = [[r.nodeid, c.label, limit_name(c), observed_text(c),
                  "passed" if c.passed else "failed", c.decide]
                 for r in records for c in r.checks if c.verdict == "inconclusive"]
    if undecided:
        lines.extend(["", "### Inconclusive (the interval straddles the limit)", "",
                      *markdown_table(["test", "indicator", "limit", "observed", "counted as",
                                       "what would decide it"], undecided)])
    if regressions:
        lines.extend(["", "### Regressions", "", *markdown_table(
            ["test", "result", "compared with", "metric", "baseline → now", "change",
             "interval", "paired"], regressions)])
    return "\n".join(lines) + "\n"


def write_markdown(path: str | None, records: Sequence[TestRecord],
                   checkpoints: Sequence[tuple[Comparison, bool]] = (),
                   environ: Mapping[str, str] = os.environ) -> list[str]:
    """Write the summary to ``path``, and append it to ``$GITHUB_STEP_SUMMARY`` if set.

    Returns the lines for the end of the run (where it was written, or why not); nothing
    when ``path`` is None.
    """
    if path is None:
        return []
    from pytest_fairness.files import atomic_write_text

    text = markdown_summary(records, checkpoints)
    lines = []
    try:
        lines.append(f"fairness markdown summary: {atomic_write_text(path, text)}")
    except OSError as error:
        lines.append(f"fairness markdown summary NOT written to {path!r}: {error}. Pass a file "
                     "you can write, e.g. --fairness-markdown fairness-summary.md.")
    step = environ.get(STEP_SUMMARY)
    if step:
        try:
            with Path(step).open("a", encoding="utf-8") as stream:
                stream.write(text + "\n")
        except OSError as error:
            lines.append(f"fairness markdown summary NOT appended to ${STEP_SUMMARY} "
                         f"({step!r}): {error}.")
    return lines
