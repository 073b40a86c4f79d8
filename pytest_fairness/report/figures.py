"""Figures of the HTML report, drawn with matplotlib and returned as PNG or SVG bytes.

No ``pyplot`` (:func:`new_figure` draws on an Agg canvas): a user's backend is left alone.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from pytest_fairness.errors import FairnessConfigError, require
from pytest_fairness.results import IndicatorResult, group_label

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from pytest_fairness.results import Matrix

__all__ = ["FORMATS", "auc_heatmap", "data_uri", "fair_sa_curves", "figure_bytes", "group_bars",
           "heatmap", "import_problem", "irc_curves", "lines", "new_figure", "sweep_series"]

#: What :func:`figure_bytes` writes.
FORMATS: Final = ("png", "svg")

_BEST = "#2b7bba"
_WORST = "#d1495b"
_MUTED = "#b0b0b0"


def import_problem() -> str | None:
    """Why matplotlib cannot be imported, or None when it can."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as error:
        return str(error)
    return None


def new_figure(width: float = 6.4, height: float = 4.0) -> Figure:
    """A matplotlib Figure on an Agg canvas, independent of pyplot."""
    agg = require("matplotlib.backends.backend_agg", purpose="drawing plots")
    figure: Figure = require("matplotlib.figure", purpose="drawing plots").Figure(
        figsize=(width, height), layout="constrained")
    agg.FigureCanvasAgg(figure)
    return figure


def figure_bytes(figure: Figure, fmt: str = "png", *, dpi: int = 100) -> bytes:
    """Render a figure to PNG or SVG bytes; the same figure always gives the same bytes."""
    if fmt not in FORMATS:
        raise FairnessConfigError(f"fmt must be 'png' or 'svg'; got fmt={fmt!r}.")
    import matplotlib

    buffer = io.BytesIO()
    metadata = {"Date": None, "Creator": None} if fmt == "svg" else {"Software": None}
    # A fixed hash salt gives stable SVG element ids; set for this call only.
    with matplotlib.rc_context({"svg.hashsalt": "pytest-fairness", "svg.fonttype": "path"}):
        figure.savefig(buffer, format=fmt, dpi=dpi, metadata=metadata)
    return buffer.getvalue()


def data_uri(svg: bytes) -> str:
    """``data:image/svg+xml;base64,...`` for an ``<img>`` tag (keeps each figure's ids apart)."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")


def _short(text: str, width: int = 28) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def group_bars(result: IndicatorResult, *, fmt: str = "svg") -> bytes | None:
    """Horizontal bars of the per-group values and intervals; None without groups."""
    groups = list(result.groups)
    if not groups:
        return None
    best, worst = result.best_group, result.worst_group
    differ = best is not None and worst is not None and worst.value != best.value
    figure = new_figure(6.0, 0.9 + 0.32 * len(groups))
    axes = figure.add_subplot()
    positions = list(range(len(groups)))[::-1]
    values = [0.0 if math.isnan(g.value) else g.value for g in groups]
    colors = [_MUTED if g.excluded else _WORST if differ and g is worst else
              _BEST if g is best else "#6c8ebf" for g in groups]
    axes.barh(positions, values, color=colors, height=0.6)
    for y, g in zip(positions, groups):
        if g.interval is not None:
            low, high = g.interval
            axes.plot([low, high], [y, y], color="black", linewidth=1.2)
            axes.plot([low, low], [y - 0.15, y + 0.15], color="black", linewidth=1.2)
            axes.plot([high, high], [y - 0.15, y + 0.15], color="black", linewidth=1.2)
    axes.set_yticks(positions)
    axes.set_yticklabels([_short(g.label) + (" (excl.)" if g.excluded else "") for g in groups])
    axes.set_xlabel(result.metric)
    axes.grid(axis="x", alpha=0.3)
    return figure_bytes(figure, fmt)


def lines(series: Mapping[str, tuple[Sequence[float], Sequence[float]]], *, x_label: str = "",
          y_label: str = "", bands: Mapping[str, Sequence[tuple[float, float]]] | None = None,
          categorical: Sequence[str] | None = None, fmt: str = "svg") -> bytes | None:
    """Line plot of ``{name: (x, y)}`` (τ sweeps, curves, trends); None with nothing to draw.

    ``bands``: a shaded interval per series; ``categorical``: labels of integer x positions.
    """
    drawn = {k: v for k, v in series.items() if len(v[0])}
    if not drawn:
        return None
    figure = new_figure(6.0, 3.2)
    axes = figure.add_subplot()
    for name, (x, y) in list(drawn.items())[:12]:
        marker = "o" if len(x) <= 25 else None
        axes.plot(list(x), list(y), marker=marker, markersize=3, linewidth=1.4,
                  label=_short(name, 36))
        band = (bands or {}).get(name)
        if band:
            axes.fill_between(list(x), [b[0] for b in band], [b[1] for b in band], alpha=0.15)
    if categorical is not None:
        axes.set_xticks(list(range(len(categorical))))
        axes.set_xticklabels([_short(c, 16) for c in categorical], rotation=30, ha="right")
    axes.set_xlabel(x_label)
    axes.set_ylabel(y_label)
    axes.grid(alpha=0.3)
    if len(drawn) > 1:
        axes.legend(fontsize="small", loc="best")
    return figure_bytes(figure, fmt)


def sweep_series(result: IndicatorResult) -> dict[str, tuple[list[float], list[float]]]:
    """The τ/K/level sweep of a result with slices: value and gap against the coordinate."""
    points = sorted(((r.at, r) for r in (result, *result.slices)
                     if isinstance(r.at, (int, float))), key=lambda pair: pair[0])
    if len(points) < 2:
        return {}
    x = [float(at) for at, _ in points]
    series = {result.metric: (x, [r.value for _, r in points])}
    gaps = [r.gap for _, r in points]
    if not all(math.isnan(g) for g in gaps):
        series["gap"] = (x, gaps)
    return series


def _draw_heatmap(matrix: Matrix, *, signed: bool, norms: bool, cell: str, title: str,
                  fmt: str) -> bytes:
    """An annotated heatmap, diverging around 0 when ``signed`` (else on [0, 1]), L1 ``norms``."""
    import numpy as np

    values = np.array(matrix.values, dtype=float)
    rows_l1 = np.nansum(np.abs(values), axis=1)
    cols_l1 = np.nansum(np.abs(values), axis=0)
    figure = new_figure(1.8 + 1.0 * len(matrix.columns), 1.4 + 0.45 * len(matrix.rows))
    ax = figure.add_subplot()
    limit = (float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 0.0) or 1.0
    # Blue for positive cells: a positive signed AUC favours the row's subgroup.
    image = ax.imshow(values, cmap="RdBu" if signed else "viridis", aspect="auto",
                      vmin=-limit if signed else 0.0, vmax=limit if signed else 1.0)
    columns = [_short(group_label(c), 16) for c in matrix.columns]
    rows = [_short(group_label(r), 24) for r in matrix.rows]
    if norms:
        columns = [f"{c}\n{cols_l1[j]:.3g}" for j, c in enumerate(columns)]
        rows = [f"{r} ({rows_l1[i]:.3g})" for i, r in enumerate(rows)]
    ax.set_xticks(range(len(columns)), columns, rotation=45, ha="right", fontsize=7)
    ax.set_yticks(range(len(rows)), rows, fontsize=7)
    for i in range(len(matrix.rows)):
        for j in range(len(matrix.columns)):
            value = values[i, j]
            strong = not math.isnan(value) and abs(value) > 0.6 * limit
            ax.text(j, i, "n/a" if math.isnan(value) else format(value, cell), ha="center",
                    va="center", fontsize=7, color="white" if strong else "black")
    figure.colorbar(image, ax=ax, shrink=0.8)
    if title:
        ax.set_title(title, fontsize=9)
    return figure_bytes(figure, fmt)


def heatmap(matrix: Matrix, *, title: str = "", fmt: str = "svg") -> bytes | None:
    """Annotated heatmap of a labelled matrix centred on 0; None when the matrix is empty."""
    if not matrix.rows or not matrix.columns:
        return None
    return _draw_heatmap(matrix, signed=True, norms=False, cell=".3g", title=title, fmt=fmt)


def _check_fair_sa(result: Any, function: str) -> IndicatorResult:
    if not isinstance(result, IndicatorResult) or not {"cells", "curves"} <= set(result.tables):
        got = getattr(result, "name", type(result).__name__)
        raise FairnessConfigError(f"{function} draws results of indicators.fair_sa; got {got!r}.")
    return result


def _select(available: Sequence[str], wanted: Any, what: str) -> list[str]:
    if wanted is None:
        return list(available)
    chosen = [wanted] if isinstance(wanted, str) else [str(w) for w in wanted]
    missing = [w for w in chosen if w not in available]
    if missing:
        raise FairnessConfigError(f"{what} {missing} not in the result; available: "
                                  f"{list(available)}.")
    return chosen


def _panels(figure: Figure, count: int) -> list[Axes]:
    columns = min(3, count)
    rows = math.ceil(count / columns)
    figure.set_size_inches(3.6 * columns, 2.8 * rows)
    axes = figure.subplots(rows, columns, squeeze=False, sharex=True)
    flat = [ax for row in axes for ax in row]
    for ax in flat[count:]:
        ax.set_visible(False)
    return flat[:count]


def _curve_plot(result: IndicatorResult, kind: str, perturbations: Any, subgroups: Any,
                fmt: str, overall: bool) -> bytes:
    index = result.tables["curves"]
    names = list(dict.fromkeys(str(r["perturbation"]) for r in index))
    labels = list(dict.fromkeys(str(r["subgroup"]) for r in index if r["subgroup"] is not None))
    names = _select(names, perturbations, "perturbations")
    labels = _select(labels, subgroups, "subgroups")
    figure = new_figure()
    for ax, name in zip(_panels(figure, len(names)), names):
        drawn = [(label, f"{kind}/{label}/{name}") for label in labels]
        if overall:
            drawn.insert(0, ("all", f"{kind}/{name}"))
        for label, key in drawn:
            curve = result.curves[key]
            (line,) = ax.plot(curve.x, curve.y, marker=".", label=label,
                              color="black" if label == "all" and overall else None)
            # the clean (unperturbed) point, highlighted as in the figures of "Fair SA:
            # Sensitivity Analysis for Fairness in Face Recognition" (Joshi et al. 2022)
            ax.plot(curve.x[:1], curve.y[:1], marker="*", markersize=11,
                    color=line.get_color(), markeredgecolor="black", linestyle="none")
        if kind == "fair_sa":
            ax.axhline(0.0, color="grey", linewidth=0.8, linestyle="--")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("level δ (★ clean)", fontsize=8)
        ax.tick_params(labelsize=7)
        first = result.curves[drawn[0][1]]
        ax.set_ylabel("α(δ)" if kind == "fair_sa" else first.y_label, fontsize=8)
    handles, texts = figure.axes[0].get_legend_handles_labels()
    figure.legend(handles, texts, loc="outside lower center", ncols=min(4, len(texts)),
                  fontsize=7)
    task = result.params.get("task", "")
    title = "Fair SA curves" if kind == "fair_sa" else "VPSA item-response curves"
    figure.suptitle(f"{title} ({task})", fontsize=10)
    return figure_bytes(figure, fmt)


def fair_sa_curves(result: IndicatorResult, *, perturbations: Any = None,
                   subgroups: Any = None, fmt: str = "png") -> bytes:
    """Fair SA curves α(δ): a panel per perturbation, a line per subgroup, ★ at δ = 0."""
    return _curve_plot(_check_fair_sa(result, "fair_sa_curves"), "fair_sa", perturbations,
                       subgroups, fmt, overall=False)


def irc_curves(result: IndicatorResult, *, perturbations: Any = None, subgroups: Any = None,
               fmt: str = "png") -> bytes:
    """VPSA item-response curves (match rate or GAR vs δ): all images and each subgroup."""
    return _curve_plot(_check_fair_sa(result, "irc_curves"), "irc", perturbations,
                       subgroups, fmt, overall=True)


def auc_heatmap(result: IndicatorResult, *, matrix: str = "auc", fmt: str = "png") -> bytes:
    """A Fair SA matrix (``auc``, ``auc_all``, ``irc_auc``) as a heatmap with L1 norms.

    As in "Fair SA: Sensitivity Analysis for Fairness in Face Recognition" (Joshi et al. 2022).
    """
    if not isinstance(result, IndicatorResult) or matrix not in result.matrices:
        have = sorted(result.matrices) if isinstance(result, IndicatorResult) else []
        raise FairnessConfigError(f"auc_heatmap needs matrices[{matrix!r}] in the result; it has "
                                  f"{have}.")
    m = result.matrices[matrix]
    if not m.rows or not m.columns:
        raise FairnessConfigError(f"matrices[{matrix!r}] is empty (no subgroup reached "
                                  "min_group_size); draw 'auc_all' or lower min_group_size.")
    signed = matrix != "irc_auc"
    total = sum(abs(v) for row in m.values for v in row if not math.isnan(v))
    what = "signed AUC of Fair SA curves" if signed else "AUC of item-response curves"
    return _draw_heatmap(m, signed=signed, norms=True, cell="+.2f" if signed else ".2f",
                         title=f"{what} — matrix L1 {total:.3g}", fmt=fmt)
