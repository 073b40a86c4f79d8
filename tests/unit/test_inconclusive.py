"""A limit's verdict: pass, fail, or inconclusive when the interval straddles the limit."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from pytest_fairness.checks import decide_line, evaluate, set_inconclusive, validate_threshold
from pytest_fairness.records import CheckOutcome, KeyedResult, TestRecord
from pytest_fairness.report.junit import junit_properties
from pytest_fairness.report.markdown import markdown_summary
from pytest_fairness.report.terminal import inconclusive_lines, violation_message
from pytest_fairness.results import GroupStat, IndicatorResult


def gapped() -> IndicatorResult:
    """Gap 0.06 with interval [0.03, 0.09]; the smallest group has 100 images."""
    return IndicatorResult("demo", "accuracy", 0.9, min_group_size=1,
                           groups=(GroupStat("a", 200, 0.92), GroupStat("b", 100, 0.86)),
                           intervals={"gap": (0.03, 0.09)})


def valued() -> IndicatorResult:
    """A value 0.6 with interval [0.5, 0.7] and no groups (a lower limit: min_value)."""
    return IndicatorResult("demo", "accuracy", 0.6, intervals={"value": (0.5, 0.7)})


@pytest.fixture(autouse=True)
def by_rule() -> Iterator[None]:
    """Each test starts with the rule's default policy and leaves it so."""
    previous = set_inconclusive(None)
    yield
    set_inconclusive(previous)


def check(result: IndicatorResult, **limits: object) -> CheckOutcome:
    (outcome,) = evaluate(result, validate_threshold((), limits))
    return outcome


# limit, value, point verdict, interval verdict (both for supported and strict)
CASES = [
    ("max_gap", 0.10, "pass", "pass"),  # the interval wholly within
    ("max_gap", 0.07, "pass", "inconclusive"),  # straddles, estimate within
    ("max_gap", 0.05, "fail", "inconclusive"),  # straddles, estimate beyond
    ("max_gap", 0.02, "fail", "fail"),  # wholly beyond
    ("min_value", 0.40, "pass", "pass"),
    ("min_value", 0.55, "pass", "inconclusive"),
    ("min_value", 0.65, "fail", "inconclusive"),
    ("min_value", 0.80, "fail", "fail"),
]


@pytest.mark.parametrize("confidence", ["point", "supported", "strict"])
@pytest.mark.parametrize(("limit", "value", "point", "interval"), CASES)
def test_verdict_per_confidence_and_direction(confidence: str, limit: str, value: float,
                                              point: str, interval: str) -> None:
    """point: the estimate decides; otherwise pass, fail, or inconclusive when it straddles."""
    result = gapped() if limit == "max_gap" else valued()
    outcome = check(result, **{limit: value, "confidence": confidence})
    verdict = point if confidence == "point" else interval
    assert outcome.verdict == verdict
    # supported counts an inconclusive verdict as passed, strict as failed (as before)
    assert outcome.passed == (verdict == "pass" or (verdict == "inconclusive"
                                                    and confidence == "supported"))
    assert bool(outcome.decide) == (verdict == "inconclusive")


def test_an_estimate_beyond_the_limit_never_passes_without_the_line() -> None:
    """supported passes it, but says it is inconclusive and what would decide it."""
    outcome = check(gapped(), max_gap=0.05, confidence="supported")
    assert outcome.passed and outcome.observed > 0.05
    assert outcome.verdict == "inconclusive"
    assert "about 900 images per group (now 100 in the smallest)" in outcome.decide
    record = TestRecord("t.py::test_a", "t.py::test_a", results=(KeyedResult(None, gapped()),),
                        checks=(outcome,), outcome="passed")
    (line,) = inconclusive_lines([record])
    assert "t.py::test_a" in line and "max_gap=0.05" in line and "[0.03, 0.09]" in line
    assert "counted as passed" in line and outcome.decide in line


def test_decide_line_numbers_on_a_hand_case() -> None:
    """h = 0.03 (the half-width on the limit's side), e = 0.01: n·(h/e)² = 100·9 images."""
    line = decide_line(0.05, 0.06, (0.03, 0.09), 100)
    assert "at least 0.03 from the limit" in line and "is 0.01 from it" in line
    assert "about 900 images per group" in line
    # the estimate below a max limit: the upper half-width, 0.09 - 0.07 = 0.02 vs e = 0.01
    assert "about 400 images" in decide_line(0.08, 0.07, (0.05, 0.09), 100)
    assert "no sample size decides it" in decide_line(0.06, 0.06, (0.03, 0.09), 100)
    assert "images" not in decide_line(0.05, 0.06, (0.03, 0.09), None)  # no groups


def test_the_policy_overrides_both_rules() -> None:
    set_inconclusive("fail")
    assert not check(gapped(), max_gap=0.07, confidence="supported").passed
    set_inconclusive("pass")
    outcome = check(gapped(), max_gap=0.05, confidence="strict")
    assert outcome.passed and outcome.verdict == "inconclusive"
    assert not check(gapped(), max_gap=0.02, confidence="strict").passed  # a fail stays one


def test_stored_form_round_trip_and_old_forms() -> None:
    outcome = check(gapped(), max_gap=0.05, confidence="supported")
    data = json.loads(json.dumps(outcome.to_dict()))
    assert data["verdict"] == "inconclusive" and data["decide"] == outcome.decide
    again = CheckOutcome.from_dict(data)
    assert again == outcome and again.verdict == "inconclusive"
    for passed, verdict in ((True, "pass"), (False, "fail")):  # stored before verdicts
        old = {k: v for k, v in data.items() if k not in ("verdict", "decide")}
        assert CheckOutcome.from_dict({**old, "passed": passed}).verdict == verdict
    record = TestRecord("t.py::a", "t.py::a", checks=(outcome,))
    assert TestRecord.from_dict(json.loads(json.dumps(record.to_dict()))).checks == (outcome,)


def test_reports_carry_the_verdict_and_the_line() -> None:
    """The failure message (strict), JUnit properties and the markdown summary."""
    strict = check(gapped(), max_gap=0.05, confidence="strict")
    message = violation_message([strict])
    assert "INCONCLUSIVE max_gap=0.05" in message and strict.decide in message
    record = TestRecord("t.py::a", "t.py::a", results=(KeyedResult(None, gapped()),),
                        checks=(strict,), outcome="failed")
    props = dict(junit_properties(record))
    assert props["fairness.limit"].endswith("failed inconclusive")
    assert props["fairness.inconclusive"] == f"max_gap=0.05: {strict.decide}"
    text = markdown_summary([record])
    assert "### Inconclusive" in text and "about 900 images per group" in text
