"""``report.html``: one self-contained page per run (no scripts, no external assets).

Texts, rows and SVG figures here; the autoescaping template ``templates/report.html.j2`` the markup.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.files import atomic_write_text
from pytest_fairness.options import LIMITS
from pytest_fairness.records import Comparison, TestRecord
from pytest_fairness.report import figures
from pytest_fairness.report.terminal import (
    change_text,
    checkpoint_verdict,
    comparison_group_rows,
    comparison_text,
    format_number,
    group_deltas,
    headline_text,
    limit_name,
    observed_text,
    pair_text,
    result_label,
    shows_gap,
    value_text,
    verdict_text,
)
from pytest_fairness.results import IndicatorResult, Matrix, group_label

if TYPE_CHECKING:
    import jinja2

    from pytest_fairness.report.json_report import ReportDocument

__all__ = ["render_html", "write_html", "write_reports"]

#: Rows of a detail table shown before it is cut.
MAX_TABLE_ROWS: Final = 60


@dataclass(frozen=True)
class Cell:
    """A table cell whose text is a link to ``href`` or sits in a ``<span class=cls>``."""

    text: str
    cls: str = ""
    href: str = ""


Row: TypeAlias = "Sequence[str | Cell]"
#: A row of :meth:`pytest_fairness.history.HistoryStore.series`: run_id, column, test, result_id,
#: value, gap, ...
TrendRow: TypeAlias = "Mapping[str, object]"


@dataclass(frozen=True)
class Table:
    """A table: the header's texts and the rows' cells."""

    header: Sequence[str]
    rows: Sequence[Row]


@dataclass(frozen=True)
class Figure:
    """An ``<img>`` with a ``data:`` URI, or why it could not be drawn (both empty: nothing)."""

    alt: str
    src: str = ""
    problem: str = ""


@dataclass(frozen=True)
class ResultView:
    """One result: its title, headline, tables and figures (None or empty: not shown)."""

    title: str
    head: str
    stats: Table | None
    groups: Table | None
    plots: list[tuple[str, list[Figure]]]  # after the group table: a heading (or none), figures
    matrices: list[tuple[str, Figure | None, Table]]
    tables: list[tuple[str, Table, str]]  # name, the rows shown, a note on the rows cut
    notes: Sequence[str]


@dataclass(frozen=True)
class RegressionView:
    """One comparison with the baseline: verdict, sentence, groups and notes."""

    verdict: str
    text: str
    groups: Table
    notes: Sequence[str]


@dataclass(frozen=True)
class Section:
    """One test: its results, its comparisons with the baseline, its notes."""

    nodeid: str
    outcome: str
    checkpoint: str
    results: list[ResultView]
    regressions: list[RegressionView]
    notes: Sequence[str]


def _num(x: object) -> str:
    if x is None or isinstance(x, (int, float)) and not isinstance(x, bool):
        return format_number(None if x is None else float(x))
    return str(x)


def _draw(draw: Callable[..., bytes | None], alt: str, *args: Any, **kwargs: Any) -> Figure:
    """Draw a figure; a drawing problem becomes a visible note, not a lost report."""
    try:
        svg = draw(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - one bad figure must not lose the report
        return Figure(alt, problem=str(error))
    return Figure(alt, "" if svg is None else figures.data_uri(svg))


def _summary_rows(records: Sequence[TestRecord]) -> list[Row]:
    rows: list[Row] = []
    for index, record in enumerate(records):
        link = Cell(record.nodeid, href=f"#t{index}")
        for check in record.checks:
            op = "≤" if LIMITS[check.limit].bound == "max" else "≥"
            verdict = verdict_text(check)
            rows.append([link, check.label,
                         f"{limit_name(check)} {op} {_num(check.threshold)}",
                         observed_text(check) + (f"; {check.decide}" if check.decide else ""),
                         Cell(verdict, verdict)])
        for c in record.regressions:
            verdict = "REGRESSED" if c.regressed else "ok"
            rows.append([link, c.result,
                         f"no regression of {c.metric} (tolerance {_num(c.tolerance)})",
                         f"{_num(c.now)} (baseline {_num(c.baseline)})" + (
                             "" if c.level is None else f"; interval at level {c.level:.6g}"),
                         Cell(verdict, verdict)])
        if not record.checks and not record.regressions:
            rows.extend([link, result_label(k.result), "–",
                         f"value {_num(k.result.value)}; {headline_text(k.result)}",
                         Cell(record.outcome, record.outcome)] for k in record.results)
    return rows


def _checkpoints(entries: Iterable[Mapping[str, Any]]) -> Table | None:
    """Each checkpoint against the reference one (``checkpoint_comparisons``), with a verdict."""
    rows: list[Row] = []
    for entry in entries:
        c = Comparison.from_dict(entry)
        verdict = str(entry.get("verdict") or checkpoint_verdict(c, bool(entry.get("judged"))))
        rows.append([c.test, c.result, c.metric, _num(c.baseline), _num(c.now), change_text(c),
                     Cell(verdict, verdict.replace(" ", "-"))])
    header = ["test", "result", "metric", "reference", "this checkpoint", "change", "verdict"]
    return Table(header, rows) if rows else None


def _groups_table(result: IndicatorResult) -> Table:
    best, worst, deltas = group_deltas(result)
    differ = best is not None and worst is not None and worst.value != best.value
    rows: list[Row] = []
    for g, delta in zip(result.groups, deltas):
        tag: str | Cell = ""
        if g.excluded:
            tag = Cell(f"excluded (n < {result.min_group_size})", "excluded")
        elif differ and g is worst:
            tag = Cell("worst", "FAIL")
        elif differ and g is best:
            tag = "best"
        stats = ", ".join(f"{k} {_num(v)}" for k, v in g.stats.items())
        rows.append([g.label, _num(g.n), _num(g.value), delta, pair_text(g.interval), stats,
                     tag])
    return Table(["group", "n", result.metric, "Δ best", "interval", "stats", ""], rows)


def _curve_figures(result: IndicatorResult) -> list[Figure]:
    """Curves grouped by their axes, at most 12 per figure."""
    buckets: dict[tuple[str, str], list[str]] = {}
    for name, curve in result.curves.items():
        axes = (curve.x_label, curve.y_label if len(result.curves) < 4 else "")
        buckets.setdefault(axes, []).append(name)
    out = []
    for (x_label, y_label), names in buckets.items():
        for chunk in (names[start:start + 12] for start in range(0, len(names), 12)):
            curves = {n: result.curves[n] for n in chunk}
            bands = {n: c.interval for n, c in curves.items() if c.interval is not None}
            out.append(_draw(figures.lines, f"curves of {result.name}: " + ", ".join(chunk),
                             {n: (c.x, c.y) for n, c in curves.items()}, x_label=x_label,
                             y_label=y_label, bands=bands))
    return out


def _detail_table(name: str, rows: Sequence[Mapping[str, object]]) -> tuple[str, Table, str]:
    """A table of ``result.tables`` (cut after :data:`MAX_TABLE_ROWS` rows, with a note)."""
    columns = list(dict.fromkeys(c for row in rows for c in row))
    shown = [[_num(row.get(c)) for c in columns] for row in rows[:MAX_TABLE_ROWS]]
    more = len(rows) - MAX_TABLE_ROWS
    cut = f"{more} more rows in report.json (tables[{name!r}])." if more > 0 else ""
    return name, Table(columns, shown), cut


def _matrix_table(matrix: Matrix) -> Table:
    return Table(["", *(group_label(c) for c in matrix.columns)],
                 [[group_label(r), *(_num(v) for v in values)]
                  for r, values in zip(matrix.rows, matrix.values)])


def _head(result: IndicatorResult) -> str:
    """``value 0.7 [0.6, 0.8]; gap 0.2; ratio 0.75; higher is better``."""
    head = value_text(result)
    if shows_gap(result):
        head += f"; gap {_num(result.gap)}; ratio {_num(result.ratio)}"
    else:
        head += f"; {headline_text(result)}"
    return head + f"; {'higher' if result.higher_is_better else 'lower'} is better"


def _plots(r: IndicatorResult, fair_sa: bool) -> list[tuple[str, list[Figure]]]:
    """The bars, the sweep and the curves of a result, each under its heading."""
    plots = [("", [_draw(figures.group_bars, f"per-group {r.metric}", r)])] if r.groups else []
    if sweep := figures.sweep_series(r):
        plots.append(("sweep", [_draw(figures.lines, f"sweep of {r.name}", sweep,
                                      x_label="at (τ, K or level)")]))
    if fair_sa:
        plots.append(("Fair SA curves", [_draw(figures.fair_sa_curves, "Fair SA curves", r,
                                               fmt="svg")]))
        plots.append(("item-response curves", [_draw(figures.irc_curves,
                                                     "item-response curves", r, fmt="svg")]))
    elif r.curves:
        plots.append(("curves", _curve_figures(r)))
    return plots


def _result_view(r: IndicatorResult, key: str | None, draw: bool) -> ResultView:
    # Fair SA results get their own figures (panels per perturbation, L1 labels).
    fair_sa = r.name == "fair_sa" and {"cells", "curves"} <= set(r.tables)
    matrices = []
    for name, matrix in r.matrices.items():
        figure = None
        if draw and fair_sa:
            figure = _draw(figures.auc_heatmap, f"matrix {name}", r, matrix=name, fmt="svg")
        elif draw:
            figure = _draw(figures.heatmap, f"matrix {name}", matrix, title=name)
        matrices.append((name, figure, _matrix_table(matrix)))
    stats = [[k, _num(v), pair_text(r.intervals.get(k))] for k, v in r.stats.items()]
    return ResultView(
        title=result_label(r, key), head=_head(r),
        stats=Table(["stat", "value", "interval"], stats) if stats else None,
        groups=_groups_table(r) if r.groups else None, plots=_plots(r, fair_sa) if draw else [],
        matrices=matrices, notes=r.notes,
        tables=[_detail_table(name, rows) for name, rows in r.tables.items() if rows])


def _regression_view(c: Comparison) -> RegressionView:
    rows: list[Row] = [[*row[:4], Cell("worse", "FAIL") if row[4] else ""]
                       for row in comparison_group_rows(c)]
    return RegressionView(
        verdict="REGRESSED" if c.regressed else "ok",
        text=comparison_text(c),
        groups=Table(["group", "baseline", "now", "Δ", ""], rows),
        notes=c.notes,
    )


def _trends(records: Sequence[TestRecord], trends: Sequence[TrendRow],
            draw: bool) -> list[tuple[str, Figure | None, Table]]:
    """Per result: a title, the figure of its value and gap by run, and their table."""
    wanted = {(r.test, k.id) for r in records for k in r.results}
    runs = list(dict.fromkeys((row["run_id"], row["column"]) for row in trends))
    if len(runs) < 2:
        return []
    names = [column for _, column in runs]
    labels = [str(c) if names.count(c) == 1 else f"{c} (run {r})" for r, c in runs]
    position = {point: i for i, point in enumerate(runs)}
    series: dict[tuple[str, str], dict[str, dict[int, object]]] = {}
    for row in trends:
        key = (str(row["test"]), str(row["result_id"]))
        if key in wanted:
            i = position[(row["run_id"], row["column"])]
            for metric in ("gap", "value"):
                series.setdefault(key, {}).setdefault(metric, {})[i] = row[metric]
    out = []
    for (test, rid), metrics in sorted(series.items()):
        figure = None
        if draw:
            points = {m: sorted((i, y) for i, y in v.items() if isinstance(y, (int, float)))
                      for m, v in metrics.items()}
            lines = {m: ([float(i) for i, _ in p], [float(y) for _, y in p])
                     for m, p in points.items() if p}
            figure = _draw(figures.lines, f"trend of {test} {rid}", lines,
                           x_label="checkpoint / run", categorical=labels)
        rows: list[Row] = [[m, *(_num(v.get(i)) for i in range(len(labels)))]
                           for m, v in metrics.items()]
        out.append((f"{test} — {rid}", figure, Table(["", *labels], rows)))
    return out


@functools.cache
def _template() -> jinja2.Template:
    import jinja2

    environment = jinja2.Environment(loader=jinja2.PackageLoader("pytest_fairness.report"),
                                     autoescape=True, undefined=jinja2.StrictUndefined,
                                     trim_blocks=True, lstrip_blocks=True,
                                     keep_trailing_newline=True)
    return environment.get_template("report.html.j2")


def render_html(document: ReportDocument, *, trends: Sequence[TrendRow] | None = None,
                draw: bool | None = None) -> str:
    """The page of a ``report.json`` document; ``trends``: history rows; ``draw``: figures.

    ``draw`` defaults to whether matplotlib can be imported.
    """
    problem = figures.import_problem() if draw is None or draw else None
    draw = problem is None if draw is None else draw
    tests = [TestRecord.from_dict(test) for test in document.get("tests", [])]
    run: list[Row] = [[k, ", ".join(f"{a} {b}" for a, b in v.items())
                       if isinstance(v, Mapping) else str(v)]
                      for k, v in document.get("run", {}).items() if v not in (None, "", {}, [])]
    summary = ", ".join(f"{k}: {_num(v)}" for k, v in document.get("summary", {}).items())
    return _template().render(
        run=Table(["run", ""], run) if run else None,
        summary=summary,
        left_out="" if draw else (f"matplotlib cannot be imported: {problem}" if problem
                                  else "not asked for"),
        summary_table=Table(["test", "indicator", "limit", "observed", "verdict"],
                            _summary_rows(tests)),
        checkpoints=_checkpoints(document.get("checkpoint_comparisons", [])),
        tests=[Section(t.nodeid, t.outcome, t.checkpoint or "",
                       [_result_view(k.result, k.key, draw) for k in t.results],
                       [_regression_view(c) for c in t.regressions], t.notes) for t in tests],
        trends=_trends(tests, trends, draw) if trends else [],
    )


def write_html(document: ReportDocument, directory: str | os.PathLike[str], *,
               trends: Sequence[TrendRow] | None = None, draw: bool | None = None) -> Path:
    """Write ``report.html`` into ``directory`` (created if needed), atomically."""
    page = render_html(document, trends=trends, draw=draw)
    target = Path(directory) / "report.html"
    try:
        return atomic_write_text(target, page)
    except OSError as error:
        cause = error.strerror or error
        raise FairnessConfigError(f"cannot write the HTML report {str(target)!r} ({cause}); give "
                                  "a folder you can write.") from None


def write_reports(records: Sequence[TestRecord], directory: str | os.PathLike[str], *,
                  run: Mapping[str, object], checkpoints: Sequence[tuple[Comparison, bool]],
                  trends: Sequence[TrendRow] | None = None) -> str:
    """Write ``report.json`` and ``report.html``; the summary's line: where, or why not."""
    from pytest_fairness.errors import FairnessError
    from pytest_fairness.report.json_report import build_report, write_json

    document = build_report(records, run=run, checkpoints=checkpoints)
    try:
        write_json(document, directory)
        page = write_html(document, directory, trends=trends)
    except (OSError, FairnessError) as error:
        return (f"fairness report NOT written to {str(directory)!r}: {error}. Pass a folder "
                "you can write, e.g. --fairness-report fairness-report.")
    return f"fairness report: {page}"
