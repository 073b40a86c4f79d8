"""Figures for the HTML report, rendered to PNG or SVG bytes.

Small functions, one per figure, each taking an
:class:`~pytest_fairness.results.IndicatorResult` and returning ``bytes`` the report embeds.
matplotlib is imported on first use and draws through the Agg canvas of a
``matplotlib.figure.Figure`` (never pyplot), so no global backend or figure state is
touched and nothing opens a window. SVG output is deterministic (no date, fixed ids).
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pytest_fairness.errors import FairnessConfigError, MissingDependencyError
from pytest_fairness.results import IndicatorResult, group_label

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["auc_heatmap", "fair_sa_curves", "figure_bytes", "irc_curves", "new_figure"]

FORMATS = ("png", "svg")


def new_figure(width: float = 6.4, height: float = 4.0) -> Figure:
    """A matplotlib Figure on an Agg canvas, independent of pyplot."""
    try:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - matplotlib is installed in CI
        raise MissingDependencyError(
            "plots need matplotlib; install it with pip install matplotlib."
        ) from exc
    matplotlib.rcParams["svg.hashsalt"] = "pytest-fairness"  # stable SVG element ids
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def figure_bytes(figure: Figure, fmt: str = "png", *, dpi: int = 100) -> bytes:
    """Render a figure to PNG or SVG bytes (no timestamps in the metadata)."""
    if fmt not in FORMATS:
        raise FairnessConfigError(f"fmt must be 'png' or 'svg'; got fmt={fmt!r}.")
    buffer = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    figure.savefig(buffer, format=fmt, dpi=dpi, metadata=metadata)
    return buffer.getvalue()


def _check_fair_sa(result: Any, function: str) -> IndicatorResult:
    if not isinstance(result, IndicatorResult) or "cells" not in result.tables or (
        "curves" not in result.tables
    ):
        raise FairnessConfigError(
            f"{function} draws results of indicators.fair_sa; got "
            f"{getattr(result, 'name', type(result).__name__)!r}."
        )
    return result


def _select(available: Sequence[str], wanted: Any, what: str) -> list[str]:
    if wanted is None:
        return list(available)
    chosen = [wanted] if isinstance(wanted, str) else [str(w) for w in wanted]
    missing = [w for w in chosen if w not in available]
    if missing:
        raise FairnessConfigError(
            f"{what} {missing} not in the result; available: {list(available)}."
        )
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


def _curve_plot(
    result: IndicatorResult, kind: str, perturbations: Any, subgroups: Any, fmt: str,
    overall: bool,
) -> bytes:
    index = result.tables["curves"]
    names = list(dict.fromkeys(str(r["perturbation"]) for r in index))
    labels = list(dict.fromkeys(str(r["subgroup"]) for r in index if r["subgroup"] is not None))
    names = _select(names, perturbations, "perturbations")
    labels = _select(labels, subgroups, "subgroups")
    figure = new_figure()
    for ax, name in zip(_panels(figure, len(names)), names):
        lines = [(label, f"{kind}/{label}/{name}") for label in labels]
        if overall:
            lines.insert(0, ("all", f"{kind}/{name}"))
        for label, key in lines:
            curve = result.curves[key]
            (line,) = ax.plot(curve.x, curve.y, marker=".", label=label,
                              color="black" if label == "all" and overall else None)
            # the clean (unperturbed) point, highlighted as in the seed's figures
            ax.plot(curve.x[:1], curve.y[:1], marker="*", markersize=11,
                    color=line.get_color(), markeredgecolor="black", linestyle="none")
        if kind == "fair_sa":
            ax.axhline(0.0, color="grey", linewidth=0.8, linestyle="--")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("level δ (★ clean)", fontsize=8)
        ax.tick_params(labelsize=7)
        first = result.curves[lines[0][1]]
        ax.set_ylabel("α(δ)" if kind == "fair_sa" else first.y_label, fontsize=8)
    handles, texts = figure.axes[0].get_legend_handles_labels()
    figure.legend(handles, texts, loc="outside lower center", ncols=min(4, len(texts)),
                  fontsize=7)
    task = result.params.get("task", "")
    title = "Fair SA curves" if kind == "fair_sa" else "VPSA item-response curves"
    figure.suptitle(f"{title} ({task})", fontsize=10)
    return figure_bytes(figure, fmt)


def fair_sa_curves(
    result: IndicatorResult, *, perturbations: Any = None, subgroups: Any = None,
    fmt: str = "png",
) -> bytes:
    """Fair SA curves α(δ): one panel per perturbation, one line per protected subgroup.

    The clean point (δ = 0) is marked with a star; the dashed line is α = 0 (fair).

    Parameters
    ----------
    result : IndicatorResult
        A result of :func:`pytest_fairness.indicators.fair_sa`.
    perturbations, subgroups : str or list of str, optional
        Which panels and lines to draw (subgroups by label); default all.
    fmt : {"png", "svg"}
        Output format.

    Returns
    -------
    bytes
        The image.
    """
    return _curve_plot(_check_fair_sa(result, "fair_sa_curves"), "fair_sa", perturbations,
                       subgroups, fmt, overall=False)


def irc_curves(
    result: IndicatorResult, *, perturbations: Any = None, subgroups: Any = None,
    fmt: str = "png",
) -> bytes:
    """VPSA item-response curves (match rate or GAR vs δ): all images and each subgroup.

    Parameters
    ----------
    result : IndicatorResult
        A result of :func:`pytest_fairness.indicators.fair_sa`.
    perturbations, subgroups : str or list of str, optional
        Which panels and lines to draw; default all.
    fmt : {"png", "svg"}
        Output format.

    Returns
    -------
    bytes
        The image.
    """
    return _curve_plot(_check_fair_sa(result, "irc_curves"), "irc", perturbations,
                       subgroups, fmt, overall=True)


def auc_heatmap(result: IndicatorResult, *, matrix: str = "auc", fmt: str = "png") -> bytes:
    """The signed-AUC matrix as a heatmap, with row and column L1 norms in the labels.

    Rows are protected subgroups, columns perturbations; each cell shows its AUC on a
    diverging scale centred at 0 (blue favours the subgroup, red disfavours it); row labels
    end with the row's L1 norm, column labels with the column's, the title gives the
    matrix's, as in the seed's figures.

    Parameters
    ----------
    result : IndicatorResult
        A result with ``matrices[matrix]`` (a Fair SA result).
    matrix : str, default "auc"
        Which matrix (``"auc"``, ``"auc_all"`` or ``"irc_auc"``).
    fmt : {"png", "svg"}
        Output format.

    Returns
    -------
    bytes
        The image.
    """
    if not isinstance(result, IndicatorResult) or matrix not in result.matrices:
        have = sorted(result.matrices) if isinstance(result, IndicatorResult) else []
        raise FairnessConfigError(
            f"auc_heatmap needs matrices[{matrix!r}] in the result; it has {have}."
        )
    m = result.matrices[matrix]
    if not m.rows or not m.columns:
        raise FairnessConfigError(
            f"matrices[{matrix!r}] is empty (no subgroup reached min_group_size); draw "
            "'auc_all' or lower min_group_size."
        )
    import numpy as np

    values = np.array(m.values, dtype=float)
    rows_l1 = np.nansum(np.abs(values), axis=1)
    cols_l1 = np.nansum(np.abs(values), axis=0)
    figure = new_figure(1.8 + 1.0 * len(m.columns), 1.4 + 0.45 * len(m.rows))
    ax = figure.add_subplot()
    signed = matrix != "irc_auc"
    limit = float(np.nanmax(np.abs(values))) or 1.0
    image = ax.imshow(values, cmap="RdBu" if signed else "viridis", aspect="auto",
                      vmin=-limit if signed else 0.0, vmax=limit if signed else 1.0)
    ax.set_xticks(range(len(m.columns)),
                  [f"{group_label(c)}\n{cols_l1[j]:.3g}" for j, c in enumerate(m.columns)],
                  rotation=45, ha="right", fontsize=7)
    ax.set_yticks(range(len(m.rows)),
                  [f"{group_label(r)} ({rows_l1[i]:.3g})" for i, r in enumerate(m.rows)],
                  fontsize=7)
    for i in range(len(m.rows)):
        for j in range(len(m.columns)):
            if not math.isnan(values[i, j]):
                strong = abs(values[i, j]) > 0.6 * limit
                ax.text(j, i, f"{values[i, j]:+.2f}" if signed else f"{values[i, j]:.2f}",
                        ha="center", va="center", fontsize=7,
                        color="white" if strong else "black")
    figure.colorbar(image, ax=ax, shrink=0.8)
    what = "signed AUC of Fair SA curves" if signed else "AUC of item-response curves"
    ax.set_title(f"{what} — matrix L1 {float(np.nansum(np.abs(values))):.3g}", fontsize=9)
    return figure_bytes(figure, fmt)
