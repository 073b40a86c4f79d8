"""End to end: saving baselines, compare-fail and the no_regression marker."""

from __future__ import annotations

import json

import pytest
import scipy.sparse  # noqa: F401  (pytester forgets what a run imported; the bootstrap's
import scipy.special  # noqa: F401  scipy loads numpy.fft, which loads once a process)

HEADER = "from pytest_fairness import fairness, indicators as ind\nimport os, pytest\n"
#: Two tests; with WORSE=<name>[,<name>...] those tests' group b loses accuracy (0.5 → 0.25).
#: They draw no replicates (n_bootstrap=0): these tests are about baselines, not intervals, and
#: their comparisons name the point rule (POINT, confidence="point").
TWO = HEADER + """
Y = [1, 0, 1, 1, 0, 1, 0, 0] * 5
G = ["a", "a", "a", "a", "b", "b", "b", "b"] * 5

def predictions(name):
    if name in os.environ.get("WORSE", "").split(","):
        return [1, 0, 1, 0, 1, 0, 0, 1] * 5
    return [1, 0, 1, 0, 0, 0, 0, 1] * 5

@pytest.mark.fairness
def test_one():
    return ind.group_metrics(Y, predictions("one"), groups=G, min_group_size=1, n_bootstrap=0)

@pytest.mark.fairness
def test_two():
    return ind.group_metrics(Y, predictions("two"), groups=G, min_group_size=1, n_bootstrap=0)

"""

#: And a third, marked no_regression(tolerance=0.3), judged by the point rule.
TESTS = TWO + """
@fairness.no_regression(tolerance=0.3, confidence="point")
def test_marked():
    return ind.group_metrics(Y, predictions("marked"), groups=G, min_group_size=1, n_bootstrap=0)
"""
#: Comparisons judged by the point rule: the change itself, not its interval.
POINT = ["--fairness-compare-confidence", "point"]
ALL = ["--fairness-compare-fail", "gap:0,ratio:0,value:0,worst:0", *POINT]


@pytest.fixture
def saved(pytester: pytest.Pytester) -> pytest.Pytester:
    """A test module and a baseline saved from it (no history)."""
    pytester.makepyfile(test_mod=TESTS)
    result = pytester.runpytest("--fairness", "--fairness-save-baseline", "base.json",
                                "--fairness-no-history")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["fairness baseline saved: base.json"])
    return pytester


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["no_xdist", "xdist_two"])
def test_save_then_compare_unchanged_passes(saved: pytest.Pytester, mode: list[str]) -> None:
    """Comparing a run with its own baseline, zero tolerance, passes."""
    result = saved.runpytest("--fairness", "--fairness-baseline", "base.json", *ALL,
                             "--fairness-no-history", *mode)
    result.assert_outcomes(passed=3)
    document = json.loads((saved.path / "base.json").read_text())
    assert sorted(document["tests"]) == [f"test_mod.py::test_{n}" for n in ("marked", "one", "two")]


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["no_xdist", "xdist_two"])
def test_compare_fail_fails_exactly_the_regressed_test(
    saved: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, mode: list[str]
) -> None:
    """Only the test that got worse fails, and its message shows baseline and now by group."""
    monkeypatch.setenv("WORSE", "two")
    result = saved.runpytest("--fairness", "--fairness-baseline", "base.json",
                             "--fairness-compare-fail", "gap:0.01", *POINT,
                             "--fairness-no-history", "-rf", *mode)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "FAILED test_mod.py::test_two - Failed: FairnessViolation: 1 fairness*",
    ])
    result.stdout.fnmatch_lines([
        "FairnessViolation: 1 fairness regression against the baseline base.json: "
        "group_metrics (accuracy): gap 0.25 → 0.5",
        "*REGRESSED: group_metrics (accuracy): gap baseline 0.25 → now 0.5 (+0.25 worse, "
        "tolerance 0.01, lower is better)",
        "*group*baseline*now*Δ*",
        "*a*0.75*0.75*+0*",
        "*b*0.5*0.25*-0.25*← worse",
    ])


def test_tolerance_and_direction(saved: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """A looser tolerance passes; an improvement never fails."""
    monkeypatch.setenv("WORSE", "one")
    saved.runpytest("--fairness", "--fairness-baseline", "base.json", "--fairness-compare-fail",
                    "gap:0.25", *POINT, "--fairness-no-history").assert_outcomes(passed=3)
    saved.runpytest("--fairness", "--fairness-save-baseline", "worse.json",
                    "--fairness-no-history").assert_outcomes(passed=3)
    monkeypatch.delenv("WORSE")
    saved.runpytest("--fairness", "--fairness-baseline", "worse.json", *ALL,
                    "--fairness-no-history").assert_outcomes(passed=3)


def test_marker_checks_its_test(saved: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """no_regression works without --fairness-compare-fail, with its own tolerance."""
    monkeypatch.setenv("WORSE", "marked")
    saved.runpytest("--fairness", "--fairness-baseline", "base.json",
                    "--fairness-no-history").assert_outcomes(passed=3)  # 0.25 worse <= 0.3
    saved.makepyfile(test_mod=TESTS.replace("tolerance=0.3", "tolerance=0.1, metric='worst'"))
    result = saved.runpytest("--fairness", "--fairness-baseline", "base.json",
                             "--fairness-no-history")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*REGRESSED: group_metrics (accuracy): worst (group b) "
                                 "baseline 0.5 → now 0.25*"])


def test_marker_without_baseline_notes_it(saved: pytest.Pytester) -> None:
    result = saved.runpytest("--fairness", "--fairness-no-history", "-k", "marked", "-rA")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*note: fairness.no_regression: no baseline to compare with*"])


def test_new_test_is_not_compared(saved: pytest.Pytester) -> None:
    """A gated test the baseline lacks is not compared: it fails, saying so (issue #25)."""
    saved.makepyfile(test_new=TESTS.replace("def test_one", "def test_brand_new"))
    result = saved.runpytest("--fairness", "--fairness-baseline", "base.json", *ALL,
                             "--fairness-no-history", "test_new.py", "-rA")
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(["*note: not compared: test_new.py::test_brand_new :: "
                                 "group_metrics (accuracy) (the test is not in the baseline "
                                 "base.json)"])


def test_baseline_from_history_by_label(pytester: pytest.Pytester,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """--fairness-baseline takes a run label (or id, or checkpoint) from the history."""
    pytester.makepyfile(test_mod=TESTS)
    pytester.runpytest("--fairness", "--fairness-run-label", "main").assert_outcomes(passed=3)
    monkeypatch.setenv("WORSE", "one")
    result = pytester.runpytest("--fairness", "--fairness-baseline", "main",
                                "--fairness-compare-fail", "value:0.01", *POINT)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*regression against the baseline run 1 [[]main[]]*"])


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--fairness-compare-fail", "gap:0.1"],
         "*--fairness-compare-fail needs something to compare with*"),
        (["--fairness-baseline", "missing.json"], "*baseline file 'missing.json' does not exist*"),
        (["--fairness-baseline", "ckpt9"], "*'ckpt9' is not a file, and there is no history*"),
        (["--fairness-baseline", "b.json", "--fairness-compare-fail", "gap:x"],
         "*argument --fairness-compare-fail: gap: a tolerance must be a number*"),
    ],
)
def test_usage_errors(pytester: pytest.Pytester, args: list[str], fragment: str) -> None:
    pytester.makepyfile(test_mod=TESTS)
    result = pytester.runpytest("--fairness", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([fragment])


# -- the baseline must match the run -------------------------------------------------------------


@pytest.fixture
def trap(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A project in ``repo/`` with a baseline saved outside it, in ``other/base.json``.

    Commands run from ``repo/``; the pytester folder above holds both.
    """
    repo = pytester.mkdir("repo")
    pytester.mkdir("other")
    (repo / "test_mod.py").write_text(TESTS)
    monkeypatch.chdir(repo)
    pytester.runpytest("--fairness", f"--fairness-save-baseline={pytester.path}/other/base.json",
                       "--fairness-no-history").assert_outcomes(passed=3)
    return pytester


def test_rootdir_trap_fails_the_run(trap: pytest.Pytester, xdist_args: list[str]) -> None:
    """``--fairness-baseline PATH`` (a space, PATH outside the project) moves the rootdir.

    No test id matches the baseline any more: the run fails with a usage error naming a few
    ids of each side and the cause, rather than "3 passed" with nothing compared.
    """
    outside = str(trap.path / "other" / "base.json")
    result = trap.runpytest("--fairness", "--fairness-baseline", outside,
                            "--fairness-no-history", *xdist_args)
    result.assert_outcomes(passed=2, failed=1)  # test_marked: not compared
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines([
        f"fairness baseline ERROR: no fairness test of this run matched the baseline {outside} "
        "(0/3 matched): nothing was compared with it.",
        "  the baseline has: test_mod.py::test_marked, test_mod.py::test_one, "
        "test_mod.py::test_two",
        "  this run has:     repo/test_mod.py::test_*, repo/test_mod.py::test_*, "
        "repo/test_mod.py::test_*",
        f"  likely cause: the rootdir moved (now {trap.path}): one side's test ids start with "
        "'repo/' and the other's do not.*",
        "  `--fairness-baseline PATH` with a space: *Write --fairness-baseline=PATH*",
    ])
    # With '=', pytest keeps the rootdir: every test matches.
    result = trap.runpytest("--fairness", f"--fairness-baseline={outside}",
                            "--fairness-no-history", *xdist_args)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        f"fairness baseline {outside}: compared 1 result of 1 test; "
        "no regression in 1 comparison",
    ])
    assert "fairness baseline ERROR" not in result.stdout.str()


def test_renamed_tests_fail_the_run(saved: pytest.Pytester) -> None:
    """Every test renamed: the same error, without a rootdir prefix to point at."""
    (saved.path / "test_mod.py").unlink()
    saved.makepyfile(test_renamed=TESTS)
    result = saved.runpytest("--fairness", "--fairness-baseline", "base.json",
                             "--fairness-no-history")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines([
        "fairness baseline ERROR: no fairness test of this run matched the baseline base.json*",
        "  this run has:     test_renamed.py::test_*",
        "  likely causes: the rootdir moved (now *) (test ids are relative to it), or the "
        "tests were renamed or moved.",
    ])


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["no_xdist", "xdist_two"])
def test_partial_match_is_in_the_summary(saved: pytest.Pytester, mode: list[str]) -> None:
    """Some gated tests not in the baseline: they fail, and the summary names them."""
    saved.makepyfile(test_new=TESTS.replace("def test_one", "def test_brand_new"))
    result = saved.runpytest("--fairness", "--fairness-baseline", "base.json", *ALL,
                             "--fairness-no-history", *mode)
    result.assert_outcomes(passed=3, failed=3)
    result.stdout.fnmatch_lines([
        "fairness baseline base.json: compared 3 results of 3 tests; no regression in 13 "
        "comparisons; not compared: test_new.py::test_* :: group_metrics (accuracy) (the test "
        "is not in the baseline base.json), *",
    ])
    # Ungated, they are only named.
    result = saved.runpytest("--fairness", "--fairness-baseline", "base.json",
                             "--fairness-no-history", "-k", "not marked", *mode)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        "fairness baseline base.json: compared 0 results of 0 tests (nothing is gated: *); "
        "not in the baseline: test_new.py::test_*, test_new.py::test_*",
    ])


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        ('"gap": "abc"', "['tests']['test_mod.py::test_one']['results']['group_metrics "
                         "(accuracy)']['gap'] is 'abc', not a finite number or null"),
        ('"gap": 1e400', "'base.json' contains the number '1e400'"),
        ("", "['tests']['test_mod.py::test_one']['results']['group_metrics (accuracy)'] has "
             "no 'gap' (expected a finite number or null)"),
    ],
    ids=["non_numeric", "non_finite", "missing"],
)
def test_bad_baseline_value_fails_naming_the_key(
    pytester: pytest.Pytester, xdist_args: list[str], edit: str, fragment: str
) -> None:
    """A baseline value that is not a finite number, or is missing, is a usage error."""
    from pytest_fairness.baseline import build_baseline
    from pytest_fairness.records import TestRecord
    from pytest_fairness.results import GroupStat, IndicatorResult

    pytester.makepyfile(test_mod=TESTS)
    result = IndicatorResult("group_metrics", "accuracy", 0.625, min_group_size=1,
                             groups=(GroupStat("a", 20, 0.75), GroupStat("b", 20, 0.5)))
    document = build_baseline([TestRecord.from_dict({
        "nodeid": "test_mod.py::test_one", "outcome": "passed",
        "results": [{**result.to_dict(), "key": None}]})]).to_dict()
    saved, path = pytester, pytester.path / "base.json"
    summary = document["tests"]["test_mod.py::test_one"]["results"]["group_metrics (accuracy)"]
    summary["gap"] = "__GAP__"
    text = json.dumps(document, indent=2, sort_keys=True)
    path.write_text(text.replace('"gap": "__GAP__"', edit) if edit else
                    text.replace('"gap": "__GAP__",', ""))
    result = saved.runpytest("--fairness", "--fairness-baseline", "base.json",
                             "--fairness-no-history", *xdist_args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    (line,) = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert line.startswith("ERROR: --fairness-baseline=base.json: ")
    assert fragment in line and "--fairness-save-baseline" in line


# -- the pytest run and `pytest-fairness compare` count alike -------------------------------------


#: The two tests and an inline check, with the default intervals: the run and the command
#: judge the comparisons by their default rule alike. The check names the point rule: the
#: gap 0.5's interval straddles 0.3, and the test needs a check that raises.
INLINE = TWO.replace(", n_bootstrap=0", "") + """
@pytest.mark.fairness
def test_inline():
    result = ind.group_metrics(Y, predictions("inline"), groups=G, min_group_size=1)
    fairness.check(result, max_gap=0.3, confidence="point")  # raises when the gap is 0.5
    return result
"""


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["no_xdist", "xdist_two"])
def test_inline_check_that_raised_is_compared_like_the_cli(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, mode: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A test whose inline fairness.check raised before it returned is still compared.

    The pytest run and ``pytest-fairness compare`` of the same two runs, with the same
    tolerance, print the same count.
    """
    from pytest_fairness.cli import main

    pytester.makepyfile(test_mod=INLINE)
    pytester.runpytest("--fairness", "--fairness-run-label", "good", "--fairness-save-baseline",
                       "base.json", *mode).assert_outcomes(passed=3)
    monkeypatch.setenv("WORSE", "one,inline")
    result = pytester.runpytest("--fairness", "--fairness-run-label", "bad",
                                "--fairness-baseline", "base.json", "--fairness-compare-fail",
                                "gap:0.01", "-rA", *mode)
    result.assert_outcomes(passed=1, failed=2)
    tally = "2 regressions in 2 tests (3 comparisons)"
    result.stdout.fnmatch_lines([
        "*REGRESSED: group_metrics (accuracy): gap baseline 0.25 → now 0.5*",  # test_inline
        f"fairness baseline base.json: compared 3 results of 3 tests; {tally}",
    ])
    history = str(pytester.path / ".fairness" / "history.sqlite")
    capsys.readouterr()
    assert main(["compare", "good", "bad", "--fail", "gap:0.01", "--history", history]) == 1
    out = capsys.readouterr().out
    assert f"baseline matched 3/3 tests; {tally}" in out
    assert "REGRESSED: test_mod.py::test_inline :: group_metrics (accuracy): gap" in out
    assert "REGRESSED: test_mod.py::test_one :: group_metrics (accuracy): gap" in out
