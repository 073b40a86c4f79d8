"""The SQLite history store: schema and migrations, runs and results, durability."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

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


def test_series_columns(store: HistoryStore) -> None:
    """Trend rows name each column by checkpoint, else label, else run number."""
    store.record_run({}, [record("t.py::a", 0.1)])
    store.record_run({"label": "L"}, [record("t.py::a", 0.2)])
    store.record_run({"checkpoint": "ck"}, [record("t.py::a", 0.3)])
    rows = store.series(last=2)
    assert [r["column"] for r in rows] == ["L", "ck"]
    assert [r["gap"] for r in rows] == pytest.approx([0.2, 0.3])


def test_migrates_a_version_one_store(tmp_path: Path) -> None:
    """A store written at schema 1 opens at the current schema with its rows intact."""
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(MIGRATIONS[0])
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version VALUES (1)")
    conn.execute("INSERT INTO runs (started, versions) VALUES ('2024-01-01', '{}')")
    old_result = IndicatorResult("x", "m", 1.0).to_dict()
    payload = json.dumps({"result": old_result, "checks": []})
    conn.execute("INSERT INTO results (run_id, nodeid, result_id, indicator, metric, value, "
                 "gap, outcome, data) VALUES (1, 't.py::old', 'x (m)', 'x', 'm', 1.0, 0.5, "
                 "'passed', ?)", (payload,))
    conn.commit()
    conn.close()
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
    with pytest.raises(FairnessConfigError, match="schema version 99, newer than"):
        HistoryStore(path)


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
