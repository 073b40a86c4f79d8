"""``report.html``: one self-contained page per run (no scripts, no external assets).

Sections: the run's metadata; a summary table (test, indicator, limit, observed, verdict);
one section per test with, for every result, the per-group table and bars with intervals,
the τ/K/level sweep (from ``slices``), the curves (Fair SA curves and item-response curves,
τ sweeps per type), the matrices as heatmaps (AUC), the detail tables (amplification per
attribute set, ...) and the baseline comparison group by group; then trends of each result
across the checkpoints recorded in the history.

Every string that comes from data or tests goes through :func:`html.escape`; figures are
SVG documents embedded as base64 ``data:`` images, so nothing in them is parsed as markup
of the page.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any, Final

from pytest_fairness.checks import LIMITS
from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.files import atomic_write_text
from pytest_fairness.records import Comparison
from pytest_fairness.report import figures
from pytest_fairness.report.terminal import (
    fmt_signed,
    format_number,
    groups_are_compared,
    headline_text,
    interval_text,
    shows_gap,
)
from pytest_fairness.results import IndicatorResult, group_label, result_id

__all__ = ["render_html", "write_html"]

#: Rows of a detail table shown before it is cut.
MAX_TABLE_ROWS: Final = 60

_CSS: Final = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;
max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ddd}
h3{font-size:1.05em}table{border-collapse:collapse;margin:.6em 0}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.passed,.ok{color:#1b7f3b;font-weight:600}.failed,.FAIL,.REGRESSED{color:#c0392b;font-weight:600}
.skipped{color:#8a6d00}.excluded{color:#888}.note{color:#555;font-style:italic}
img.figure{max-width:100%;height:auto;display:block;margin:.5em 0}
code{background:#f6f6f6;padding:0 3px}section.test{margin-bottom:2em}
"""


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def _num(x: Any, digits: int = 4) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, str):
        return _e(x)
    if isinstance(x, float) and math.isnan(x):
        return "n/a"
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return _e(format_number(float(x), digits))
    return _e(x)


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], *, raw: bool = False) -> str:
    """An HTML table; cells are escaped unless ``raw`` (then the caller escaped them)."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = "".join(f"<td>{c if raw else _e(c)}</td>" for c in row)
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _figure(svg: bytes | None, alt: str) -> str:
    if svg is None:
        return ""
    return f'<img class="figure" alt="{_e(alt)}" src="{figures.data_uri(svg)}">'


def _safe_figure(draw: Any, alt: str, *args: Any, **kwargs: Any) -> str:
    """Draw a figure; a drawing problem becomes a visible note, not a lost report."""
    try:
        return _figure(draw(*args, **kwargs), alt)
    except Exception as error:  # noqa: BLE001 - one bad figure must not lose the report
        return f'<p class="note">figure {_e(alt)} could not be drawn: {_e(error)}</p>'


# -- summary -------------------------------------------------------------------------------


def _indicator(check: Mapping[str, Any]) -> str:
    text = f"{check.get('indicator')} ({check.get('metric')})"
    if check.get("at") is not None:
        text += f" at {check['at']:g}" if isinstance(check["at"], (int, float)) else ""
    if check.get("key"):
        text = f"{check['key']}: {text}"
    return text


def _summary_rows(tests: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    rows = []
    for index, test in enumerate(tests):
        link = f'<a href="#t{index}">{_e(test["nodeid"])}</a>'
        for check in test.get("checks", []):
            op = "≤" if LIMITS[check["limit"]].bound == "max" else "≥"
            observed = _num(check.get("observed"))
            if check.get("interval"):
                low, high = check["interval"]
                observed += f" [{_num(low)}, {_num(high)}]"
            if check.get("where"):
                observed += f" ({_e(check['where'])})"
            verdict = "ok" if check.get("passed") else "FAIL"
            rows.append([link, _e(_indicator(check)),
                         f"{_e(check['limit'])} {op} {_num(check['threshold'])}", observed,
                         f'<span class="{verdict}">{verdict}</span>'])
        for comparison in test.get("regressions", []):
            verdict = "REGRESSED" if comparison.get("regressed") else "ok"
            rows.append([
                link, _e(comparison.get("result")),
                f"no regression of {_e(comparison.get('metric'))} (tolerance "
                f"{_num(comparison.get('tolerance'))})",
                f"{_num(comparison.get('now'))} (baseline {_num(comparison.get('baseline'))})",
                f'<span class="{verdict}">{verdict}</span>',
            ])
        if not test.get("checks") and not test.get("regressions"):
            for data in test.get("results", []):
                result = IndicatorResult.from_dict(data)
                observed = f"value {_num(result.value)}; {_e(headline_text(result))}"
                outcome = str(test.get("outcome") or "")
                rows.append([link, _e(f"{result.name} ({result.metric})"), "–", observed,
                             f'<span class="{_e(outcome)}">{_e(outcome)}</span>'])
    return rows


# -- one result ------------------------------------------------------------------------------


def _groups_table(result: Any) -> str:
    compared = groups_are_compared(result)
    best = result.best_group if compared else None
    worst = result.worst_group if compared else None
    rows = []
    for g in result.groups:
        delta = "" if best is None or g.excluded else f"{g.value - best.value:+.4g}"
        interval = "" if g.interval is None else f"[{_num(g.interval[0])}, {_num(g.interval[1])}]"
        tag = ""
        if g.excluded:
            tag = f'<span class="excluded">excluded (n &lt; {result.min_group_size})</span>'
        elif (worst is not None and g is worst and best is not None
              and worst.value != best.value):
            tag = '<span class="FAIL">worst</span>'
        elif best is not None and g is best and worst is not None and worst.value != best.value:
            tag = "best"
        stats = ", ".join(f"{_e(k)} {_num(v)}" for k, v in g.stats.items())
        rows.append([_e(g.label), _num(g.n), _num(g.value), _e(delta), interval, stats, tag])
    return _table(["group", "n", result.metric, "Δ best", "interval", "stats", ""], rows,
                  raw=True)


def _curve_figures(result: Any) -> list[str]:
    """Curves grouped by their axes, at most 12 per figure."""
    buckets: dict[tuple[str, str], dict[str, Any]] = {}
    bands: dict[tuple[str, str], dict[str, Any]] = {}
    for name, curve in result.curves.items():
        axes = (curve.x_label, curve.y_label if len(result.curves) < 4 else "")
        buckets.setdefault(axes, {})[name] = (curve.x, curve.y)
        if curve.interval is not None:
            bands.setdefault(axes, {})[name] = curve.interval
    out = []
    for (x_label, y_label), series in buckets.items():
        names = list(series)
        for start in range(0, len(names), 12):
            chunk = {n: series[n] for n in names[start:start + 12]}
            alt = f"curves of {result.name}: " + ", ".join(chunk)
            out.append(_safe_figure(figures.lines, alt, chunk, x_label=x_label,
                                    y_label=y_label, bands=bands.get((x_label, y_label))))
    return out


def _detail_table(name: str, rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return ""
    columns: list[str] = []
    for row in rows:
        columns.extend(c for c in row if c not in columns)
    shown = [[_num(row.get(c)) if not isinstance(row.get(c), str) else _e(row.get(c))
              for c in columns] for row in rows[:MAX_TABLE_ROWS]]
    more = ""
    if len(rows) > MAX_TABLE_ROWS:
        more = (f'<p class="note">{len(rows) - MAX_TABLE_ROWS} more rows in report.json '
                f"(tables[{_e(repr(name))}]).</p>")
    return f"<h4>table {_e(name)}</h4>" + _table(columns, shown, raw=True) + more


def _matrix_table(matrix: Any) -> str:
    rows = [[_e(group_label(r)), *(_num(v) for v in values)]
            for r, values in zip(matrix.rows, matrix.values)]
    return _table(["", *(group_label(c) for c in matrix.columns)], rows, raw=True)


def _result_html(data: Mapping[str, Any], draw: bool) -> str:
    result = IndicatorResult.from_dict(data)
    title = f"{result.name} ({result.metric})"
    if result.at is not None:
        title += f" at {result.at:g}" if isinstance(result.at, (int, float)) else ""
    if data.get("key") is not None:
        title = f"{data['key']}: {title}"
    parts = [f"<h3>{_e(title)}</h3>"]
    # Fair SA results get their own figures (panels per perturbation, L1 labels).
    fair_sa = result.name == "fair_sa" and {"cells", "curves"} <= set(result.tables)
    head = f"value {_num(result.value)}"
    if "value" in result.intervals:
        low, high = result.intervals["value"]
        head += f" [{_num(low)}, {_num(high)}]"
    if shows_gap(result):
        head += f"; gap {_num(result.gap)}; ratio {_num(result.ratio)}"
    else:
        head += f"; {_e(headline_text(result))}"
    head += f"; {'higher' if result.higher_is_better else 'lower'} is better"
    parts.append(f"<p>{head}</p>")
    if result.stats:
        parts.append(_table(["stat", "value", "interval"], (
            [_e(k), _num(v), "" if k not in result.intervals else
             f"[{_num(result.intervals[k][0])}, {_num(result.intervals[k][1])}]"]
            for k, v in result.stats.items()), raw=True))
    if result.groups:
        parts.append(_groups_table(result))
        if draw:
            parts.append(_safe_figure(figures.group_bars, f"per-group {result.metric}", result))
    if draw:
        sweep = figures.sweep_series(result)
        if sweep:
            parts.append("<h4>sweep</h4>")
            parts.append(_safe_figure(figures.lines, f"sweep of {result.name}", sweep,
                                      x_label="at (τ, K or level)"))
        if fair_sa:
            parts.append("<h4>Fair SA curves</h4>")
            parts.append(_safe_figure(figures.fair_sa_curves, "Fair SA curves", result,
                                      fmt="svg"))
            parts.append("<h4>item-response curves</h4>")
            parts.append(_safe_figure(figures.irc_curves, "item-response curves", result,
                                      fmt="svg"))
        elif result.curves:
            parts.append("<h4>curves</h4>")
            parts.extend(_curve_figures(result))
    for name, matrix in result.matrices.items():
        parts.append(f"<h4>matrix {_e(name)}</h4>")
        if draw and fair_sa:
            parts.append(_safe_figure(figures.auc_heatmap, f"matrix {name}", result,
                                      matrix=name, fmt="svg"))
        elif draw:
            parts.append(_safe_figure(figures.heatmap, f"matrix {name}", matrix, title=name))
        parts.append(_matrix_table(matrix))
    for name, rows in result.tables.items():
        parts.append(_detail_table(name, rows))
    for note in result.notes:
        parts.append(f'<p class="note">note: {_e(note)}</p>')
    return "\n".join(parts)


def _change(data: Mapping[str, Any]) -> str:
    """``+0.02 worse, interval [...] paired, `` of a comparison (empty parts left out)."""
    c = Comparison.from_dict(data)
    text = "" if c.worse_by is None else f"{fmt_signed(c.worse_by)} worse, "
    if c.interval is not None:
        text += f"interval {interval_text(c)}, "
    return _e(text + ("" if c.confidence == "point" else f"{c.confidence}, "))


def _checkpoints_html(comparisons: Sequence[Mapping[str, Any]]) -> str:
    """Each checkpoint against the reference one (``checkpoint_comparisons``)."""
    if not comparisons:
        return ""
    rows = [[_e(c.get("test")), _e(c.get("result")), _e(c.get("metric")),
             _num(c.get("baseline")), _num(c.get("now")), _change(c).rstrip(", ")]
            for c in comparisons]
    return ("<h2>Checkpoints compared with the reference</h2>"
            + _table(["test", "result", "metric", "reference", "this checkpoint", "change"],
                     rows, raw=True))


def _regressions_html(comparisons: Sequence[Mapping[str, Any]]) -> str:
    if not comparisons:
        return ""
    parts = ["<h3>compared with the baseline</h3>"]
    for c in comparisons:
        verdict = "REGRESSED" if c.get("regressed") else "ok"
        direction = "lower is better" if c.get("lower_is_better") else "higher is better"
        where = f" ({_e(c['where'])})" if c.get("where") else ""
        parts.append(
            f'<p><span class="{verdict}">{verdict}</span> {_e(c.get("result"))}: '
            f"{_e(c.get('metric'))}{where} baseline {_num(c.get('baseline'))} → now "
            f"{_num(c.get('now'))} ({_change(c)}tolerance {_num(c.get('tolerance'))}, "
            f"{direction})</p>"
        )
        rows = []
        higher = c.get("higher_is_better_groups", True)
        for label, before, after in c.get("groups", []):
            delta = "" if before is None or after is None else f"{after - before:+.4g}"
            worse = (before is not None and after is not None and after != before
                     and (after < before if higher else after > before))
            rows.append([_e(label), _num(before), _num(after), _e(delta),
                         '<span class="FAIL">worse</span>' if worse else ""])
        if rows:
            parts.append(_table(["group", "baseline", "now", "Δ", ""], rows, raw=True))
        parts.extend(f'<p class="note">note: {_e(n)}</p>' for n in c.get("notes", []))
    return "\n".join(parts)


# -- trends ----------------------------------------------------------------------------------


def _trends_html(tests: Sequence[Mapping[str, Any]], trends: Sequence[Mapping[str, Any]],
                 draw: bool) -> str:
    wanted = {(t.get("test") or t["nodeid"], result_id(d)) for t in tests for d in t["results"]}
    runs: list[tuple[int, str]] = []
    for row in trends:
        point = (row["run_id"], row["column"])
        if point not in runs:
            runs.append(point)
    if len(runs) < 2:
        return ""
    names = [column for _, column in runs]
    labels = [c if names.count(c) == 1 else f"{c} (run {r})" for r, c in runs]
    position = {point: i for i, point in enumerate(runs)}
    series: dict[tuple[str, str], dict[str, dict[int, float | None]]] = {}
    for row in trends:
        key = (row["test"], row["result_id"])
        if key not in wanted:
            continue
        i = position[(row["run_id"], row["column"])]
        for metric in ("gap", "value"):
            series.setdefault(key, {}).setdefault(metric, {})[i] = row[metric]
    if not series:
        return ""
    parts = ["<h2 id=\"trends\">Trends across checkpoints</h2>"]
    for (test, rid), metrics in sorted(series.items()):
        parts.append(f"<h3>{_e(test)} — {_e(rid)}</h3>")
        if draw:
            lines = {m: ([float(i) for i in sorted(v) if v[i] is not None],
                         [float(v[i]) for i in sorted(v) if v[i] is not None])  # type: ignore[arg-type]
                     for m, v in metrics.items() if any(x is not None for x in v.values())}
            parts.append(_safe_figure(figures.lines, f"trend of {test} {rid}", lines,
                                      x_label="checkpoint / run", categorical=labels))
        rows = [[_e(m), *(_num(v.get(i)) for i in range(len(labels)))]
                for m, v in metrics.items()]
        parts.append(_table(["", *labels], rows, raw=True))
    return "\n".join(parts)


# -- the page ---------------------------------------------------------------------------------


def render_html(
    document: Mapping[str, Any],
    *,
    trends: Sequence[Mapping[str, Any]] | None = None,
    draw: bool | None = None,
) -> str:
    """Render a report document (:func:`~pytest_fairness.report.json_report.build_report`).

    Parameters
    ----------
    document : mapping
        The ``report.json`` document.
    trends : sequence of mapping, optional
        Rows of :meth:`pytest_fairness.history.HistoryStore.series` for the trend section.
    draw : bool, optional
        Draw figures (default: when matplotlib is installed).

    Examples
    --------
    >>> from pytest_fairness.report.json_report import build_report
    >>> page = render_html(build_report([], run={"label": "<b>"}), draw=False)
    >>> "&lt;b&gt;" in page and "<b>" not in page
    True
    """
    problem = figures.import_problem() if draw is None or draw else None
    draw = problem is None if draw is None else draw
    tests = list(document.get("tests", []))
    run = dict(document.get("run", {}))
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>pytest-fairness report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>pytest-fairness report</h1>",
    ]
    meta_rows = [[_e(k), _e(v if not isinstance(v, Mapping) else
                            ", ".join(f"{a} {b}" for a, b in v.items()))]
                 for k, v in run.items() if v not in (None, "", {}, [])]
    if meta_rows:
        parts.append(_table(["run", ""], meta_rows, raw=True))
    summary = document.get("summary", {})
    if summary:
        parts.append("<p>" + ", ".join(f"{_e(k)}: {_num(v)}" for k, v in summary.items()) + "</p>")
    if not draw:
        why = f"matplotlib cannot be imported: {problem}" if problem else "not asked for"
        parts.append(f'<p class="note">figures are left out ({_e(why)}; pip install '
                     "matplotlib).</p>")
    parts.append("<h2>Summary</h2>")
    parts.append(_table(["test", "indicator", "limit", "observed", "verdict"],
                        _summary_rows(tests), raw=True))
    parts.append(_checkpoints_html(document.get("checkpoint_comparisons", [])))
    for index, test in enumerate(tests):
        outcome = str(test.get("outcome") or "")
        checkpoint = test.get("checkpoint")
        parts.append(f'<section class="test" id="t{index}"><h2>{_e(test["nodeid"])} '
                     f'<span class="{_e(outcome)}">{_e(outcome)}</span></h2>')
        if checkpoint:
            parts.append(f"<p>checkpoint <code>{_e(checkpoint)}</code></p>")
        for data in test.get("results", []):
            parts.append(_result_html(data, draw))
        parts.append(_regressions_html(test.get("regressions", [])))
        parts.extend(f'<p class="note">note: {_e(n)}</p>' for n in test.get("notes", []))
        parts.append("</section>")
    if trends:
        parts.append(_trends_html(tests, trends, draw))
    parts.append("</body></html>")
    return "\n".join(p for p in parts if p) + "\n"


def write_html(
    document: Mapping[str, Any],
    directory: str | os.PathLike[str],
    *,
    trends: Sequence[Mapping[str, Any]] | None = None,
    draw: bool | None = None,
) -> Path:
    """Write ``report.html`` into ``directory`` (created if needed), atomically.

    Raises
    ------
    FairnessConfigError
        When the folder cannot be created or written (``/proc/x``, a read-only disk).
    """
    page = render_html(document, trends=trends, draw=draw)
    target = Path(directory) / "report.html"
    try:
        return atomic_write_text(target, page)
    except OSError as error:
        raise FairnessConfigError(
            f"cannot write the HTML report {str(target)!r} ({error.strerror or error}); give a "
            "folder you can write."
        ) from None
