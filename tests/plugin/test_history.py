"""End to end: the history store written by the controller."""

from __future__ import annotations

import numpy.fft  # noqa: F401  (pytester forgets what a run imported; these load once)
import pytest
import scipy.sparse  # noqa: F401
import scipy.special  # noqa: F401

from pytest_fairness.history import HistoryStore

HEADER = "from pytest_fairness import fairness, indicators as ind\nimport pytest\n"
#: Four report-only tests and one that fails by the point rule (gap 0.25 against 0.1).
TESTS = HEADER + """
@pytest.mark.parametrize("i", range(4))
@pytest.mark.fairness
def test_many(i):
    return ind.group_metrics(Y, P, groups=G, min_group_size=1, n_bootstrap=0)

@fairness.threshold(max_gap=0.1, confidence="point")
def test_fail():
    return ind.group_metrics(Y, P, groups=G, min_group_size=1, n_bootstrap=0)
"""


def test_xdist_writes_one_run_with_every_result(pytester: pytest.Pytester,
                                                data_source: str, xdist_args: list[str]) -> None:
    """Whatever the distribution, one run holds the five results; workers write nothing."""
    pytester.makepyfile(TESTS + data_source)
    result = pytester.runpytest("--fairness", "--fairness-run-label", "exp1", *xdist_args)
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(["fairness history: run 1 recorded in *history.sqlite"])
    with HistoryStore(pytester.path / ".fairness" / "history.sqlite") as store:
        (run,) = store.runs()
        records = store.records(run["id"])
    assert run["label"] == "exp1" and run["n_results"] == 5 and run["exitstatus"] == 1
    assert sorted(r.outcome for r in records) == ["failed"] + ["passed"] * 4
    assert {r.nodeid.split("::")[1] for r in records} == {
        "test_fail", *(f"test_many[{i}]" for i in range(4))}


def test_no_history_and_ini_path(pytester: pytest.Pytester, data_source: str) -> None:
    """--fairness-no-history writes nothing; the ini option moves the store."""
    pytester.makepyfile(TESTS + data_source)
    pytester.runpytest("--fairness", "--fairness-no-history", "-p", "no:xdist")
    assert not (pytester.path / ".fairness").exists()
    pytester.makeini("[pytest]\nfairness_history = store/h.sqlite\n")
    pytester.runpytest("--fairness", "-p", "no:xdist")
    pytester.runpytest("--fairness", "-p", "no:xdist", "--fairness-history", "other.sqlite")
    with HistoryStore(pytester.path / "store" / "h.sqlite") as store:
        assert len(store.runs()) == 1
    with HistoryStore(pytester.path / "other.sqlite") as store:
        assert len(store.runs()) == 1


def test_unwritable_history_does_not_break_the_run(pytester: pytest.Pytester,
                                                   data_source: str) -> None:
    pytester.makepyfile(TESTS + data_source)
    (pytester.path / "dir.sqlite").mkdir()
    result = pytester.runpytest("--fairness", "-p", "no:xdist", "--fairness-history", "dir.sqlite")
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(["fairness history NOT written to *dir.sqlite: *must name a file*"])


def test_metadata_hook_and_checkpoints(pytester: pytest.Pytester, data_source: str) -> None:
    """conftest can add metadata; each checkpoint's results are recorded under it."""
    pytester.makeconftest("""
def pytest_fairness_run_metadata(config, metadata):
    metadata["model_fingerprint"] = "resnet-test"
    metadata["experiment"] = "e7"
""")
    pytester.makepyfile(HEADER + data_source + """
@pytest.mark.fairness
def test_ck(fairness_checkpoint):
    return ind.group_metrics(Y, P, groups=G, min_group_size=1)
""")
    pytester.runpytest("--fairness", "-p", "no:xdist", "--fairness-checkpoint", "ck1",
                       "--fairness-checkpoint", "ck2").assert_outcomes(passed=2)
    with HistoryStore(pytester.path / ".fairness" / "history.sqlite") as store:
        (run,) = store.runs()
        assert run["model_fingerprint"] == "resnet-test" and run["metadata"]["experiment"] == "e7"
        assert run["checkpoint"] == "ck1,ck2"
        records = store.records(run["id"])
        assert [(r.test, r.checkpoint) for r in records] == [
            ("test_metadata_hook_and_checkpoints.py::test_ck", "ck1"),
            ("test_metadata_hook_and_checkpoints.py::test_ck", "ck2")]
        assert store.resolve("ck2") == (run["id"], "ck2")


def test_the_history_table_shows_what_each_test_is_gated_on(
        pytester: pytest.Pytester, data_source: str, xdist_args: list[str],
        capsys: pytest.CaptureFixture[str]) -> None:
    """A test limited on metric="TPR" shows its TPR gap, named; --metric takes any name."""
    from pytest_fairness.cli import main

    pytester.makepyfile(HEADER + data_source + """
@fairness.threshold(max_gap=0.9, metric="TPR")
def test_tpr():
    return ind.group_metrics(Y, P, groups=G, min_group_size=1)

@fairness.threshold(max_gap=0.9)
def test_plain():
    return ind.group_metrics(Y, P, groups=G, min_group_size=1)
""")
    pytester.runpytest("--fairness", *xdist_args).assert_outcomes(passed=2)
    history = str(pytester.path / ".fairness" / "history.sqlite")
    capsys.readouterr()
    assert main(["--history", history, "history"]) == 0
    out = capsys.readouterr().out
    assert "::test_tpr :: group_metrics (accuracy) [TPR] " in out, out
    tpr_row = next(line for line in out.splitlines() if "::test_tpr" in line)
    plain_row = next(line for line in out.splitlines() if "::test_plain" in line)
    assert tpr_row.split()[-2:] == ["0.6667", "+0"], out  # one run: no drift yet
    assert plain_row.split()[-2:] == ["0.25", "+0"], out
    assert main(["--history", history, "history", "--metric", "DEO"]) == 0
    assert capsys.readouterr().out.count("0.6667") == 2
    assert main(["--history", history, "history", "--metric", "DEOO"]) == 2
    assert "Did you mean 'DEO'?" in capsys.readouterr().err
