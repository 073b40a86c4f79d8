"""The pytest-fairness command: history, compare (exit codes), report."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from pytest_fairness.baseline import save_baseline
from pytest_fairness.cli import main
from pytest_fairness.history import HistoryStore
from pytest_fairness.records import TestRecord
from pytest_fairness.results import GroupStat, IndicatorResult


def record(nodeid: str, b: float, outcome: str = "passed") -> TestRecord:
    r = IndicatorResult("group_metrics", "accuracy", (0.8 + b) / 2, min_group_size=1,
                        groups=(GroupStat("a", 10, 0.8), GroupStat("b", 10, b)))
    return TestRecord.from_dict({"nodeid": nodeid, "outcome": outcome,
                                 "results": [{**r.to_dict(), "key": None}]})


@pytest.fixture
def history(tmp_path: Path) -> Path:
    path = tmp_path / "h.sqlite"
    with HistoryStore(path) as store:
        store.record_run({"checkpoint": "epoch1"}, [record("t.py::a", 0.7), record("t.py::b", 0.8)])
        store.record_run({"checkpoint": "epoch2"}, [record("t.py::a", 0.5, "failed"),
                                                    record("t.py::b", 0.8)])
    return path


def test_history_table(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Rows are tests, columns checkpoints; failed cells are marked."""
    assert main(["--history", str(history), "history"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["test", "epoch1", "epoch2", "drift"]
    row_a = next(line for line in lines if line.startswith("t.py::a"))
    assert row_a.split()[-4:] == ["0.1", "0.3", "!", "+0.2"]
    assert main(["--history", str(history), "history", "--metric", "worst"]) == 0
    assert "0.5 !" in capsys.readouterr().out


def test_compare_exit_codes(history: Path, tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 1 when B regressed from A, 0 the other way round and within tolerance."""
    h = ["--history", str(history)]
    point = ["--confidence", "point"]  # these records keep no replicates
    assert main([*h, "compare", "epoch1", "epoch2", *point]) == 1
    out = capsys.readouterr().out
    assert ("REGRESSED: t.py::a :: group_metrics (accuracy): headline (gap (DA)) baseline 0.1 "
            "→ now 0.3" in out)
    assert "← worse" in out
    assert main([*h, "compare", "epoch2", "epoch1", *point]) == 0
    assert main([*h, "compare", "1", "2", "--fail", "gap:0.25", *point]) == 0
    assert "no regression: 2 comparisons within tolerance" in capsys.readouterr().out
    base = save_baseline(tmp_path / "base.json", [record("t.py::a", 0.7)])
    assert main([*h, "compare", str(base), "epoch2", "--fail", "worst:0.1", *point]) == 1
    assert "worst (group b) baseline 0.7 → now 0.5" in capsys.readouterr().out


def test_compare_lists_new_tests(history: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    base = save_baseline(tmp_path / "base.json", [record("t.py::a", 0.7)])
    assert main(["--history", str(history), "compare", str(base), "epoch1",
                 "--confidence", "point"]) == 0
    assert "new test (not in the baseline): t.py::b" in capsys.readouterr().out


def test_usage_errors(history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Unknown runs and missing stores exit 2 with the fix; bad options are argparse errors."""
    assert main(["--history", str(history), "compare", "epoch1", "nope"]) == 2
    assert "no run 'nope'" in capsys.readouterr().err
    assert main(["--history", str(tmp_path / "none.sqlite"), "history"]) == 2
    assert "run `pytest --fairness` first" in capsys.readouterr().err
    assert main(["--history", str(history), "history", "--last", "0"]) == 2
    assert main(["--history", str(tmp_path / "none.sqlite"), "report", "1", "--html", "x"]) == 2
    with pytest.raises(SystemExit) as exit_info:
        main(["--history", str(history), "compare", "1", "2", "--fail", "gap"])
    assert exit_info.value.code == 2
    assert "has no tolerance" in capsys.readouterr().err


def test_empty_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "h.sqlite"
    HistoryStore(path).close()
    assert main(["--history", str(path), "history"]) == 0
    assert "no fairness results" in capsys.readouterr().out


def test_report_of_a_run(history: Path, tmp_path: Path) -> None:
    """report RUN --html DIR rebuilds report.json and report.html from the store."""
    out = tmp_path / "out"
    assert main(["--history", str(history), "report", "epoch2", "--html", str(out)]) == 0
    document = json.loads((out / "report.json").read_text())
    assert [t["nodeid"] for t in document["tests"]] == ["t.py::a", "t.py::b"]
    assert document["run"]["checkpoint"] == "epoch2" and document["run"]["history_run_id"] == 2
    page = (out / "report.html").read_text()
    assert "t.py::a" in page and "Trends across checkpoints" in page


def test_console_script_is_installed() -> None:
    """The entry point resolves to main."""
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "pytest-fairness"]
    assert script.load() is main


def test_options_after_the_command(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--history is accepted after the command too, as `compare A B --history PATH`."""
    assert main(["compare", "epoch1", "epoch2", "--confidence", "point",
                 "--history", str(history)]) == 1
    assert main(["compare", "epoch1", "epoch2", "--fail", "gap:0.25", "--confidence", "point",
                 "--history", str(history)]) == 0
    assert main(["history", "--history", str(history), "--last", "5"]) == 0
    assert main(["runs", "--history", str(history)]) == 0
    assert main(["report", "2", "--history", str(history), "--html",
                 str(history.parent / "out")]) == 0
    # Before the command, and repeated after it: the one after wins.
    assert main(["--history", str(history.parent / "none.sqlite"), "runs",
                 "--history", str(history)]) == 0
    capsys.readouterr()


def test_compare_names_each_test_and_counts(history: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Every REGRESSED line and the headline list name the test; one count line, as pytest's."""
    assert main(["--history", str(history), "compare", "epoch1", "epoch2",
                 "--fail", "gap:0,worst:0", "--confidence", "point"]) == 1
    out = capsys.readouterr().out
    assert "baseline matched 2/2 tests; 2 regressions in 1 test (4 comparisons)" in out
    assert ": t.py::a :: group_metrics (accuracy): gap 0.1 → 0.3; t.py::a :: " in out
    assert "REGRESSED: t.py::a :: group_metrics (accuracy): gap baseline 0.1 → now 0.3" in out
    assert "REGRESSED: t.py::a :: group_metrics (accuracy): worst (group b)" in out
    assert "ok: t.py::b" not in out  # only results that regressed are detailed


def test_compare_with_no_test_in_common_is_an_error(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """B's tests all missing from A: exit 2 with a few ids of each and the likely cause."""
    base = save_baseline(tmp_path / "base.json", [record("sub/t.py::a", 0.7)])
    assert main(["--history", str(history), "compare", str(base), "epoch2"]) == 2
    err = capsys.readouterr().err
    assert "no fairness test of this run matched the baseline" in err
    assert "the baseline has: sub/t.py::a" in err and "this run has:     t.py::a, t.py::b" in err
    assert "likely cause: the rootdir moved: one side's test ids start with 'sub/'" in err


def labelled_store(path: Path, runs: int = 11) -> Path:
    with HistoryStore(path) as store:
        for i in range(1, runs + 1):
            store.record_run({"label": f"epoch{i}"}, [record("t.py::a", 0.5 + i / 100)])
    return path


def test_runs_sorted_numerically_with_labels(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """`runs` lists run ids in numeric order (10 after 9) with their labels."""
    path = labelled_store(tmp_path / "h.sqlite")
    assert main(["runs", "--history", str(path)]) == 0
    rows = capsys.readouterr().out.splitlines()[2:]
    assert [row.split()[0] for row in rows] == [str(i) for i in range(1, 12)]
    assert [row.split()[2] for row in rows] == [f"epoch{i}" for i in range(1, 12)]
    assert main(["runs", "--last", "3", "--history", str(path)]) == 0
    assert [r.split()[0] for r in capsys.readouterr().out.splitlines()[2:]] == ["9", "10", "11"]


def test_history_columns_show_labels_in_run_order(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A run with a checkpoint and a label: the column shows both; columns by run id."""
    path = tmp_path / "h.sqlite"
    with HistoryStore(path) as store:
        for i in range(1, 12):
            store.record_run({"label": f"l{i}", "checkpoint": f"/c/e{i}.pt"},
                             [record("t.py::a", 0.7)])
    assert main(["history", "--history", str(path)]) == 0
    header = capsys.readouterr().out.splitlines()[1]
    assert header.split("  ")[0] == "test"
    assert [h for h in header.split() if h.startswith("[")] == [f"[l{i}]" for i in range(1, 12)]
    assert "e2.pt [l2]" in header and header.index("e9.pt") < header.index("e10.pt")


def test_store_found_from_a_subdirectory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Without --history, the project's .fairness/ is found from any folder below it."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "pyproject.toml").write_text("")
    labelled_store(project / ".fairness" / "history.sqlite", runs=2)
    deep = project / "tests" / "unit"
    (deep / "sub").mkdir(parents=True)
    (project / "tests" / "pyproject.toml").write_text("")  # a nested marker: keep looking
    monkeypatch.chdir(deep / "sub")
    assert main(["runs"]) == 0
    assert main(["compare", "epoch1", "epoch2", "--confidence", "point"]) == 0
    assert main(["history"]) == 0
    assert str(project / ".fairness" / "history.sqlite") in capsys.readouterr().out


def test_find_history_stops_at_the_project_top(tmp_path: Path) -> None:
    """A .fairness/ above the project (.git, else the outermost marker) is not used."""
    from pytest_fairness.cli import find_history

    (tmp_path / ".fairness").mkdir()  # outside the project
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "a" / "b").mkdir(parents=True)
    (repo / "a" / "setup.cfg").write_text("")
    assert find_history(repo / "a" / "b") == repo / "a" / ".fairness" / "history.sqlite"
    plain = tmp_path / "plain" / "x"  # no .git: up to the outermost marker only
    plain.mkdir(parents=True)
    (tmp_path / "plain" / "pytest.ini").write_text("")
    assert find_history(plain) == tmp_path / "plain" / ".fairness" / "history.sqlite"
    (tmp_path / "plain" / ".fairness").mkdir()
    assert find_history(plain) == tmp_path / "plain" / ".fairness" / "history.sqlite"
    bare = tmp_path / "bare"  # no marker at all: the folder itself
    bare.mkdir()
    assert find_history(bare) == bare / ".fairness" / "history.sqlite"


def test_missing_store_says_where_it_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["runs"]) == 2
    assert "searched from" in capsys.readouterr().err


@pytest.mark.usefixtures("paired_draws")
def test_compare_judges_by_the_paired_interval(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """--confidence supported: a small change inside its interval passes, a large one not."""
    import numpy as np

    from pytest_fairness import indicators as ind

    rng = np.random.default_rng(0)
    groups, y = np.repeat(["a", "b"], 500), rng.integers(0, 2, 1000)
    right = rng.random(1000) < 0.85

    def run(lost: int) -> TestRecord:
        now = right.copy()
        now[np.flatnonzero(right & (groups == "b"))[:lost]] = False
        r = ind.group_metrics(y, np.where(now, y, 1 - y), groups=groups, n_bootstrap=500,
                              seed=0)
        return TestRecord.from_dict({"nodeid": "t.py::a", "outcome": "passed",
                                     "results": [{**r.to_dict(), "key": None}]})

    path = tmp_path / "h.sqlite"
    with HistoryStore(path) as store:
        for label, lost in (("base", 0), ("small", 3), ("large", 60)):
            store.record_run({"label": label}, [run(lost)])
    h = ["--history", str(path)]
    assert main([*h, "compare", "base", "small", "--confidence", "point"]) == 1  # any growth
    assert main([*h, "compare", "base", "small"]) == 0  # the default rule is supported
    assert main([*h, "compare", "base", "small", "--confidence", "supported"]) == 0
    assert main([*h, "compare", "base", "large", "--confidence", "supported"]) == 1
    out = capsys.readouterr().out
    assert "confidence supported" in out and "] paired, tolerance 0 supported" in out


def _hostile_store(tmp: Path) -> tuple[Path, dict[str, str]]:
    """A store with results, an empty run and a run of other results; files to point at."""
    path = tmp / "h.sqlite"
    other = IndicatorResult("group_metrics", "recall", 0.1, min_group_size=1,
                            groups=(GroupStat("a", 10, 0.8), GroupStat("b", 10, 0.7)))
    with HistoryStore(path) as store:
        store.record_run({"checkpoint": "epoch1"}, [record("t.py::a", 0.7)])
        store.record_run({"checkpoint": "empty"}, [])
        store.record_run({"checkpoint": "epoch2"}, [record("t.py::a", 0.6)])
        store.record_run({"checkpoint": "recall"}, [TestRecord.from_dict(
            {"nodeid": "t.py::a", "outcome": "passed",
             "results": [{**other.to_dict(), "key": None}]})])
    (tmp / "a-file").write_text("not a folder")
    (tmp / "garbage.sqlite").write_bytes(b"SQLite format 3\x00" + b"\xff" * 2000)
    (tmp / "half.sqlite").write_bytes(path.read_bytes()[:3000])
    (tmp / "folder.sqlite").mkdir()
    names = {"H": str(path), "FILE": str(tmp / "a-file"), "TMP": str(tmp)}
    return path, names


#: argv (H: the store, FILE: a regular file, TMP: the folder) → a fragment of the error.
CLI_CASES: dict[str, tuple[str, ...]] = {
    "history --last 10**20": ("--history H history --last 100000000000000000000", "--last must"),
    "history --last -1": ("--history H history --last -1", "--last must"),
    "history --last 0": ("--history H history --last 0", "--last must"),
    "history --last 2**63": ("--history H history --last 9223372036854775808", "--last must"),
    "runs --last 10**20": ("--history H runs --last 100000000000000000000", "--last must"),
    "runs --last -5": ("--history H runs --last -5", "--last must"),
    "history --last abc": ("--history H history --last abc", "invalid int value"),
    "history --last 1e3": ("--history H history --last 1e3", "invalid int value"),
    "history --metric nosuch": ("--history H history --metric nosuch", "nosuch"),
    "compare B empty": ("--history H compare epoch1 empty", "B (run 2 [empty]) holds no"),
    "compare A empty": ("--history H compare empty epoch1", "A (run 2 [empty]) holds no"),
    "compare nothing in common": ("--history H compare epoch1 recall", "nothing was compared"),
    "compare unknown metric": ("--history H compare epoch1 epoch2 --fail FOO:0.1",
                               "metric='FOO'"),
    "compare --fail nan": ("--history H compare epoch1 epoch2 --fail gap:nan", "nan"),
    "compare --fail negative": ("--history H compare epoch1 epoch2 --fail gap:-1", "-1"),
    "compare --fail 1e999": ("--history H compare epoch1 epoch2 --fail gap:1e999", "1e999"),
    "compare --fail empty": ("--history H compare epoch1 epoch2 --fail ,", "pairs"),
    "compare --confidence bogus": ("--history H compare epoch1 epoch2 --confidence bogus",
                                   "invalid choice"),
    "compare huge run id": ("--history H compare 99999999999999999999 epoch1", "no run"),
    "compare unknown run": ("--history H compare epoch1 nope", "no run 'nope'"),
    "compare run:-1": ("--history H compare run:-1 epoch1", "no run"),
    "compare a file that is not a baseline": ("--history H compare FILE epoch1", "a-file"),
    "compare ../ outside": ("--history H compare ../../../../etc/passwd epoch1", "passwd"),
    "report --html ''": ("--history H report 1 --html ''", "--html '' names no folder"),
    "report --html under a file": ("--history H report 1 --html FILE/sub", "cannot write"),
    "report huge run id": ("--history H report 99999999999999999999 --html TMP/r", "no run"),
    "report unknown run": ("--history H report nope --html TMP/r", "no run 'nope'"),
    "--history a folder": ("--history TMP/folder.sqlite runs", "must name a file"),
    "--history not SQLite": ("--history TMP/garbage.sqlite runs", "not a readable"),
    "--history truncated": ("--history TMP/half.sqlite history", "not a readable"),
    "--history under a file": ("--history FILE/h.sqlite runs", "no history store"),
    "--history missing": ("--history TMP/none.sqlite runs", "no history store"),
}


def attempt_cli(argv: str, tmp: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """The outcome of one command: clear error, traceback, silent (exit 0) or data lost."""
    import shlex

    path, names = _hostile_store(tmp)
    words = [next((w.replace(k, v, 1) for k, v in names.items() if w.startswith(k)), w)
             for w in shlex.split(argv)]
    before = {p: p.read_bytes() for p in tmp.rglob("*") if p.is_file()}
    try:
        status = main(words)
    except SystemExit as stop:  # argparse: a usage message, exit 2
        status = int(stop.code or 0)
    except Exception as error:  # noqa: BLE001 - counted: the goal is none
        return "traceback", f"{type(error).__name__}: {error}"
    said = capsys.readouterr().err
    if any(p.read_bytes() != raw for p, raw in before.items()):
        return "data lost", said
    return ("clear error" if status == 2 and said.strip() else "silent"), said


@pytest.mark.parametrize("name", list(CLI_CASES))
def test_hostile_command_is_a_clear_usage_error(name: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 2 and one message naming the value; no traceback, no file changed."""
    argv, fragment = CLI_CASES[name]
    outcome, said = attempt_cli(argv, tmp_path, capsys)
    assert outcome == "clear error", said
    assert fragment in said and "Traceback" not in said, said


def test_compare_of_the_same_results_still_passes(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The checks above leave a sound comparison alone: exit 0."""
    path, _ = _hostile_store(tmp_path)
    assert main(["--history", str(path), "compare", "epoch2", "epoch1",
                 "--confidence", "point"]) == 0


def test_report_option_is_checked_at_configure_time(pytester: pytest.Pytester) -> None:
    """--fairness-report '' or under a regular file: a usage error before any test runs."""
    pytester.makepyfile("def test_x():\n    pass\n")
    blocker = pytester.path / "a-file"
    blocker.write_text("x")
    for value, why in (("", "names no folder"), (f"{blocker}/sub", "is not a folder")):
        result = pytester.runpytest("--fairness", f"--fairness-report={value}")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines([f"*--fairness-report {value!r}: *{why}*"])
    assert pytester.runpytest("--fairness", "--fairness-report=out/r").ret == 0


@pytest.mark.parametrize("value", ["²", "abc", "-3", "1.5", ""])
def test_extract_counts_refuse_what_int_cannot_read(value: str) -> None:
    """Digits int() does not read ("²") get the option's own message, not argparse's."""
    from pytest_fairness.cli import _image_size, _workers

    with pytest.raises(argparse.ArgumentTypeError, match="must be an int >= 0"):
        _workers(value)
    with pytest.raises(argparse.ArgumentTypeError, match="must be an int from 1 to 4096"):
        _image_size(value)
