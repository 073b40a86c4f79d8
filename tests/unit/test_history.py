"""The SQLite history store: schema and migrations, runs and results, durability; a damaged or
read-only store is one clear error naming the file (and the run and row) and the fix, never a
bare sqlite3 or JSON error, and the command reads without writing."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_fairness.cli import main
from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.history import MIGRATIONS, SCHEMA_VERSION, HistoryStore
from pytest_fairness.metadata import collect_metadata, git_commit
from pytest_fairness.records import KeyedResult, TestRecord
from pytest_fairness.results import GroupStat, IndicatorResult


def record(nodeid: str, gap: float = 0.25, *, checkpoint: str | None = None,
           test: str | None = None, **params: Any) -> TestRecord:
    r = IndicatorResult("group_metrics", "accuracy", 0.6, min_group_size=1, params=params,
                        groups=(GroupStat("a", 10, 0.5 + gap), GroupStat("b", 10, 0.5)))
    check = {"indicator": "group_metrics", "metric": "accuracy", "limit": "max_gap",
             "threshold": 0.3, "observed": gap, "passed": gap <= 0.3}
    return TestRecord.from_dict({"nodeid": nodeid, "outcome": "passed", "test": test or nodeid,
                                 "checkpoint": checkpoint,
                                 "results": [{**r.to_dict(), "key": None}], "checks": [check]})


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with HistoryStore(tmp_path / "sub" / "history.sqlite") as s:
        yield s


def test_new_store_is_wal_and_current(store: HistoryStore) -> None:
    """A new store is created with its directory, in WAL mode, at the current schema."""
    assert store.path.is_file()
    assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.version == SCHEMA_VERSION == len(MIGRATIONS)


def test_an_empty_run(tmp_path: Path) -> None:
    """A run with no records is stored (the store's former docstring example)."""
    store = HistoryStore(tmp_path / "h.sqlite")
    assert store.record_run({"label": "demo"}, []) == 1
    assert [run["label"] for run in store.runs()] == ["demo"]
    store.close()


def test_run_round_trip(store: HistoryStore) -> None:
    """A run keeps its metadata and its records come back as recorded."""
    records = [record("t.py::a"), record("t.py::b", 0.1)]
    run_id = store.record_run({"label": "exp", "checkpoint": "ck", "git_commit": "abc",
                               "seed": 7, "versions": {"python": "3"}, "extra": 1}, records)
    (run,) = store.runs()
    assert (run["id"], run["label"], run["checkpoint"], run["git_commit"], run["seed"]) == (
        run_id, "exp", "ck", "abc", "7")
    assert run["versions"] == {"python": "3"} and run["metadata"] == {"extra": 1}
    assert run["n_results"] == 2
    back = store.records(run_id)
    assert [r.nodeid for r in back] == ["t.py::a", "t.py::b"]
    assert back[0].results == records[0].results
    assert back[0].checks == records[0].checks
    assert back[1].results[0].result.groups[0].value == pytest.approx(0.6)


def test_resolve(store: HistoryStore) -> None:
    """Runs resolve by id, label, run checkpoint, or a result's checkpoint (latest first)."""
    first = store.record_run({"label": "base"}, [record("t.py::a")])
    second = store.record_run({"checkpoint": "ck1"}, [record("t.py::a")])
    third = store.record_run({}, [record("t.py::a[ck2]", checkpoint="/m/ck2", test="t.py::a"),
                                  record("t.py::a[ck3]", checkpoint="/m/ck3", test="t.py::a")])
    fourth = store.record_run({"label": "base"}, [record("t.py::a")])
    assert store.resolve(str(first)) == (first, None)
    assert store.resolve("base") == (fourth, None)
    assert store.resolve("ck1") == (second, None)
    assert store.resolve("ck3") == (third, "/m/ck3")
    assert [r.nodeid for r in store.records(third, checkpoint="/m/ck3")] == ["t.py::a[ck3]"]
    with pytest.raises(FairnessConfigError, match=r"no run 'nope'.*known: .*base.*ck1"):
        store.resolve("nope")
    with pytest.raises(FairnessConfigError, match="no run '99'"):
        store.run(99)


def test_resolve_passed_and_ambiguous(store: HistoryStore) -> None:
    """A baseline reference takes the latest run that passed; run:/label: settle a clash."""
    good = store.record_run({"label": "main", "exitstatus": 0}, [record("t.py::a")])
    bad = store.record_run({"label": "main", "exitstatus": 1}, [record("t.py::a")])
    assert store.resolve("main") == (bad, None)
    assert store.resolve("main", passed=True) == (good, None)
    assert store.matches("main") == ("name", [(bad, None, 1), (good, None, 0)])
    only = store.record_run({"label": str(good), "exitstatus": 1}, [record("t.py::a")])
    with pytest.raises(FairnessConfigError, match=rf"'{good}' is ambiguous.*run {good} and "
                       rf"also a run label or checkpoint of run\(s\) {only}.*run:{good}"):
        store.resolve(str(good))
    assert store.resolve(f"run:{good}") == (good, None)
    assert store.resolve(f"label:{good}") == (only, None)
    with pytest.raises(FairnessConfigError, match=rf"names no run that passed.*only run "
                       rf"{only} \(exit 1\).*run:{only}"):
        store.resolve(f"label:{good}", passed=True)
    assert store.resolve(f"run:{bad}", passed=True) == (bad, None)  # picked explicitly


def test_series_columns(store: HistoryStore) -> None:
    """Trend rows name each column by checkpoint, else label, else run number."""
    store.record_run({}, [record("t.py::a", 0.1)])
    store.record_run({"label": "L"}, [record("t.py::a", 0.2)])
    store.record_run({"checkpoint": "ck"}, [record("t.py::a", 0.3)])
    rows = store.series(last=2)
    assert [r["column"] for r in rows] == ["L", "ck"]
    assert [r["gap"] for r in rows] == pytest.approx([0.2, 0.3])


def _version_one_store(path: Path, result: dict[str, Any], *, gap: float | None) -> Path:
    """A store as schema 1 wrote it: one run with one result of test ``t.py::old``."""
    conn = sqlite3.connect(path)
    conn.executescript(MIGRATIONS[0])
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version VALUES (1)")
    conn.execute("INSERT INTO runs (started, versions) VALUES ('2024-01-01', '{}')")
    conn.execute("INSERT INTO results (run_id, nodeid, result_id, indicator, metric, value, "
                 "gap, outcome, data) VALUES (1, 't.py::old', 'x (m)', 'x', 'm', ?, ?, "
                 "'passed', ?)", (result["value"], gap,
                                  json.dumps({"result": result, "checks": []})))
    conn.commit()
    conn.close()
    return path


def test_migrates_a_version_one_store(tmp_path: Path) -> None:
    """A store written at schema 1 opens at the current schema with its rows intact."""
    old_result = IndicatorResult("x", "m", 1.0).to_dict()
    path = _version_one_store(tmp_path / "old.sqlite", old_result, gap=0.5)
    with HistoryStore(path) as store:
        assert store.version == SCHEMA_VERSION
        (old,) = store.records(1)
        assert old.test == "t.py::old" and old.results == (KeyedResult.from_dict(old_result),)
        assert store.record_run({}, [record("t.py::new")]) == 2


def test_newer_store_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    HistoryStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE schema_version SET version = 99")
    conn.commit()
    conn.close()
    for read_only in (False, True):
        with pytest.raises(FairnessConfigError, match="schema version 99, newer than"):
            HistoryStore(path, read_only=read_only)


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(FairnessConfigError, match="is not a readable pytest-fairness history"):
        HistoryStore(path)


def test_directory_path(tmp_path: Path) -> None:
    with pytest.raises(FairnessConfigError, match="must name a file, got the directory"):
        HistoryStore(tmp_path)


def test_metadata_from_results(tmp_path: Path) -> None:
    """Fingerprints and the seed come from the results' params; checkpoints by name."""
    records = [record("t.py::a", model_fingerprint="m1", dataset_fingerprint="d1", seed=3),
               record("t.py::b", model_fingerprint="m1", dataset_fingerprint="d2", seed=3)]
    meta = collect_metadata(records, root=tmp_path, label="x", checkpoints=["/a/ck.pt"],
                            exitstatus=1)
    assert (meta["model_fingerprint"], meta["dataset_fingerprint"], meta["seed"]) == (
        "m1", "d1,d2", "3")
    assert meta["checkpoint"] == "ck.pt" and meta["label"] == "x" and meta["exitstatus"] == 1
    assert meta["git_commit"] is None  # tmp_path is no git work tree
    assert "python" in meta["versions"] and "pytest" in meta["versions"]
    assert collect_metadata(records, seed=11)["seed"] == 11


def test_git_commit_of_this_repository() -> None:
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    commit = git_commit(root)
    assert commit is not None and len(commit) == 40


WRITER = textwrap.dedent('''
    import sys
    from pytest_fairness.history import HistoryStore
    from pytest_fairness.records import TestRecord
    from pytest_fairness.results import GroupStat, IndicatorResult

    path, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    r = IndicatorResult("g", "accuracy", 0.5, min_group_size=1,
                        groups=(GroupStat("a", 5, 0.5), GroupStat("b", 5, 0.4)))
    records = [TestRecord.from_dict({"nodeid": f"t.py::test_{i}", "outcome": "passed",
                                     "results": [{**r.to_dict(), "key": None}]})
               for i in range(20)]
    with HistoryStore(path) as store:
        for n in range(count):
            run_id = store.record_run({"label": f"{tag}-{n}"}, records)
            print(run_id, flush=True)
''')


def test_writer_killed_mid_run_keeps_earlier_runs(tmp_path: Path) -> None:
    """SIGKILL during a stream of runs: the store opens and every committed run is whole."""
    path = tmp_path / "h.sqlite"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), "w", "100000"],
                              stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None
    committed = [int(writer.stdout.readline()) for _ in range(5)]
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=30)
    with HistoryStore(path) as store:
        runs = store.runs()
        assert {r["id"] for r in runs} >= set(committed)
        assert all(run["n_results"] == 20 for run in runs)  # no half-written run
        assert store.record_run({"label": "after"}, []) > max(committed)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_two_writers_at_once_lose_nothing(tmp_path: Path) -> None:
    """Two processes writing one store concurrently: every run and result arrives."""
    path = tmp_path / "h.sqlite"
    HistoryStore(path).close()
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag, "15"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for tag in ("x", "y")]
    outputs = [w.communicate(timeout=300) for w in writers]
    assert [w.returncode for w in writers] == [0, 0], [err for _, err in outputs]
    with HistoryStore(path) as store:
        runs = store.runs()
    labels = {r["label"] for r in runs}
    assert labels == {f"{t}-{n}" for t in "xy" for n in range(15)}
    assert sum(r["n_results"] for r in runs) == 30 * 20


def test_unknown_run_lists_run_ids_in_numeric_order(tmp_path: Path) -> None:
    from pytest_fairness.history import HistoryStore

    with HistoryStore(tmp_path / "h.sqlite") as store:
        for _ in range(11):
            store.record_run({"exitstatus": 0}, [])
        with pytest.raises(FairnessConfigError, match=r"known: 2, 3, 4, 5, 6, 7, 8, 9, 10, 11\)"):
            store.resolve("nope")


# -- a damaged or read-only store ------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def damage_record(nodeid: str, b: float) -> TestRecord:
    r = IndicatorResult("group_metrics", "accuracy", (0.8 + b) / 2, min_group_size=1,
                        groups=(GroupStat("a", 10, 0.8), GroupStat("b", 10, b)))
    check = {"indicator": "group_metrics", "metric": "accuracy", "limit": "max_gap",
             "threshold": 0.3, "observed": 0.8 - b, "passed": 0.8 - b <= 0.3}
    return TestRecord.from_dict({"nodeid": nodeid, "outcome": "passed",
                                 "results": [{**r.to_dict(), "key": None}], "checks": [check]})


@pytest.fixture
def history(tmp_path: Path) -> Path:
    path = tmp_path / "h.sqlite"
    with HistoryStore(path) as store:
        for epoch in range(1, 4):
            store.record_run({"checkpoint": f"epoch{epoch}"},
                             [damage_record(f"t.py::test_{i}", 0.5 + 0.01 * i) for i in range(30)])
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _execute(path: Path, sql: str, *args: Any) -> None:
    conn = sqlite3.connect(path)
    conn.execute(sql, args)
    conn.commit()
    conn.close()


def test_overwritten_pages_are_noticed_at_open(history: Path) -> None:
    """Garbage over two pages (the header intact): refused at open, before any run is added."""
    raw = bytearray(history.read_bytes())
    page = int.from_bytes(raw[16:18], "big")
    raw[2 * page:4 * page] = bytes(range(256)) * (2 * page // 256)
    history.write_bytes(bytes(raw))
    with pytest.raises(FairnessConfigError, match=r"h\.sqlite' is not a readable pytest-fairness "
                                                  r"history \(.*\)\. Restore it from a backup"):
        HistoryStore(history)


def test_the_command_on_overwritten_pages(history: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    raw = bytearray(history.read_bytes())
    raw[8192:12288] = b"\x0d" * 4096
    history.write_bytes(bytes(raw))
    for argv in (["history"], ["compare", "epoch1", "epoch2"], ["report", "1", "--html", "x"]):
        assert main(["--history", str(history), *argv]) == 2
        err = capsys.readouterr().err
        assert "is not a readable pytest-fairness history" in err and "Traceback" not in err


@pytest.mark.parametrize(("column", "value", "fragment"), [
    ("data", "{not json", r"result row 31 \(run 2\) has a damaged 'data' column \(.*not valid "
                          r"JSON"),
    ("data", "[" * 100_000, r"result row 31 \(run 2\) has a damaged 'data' column \(.*nests"),
    ("data", '{"result": "x"}', r"result row 31 \(run 2\) .*no 'result' object"),
    ("data", '{"result": {"name": 5}}', r"result row 31 .*the result does not rebuild"),
    ("data", json.dumps({"result": IndicatorResult("x", "m", 1.0).to_dict(),
                         "checks": [{"limit": "max_gap", "threshold": "high",
                                     "passed": True}]}),
     r"result row 31 .*an entry of 'checks': threshold='high' is not num"),
    ("data", b"\xff\xfe{}", r"result row 31 .*bytes, not JSON text"),
    ("gap", "wide", r"result row 31 \(run 2\) has a damaged 'gap' column \(str 'wide'"),
])
def test_a_damaged_result_row_names_the_run_and_the_row(history: Path, column: str,
                                                        value: Any, fragment: str) -> None:
    """The error names the row, the run, the column and how to delete the run."""
    _execute(history, f"UPDATE results SET {column} = ? WHERE id = 31", value)
    with HistoryStore(history, read_only=True) as store, pytest.raises(
            FairnessConfigError, match=fragment + r".*DELETE FROM runs WHERE id = 2"):
        store.records(2)
        store.series()


def test_a_damaged_run_row(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _execute(history, "UPDATE runs SET versions = '[1, 2' WHERE id = 3")
    with HistoryStore(history, read_only=True) as store, pytest.raises(
            FairnessConfigError, match=r"run 3 has a damaged 'versions' column"):
        store.runs()
    assert main(["--history", str(history), "compare", "epoch1", "epoch3"]) == 2
    assert "run 3 has a damaged 'versions' column" in capsys.readouterr().err


def test_the_command_on_a_damaged_row(history: Path, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """compare and report exit 2 with the message; nothing is skipped silently."""
    _execute(history, "UPDATE results SET data = '{' WHERE id = 40")
    assert main(["--history", str(history), "compare", "epoch1", "epoch2"]) == 2
    assert "result row 40 (run 2)" in capsys.readouterr().err
    assert main(["--history", str(history), "report", "epoch2", "--html",
                 str(tmp_path / "r")]) == 2
    assert "result row 40 (run 2)" in capsys.readouterr().err
    assert main(["--history", str(history), "compare", "epoch1", "epoch3",
                 "--confidence", "point"]) == 0  # these records keep no replicates


def test_the_command_never_writes_the_store(history: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """No WAL switch, no -wal/-shm left behind, no migration: the file is byte for byte the same."""
    from pytest_fairness.report import figures

    monkeypatch.setattr(figures, "import_problem", lambda: "no figures: keep the test fast")
    _execute(history, "PRAGMA journal_mode = DELETE")
    before = _digest(history)
    assert main(["--history", str(history), "history"]) == 0
    assert main(["--history", str(history), "compare", "epoch1", "epoch2",
                 "--confidence", "point"]) == 0  # these records keep no replicates
    assert main(["--history", str(history), "report", "2", "--html", str(tmp_path / "r")]) == 0
    assert _digest(history) == before
    assert sorted(p.name for p in history.parent.iterdir()) == ["h.sqlite", "r"]


def test_an_older_store_is_read_without_migrating_it(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = _version_one_store(tmp_path / "old.sqlite",
                              IndicatorResult("x", "m", 0.5).to_dict(), gap=None)
    before = _digest(path)
    assert main(["--history", str(path), "history", "--metric", "value"]) == 0
    assert "t.py::old" in capsys.readouterr().out
    assert _digest(path) == before
    with HistoryStore(path, read_only=True) as store:
        assert store.version == SCHEMA_VERSION and len(store.records(1)) == 1
        with pytest.raises(FairnessConfigError, match=r"opened read-only"):
            store.record_run({}, [])
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT version FROM schema_version").fetchone() == (1,)
    conn.close()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0
                    or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to run the command as another user")
def test_a_store_another_user_cannot_write(history: Path,
                                           request: pytest.FixtureRequest) -> None:
    """As 'nobody', in a folder and on a file it cannot write: history and compare work."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="fairness-ro-"))  # pytest's tmp_path is private
    request.addfinalizer(lambda: shutil.rmtree(folder, ignore_errors=True))
    folder.chmod(0o755)
    shutil.copy(history, folder / "h.sqlite")
    (folder / "h.sqlite").chmod(0o644)
    code = ("import sys; from pytest_fairness.cli import main; "
            "sys.exit(main(['--history', sys.argv[1], 'compare', 'epoch1', 'epoch3', "
            "'--confidence', 'point']))")  # these records keep no replicates
    done = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c",
         code, str(folder / "h.sqlite")],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd="/",
    )
    if "Permission denied" in done.stderr and "h.sqlite" not in done.stderr:
        pytest.skip(f"'nobody' cannot run this interpreter: {done.stderr[-200:]}")
    assert done.returncode == 0, done.stderr
    assert "no regression" in done.stdout
    assert sorted(p.name for p in folder.iterdir()) == ["h.sqlite"]


@pytest.mark.parametrize("target", ["/proc/x", "/proc/version/x", "{tmp}/file/x"])
def test_report_into_a_folder_that_cannot_be_written(history: Path, tmp_path: Path, target: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("a file, not a folder")
    folder = target.format(tmp=tmp_path)
    assert main(["--history", str(history), "report", "1", "--html", folder]) == 2
    err = capsys.readouterr().err
    assert f"--html {folder!r}: cannot write the report there" in err
    assert "Traceback" not in err


def test_a_schema_that_lost_a_column(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A damaged schema can rename a column without quick_check noticing: refused at open."""
    _execute(history, "ALTER TABLE runs RENAME COLUMN versions TO versionq")
    with pytest.raises(FairnessConfigError, match=r"table 'runs' has no column 'versions'"):
        HistoryStore(history, read_only=True)
    assert main(["--history", str(history), "compare", "epoch1", "epoch2"]) == 2
    assert "not a readable pytest-fairness history" in capsys.readouterr().err


def test_text_that_is_not_utf8(history: Path) -> None:
    """Python's sqlite3 decodes TEXT as UTF-8: a damaged cell is the same clear error."""
    conn = sqlite3.connect(history)
    conn.execute("UPDATE runs SET label = CAST(x'ff61' AS TEXT) WHERE id = 2")
    conn.commit()
    conn.close()
    with HistoryStore(history, read_only=True) as store, pytest.raises(
            FairnessConfigError, match=r"not a readable pytest-fairness history \(Could not "
                                       r"decode to UTF-8 column 'label'"):
        store.runs()


def _locked(path: Path) -> sqlite3.Connection:
    """Another connection holding the store's write lock (a rollback-journal store)."""
    HistoryStore(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute("BEGIN EXCLUSIVE")
    return conn


@pytest.mark.parametrize("read_only", [True, False])
def test_locked_store_is_described_as_locked(tmp_path: Path, read_only: bool) -> None:
    """`database is locked`: wait or use another file; not 'restore from a backup'."""
    path = tmp_path / "h.sqlite"
    holder = _locked(path)
    try:
        with pytest.raises(FairnessConfigError, match=r"is locked by another process") as info:
            with HistoryStore(path, timeout=0.05, read_only=read_only) as store:
                store.record_run({}, [])
        assert "backup" not in str(info.value) and str(path) in str(info.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_read_only_store_is_described_as_read_only(tmp_path: Path) -> None:
    """A write refused by SQLite as read-only names that, not damage."""
    path = tmp_path / "h.sqlite"
    with HistoryStore(path) as store:
        store._conn.close()
        store._conn = sqlite3.connect(path.as_uri() + "?mode=ro", uri=True, isolation_level=None)
        with pytest.raises(FairnessConfigError, match=r"is read-only .*--fairness-no-history"):
            store.record_run({}, [])


def test_a_damaged_older_payload_neither_unrecords_the_run_nor_hides_the_trends(
        history: Path) -> None:
    """The report's trends read the number columns: an older run's damaged payload (which
    `pytest-fairness history` still reports) does not make a recorded run read "NOT written"."""
    from pytest_fairness.history import write_run

    _execute(history, "UPDATE results SET data = ? WHERE id = 31", "{not json")
    line, trends = write_run(history, {}, [record("t.py::new", 0.1)], series=True)
    assert line.startswith("fairness history: run 4 recorded in"), line
    assert trends is not None and {t["run_id"] for t in trends} == {1, 2, 3, 4}
    with HistoryStore(history, read_only=True) as store:
        assert len(store.runs()) == 4
        with pytest.raises(FairnessConfigError, match=r"result row 31 \(run 2\)"):
            store.series(payloads=True)
