"""Figures of the HTML report, drawn with matplotlib and returned as SVG bytes.

matplotlib is imported inside the functions (never when the plugin loads) and drives its
SVG canvas directly through :class:`matplotlib.figure.Figure`: no ``pyplot``, no global
backend switch, so a user's interactive backend is left alone (the Agg machinery does the
text layout). :func:`available` says whether matplotlib is installed; the report leaves
figures out, with a note, when it is not.

Each function returns the SVG document as bytes; :func:`data_uri` turns it into an
``<img src=...>`` value, which keeps the report self-contained and isolates each figure's
ids and any text in it from the page.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from pytest_fairness.results import IndicatorResult, Matrix

__all__ = ["available", "import_problem", "data_uri", "group_bars", "heatmap", "lines"]

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


def available() -> bool:
    """Whether matplotlib can be imported."""
    return import_problem() is None


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=96, layout="constrained")


def _svg(figure: Figure) -> bytes:
    import matplotlib

    buffer = io.BytesIO()
    # Fixed metadata and hash salt: the same result draws the same bytes.
    with matplotlib.rc_context({"svg.hashsalt": "pytest-fairness", "svg.fonttype": "path"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return buffer.getvalue()


def data_uri(svg: bytes) -> str:
    """``data:image/svg+xml;base64,...`` for an ``<img>`` tag.

    Examples
    --------
    >>> data_uri(b"<svg/>")
    'data:image/svg+xml;base64,PHN2Zy8+'
    """
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")


def _short(text: str, width: int = 28) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def group_bars(result: IndicatorResult) -> bytes | None:
    """Horizontal bars of the per-group values with their intervals; None without groups.

    The best included group is blue, the worst red, excluded groups grey.
    """
    groups = list(result.groups)
    if not groups:
        return None
    best, worst = result.best_group, result.worst_group
    figure = _figure(6.0, 0.9 + 0.32 * len(groups))
    axes = figure.add_subplot()
    positions = list(range(len(groups)))[::-1]
    values = [0.0 if math.isnan(g.value) else g.value for g in groups]
    colors = []
    for g in groups:
        if g.excluded:
            colors.append(_MUTED)
        elif worst is not None and g is worst and best is not None and worst.value != best.value:
            colors.append(_WORST)
        elif best is not None and g is best:
            colors.append(_BEST)
        else:
            colors.append("#6c8ebf")
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
    return _svg(figure)


def lines(
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    x_label: str = "",
    y_label: str = "",
    bands: Mapping[str, Sequence[tuple[float, float]]] | None = None,
    categorical: Sequence[str] | None = None,
) -> bytes | None:
    """Line plot of named series ``{name: (x, y)}``: τ sweeps, Fair SA curves, trends.

    ``bands`` adds a shaded interval per series; ``categorical`` labels integer x positions
    (checkpoints of a trend). Returns None when there is nothing to draw.
    """
    drawn = {k: v for k, v in series.items() if len(v[0])}
    if not drawn:
        return None
    figure = _figure(6.0, 3.2)
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
    return _svg(figure)


def heatmap(matrix: Matrix, *, title: str = "") -> bytes | None:
    """Heatmap of a labelled matrix (AUC: rows subgroups, columns perturbations), annotated.

    A diverging colour scale centred on 0, since AUC cells are signed biases.
    """
    from pytest_fairness.results import group_label

    if not matrix.rows or not matrix.columns:
        return None
    values = [[v if not math.isnan(v) else 0.0 for v in row] for row in matrix.values]
    extent = max((abs(v) for row in values for v in row), default=0.0) or 1.0
    figure = _figure(1.6 + 0.75 * len(matrix.columns), 1.0 + 0.45 * len(matrix.rows))
    axes = figure.add_subplot()
    image = axes.imshow(values, cmap="RdBu_r", vmin=-extent, vmax=extent, aspect="auto")
    axes.set_xticks(list(range(len(matrix.columns))))
    axes.set_xticklabels([_short(group_label(c), 16) for c in matrix.columns], rotation=35,
                         ha="right")
    axes.set_yticks(list(range(len(matrix.rows))))
    axes.set_yticklabels([_short(group_label(r), 24) for r in matrix.rows])
    for i, row in enumerate(matrix.values):
        for j, value in enumerate(row):
            text = "n/a" if math.isnan(value) else f"{value:.3g}"
            axes.text(j, i, text, ha="center", va="center", fontsize=7)
    if title:
        axes.set_title(title)
    figure.colorbar(image, ax=axes, shrink=0.8)
    return _svg(figure)


def sweep_series(result: IndicatorResult) -> dict[str, Any]:
    """The τ/K/level sweep of a result with slices: value and gap against the coordinate."""
    points = sorted(
        ((r.at, r) for r in (result, *result.slices) if isinstance(r.at, (int, float))),
        key=lambda pair: pair[0],
    )
    if len(points) < 2:
        return {}
    x = [float(at) for at, _ in points]
    series: dict[str, Any] = {result.metric: (x, [r.value for _, r in points])}
    gaps = [r.gap for _, r in points]
    if not all(math.isnan(g) for g in gaps):
        series["gap"] = (x, gaps)
    return series
