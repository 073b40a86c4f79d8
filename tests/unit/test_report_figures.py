"""Report figures: Fair SA curves, item-response curves and the AUC heatmap."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.indicators import fair_sa
from pytest_fairness.report.figures import (
    auc_heatmap,
    fair_sa_curves,
    figure_bytes,
    irc_curves,
    new_figure,
)
from pytest_fairness.results import IndicatorResult

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def result() -> Any:
    clean = np.eye(4)
    half = np.eye(4)
    half[3] = [1, 1, 1, 0]
    features = {None: clean, ("blur", 0.5): half, ("blur", 1.0): half,
                ("jpeg", 0.5): clean, ("jpeg", 1.0): half}
    return fair_sa(features, attribute=["young", "young", "old", "old"],
                   perturbations=["blur", "jpeg"], levels=[0.5, 1.0], threshold=0.5,
                   min_group_size=1)


def svg_text(data: bytes) -> str:
    text = data.decode()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    return text


def test_fair_sa_curves_png_and_svg(result: Any) -> None:
    png = fair_sa_curves(result)
    assert png.startswith(PNG) and len(png) > 1000
    svg = svg_text(fair_sa_curves(result, fmt="svg"))
    for text in ("Fair SA curves (self_matching)", "blur", "jpeg", "young", "old", "clean"):
        assert text in svg


def test_curves_can_be_restricted(result: Any) -> None:
    svg = svg_text(fair_sa_curves(result, perturbations="jpeg", subgroups=["old"], fmt="svg"))
    assert "jpeg" in svg and "blur" not in svg and "young" not in svg


def test_irc_curves_include_all_images(result: Any) -> None:
    svg = svg_text(irc_curves(result, fmt="svg"))
    assert "VPSA item-response curves (self_matching)" in svg
    assert "<!-- all -->" in svg and "match rate" in svg


def test_auc_heatmap_shows_cells_and_norms(result: Any) -> None:
    svg = svg_text(auc_heatmap(result, fmt="svg"))
    # AUCs: blur ±0.375, jpeg ±0.125; row L1 0.5, column L1 0.75 and 0.25, matrix 1
    for text in ("+0.38", "-0.12", "young (0.5)", "old (0.5)", "0.75", "matrix L1 1"):
        assert text in svg, text
    assert auc_heatmap(result).startswith(PNG)
    assert "item-response" in svg_text(auc_heatmap(result, matrix="irc_auc", fmt="svg"))


def test_svg_is_deterministic(result: Any) -> None:
    assert auc_heatmap(result, fmt="svg") == auc_heatmap(result, fmt="svg")
    assert fair_sa_curves(result, fmt="svg") == fair_sa_curves(result, fmt="svg")


def test_pyplot_is_not_used(result: Any) -> None:
    fair_sa_curves(result)
    pyplot = sys.modules.get("matplotlib.pyplot")
    assert pyplot is None or not pyplot.get_fignums()


def test_figure_bytes_rejects_other_formats() -> None:
    with pytest.raises(FairnessConfigError, match=r"fmt='jpg'"):
        figure_bytes(new_figure(), "jpg")


def test_wrong_results_and_selections_raise(result: Any) -> None:
    other = IndicatorResult("group_metrics", "accuracy", 0.5)
    with pytest.raises(FairnessConfigError, match=r"fair_sa_curves draws results of"):
        fair_sa_curves(other)
    with pytest.raises(FairnessConfigError, match=r"irc_curves draws results of"):
        irc_curves(other)
    with pytest.raises(FairnessConfigError, match=r"matrices\['auc'\].*\[\]"):
        auc_heatmap(other)
    with pytest.raises(FairnessConfigError, match=r"perturbations \['rotation'\] not in"):
        fair_sa_curves(result, perturbations="rotation")
    with pytest.raises(FairnessConfigError, match=r"subgroups \['kid'\] not in"):
        fair_sa_curves(result, subgroups=["kid"])


def test_empty_auc_matrix_raises() -> None:
    clean = np.eye(4)
    r = fair_sa({None: clean, ("p", 1.0): clean}, attribute=[0, 0, 1, 1], perturbations="p",
                levels=[1.0], threshold=0.5, min_group_size=3)
    with pytest.raises(FairnessConfigError, match=r"is empty.*'auc_all'"):
        auc_heatmap(r)
    assert auc_heatmap(r, matrix="auc_all").startswith(PNG)


def test_data_uri() -> None:
    from pytest_fairness.report.figures import data_uri

    assert data_uri(b"<svg/>") == "data:image/svg+xml;base64,PHN2Zy8+"
