"""Drift budgets: parsing ``METRIC:TOL:BUDGET``, the origin a re-saved baseline keeps, the rule."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from pytest_fairness.baseline import build_baseline, dump_baseline, load_baseline
from pytest_fairness.cli import main
from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.options import parse_compare_fail
from pytest_fairness.records import Baseline, KeyedResult, TestRecord
from pytest_fairness.regression import compare_baselines, compare_test
from pytest_fairness.results import GroupStat, IndicatorResult

NODE = "t.py::a"
RID = "group_metrics (accuracy)"


def record(b: float, nodeid: str = NODE, **stats: float) -> TestRecord:
    """A test whose group ``b`` has accuracy ``b`` (group a: 0.9): the gap is 0.9 - b."""
    result = IndicatorResult("group_metrics", "accuracy", b, stats=stats, min_group_size=1,
                             groups=(GroupStat("a", 50, 0.9), GroupStat("b", 50, b)))
    return TestRecord(nodeid, nodeid, results=(KeyedResult(None, result),))


def resaved(*bs: float) -> Baseline:
    """A baseline saved after each accepted run, on day 1, 2, ...: each over the last."""
    baseline = None
    for day, b in enumerate(bs, 1):
        baseline = build_baseline([record(b)], previous=baseline, saved=f"2024-01-0{day}")
    assert baseline is not None
    return baseline


def test_a_budget_follows_the_tolerance() -> None:
    """``gap:0.01:0.03`` keeps the tolerance as before and the budget beside it."""
    parsed = parse_compare_fail("gap:0.01:0.03, DEO:0.02")
    assert parsed == {"gap": 0.01, "DEO": 0.02}
    assert parsed.budgets == {"gap": 0.03}
    assert parse_compare_fail("gap:0.01").budgets == {}


@pytest.mark.parametrize(("text", "match"), [
    ("gap:0.01:x",
     r"gap: a drift budget must be a number .*got 'x'. 'gap:0\.01:x' reads metric:tol"),
    ("gap:0.01:-1", r"drift budget must be a finite number >= 0.*'gap:0\.01:-1'"),
    ("gap:x:0.03", r"gap: a tolerance must be a number .*'x'"),
    ("gap:0.03:0.01", r"'gap:0\.03:0\.01': the drift budget 0\.01 is below the tolerance 0\.03"),
])
def test_a_bad_budget_names_the_value(text: str, match: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=match):
        parse_compare_fail(text)


def test_a_resaved_entry_keeps_its_origin() -> None:
    """The first save is the origin; later saves keep it (numbers and date) and date themselves."""
    first = resaved(0.8).tests[NODE]
    assert first.origin is None and first.saved == "2024-01-01"
    entry = resaved(0.8, 0.79, 0.78).tests[NODE]
    assert entry.saved == "2024-01-03" and entry.results[RID].gap == pytest.approx(0.12)
    assert entry.origin is not None and entry.origin.saved == "2024-01-01"
    assert entry.origin.results[RID].gap == pytest.approx(0.1)


def test_the_origin_round_trips_and_a_new_test_starts_its_own() -> None:
    baseline = build_baseline([record(0.78), record(0.5, "t.py::new")], previous=resaved(0.8),
                              saved="2024-01-02")
    again = Baseline.from_dict(json.loads(dump_baseline(baseline)))
    assert again == baseline
    assert again.tests["t.py::new"].origin is None
    assert json.loads(dump_baseline(baseline))["schema"] == 2


def test_an_old_baseline_without_origin_loads_and_becomes_the_origin(tmp_path: Path) -> None:
    """A schema 1 file (no dates, no origins): its entry is its own origin, then kept as one."""
    document = json.loads(dump_baseline(build_baseline([record(0.8)])))
    document["schema"] = 1
    path = tmp_path / "old.json"
    path.write_text(json.dumps(document))
    old = load_baseline(path)
    assert old.tests[NODE].origin is None and old.tests[NODE].saved is None
    new = build_baseline([record(0.79)], previous=old, saved="2024-02-01").tests[NODE]
    assert new.origin is not None and new.origin.saved is None
    assert new.origin.results[RID].gap == pytest.approx(0.1)


@pytest.mark.parametrize(("origin", "match"), [
    (5, r"\['tests'\]\['t\.py::a'\]\['origin'\] is 5, not an object or null"),
    ({"saved": "2024-01-01"}, r"\['tests'\]\['t\.py::a'\]\['origin'\] has no 'results'"),
])
def test_a_malformed_origin_names_the_file_and_key(tmp_path: Path, origin: object,
                                                   match: str) -> None:
    document = json.loads(dump_baseline(resaved(0.8, 0.79)))
    document["tests"][NODE]["origin"] = origin
    path = tmp_path / "base.json"
    path.write_text(json.dumps(document))
    with pytest.raises(FairnessConfigError, match=f"baseline '{path}': {match}"):
        load_baseline(path)


def test_accepted_changes_add_up_to_a_failure() -> None:
    """Each change 0.008 within tolerance 0.01; the total since the origin exceeds 0.03."""
    baseline = resaved(0.8, 0.792, 0.784, 0.776)
    out, notes = compare_test(baseline, record(0.768),
                              compare_fail=parse_compare_fail("gap:0.01:0.03"), marks=[],
                              source="base.json", compare_confidence="point")
    assert notes == []
    change, drift = out
    assert not change.regressed and drift.regressed
    assert drift.metric == "gap drift since the origin" and drift.baseline == pytest.approx(0.1)
    assert drift.worse_by == pytest.approx(0.032)
    assert ("drift budget of gap: t.py::a :: group_metrics (accuracy): origin 0.1 (saved "
            "2024-01-01) → now 0.132, +0.032 worse in total, budget 0.03 — exceeded") in \
        drift.notes[0]
    assert "delete the test's \"origin\" from the baseline file base.json" in drift.notes[0]
    ok, _ = compare_test(baseline, record(0.776), compare_fail=parse_compare_fail(
        "gap:0.01:0.03"), marks=[], compare_confidence="point")
    assert [c.regressed for c in ok] == [False, False]
    assert "exceeded" not in ok[1].notes[0] and "+0.024 worse in total" in ok[1].notes[0]
    default, _ = compare_test(baseline, record(0.776), compare_fail=parse_compare_fail(
        "gap:0.01:0.03"), marks=[])  # the default rule: the drift is still a point change
    assert default[1].regressed is False and "exceeded" not in default[1].notes[0]


def test_a_budget_on_a_metric_the_origin_lacks_fails_closed() -> None:
    """The origin was saved without the stat DEO: the drift cannot be judged and fails."""
    baseline = build_baseline([record(0.79, DEO=0.1)], previous=resaved(0.8), saved="2024-01-02")
    out, _ = compare_test(baseline, record(0.79, DEO=0.1),
                          compare_fail=parse_compare_fail("DEO:0.01:0.03"), marks=[],
                          compare_confidence="point")
    assert [c.regressed for c in out] == [False, True]
    assert "the origin (saved 2024-01-01) or this run has no DEO" in out[1].notes[0]


def test_compare_command_applies_the_budget(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """``pytest-fairness compare A B --fail gap:0.01:0.03`` reads A's origin."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(dump_baseline(resaved(0.8, 0.792, 0.784, 0.776)))
    b.write_text(dump_baseline(build_baseline([record(0.768)])))
    assert main(["compare", str(a), str(b), "--fail", "gap:0.01:0.03",
                 "--confidence", "point"]) == 1
    assert "gap drift since the origin" in capsys.readouterr().out
    assert main(["compare", str(a), str(b), "--fail", "gap:0.01", "--confidence", "point"]) == 0
    out, _ = compare_baselines(load_baseline(a), load_baseline(b), {"gap": 0.01},
                               confidence="point")
    assert [c.regressed for c in out] == [False]
