"""End to end: a baseline gate reaches a verdict on every result it covers, or fails the run.

Issue #25, "A gate that fails closed": results that match no baseline entry (and entries
that match no result), history references that resolve to failed runs or to two things, a
failing run that would overwrite the baseline it compared with, and baselines whose numbers
contradict themselves.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy.fft  # noqa: F401  (pytester forgets what a run imported; numpy loads once)
import pytest
import scipy.sparse  # noqa: F401
import scipy.special  # noqa: F401

HEADER = "from pytest_fairness import fairness, indicators as ind\nimport os, pytest\n"
#: One test; WORSE=1 makes group b worse (accuracy 0.5 → 0.25), KEYED=1 returns {"acc": r}.
ONE = HEADER + """
Y = [1, 0, 1, 1, 0, 1, 0, 0] * 5
G = ["a", "a", "a", "a", "b", "b", "b", "b"] * 5

def result():
    worse = os.environ.get("WORSE") == "1"
    p = [1, 0, 1, 0, 1, 0, 0, 1] * 5 if worse else [1, 0, 1, 0, 0, 0, 0, 1] * 5
    r = ind.group_metrics(Y, p, groups=G, min_group_size=1)
    return {"acc": r} if os.environ.get("KEYED") == "1" else r

@pytest.mark.fairness
def test_one():
    return result()

@fairness.no_regression(tolerance=0.5)
def test_marked():
    return result()
"""


@pytest.fixture
def saved(pytester: pytest.Pytester) -> pytest.Pytester:
    """The module and its baseline ``base.json`` (no history)."""
    pytester.makepyfile(test_mod=ONE)
    pytester.runpytest("--fairness", "--fairness-save-baseline", "base.json",
                       "--fairness-no-history", "-p", "no:xdist").assert_outcomes(passed=2)
    return pytester


# -- item 6: what the baseline does not match is not compared, and fails -------------------------


def test_changed_result_key_fails_naming_both_sides(
    saved: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist_args: list[str]
) -> None:
    """A test that now returns ``{"acc": r}`` compares nothing: both tests fail, saying so."""
    monkeypatch.setenv("KEYED", "1")
    result = saved.runpytest("--fairness", "--fairness-baseline", "base.json",
                             "--fairness-compare-fail", "gap:0.1", "--fairness-no-history",
                             *xdist_args)
    result.assert_outcomes(failed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "FairnessViolation: not compared: test_mod.py::test_one :: acc (not in "
        "the baseline base.json, whose entry of the test has: group_metrics (accuracy))*",
    ])
    result.stdout.fnmatch_lines([
        "*not compared: test_mod.py::test_one :: group_metrics (accuracy) (in the baseline "
        "base.json; this run's test returned acc)*",
    ])
    result.stdout.fnmatch_lines([
        "*update the baseline: `pytest --fairness --fairness-save-baseline base.json`*",
    ])
    result.stdout.fnmatch_lines([
        "fairness baseline base.json: compared 0 results of 0 tests; not compared: "
        "test_mod.py::test_*",
    ])
    assert "matched" not in result.stdout.str()


def test_renamed_marked_test_fails(saved: pytest.Pytester, xdist_args: list[str]) -> None:
    """A no_regression test renamed: not in the baseline, so not compared, so it fails."""
    saved.makepyfile(test_mod=ONE.replace("def test_marked", "def test_renamed"))
    result = saved.runpytest("--fairness", "--fairness-baseline", "base.json",
                             "--fairness-no-history", *xdist_args)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "FairnessViolation: not compared: test_mod.py::test_renamed :: "
        "group_metrics (accuracy) (the test is not in the baseline base.json)*",
    ])
    result.stdout.fnmatch_lines([
        "fairness baseline base.json: compared 0 results of 0 tests; not compared: "
        "test_mod.py::test_renamed :: *",
    ])


def test_everything_compared_says_how_much(saved: pytest.Pytester, xdist_args: list[str]) -> None:
    """The summary counts what was compared, never "matched"."""
    result = saved.runpytest("--fairness", "--fairness-baseline", "base.json",
                             "--fairness-compare-fail", "gap:0,value:0",
                             "--fairness-no-history", *xdist_args)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([
        "fairness baseline base.json: compared 2 results of 2 tests; no regression in 5 "
        "comparisons",
    ])


# -- item 5: a history reference resolves to a run that passed, and to one thing -----------------


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("--fairness", *args)


def test_label_resolves_to_the_latest_run_that_passed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist_args: list[str]
) -> None:
    """A failed run under the label is skipped: re-running a failed CI job fails again."""
    pytester.makepyfile(test_mod=ONE)
    _run(pytester, "--fairness-run-label", "main", *xdist_args).assert_outcomes(passed=2)
    monkeypatch.setenv("WORSE", "1")
    gate = ["--fairness-baseline", "main", "--fairness-compare-fail", "gap:0.01"]
    _run(pytester, "--fairness-run-label", "main", *gate, *xdist_args).assert_outcomes(failed=2)
    result = _run(pytester, "--fairness-run-label", "main", *gate, *xdist_args)
    result.assert_outcomes(failed=2)  # compared with run 1, not with the failed run 2
    result.stdout.fnmatch_lines([
        "fairness baseline: --fairness-baseline main is run 1 [[]main[]], the latest run it "
        "names that passed (newer, not passed: run 2 (exit 1))",
    ])


def test_only_failed_runs_is_an_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist_args: list[str]
) -> None:
    """A label whose runs all failed names them and the fix."""
    pytester.makepyfile(test_mod=ONE)
    _run(pytester, "--fairness-run-label", "good", "-p", "no:xdist").assert_outcomes(passed=2)
    monkeypatch.setenv("WORSE", "1")
    _run(pytester, "--fairness-run-label", "bad", "--fairness-baseline", "good",
         "--fairness-compare-fail", "gap:0.01", "-p", "no:xdist").assert_outcomes(failed=2)
    result = _run(pytester, "--fairness-baseline", "bad", *xdist_args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "*--fairness-baseline=bad: 'bad' names no run that passed in the history *, only run 2 "
        "(exit 1): a baseline must come from a run that passed. * run:2.",
    ])
    _run(pytester, "--fairness-baseline", "run:2", *xdist_args).assert_outcomes(passed=2)


def test_a_label_that_is_also_a_run_id_is_ambiguous(
    pytester: pytest.Pytester, xdist_args: list[str]
) -> None:
    """``--fairness-baseline 1``: run 1, or the run labelled "1"? Say both; run:/label: pick."""
    pytester.makepyfile(test_mod=ONE)
    _run(pytester, "--fairness-run-label", "first", "-p", "no:xdist").assert_outcomes(passed=2)
    _run(pytester, "--fairness-run-label", "1", "-p", "no:xdist").assert_outcomes(passed=2)
    result = _run(pytester, "--fairness-baseline", "1", *xdist_args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "*'1' is ambiguous in the history *: it is run 1 and also a run label or checkpoint "
        "of run(s) 2. Write run:1 for the run, or label:1 (checkpoint:1) for the name.",
    ])
    result = _run(pytester, "--fairness-baseline", "label:1", *xdist_args)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["fairness baseline: --fairness-baseline label:1 is run 2 [[]1[]]"])


# -- item 8: a failing run does not overwrite the baseline it compared with ----------------------


def test_failing_run_keeps_the_baseline_it_compared_with(
    saved: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist_args: list[str]
) -> None:
    """Saving to the compared file in a failing run keeps the file, says so, and still fails."""
    before = (saved.path / "base.json").read_text()
    monkeypatch.setenv("WORSE", "1")
    result = saved.runpytest("--fairness", "--fairness-baseline", "base.json",
                             "--fairness-compare-fail", "gap:0.01", "--fairness-save-baseline",
                             "./base.json", "--fairness-no-history", *xdist_args)
    result.assert_outcomes(failed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "fairness baseline NOT saved to './base.json': this run failed (exit status 1) and "
        "compared with that file, which it keeps. Fix the failures, or save without "
        "comparing: pytest --fairness --fairness-save-baseline ./base.json",
    ])
    assert (saved.path / "base.json").read_text() == before
    # Another file is saved, failing or not.
    result = saved.runpytest("--fairness", "--fairness-baseline", "base.json",
                             "--fairness-compare-fail", "gap:0.01", "--fairness-save-baseline",
                             "new.json", "--fairness-no-history", *xdist_args)
    result.stdout.fnmatch_lines(["fairness baseline saved: new.json"])


# -- item 9: a baseline whose numbers contradict themselves is refused --------------------------

#: Two tests with intervals (and one computing the same as the first: its replicates are the
#: same, legitimately).
BOOT = HEADER + """
Y = [1, 0, 1, 1, 0, 1, 0, 0] * 10
G = ["a", "a", "a", "a", "b", "b", "b", "b"] * 10

@pytest.mark.fairness
def test_a():
    return ind.group_metrics(Y, [1, 0, 1, 0, 0, 0, 0, 1] * 10, groups=G, n_bootstrap=200, seed=0)

@pytest.mark.fairness
def test_same():
    return ind.group_metrics(Y, [1, 0, 1, 0, 0, 0, 0, 1] * 10, groups=G, n_bootstrap=200, seed=0)

@pytest.mark.fairness
def test_b():
    return ind.group_metrics(Y, [1, 0, 1, 1, 0, 0, 1, 1] * 10, groups=G, n_bootstrap=200, seed=0)
"""
RID = "group_metrics (accuracy)"


def _gap(doc: dict[str, Any]) -> None:
    doc["tests"]["test_mod.py::test_a"]["results"][RID]["gap"] += 0.01


def _copied(doc: dict[str, Any]) -> None:
    tests = doc["tests"]
    tests["test_mod.py::test_b"]["results"][RID]["replicates"]["gap"] = (
        tests["test_mod.py::test_a"]["results"][RID]["replicates"]["gap"])


def _short(doc: dict[str, Any]) -> None:
    from pytest_fairness.results import pack_replicates, unpack_replicates

    summary = doc["tests"]["test_mod.py::test_a"]["results"][RID]
    summary["replicates"]["gap"] = pack_replicates(unpack_replicates(
        summary["replicates"]["gap"])[:150])


def _far(doc: dict[str, Any]) -> None:
    summary = doc["tests"]["test_mod.py::test_a"]["results"][RID]
    summary["value"] = 0.1


@pytest.mark.parametrize(("edit", "fragment"), [
    (_gap, "its gap 0.26 is not max − min of its included group values (0.25)"),
    (_copied, "test_mod.py::test_b :: group_metrics (accuracy): its gap replicates are those "
              "of test_mod.py::test_a :: group_metrics (accuracy), whose gap is another (0.25, "
              "here 0.75)"),
    (_short, "it has 150 gap replicates, but its params say n_bootstrap=200"),
    (_far, "its value 0.1 lies far outside its bootstrap replicates ([0.1 %, 99.9 %] range"),
], ids=["gap", "copied", "short", "far"])
def test_inconsistent_baseline_is_one_clear_error(
    pytester: pytest.Pytester, xdist_args: list[str], edit: Callable[[dict[str, Any]], None],
    fragment: str,
) -> None:
    """A number edited, replicates copied, cut short or far off: a usage error naming them."""
    pytester.makepyfile(test_mod=BOOT)
    pytester.runpytest("--fairness", "--fairness-save-baseline", "base.json",
                       "--fairness-no-history", "-p", "no:xdist").assert_outcomes(passed=3)
    result = pytester.runpytest("--fairness", "--fairness-baseline", "base.json",
                                "--fairness-no-history", *xdist_args)
    assert result.ret == pytest.ExitCode.OK  # as saved, it is consistent
    path = pytester.path / "base.json"
    document = json.loads(path.read_text())
    edit(document)
    path.write_text(json.dumps(document))
    result = pytester.runpytest("--fairness", "--fairness-baseline", "base.json",
                                "--fairness-no-history", *xdist_args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    (line,) = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert line.startswith("ERROR: --fairness-baseline=base.json: baseline 'base.json': ")
    assert fragment in line, line
    assert line.endswith("Save the baseline again with `pytest --fairness "
                         "--fairness-save-baseline base.json`.")
