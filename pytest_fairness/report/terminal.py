"""Render results, verdicts and baseline comparisons as lines of text (no terminal I/O here)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from pytest_fairness.errors import plain
from pytest_fairness.indicators import headline
from pytest_fairness.options import LIMITS
from pytest_fairness.records import CheckOutcome, Comparison, KeyedResult, TestRecord
from pytest_fairness.results import GroupStat, IndicatorResult, group_label

__all__ = [
    "change_text", "checkpoint_lines", "checkpoint_verdict", "checks_of", "comparison_group_lines",
    "comparison_group_rows", "comparison_lines", "comparison_text", "fmt_signed", "format_number",
    "family_lines", "group_deltas", "group_table_lines", "inconclusive_lines", "interval_text",
    "limit_name", "observed_text", "pair_text",
    "regression_message", "regression_tally", "report_section", "result_label", "result_lines",
    "section_text", "shows_gap", "summary_lines", "text_table", "value_text", "verdict_text",
    "violation_message",
]


def _text(lines: Iterable[str]) -> str:
    """Lines, each escaped (:func:`plain`), as one text."""
    return "\n".join(map(plain, lines))


def format_number(x: float | None, digits: int = 4) -> str:
    """Format a float compactly; NaN and None become ``n/a``."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if isinstance(x, float) and math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.3e}"


def pair_text(interval: Sequence[float] | None) -> str:
    """An interval as ``[low, high]``; empty for None."""
    if interval is None:
        return ""
    return f"[{format_number(interval[0])}, {format_number(interval[1])}]"


def text_table(header: Sequence[str], rows: Iterable[Sequence[str]],
               indent: str = "  ") -> list[str]:
    """A plain-text table: the first and last columns left-aligned, the others right-aligned."""
    rows = [list(header), *([plain(c) for c in r] for r in rows)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = []
    for row in rows:
        last = len(row) - 1
        cells = [c.ljust(w) if i in (0, last) else c.rjust(w)
                 for i, (c, w) in enumerate(zip(row, widths))]
        lines.append(indent + "  ".join(cells).rstrip())
    return lines


def shows_gap(result: IndicatorResult) -> bool:
    """Whether reports show the gap, best and worst group: groups compared, two or more included."""
    return headline(result.name).has_gap and len(result.included_groups) >= 2


def headline_text(result: IndicatorResult) -> str:
    """The number the result is judged on, with its interval and secondary stats."""
    head = headline(result.name)
    number = head.read(result.value, result.gap if len(result.included_groups) >= 2 else None)
    interval = result.intervals.get("gap" if head.metric == "gap" else head.metric)
    text = f"{head.label} {format_number(number)}"
    if interval is not None and not head.magnitude:
        text += f" {pair_text(interval)}"
    extra = [f"{name} {format_number(result.stats[name])}" for name in head.secondary
             if name in result.stats]
    return ", ".join([text, *extra])


def group_deltas(result: IndicatorResult) -> tuple[GroupStat | None, GroupStat | None, list[str]]:
    """Best and worst group (where groups are compared) and each group's Δ to the best."""
    compared = headline(result.name).has_gap  # a gap, a best and a worst group mean something
    best = result.best_group if compared else None
    return best, result.worst_group if compared else None, [
        "" if best is None or g.excluded or math.isnan(g.value) else f"{g.value - best.value:+.4g}"
        for g in result.groups]


def group_table_lines(result: IndicatorResult, highlight: str = "") -> list[str]:
    """The per-group table: group, n, value, Δ to the best group (if compared), interval."""
    if not result.groups:
        return []
    compared = headline(result.name).has_gap
    _, worst, deltas = group_deltas(result)
    stat_names = sorted({k for g in result.groups for k in g.stats})
    with_interval = any(g.interval is not None for g in result.groups)
    value_label = headline(result.name).group_value
    header = ["set" if value_label else "group", "n", value_label or result.metric,
              *(["Δ best"] if compared else []), *(["interval"] if with_interval else []),
              *stat_names, ""]
    rows = []
    for g, delta in zip(result.groups, deltas):
        marker = ""
        if worst is not None and g is worst and len(result.included_groups) > 1:
            marker = "  ← worst"
        if highlight and highlight == f"group {g.label}":
            marker = "  ← violates"
        excluded = f"excluded (n < {result.min_group_size})" if g.excluded else ""
        rows.append([g.label, str(g.n), format_number(g.value), *([delta] if compared else []),
                     *([pair_text(g.interval)] if with_interval else []),
                     *(format_number(g.stats.get(s)) for s in stat_names), excluded + marker])
    return text_table(header, rows)


def result_label(result: IndicatorResult, key: str | None = None) -> str:
    """``key: indicator (metric) at 0.5``: a result's title in every report."""
    where = f" at {result.at:g}" if result.at is not None else ""
    text = f"{result.name} ({result.metric}){where}"
    return text if key is None else f"{key}: {text}"


def value_text(result: IndicatorResult) -> str:
    """``value 0.7 [0.6, 0.8]``: the result's value with its interval, if any."""
    interval = result.intervals.get("value")
    return f"value {format_number(result.value)}" + ("" if interval is None else
                                                      f" {pair_text(interval)}")


def result_lines(result: IndicatorResult, *, details: bool = True) -> list[str]:
    """A result in a few lines: headline, gap, stats, and (``details``) groups and notes."""
    lines = [f"{result_label(result)}: {value_text(result)}"]
    if shows_gap(result):
        gap = f"gap {format_number(result.gap)}"
        if "gap" in result.intervals:
            gap += f" {pair_text(result.intervals['gap'])}"
        best, worst = result.best_group, result.worst_group
        assert best is not None and worst is not None
        lines.append(f"  {gap}, ratio {format_number(result.ratio)}; best {best.label} "
                     f"({format_number(best.value)}), worst {worst.label} "
                     f"({format_number(worst.value)})")
    if result.stats:
        shown = ", ".join(f"{k} {format_number(v)}" for k, v in result.stats.items())
        lines.append(f"  stats: {shown}")
    if details:
        lines.extend(group_table_lines(result))
        lines.extend(f"  note: {note}" for note in result.notes)
    return list(map(plain, lines))


def observed_text(outcome: CheckOutcome) -> str:
    """The number a verdict bounds, with its interval and where: ``0.2 [0.1, 0.3] (group a)``."""
    text = "NaN" if math.isnan(outcome.observed) else format_number(outcome.observed)
    if outcome.interval is not None:
        text += f" {pair_text(outcome.interval)}" + (
            "" if outcome.level is None else f" (level {outcome.level:.6g}: family-wise)")
    return text + (f" ({plain(outcome.where)})" if outcome.where else "")


def _observed(outcome: CheckOutcome) -> str:
    return f"{outcome.limit.split('_', 1)[1].replace('_', ' ')} {observed_text(outcome)}"


def _needs(limit: str) -> str:
    return "<=" if LIMITS[limit].bound == "max" else ">="


def verdict_text(outcome: CheckOutcome) -> str:
    """``ok``, ``FAIL`` or ``INCONCLUSIVE`` (the interval straddles the limit)."""
    return {"pass": "ok", "fail": "FAIL"}.get(outcome.verdict, "INCONCLUSIVE")


def _verdict_line(outcome: CheckOutcome) -> str:
    status = verdict_text(outcome).ljust(4)
    confidence = "" if outcome.confidence == "point" else f", confidence={outcome.confidence}"
    return (f"{status} {outcome.limit}={format_number(outcome.threshold)}{confidence}: "
            f"{_observed(outcome)}, needs {_needs(outcome.limit)} "
            f"{format_number(outcome.threshold)}" + (f"; {outcome.decide}" if outcome.decide
                                                     else ""))


def violation_message(outcomes: Sequence[CheckOutcome]) -> str:
    """The failure message: every broken limit, then each violating result in detail."""
    failed = [o for o in outcomes if not o.passed]
    broken = "; ".join(f"{o.limit}={format_number(o.threshold)} ({_observed(o)})" for o in failed)
    lines = [f"{len(failed)} fairness limit{'s' if len(failed) > 1 else ''} broken: {broken}"]
    # Each result slice once, however many limits or markers checked it.
    for ident in dict.fromkeys(map(_slice_id, outcomes)):
        mine = [o for o in outcomes if _slice_id(o) == ident]
        if all(o.passed for o in mine):
            continue
        result = mine[0].result
        assert result is not None, "a violation is shown from the outcomes as checked"
        lines.append("")
        shown = mine[0].label
        if headline(result.name).metric != "gap":
            shown += f": {headline_text(result)}"
        lines.append(shown)
        lines.extend(f"  {_verdict_line(o)}" for o in mine)
        highlight = next((o.where for o in mine if not o.passed and o.where), "")
        lines.extend(group_table_lines(result, highlight))
        lines.extend(f"  note: {note}" for note in result.notes)
    return _text(lines)


def _slice_id(outcome: CheckOutcome) -> tuple[Any, ...]:
    return (outcome.key, outcome.indicator, outcome.metric, outcome.at)


def checks_of(keyed: KeyedResult, checks: Sequence[CheckOutcome]) -> list[CheckOutcome]:
    """The verdicts of one result: its key, indicator, and metric or a slice's (``at=5``)."""
    result = keyed.result
    metrics = {result.metric, *(s.metric for s in result.slices)}
    return [c for c in checks
            if c.key == keyed.key and c.indicator == result.name and c.metric in metrics]


def limit_name(check: CheckOutcome) -> str:
    """``max_gap``, or ``max_gap(TPR)`` for a limit on a named metric (tables: no ``where``)."""
    return f"{check.limit}({check.reads})" if check.reads else check.limit


def _limit_texts(checks: Iterable[CheckOutcome]) -> list[str]:
    """``max_gap=0.1`` (and ``FAIL``) per verdict; a marker and an inline check that agree once."""
    return list(dict.fromkeys(
        f"{limit_name(c)}={format_number(c.threshold)}"
        + ("" if c.verdict == "pass" else f" {verdict_text(c)}") for c in checks))


def summary_lines(records: Sequence[TestRecord]) -> list[str]:
    """One line per fairness result of the run, passed ones too."""
    rows = []
    for record in records:
        for keyed in record.results:
            result = keyed.result
            mine = checks_of(keyed, record.checks)
            # One row per coordinate that was gated (e.g. at=0 of a τ sweep), else the headline.
            for at in list(dict.fromkeys(c.at for c in mine)) or [result.at]:
                shown = result if at is None or at == result.at else result.select(at)
                limits = "; ".join(_limit_texts(c for c in mine if c.at == at)) or "-"
                worst = shown.worst_group if shows_gap(shown) else None
                rows.append([record.nodeid, result_label(shown),
                             format_number(shown.value), headline_text(shown),
                             "-" if worst is None else group_label(worst.group), limits,
                             record.outcome])
    header = ["test", "indicator", "value", "headline", "worst group", "limits", "outcome"]
    return text_table(header, rows, indent="") if rows else []


def family_lines(records: Sequence[TestRecord], alpha: float, tests: int) -> list[str]:
    """``--fairness-family-alpha``: α over T tests, the checks and their levels; those outside.

    Checks under ``"point"`` have no interval and no error rate: they are named, loudly.
    """
    judged: list[tuple[str, float | None]] = []
    outside: list[tuple[str, float | None]] = []
    for r in records:
        compared = r.checkpoint_comparisons if r.checkpoint_judged else ()
        both: list[CheckOutcome | Comparison] = [*r.checks, *r.regressions, *compared]
        for x in both:
            what = (f"{x.limit}={x.threshold:g}" if isinstance(x, CheckOutcome)
                    else f"{x.metric} vs {x.since}")
            (judged if x.level is not None else outside).append((f"{r.nodeid}: {what}", x.level))
    levels = sorted({level for _, level in judged if level is not None})
    at = "-" if not levels else " to ".join(dict.fromkeys(f"{v:.6g}" for v in (levels[0],
                                                                              levels[-1])))
    lines = [f"family-wise control: α={alpha:g} over {tests} test{'s' * (tests != 1)} "
             f"({len(judged)} check{'s' * (len(judged) != 1)}); each check at level {at} "
             "(1 − 2α/(T·m), m the interval-judged checks of its test)"]
    if outside:
        shown = ", ".join(name for name, _ in outside[:5]) + (" …" if len(outside) > 5 else "")
        lines.append(f"OUTSIDE the family: {len(outside)} check{'s' * (len(outside) != 1)} "
                     f"under confidence='point' (no interval, no error control): {shown}")
    return list(map(plain, lines))


def inconclusive_lines(records: Sequence[TestRecord]) -> list[str]:
    """One line per inconclusive verdict of the run: test, limit, estimate, what decides it."""
    lines = []
    for record in records:
        for c in (c for c in record.checks if c.verdict == "inconclusive"):
            lines.append(
                f"{record.nodeid}: {c.label}: {limit_name(c)}={format_number(c.threshold)}, "
                f"confidence={c.confidence}: {c.limit.split('_', 1)[1].replace('_', ' ')} "
                f"{observed_text(c)}, the interval straddles the limit "
                f"({'counted as passed' if c.passed else 'counted as failed'}); {c.decide}")
    return list(map(plain, dict.fromkeys(lines)))


def _section_result(shown: IndicatorResult, failed: set[tuple[Any, str]]) -> list[str]:
    """A result in the section; without the group table the failure message already shows."""
    if (shown.at, shown.metric) in failed:
        return [*result_lines(shown, details=False), "  groups: shown above"]
    return result_lines(shown)


def section_text(record: TestRecord, *, in_message: bool = False) -> str:
    """One test's section: results, then verdicts; ``in_message``: failed groups are shown."""
    lines: list[str] = []
    for keyed in record.results:
        result = keyed.result
        mine = checks_of(keyed, record.checks)
        failed = {(c.at, c.metric) for c in mine if not c.passed} if in_message else set()
        if lines:
            lines.append("")
        if keyed.key is not None:
            lines.append(f"[{keyed.key}]")
        lines.extend(_section_result(result, failed))
        for at in dict.fromkeys(c.at for c in mine if c.at is not None and c.at != result.at):
            lines.extend(["", *_section_result(result.select(at), failed)])
    if record.checks:
        lines.extend(["", "limits:"])
        verdicts = []
        for c in record.checks:
            at = "" if c.at is None else f" at {c.at:g}"
            where = f" ({c.where})" if c.where else ""
            verdicts.append(f"  {verdict_text(c).ljust(4)} {c.indicator}{at}: {c.limit} "
                            f"observed {format_number(c.observed)}{where}, needs "
                            f"{_needs(c.limit)} {format_number(c.threshold)}"
                            + (f"; {c.decide}" if c.decide else ""))
        lines.extend(dict.fromkeys(verdicts))  # a marker and an inline check that agree: once
    return _text(lines)


def report_section(record: TestRecord, *, baseline_source: str = "",
                   report_page: str | None = None, in_message: bool = False) -> str:
    """The ``fairness`` section of a test's report: results, verdicts, notes, baseline, link.

    ``in_message``: the failure already shows the failed groups and the regressions.
    """
    # A note may be an error of several lines (a checkpoint guard's): each line escaped.
    extra = [line for note in record.notes for line in f"note: {note}".split("\n")]
    if record.regressions and not in_message:
        extra.append(f"baseline: {baseline_source}")
        for comparison in record.regressions:
            extra.extend("  " + line for line in comparison_lines(comparison, groups=False))
    if report_page:
        extra.append(f"HTML report with plots: {report_page}")
    return "\n".join(part for part in (section_text(record, in_message=in_message),
                                        *map(plain, extra)) if part)


def regression_tally(comparisons: Sequence[Comparison]) -> str:
    """How many comparisons regressed, in how many tests (the run's summary, ``compare``)."""
    regressed = [c for c in comparisons if c.regressed]
    total = f"{len(comparisons)} comparison{'s' if len(comparisons) != 1 else ''}"
    if not regressed:
        return f"no regression in {total}"
    tests = len({c.test for c in regressed})
    return (f"{len(regressed)} regression{'s' if len(regressed) != 1 else ''} in {tests} "
            f"test{'s' if tests != 1 else ''} ({total})")


def comparison_lines(comparison: Comparison, *, groups: bool = True,
                     with_test: bool = False) -> list[str]:
    """Lines of one comparison: the verdict, then baseline and now, group by group.

    ``with_test`` names the test before the result (``t.py::test_a :: group_metrics (accuracy)``).
    """
    c = comparison
    return list(map(plain, [
        f"{'REGRESSED' if c.regressed else 'ok'}: {comparison_text(c, with_test=with_test)}",
        *(comparison_group_lines(c) if groups else []),
        *(f"    note: {note}" for note in c.notes)]))


def comparison_text(comparison: Comparison, *, with_test: bool = False) -> str:
    """``result: metric baseline 0.1 → now 0.2 (+0.1 worse, ..., lower is better)``."""
    c, fmt = comparison, format_number
    where = f" ({c.where})" if c.where else ""
    name = f"{c.test} :: {c.result}" if with_test and c.test else c.result
    return (f"{name}: {c.metric}{where} {c.since} {fmt(c.baseline)} → now {fmt(c.now)} "
            f"({change_text(c)})")


def change_text(comparison: Comparison) -> str:
    """``+0.1 worse, interval [+0.05, +0.15] paired, tolerance 0 supported, lower is better``."""
    c = comparison
    delta = "n/a" if c.worse_by is None else f"{fmt_signed(c.worse_by)} worse"
    spread = "" if c.interval is None else f", interval {interval_text(c)}"
    rule = "" if c.confidence == "point" else f" {c.confidence}"
    direction = "lower is better" if c.lower_is_better else "higher is better"
    allowed = "budget" if c.since == "origin" else "tolerance"
    return f"{delta}{spread}, {allowed} {format_number(c.tolerance)}{rule}, {direction}"


def fmt_signed(x: float) -> str:
    """A change with its sign: ``+0.012``, ``-0.003``."""
    return f"{'+' if x >= 0 else ''}{format_number(x)}"


def interval_text(comparison: Comparison) -> str:
    """The interval of a comparison's change and how it was drawn: ``[+0.1, +0.2] paired``."""
    if comparison.interval is None:
        return ""
    low, high = comparison.interval
    drawn = "paired" if comparison.paired else "unpaired"
    return f"[{fmt_signed(low)}, {fmt_signed(high)}] {drawn}"


def comparison_group_rows(comparison: Comparison) -> list[tuple[str, str, str, str, bool]]:
    """The groups of a comparison: label, baseline, now, Δ (texts), and whether it got worse."""
    rows = []
    for label, before, after in comparison.groups:
        diff, worse = "", False
        if before is not None and after is not None:
            diff = f"{after - before:+.4g}"
            worse = after < before if comparison.higher_is_better_groups else after > before
        rows.append((label, format_number(before), format_number(after), diff, worse))
    return rows


def comparison_group_lines(comparison: Comparison) -> list[str]:
    """The group-by-group table of a comparison: baseline, now, Δ, and which got worse."""
    rows = [[*row[:4], "← worse" if row[4] else ""] for row in comparison_group_rows(comparison)]
    return text_table(["group", "baseline", "now", "Δ", ""], rows, indent="    ") if rows else []


def checkpoint_verdict(comparison: Comparison, judged: bool) -> str:
    """``REGRESSED``, ``ok`` or ``not judged`` (a comparison only shown)."""
    return ("REGRESSED" if comparison.regressed else "ok") if judged else "not judged"


def checkpoint_lines(comparisons: Sequence[Comparison], *, reference: str,
                     judged: bool | Sequence[bool]) -> list[str]:
    """The run's checkpoints against its reference one: one line per test and result.

    ``judged`` (one for all, or one per comparison) adds each verdict
    (``--fairness-compare-fail`` or ``no_regression``) and a tally of the judged ones.
    """
    fmt = format_number
    each = [judged] * len(comparisons) if isinstance(judged, bool) else list(judged)
    verdicts = [c for c, j in zip(comparisons, each) if j]
    rule = next((c.confidence for c in verdicts), "point")
    lines = [f"fairness checkpoints: each compared with {reference}"
             + (f" ({regression_tally(verdicts)}, confidence {rule})" if verdicts else "")]
    for c, j in zip(comparisons, each):
        worse = "n/a" if c.worse_by is None else f"{fmt_signed(c.worse_by)} worse"
        spread = "" if c.interval is None else f" {interval_text(c)}"
        verdict = f"{checkpoint_verdict(c, j)} " if j else ""
        where = f" ({c.where})" if c.where else ""
        lines.append(f"  {verdict}{c.test} :: {c.result}: {c.metric}{where} {fmt(c.baseline)} "
                     f"→ {fmt(c.now)} ({worse}{spread})")
    return list(map(plain, lines))


def regression_message(comparisons: Sequence[Comparison], *, source: str = "",
                       with_test: bool = False, against: str = "") -> str:
    """The failure message of regressions: which metrics got worse, then each in detail.

    Every metric of a result that regressed, and its groups once; ``with_test`` names the test;
    ``against`` names what was compared with, when not the baseline ``source``.
    """
    fmt = format_number
    failed = [c for c in comparisons if c.regressed]
    against = f" against {against}" if against else (
        f" against the baseline {source}" if source else " against the baseline")
    heads = "; ".join(
        f"{f'{c.test} :: ' if with_test and c.test else ''}{c.result}: {c.metric} "
        f"{fmt(c.baseline)} → {fmt(c.now)}" for c in failed)
    lines = [f"{len(failed)} fairness regression{'s' if len(failed) != 1 else ''}{against}: "
             f"{heads}"]
    shown = {(c.test, c.result) for c in failed} or {(c.test, c.result) for c in comparisons}
    for key in [k for k in dict.fromkeys((c.test, c.result) for c in comparisons) if k in shown]:
        mine = [c for c in comparisons if (c.test, c.result) == key]
        lines.append("")
        for c in mine:
            lines.extend("  " + line for line in comparison_lines(c, groups=False,
                                                                  with_test=with_test))
        lines.extend(comparison_group_lines(mine[0]))
    return _text(lines)
