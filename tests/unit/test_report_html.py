"""report.json and report.html: schema, round trip, escaping, sections, figures."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.files import REPORT_FORMAT, load_report
from pytest_fairness.records import TestRecord
from pytest_fairness.report.html import render_html, write_html
from pytest_fairness.report.json_report import (
    ReportDocument,
    build_report,
    report_results,
    write_json,
)
from pytest_fairness.results import Curve, GroupStat, IndicatorResult, Matrix

XSS = "<script>alert(1)</script>"


class Page(HTMLParser):
    """Collects tags, text and img sources; fails on nothing (HTML is forgiving)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []
        self.images: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "img":
            self.images.append(dict(attrs)["src"] or "")

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(page: str) -> Page:
    parser = Page()
    parser.feed(page)
    parser.close()
    return parser


def rich_result() -> IndicatorResult:
    """A result with every part the report draws, and hostile strings in its data."""
    slices = tuple(IndicatorResult("label_association", "hit rate", 0.1 * t, at=t / 10,
                                   min_group_size=1, higher_is_better=False,
                                   groups=(GroupStat(XSS, 40, 0.1 * t), GroupStat("b", 40, 0.0)))
                   for t in range(1, 4))
    return IndicatorResult(
        "label_association", "hit rate", 0.05, at=0.0, min_group_size=30,
        higher_is_better=False,
        groups=(GroupStat(XSS, 40, 0.1, interval=(0.05, 0.15)), GroupStat("b", 40, 0.0),
                GroupStat("tiny", 3, 0.9, excluded=True)),
        stats={"p_value": 0.2}, intervals={"gap": (0.0, 0.2)},
        curves={"harmful": Curve((0.0, 0.5, 1.0), (0.2, 0.1, 0.0), "τ", "hit rate",
                                 interval=((0.1, 0.3), (0.0, 0.2), (0.0, 0.0)))},
        matrices={"auc": Matrix((XSS, "b"), ("blur", "jpeg"), ((0.1, -0.2), (0.0, 0.05)))},
        tables={"amplification": tuple({"attributes": XSS, "delta": 0.1 * i}
                                       for i in range(70))},
        notes=(f"note with {XSS}",), params={"top_k": 5}, slices=slices,
    )


def document(**run: Any) -> ReportDocument:
    r = rich_result()
    records = [
        {"nodeid": f"t.py::test_x[{XSS}]", "outcome": "failed",
         "results": [{**r.to_dict(), "key": None}],
         "checks": [{"limit": "max_gap", "threshold": 0.05, "observed": 0.1, "passed": False,
                     "indicator": r.name, "metric": r.metric, "at": None, "key": None,
                     "confidence": "point", "interval": None, "where": ""}],
         "regressions": [{"test": "t.py::test_x", "result": XSS, "metric": "gap",
                          "baseline": 0.05, "now": 0.1, "tolerance": 0.0,
                          "lower_is_better": True, "higher_is_better_groups": False,
                          "regressed": True, "groups": [[XSS, 0.05, 0.1]], "notes": [XSS],
                          "where": ""}]},
        {"nodeid": "t.py::test_plain", "outcome": "passed",
         "results": [{**IndicatorResult("ieat", "association", 0.3).to_dict(), "key": "k"}]},
    ]
    return build_report([TestRecord.from_dict(r) for r in records],
                        run={"label": XSS, "versions": {"python": "3"}, **run})


def test_json_round_trip(tmp_path: Path) -> None:
    """report.json reloads equal, and every result rebuilds equal to the original."""
    doc = document()
    path = write_json(doc, tmp_path / "out")
    loaded = load_report(path.parent)
    assert loaded == json.loads(json.dumps(doc))
    assert loaded["format"] == REPORT_FORMAT and loaded["summary"] == {
        "tests": 2, "failed": 1, "results": 2, "regressions": 1, "inconclusive": 0}
    (first, r), (second, _) = report_results(loaded)
    assert r == rich_result() and first.startswith("t.py::test_x")


@pytest.mark.parametrize(
    ("content", "fragment"),
    [("{", "is not valid JSON"), ('{"format": "x"}', "is not a pytest-fairness report"),
     (f'{{"format": "{REPORT_FORMAT}", "schema": 7}}', "report schema 7")],
)
def test_load_errors(tmp_path: Path, content: str, fragment: str) -> None:
    (tmp_path / "report.json").write_text(content)
    with pytest.raises(FairnessConfigError, match=fragment):
        load_report(tmp_path)


def test_load_missing(tmp_path: Path) -> None:
    with pytest.raises(FairnessConfigError, match="does not exist; write one with"):
        load_report(tmp_path / "none.json")


def test_every_data_string_is_escaped() -> None:
    """The hostile group, test id, label, note and table cell never appear unescaped."""
    page = render_html(document(), draw=False)
    assert XSS not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "script" not in parse(page).tags


def test_sections_and_names() -> None:
    """Summary rows, every test, group table, matrix, cut table, notes, regression."""
    page = render_html(document(), draw=False)
    text = " ".join(parse(page).text)
    for fragment in (f"t.py::test_x[{XSS}]", "t.py::test_plain", "max_gap ≤ 0.05", "FAIL",
                     "REGRESSED", "excluded (n < 30)", "matrix auc", "table amplification",
                     "10 more rows", f"note: note with {XSS}", "lower is better",
                     "no regression of gap", "figures are left out"):
        assert fragment in text, fragment


def test_figures_are_embedded_svg(tmp_path: Path) -> None:
    """Bars, sweep, curves and heatmap are inline data: images; nothing is linked."""
    pytest.importorskip("matplotlib")
    path = write_html(document(), tmp_path)
    page = path.read_text()
    parsed = parse(page)
    assert len(parsed.images) == 4  # bars, sweep, curves, heatmap
    assert all(src.startswith("data:image/svg+xml;base64,") for src in parsed.images)
    assert "http://" not in page.replace("http://www.w3.org", "")
    assert "<link" not in page and "<script" not in page
    import base64

    svg = base64.b64decode(parsed.images[0].split(",", 1)[1]).decode()
    assert svg.lstrip().startswith("<?xml") and XSS not in svg


def test_fair_sa_uses_report_plots() -> None:
    """A Fair SA result gets its own curves and AUC heatmap."""
    pytest.importorskip("matplotlib")
    np = pytest.importorskip("numpy")
    from pytest_fairness.indicators import fair_sa

    clean = np.eye(4)
    half = np.eye(4)
    half[3] = [1, 1, 1, 0]
    r = fair_sa({None: clean, ("blur", 1.0): half}, attribute=[XSS, XSS, "old", "old"],
                perturbations=["blur"], levels=[1.0], threshold=0.5, min_group_size=1)
    page = render_html(build_report([TestRecord.from_dict({
        "nodeid": "t.py::sa", "outcome": "passed", "results": [{**r.to_dict(), "key": None}]})]))
    parsed = parse(page)
    text = " ".join(parsed.text)
    assert "Fair SA curves" in text and "item-response curves" in text
    assert "could not be drawn" not in text
    assert XSS not in page and len(parsed.images) >= 4


def test_trends_from_history() -> None:
    """With two or more runs the trend section tables every checkpoint."""
    doc = document()
    rows = [{"run_id": i, "column": c, "test": "t.py::test_plain", "result_id": "k",
             "value": 0.1 * i, "gap": None, "ratio": None, "worst_value": None,
             "outcome": "passed"} for i, c in ((1, XSS), (2, "ck2"), (3, "ck2"))]
    page = render_html(doc, trends=rows, draw=False)
    text = " ".join(parse(page).text)
    assert "Trends across checkpoints" in text and "ck2 (run 2)" in text and "ck2 (run 3)" in text
    assert XSS not in page
    assert "Trends" not in render_html(doc, trends=rows[:1], draw=False)


def test_build_report_and_an_escaped_run_label() -> None:
    doc = build_report([TestRecord("t.py::test", "t.py::test", outcome="passed")])
    assert (doc["format"], doc["schema"], doc["summary"]["tests"]) == (
        "pytest-fairness-report", 1, 1)
    page = render_html(build_report([], run={"label": "<b>"}), draw=False)
    assert "&lt;b&gt;" in page and "<b>" not in page
