"""Unit tests of the markdown summary (``pytest_fairness.report.markdown``), parsed as markdown."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_fairness.checks import evaluate, validate_threshold
from pytest_fairness.errors import plain
from pytest_fairness.records import Comparison, TestRecord
from pytest_fairness.report.markdown import markdown_summary, write_markdown
from pytest_fairness.results import GroupStat, IndicatorResult

markdown_it = pytest.importorskip("markdown_it")
# GitHub and GitLab render GitHub-flavoured tables; CommonMark with tables is their common core.
MD = markdown_it.MarkdownIt("commonmark").enable("table")
HOSTILE = "a|b\x1b[31m<script>*x* _y_ &amp;"


def gaps(label: str = "dark") -> IndicatorResult:
    return IndicatorResult("group_metrics", "accuracy", 0.7, min_group_size=5, groups=(
        GroupStat(label, 40, 0.5), GroupStat("light", 60, 0.8), GroupStat("tiny", 3, 0.1,
                                                                           excluded=True)))


def record(nodeid: str, result: IndicatorResult, outcome: str, *,
           regressions: tuple[Comparison, ...] = (), **limits: float | str) -> TestRecord:
    """A record as the controller reads it from a worker (its JSON form)."""
    checks = evaluate(result, validate_threshold((), limits)) if limits else []
    return TestRecord.from_dict({
        "nodeid": nodeid, "outcome": outcome, "results": [{**result.to_dict(), "key": None}],
        "checks": [c.to_dict() for c in checks],
        "regressions": [c.to_dict() for c in regressions]})


def regressed(test: str = "t.py::test_b", *, paired: bool | None = True) -> Comparison:
    return Comparison(test, "group_metrics (accuracy)", "gap", 0.1, 0.3, 0.01, True,
                      interval=(0.15, 0.25), paired=paired, confidence="supported")


def tables(text: str) -> list[list[list[str]]]:
    """Every table of the rendered markdown, as rows of cell texts; no HTML, link or emphasis."""
    tokens = MD.parse(text)
    inline = [c for t in tokens for c in (t.children or [])]
    kinds = {t.type for t in [*tokens, *inline]}
    assert not {k for k in kinds if k.startswith(("html", "link", "image", "em_", "s_"))}, kinds
    found: list[list[list[str]]] = []
    for token in tokens:
        if token.type == "table_open":
            found.append([])
        elif token.type == "tr_open":
            found[-1].append([])
        elif token.type == "inline" and found and token.level >= 3 and found[-1]:
            found[-1][-1].append("".join(c.content for c in token.children or []))
    return found


def test_passing_run_is_one_verdict_and_no_table() -> None:
    """A run that passed: the verdict line and its counts, no table."""
    text = markdown_summary([record("t.py::test_a", gaps(), "passed", max_gap=0.5,
                                    confidence="point")])
    assert text.startswith("## Fairness: passed\n")
    assert "0 failed, 1 passed of 1 fairness test; 1 result." in text
    assert tables(text) == []
    compared = (replace(regressed(), now=0.1, confidence="point", interval=None),)
    assert "; no regression in 1 comparison." in markdown_summary(
        [record("t.py::test_a", gaps(), "passed", regressions=compared)])


def test_failed_limit_row_and_its_group_table() -> None:
    """A broken limit: what broke, observed against the limit, and the result's groups."""
    text = markdown_summary([record("t.py::test_a", gaps(), "passed", max_gap=0.5,
                                    confidence="point"),
                             record("t.py::test_b", gaps(), "failed", max_gap=0.1,
                                    confidence="point")])
    assert text.startswith("## Fairness: failed\n") and "1 failed, 1 passed of 2" in text
    failing, groups = tables(text)
    assert failing == [["test", "indicator", "what broke", "observed", "limit"],
                       ["t.py::test_b", "group_metrics (accuracy)", "max_gap", "0.3", "≤ 0.1"]]
    assert groups == [["group", "n", "value", "Δ best"], ["dark (worst)", "40", "0.5", "-0.3"],
                      ["light", "60", "0.8", "+0"], ["tiny (excluded: n < 5)", "3", "0.1", ""]]
    assert "<strong>t.py::test_b :: group_metrics (accuracy)</strong>" in MD.render(text)


def test_regression_with_its_paired_interval() -> None:
    """A baseline regression: a failing row and the regressions table with its interval."""
    text = markdown_summary([record("t.py::test_b", gaps(), "failed",
                                    regressions=(regressed(), regressed("t.py::test_b",
                                                                        paired=None)))])
    failing, regressions = tables(text)
    assert failing[1][2:] == ["no regression (gap)", "0.3 (was 0.1)", "worse by ≤ 0.01"]
    assert regressions[0] == ["test", "result", "compared with", "metric", "baseline → now",
                              "change", "interval", "paired"]
    assert regressions[1] == ["t.py::test_b", "group_metrics (accuracy)", "baseline", "gap",
                              "0.1 → 0.3", "+0.2 worse (tolerance 0.01)", "[+0.15, +0.25]", "yes"]
    assert regressions[2][-2:] == ["[+0.15, +0.25]", ""]
    assert "2 regressions in 2 comparisons" in text


def test_checkpoint_comparison_judged_only() -> None:
    """Checkpoint comparisons: a judged regression is listed; one only shown is not."""
    one = regressed("t.py::test_b[epoch2]", paired=False)
    text = markdown_summary([record("t.py::test_b[epoch2]", gaps(), "failed")],
                            [(one, True), (regressed("t.py::test_c[epoch2]"), False)])
    failing, regressions = tables(text)
    assert failing[1] == ["t.py::test_b[epoch2]", "group_metrics", "the test failed: see its log",
                          "", ""]
    assert [row[:3] for row in regressions[1:]] == [
        ["t.py::test_b[epoch2]", "group_metrics (accuracy)", "reference checkpoint"]]
    assert regressions[1][-1] == "no"


def test_hostile_labels_stay_in_their_cells() -> None:
    """A ``|``, a control character, HTML and emphasis in labels: text in one cell each."""
    nodeid = f"t.py::test_b[{HOSTILE}]"
    text = markdown_summary([record(nodeid, gaps(HOSTILE), "failed", max_gap=0.1,
                                   confidence="point")],
                            [(regressed(nodeid), True)])
    failing, groups, regressions = tables(text)
    assert "\x1b" not in text and "\\|" in text
    assert failing[1][0] == plain(nodeid) and len(failing[1]) == 5
    assert groups[1] == [f"{plain(HOSTILE)} (worst)", "40", "0.5", "-0.3"]
    assert regressions[1][0] == plain(nodeid) and len(regressions[1]) == 8


def test_write_markdown_to_the_file_and_the_step_summary(tmp_path: Path) -> None:
    """The file holds the summary; $GITHUB_STEP_SUMMARY gets it appended."""
    records = [record("t.py::test_b", gaps(), "failed", max_gap=0.1, confidence="point")]
    step = tmp_path / "step.md"
    step.write_text("earlier step\n")
    env: dict[str, Any] = {"GITHUB_STEP_SUMMARY": str(step)}
    lines = write_markdown(str(tmp_path / "out.md"), records, environ=env)
    assert lines == [f"fairness markdown summary: {tmp_path / 'out.md'}"]
    written = (tmp_path / "out.md").read_text()
    assert written == markdown_summary(records)
    assert step.read_text() == f"earlier step\n{written}\n"
    assert write_markdown(None, records, environ=env) == []


def test_write_markdown_says_what_it_could_not_write(tmp_path: Path) -> None:
    """A file that cannot be written, and a step summary that cannot: a line each, no error."""
    records = [record("t.py::test_a", gaps(), "passed")]
    env = {"GITHUB_STEP_SUMMARY": str(tmp_path)}  # a folder
    (tmp_path / "file").write_text("")
    lines = write_markdown(str(tmp_path / "file" / "x.md"), records, environ=env)
    assert len(lines) == 2 and "NOT written" in lines[0] and "NOT appended" in lines[1]
