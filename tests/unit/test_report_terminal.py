"""Unit tests of the text rendering in ``pytest_fairness.report.terminal``."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_fairness.checks import evaluate, validate_threshold
from pytest_fairness.errors import plain
from pytest_fairness.records import CheckOutcome, Comparison, TestRecord
from pytest_fairness.report.terminal import (
    checkpoint_lines,
    format_number,
    regression_message,
    report_section,
    result_lines,
    section_text,
    summary_lines,
    violation_message,
)
from pytest_fairness.results import GroupStat, IndicatorResult

GOLDEN = Path(__file__).parent / "golden"


def accuracy() -> IndicatorResult:
    return IndicatorResult(
        "group_metrics", "accuracy", 0.8125, min_group_size=30,
        groups=(
            GroupStat(("female", "dark"), 120, 0.75, interval=(0.6875, 0.8125),
                      stats={"tpr": 0.625}),
            GroupStat(("female", "light"), 200, 0.875, interval=(0.8125, 0.9375),
                      stats={"tpr": 0.8125}),
            GroupStat(("male", "dark"), 90, 0.8125, interval=(0.75, 0.875), stats={"tpr": 0.75}),
            GroupStat(("male", "light"), 12, 0.5, excluded=True, stats={"tpr": 0.5}),
        ),
        intervals={"gap": (0.0625, 0.25)},
        notes=("dropped 3 rows with a missing skin-type label",),
        params={"seed": 0},
    )


def retrieval() -> IndicatorResult:
    return IndicatorResult(
        "precision_at_k", "precision", 0.5, at=10, min_group_size=1,
        groups=(GroupStat("a", 40, 0.5), GroupStat("b", 40, 0.4375)),
    )


def outcomes(results: Any, **limits: Any) -> list[CheckOutcome]:
    return evaluate(results, validate_threshold((), limits))


def record(results: dict[str, IndicatorResult], checks: list[CheckOutcome],
           outcome: str) -> TestRecord:
    """A record as the controller reads it from a worker's report (its JSON form)."""
    return TestRecord.from_dict({
        "nodeid": "tests/test_fair.py::test_model",
        "outcome": outcome,
        "results": [{**r.to_dict(), "key": k} for k, r in results.items()],
        "checks": [c.to_dict() for c in checks],
    })


# -- format_number --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "x, text",
    [(None, "n/a"), (math.nan, "n/a"), (math.inf, "inf"), (-math.inf, "-inf"), (0.0, "0"),
     (0.123456, "0.1235"), (12345.0, "1.234e+04"), (0.0001234, "1.234e-04"), (-0.5, "-0.5"),
     (3, "3")],
)
def test_format_number(x: float | None, text: str) -> None:
    assert format_number(x) == text


# -- violation_message ---------------------------------------------------------------------


def test_violation_message_shows_limit_observed_groups_and_excluded() -> None:
    message = violation_message(
        outcomes(accuracy(), max_gap=0.1, min_ratio=0.5, confidence="point"))
    lines = message.splitlines()
    assert lines[0] == "1 fairness limit broken: max_gap=0.1 (gap 0.125 [0.0625, 0.25])"
    assert "group_metrics (accuracy)" in lines
    assert "  FAIL max_gap=0.1: gap 0.125 [0.0625, 0.25], needs <= 0.1" in lines
    assert any(line.startswith("  ok   min_ratio=0.5: ratio 0.8571") for line in lines)
    rows = {line.split("  ")[1]: line for line in lines if line.startswith("  female")
            or line.startswith("  male")}
    assert set(rows) == {"female × dark", "female × light", "male × dark", "male × light"}
    assert "excluded (n < 30)" in rows["male × light"]
    assert "← worst" in rows["female × dark"]
    assert "excluded" not in rows["female × dark"]
    assert "  note: dropped 3 rows with a missing skin-type label" in lines


def test_violation_message_highlights_the_violating_group() -> None:
    message = violation_message(outcomes(accuracy(), min_value=0.8, confidence="point"))
    assert message.startswith("1 fairness limit broken: min_value=0.8 (value 0.75 [0.6875, 0.8125] "
                              "(group female × dark))")
    (row,) = [line for line in message.splitlines() if line.startswith("  female × dark")]
    assert row.endswith("← violates")


def test_violation_message_counts_and_skips_passing_results() -> None:
    message = violation_message(
        outcomes({"acc": accuracy(), "p@10": retrieval()}, max_gap=0.1, max_value=0.8,
                 confidence="point")
    )
    assert message.startswith("2 fairness limits broken: max_gap=0.1 (gap 0.125 ")
    assert "acc: group_metrics (accuracy)" in message.splitlines()
    assert "p@10: precision_at_k (precision) at 10" not in message
    message = violation_message(outcomes({"p@10": retrieval()}, max_gap=0.05, confidence="point"))
    assert "p@10: precision_at_k (precision) at 10" in message.splitlines()
    assert "gap 0.0625" in message


def test_violation_message_confidence_is_shown() -> None:
    message = violation_message(outcomes(accuracy(), max_gap=0.05, confidence="supported"))
    assert "FAIL max_gap=0.05, confidence=supported: gap 0.125 [0.0625, 0.25]" in message


def test_violation_message_golden() -> None:
    message = violation_message(
        outcomes({"acc": accuracy(), "p@10": retrieval()}, max_gap=0.1, min_value=0.7,
                 confidence="point")
    )
    expected = (GOLDEN / "violation_message.txt").read_text(encoding="utf-8")
    assert message + "\n" == expected


# -- result_lines and section_text -----------------------------------------------------------


def test_result_lines_headline_gap_best_worst() -> None:
    lines = result_lines(accuracy())
    assert lines[0] == "group_metrics (accuracy): value 0.8125"
    assert lines[1] == ("  gap 0.125 [0.0625, 0.25], ratio 0.8571; best female × light "
                        "(0.875), worst female × dark (0.75)")
    assert lines[-1] == "  note: dropped 3 rows with a missing skin-type label"


def test_result_lines_single_group_has_no_gap_line() -> None:
    r = IndicatorResult("ieat", "association", 0.25, stats={"effect_size": 0.5},
                        intervals={"value": (0.125, 0.375)})
    assert result_lines(r) == ["ieat (association): value 0.25 [0.125, 0.375]",
                               "  stats: effect_size 0.5"]


def test_section_text_lists_results_and_limits() -> None:
    checks = outcomes({"acc": accuracy()}, max_gap=0.1, confidence="point")
    text = section_text(record({"acc": accuracy()}, checks, "failed"))
    lines = text.splitlines()
    assert lines[0] == "[acc]"
    assert "limits:" in lines
    assert lines[-1] == "  FAIL group_metrics: max_gap observed 0.125, needs <= 0.1"


# -- summary_lines ----------------------------------------------------------------------------


def test_summary_lines_one_row_per_result() -> None:
    checks = outcomes({"acc": accuracy(), "p@10": retrieval()}, max_gap=0.1, confidence="point")
    lines = summary_lines([record({"acc": accuracy(), "p@10": retrieval()}, checks, "failed")])
    header, acc, p10 = lines
    assert header.split() == ["test", "indicator", "value", "headline", "worst", "group",
                              "limits", "outcome"]
    assert acc.split("  ")[0] == "tests/test_fair.py::test_model"
    for fragment in ("group_metrics (accuracy)", "0.8125", "gap (DA) 0.125", "female × dark",
                     "max_gap=0.1 FAIL", "failed"):
        assert fragment in acc
    assert "max_gap=0.1 " in p10 + " " and "FAIL" not in p10 and "0.0625" in p10


def test_summary_lines_without_checks_or_groups() -> None:
    r = IndicatorResult("ieat", "association", 0.25)
    (_, row) = summary_lines([record({"x": r}, [], "passed")])
    cells = row.split()
    assert cells[-1] == "passed" and cells.count("-") == 2  # worst group, limits
    assert "|effect size| 0.25" in row  # its headline, not a gap


def test_summary_lines_empty() -> None:
    assert summary_lines([]) == []
    assert summary_lines([TestRecord("t", "t")]) == []


def test_summary_lines_keep_verdicts_with_their_result() -> None:
    def result(worst: float) -> IndicatorResult:
        return IndicatorResult("group_metrics", "accuracy", 0.5, min_group_size=1,
                               groups=(GroupStat("x", 10, 0.5), GroupStat("y", 10, worst)))

    results = {"ok": result(0.5), "bad": result(0.0)}
    lines = summary_lines([record(results, outcomes(results, max_gap=0.1, confidence="point"),
                                 "failed")])
    ok_row, bad_row = lines[1:]
    assert "FAIL" not in ok_row
    assert "FAIL" in bad_row


# -- output polish: each table once, each limit once, slices and iEAT sets -----------------------


def sweep() -> IndicatorResult:
    """Precision@K at K = 10 (the headline) and K = 5, whose metric names its K."""
    def at(k: int, b: float) -> IndicatorResult:
        return IndicatorResult("precision_at_k", f"precision@{k}", 0.5, at=k, min_group_size=1,
                               groups=(GroupStat("a", 40, 0.5), GroupStat("b", 40, b)))

    return replace(at(10, 0.45), slices=(at(5, 0.25),))


def ieat_result() -> IndicatorResult:
    return IndicatorResult(
        "ieat", "effect_size", 0.69, higher_is_better=False, min_group_size=1,
        groups=(GroupStat("brighter faces", 50, 0.012), GroupStat("darker faces", 50, -0.004)),
        stats={"effect_size": 0.69, "p_value": 0.01},
    )


def test_violation_message_shows_each_group_table_once() -> None:
    # Two markers gating the same slice select it twice: still one table.
    checks = [*outcomes(sweep(), max_gap=0.1, at=5, confidence="point"),
              *outcomes(sweep(), min_value=0.3, at=5, confidence="point")]
    message = violation_message(checks)
    assert len(re.findall(r"group +n +precision@5", message)) == 1
    assert "FAIL max_gap=0.1" in message and "FAIL min_value=0.3" in message


def test_section_leaves_out_the_tables_the_failure_message_shows() -> None:
    checks = outcomes({"p": sweep()}, max_gap=0.1, at=5, confidence="point")
    data = record({"p": sweep()}, checks, "failed")
    assert len(re.findall(r"group +n +precision@", section_text(data))) == 2  # both slices
    text = section_text(data, in_message=True)
    assert len(re.findall(r"group +n +precision@10", text)) == 1  # the passing headline's
    assert not re.search(r"group +n +precision@5", text)  # the failed slice's is in the message
    assert "precision_at_k (precision@5) at 5: value 0.5" in text
    assert "groups: shown above" in text


def test_summary_shows_a_limit_with_the_slice_at_picked() -> None:
    checks = outcomes({"p": sweep()}, max_gap=0.1, at=5, confidence="point")
    (_, row) = summary_lines([record({"p": sweep()}, checks, "failed")])
    assert "precision_at_k (precision@5) at 5" in row
    assert row.split()[-3:] == ["max_gap=0.1", "FAIL", "failed"]  # not "-"


def test_summary_and_section_list_agreeing_limits_once() -> None:
    # A marker and an inline fairness.check with the same limit.
    checks = [*outcomes({"p": sweep()}, max_gap=0.1, confidence="point"),
              *outcomes({"p": sweep()}, max_gap=0.1, confidence="point")]
    data = record({"p": sweep()}, checks, "passed")
    (_, row) = summary_lines([data])
    assert row.count("max_gap=0.1") == 1
    assert section_text(data).count("max_gap observed") == 1


def test_ieat_sets_are_mean_associations_without_gap_or_worst_group() -> None:
    lines = result_lines(ieat_result())
    text = "\n".join(lines)
    assert lines[1].split() == ["stats:", "effect_size", "0.69,", "p_value", "0.01"]
    assert "gap" not in text and "worst" not in text and "Δ best" not in text
    assert lines[2].split() == ["set", "n", "mean", "association"]
    checks = outcomes({"x": ieat_result()}, max_effect_size=1.0, confidence="point")
    (_, row) = summary_lines([record({"x": ieat_result()}, checks, "passed")])
    cells = [c.strip() for c in re.split(r"\s{2,}", row)]
    assert cells[-5:] == ["0.69", "|effect size| 0.69, p_value 0.01", "-", "max_effect_size=1",
                          "passed"]


def fair_sa_result() -> IndicatorResult:
    return IndicatorResult(
        "fair_sa", "auc_l1 (self-matching)", 0.42, higher_is_better=False, min_group_size=1,
        groups=(GroupStat("old", 40, 0.42), GroupStat("young", 40, 0.0)),
        stats={"l1": 0.42, "max_abs_auc": 0.42}, intervals={"l1": (0.3, 0.55)},
    )


@pytest.mark.parametrize(("result", "headline_text"), [
    (ieat_result(), "|effect size| 0.69, p_value 0.01"),
    (fair_sa_result(), "L1 of AUCs 0.42 [0.3, 0.55], max_abs_auc 0.42"),
])
def test_failure_message_and_summary_row_show_the_headline(result: IndicatorResult,
                                                           headline_text: str) -> None:
    limit = {"max_l1": 0.1} if result.name == "fair_sa" else {"max_effect_size": 0.1}
    checks = outcomes({"x": result}, **limit, confidence="point")  # the iEAT has no interval
    message = violation_message(checks)
    assert f"x: {result.name} ({result.metric}): {headline_text}" in message
    assert "Δ best" not in message and "← worst" not in message
    (_, row) = summary_lines([record({"x": result}, checks, "failed")])
    cells = [c.strip() for c in re.split(r"\s{2,}", row)]
    assert cells[3] == headline_text and cells[4] == "-"  # no worst group


def test_headline_text_and_regression_tally() -> None:
    from pytest_fairness.report.terminal import headline_text, regression_tally

    r = IndicatorResult("ieat", "effect_size", -0.8, stats={"effect_size": -0.8,
                        "p_value": 0.004})
    assert headline_text(r) == "|effect size| 0.8, p_value 0.004"
    assert regression_tally([]) == "no regression in 0 comparisons"


# -- control characters in user strings ------------------------------------------------------

HOSTILE = "a\x1b[31mred\nFAILED forged"


def test_plain_escapes_control_characters_only() -> None:
    assert plain(HOSTILE) == "a\\x1b[31mred\\nFAILED forged"
    assert plain("tab\there\r\u202e") == "tab\\there\\r\\u202e"
    assert plain("café × dark") == "café × dark"
    assert plain(plain(HOSTILE)) == plain(HOSTILE)


def test_labels_keys_and_test_ids_print_escaped() -> None:
    """Group labels, result keys, test ids and comparison names: no raw control character."""
    result = IndicatorResult("group_metrics", "accuracy", 0.5, min_group_size=1, groups=(
        GroupStat(HOSTILE, 10, 0.25), GroupStat("b", 10, 0.75)), notes=(f"note {HOSTILE}",))
    checks = outcomes({HOSTILE: result}, min_value=0.5, confidence="point")
    rec = replace(record({HOSTILE: result}, checks, "failed"), nodeid=f"t.py::test[{HOSTILE}]")
    comparison = Comparison(f"t.py::test[{HOSTILE}]", f"{HOSTILE}: group_metrics", "worst",
                            0.5, 0.25, 0.0, False, groups=((HOSTILE, 0.5, 0.25),),
                            where=f"group {HOSTILE}", notes=(HOSTILE,))
    texts = [*summary_lines([rec]), *result_lines(result), violation_message(checks),
             section_text(rec), report_section(replace(rec, regressions=(comparison,)),
                                               baseline_source=HOSTILE),
             *checkpoint_lines([comparison], reference=HOSTILE, judged=True),
             regression_message([comparison], source=HOSTILE, with_test=True)]
    for text in texts:
        assert "\x1b" not in text and "FAILED forged" not in text.replace(
            "\\nFAILED forged", ""), text
    assert "a\\x1b[31mred\\nFAILED forged" in summary_lines([rec])[1]
    assert violation_message(checks).splitlines()[0].endswith(
        "(value 0.25 (group a\\x1b[31mred\\nFAILED forged))")
