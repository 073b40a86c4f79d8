"""The run history: a SQLite store of every fairness run and its results.

One ``BEGIN IMMEDIATE`` transaction per run, schema upgrades by :data:`MIGRATIONS`, every row
checked when read (a damaged one is an error naming the run and the row, never skipped), and a
read-only mode that never writes the file. See docs/ci-and-history.md.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.files import FieldError, Fields
from pytest_fairness.options import checkpoint_ids
from pytest_fairness.records import (
    CheckOutcome,
    Comparison,
    Extraction,
    KeyedResult,
    ResultSummary,
    TestRecord,
)

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "HistoryStore", "now", "write_run"]

#: Each entry upgrades the store from version ``i`` to ``i + 1`` (index 0 creates it).
MIGRATIONS: Final[tuple[str, ...]] = (
    # 0 → 1: runs and results.
    """
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT, started TEXT NOT NULL, finished TEXT,
        label TEXT, checkpoint TEXT, git_commit TEXT, model_fingerprint TEXT,
        dataset_fingerprint TEXT, seed TEXT, versions TEXT NOT NULL DEFAULT '{}',
        exitstatus INTEGER
    );
    CREATE TABLE results (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        nodeid TEXT NOT NULL, result_id TEXT NOT NULL, indicator TEXT NOT NULL,
        metric TEXT NOT NULL, value REAL, gap REAL, outcome TEXT, data TEXT NOT NULL
    );
    """,
    # 1 → 2: the checkpoint of each result (a run may cover several), its checkpoint-free
    # test id, the ratio and worst group, the run's extra metadata, and indexes.
    """
    ALTER TABLE results ADD COLUMN test TEXT;
    ALTER TABLE results ADD COLUMN checkpoint TEXT;
    ALTER TABLE results ADD COLUMN ratio REAL;
    ALTER TABLE results ADD COLUMN worst_group TEXT;
    ALTER TABLE results ADD COLUMN worst_value REAL;
    ALTER TABLE runs ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
    UPDATE results SET test = nodeid WHERE test IS NULL;
    CREATE INDEX results_run ON results(run_id);
    CREATE INDEX results_test ON results(test, result_id);
    CREATE INDEX runs_checkpoint ON runs(checkpoint);
    """,
    # 2 → 3: the model and dataset fingerprints of each result's test (one per checkpoint).
    """
    ALTER TABLE results ADD COLUMN model_fingerprint TEXT;
    ALTER TABLE results ADD COLUMN dataset_fingerprint TEXT;
    """,
)
SCHEMA_VERSION: Final = len(MIGRATIONS)

#: Each table's columns, in the order written, and the kind each is read back as
#: (:class:`~pytest_fairness.files.Fields` kinds; None: JSON text, decoded apart).
_RUN_COLUMNS: Final[Mapping[str, str | None]] = {
    "id": "int", "started": "str?", "finished": "str?", "label": "str?", "checkpoint": "str?",
    "git_commit": "str?", "model_fingerprint": "str?", "dataset_fingerprint": "str?",
    "seed": "str?", "versions": None, "exitstatus": "int?", "metadata": None,
}
_RESULT_COLUMNS: Final[Mapping[str, str | None]] = {
    "id": "int", "run_id": "int", "nodeid": "str", "test": "str?", "checkpoint": "str?",
    "result_id": "str", "indicator": "str", "metric": "str", "value": "num?", "gap": "num?",
    "ratio": "num?", "worst_group": "str?", "worst_value": "num?", "outcome": "str?",
    "data": None, "model_fingerprint": "str?", "dataset_fingerprint": "str?",
}
#: The kind of any column read (one named in both tables is of one kind in both).
_KINDS: Final[Mapping[str, str]] = {"result_checkpoint": "str?", **{
    name: kind for name, kind in {**_RUN_COLUMNS, **_RESULT_COLUMNS}.items() if kind}}
_Payload = tuple[KeyedResult, list[CheckOutcome], list[Comparison]]


def _insert(table: str, columns: Mapping[str, object]) -> str:
    """``INSERT INTO table (columns but id) VALUES (?, ...)``: the columns listed once."""
    names = list(columns)[1:]
    return f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"


def _status(status: int | None) -> str:
    """A run's exit status in words."""
    return "no exit status" if status is None else f"exit {status}"


def now() -> str:
    """The local time, as the store keeps it."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime())


class HistoryStore(AbstractContextManager["HistoryStore"]):
    """The SQLite history store at ``path``, created and migrated on first use."""

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 60.0,
                 read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        if self.path.is_dir():
            raise FairnessConfigError(
                f"--fairness-history must name a file, got the directory {str(self.path)!r}; "
                f"e.g. {str(self.path / 'history.sqlite')!r}.")
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = self._connect(timeout)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as error:
            raise FairnessConfigError(self._unreadable(error)) from None
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            # A damaged page is reported now, not at the first query.
            problems = [str(row[0]) for row in self._conn.execute("PRAGMA quick_check(5)")]
            if problems != ["ok"]:
                raise FairnessConfigError(self._unreadable("quick_check: " + "; ".join(problems)))
            if not read_only:
                self._conn.execute("PRAGMA journal_mode = WAL")
                self._conn.execute("PRAGMA foreign_keys = ON")
            elif self.version != SCHEMA_VERSION:  # upgraded in a copy in memory, not the file
                memory = sqlite3.connect(":memory:", isolation_level=None)
                memory.row_factory = sqlite3.Row
                self._conn.backup(memory)
                self._conn.close()
                self._conn = memory
            self._migrate()
            # A damaged schema may rename a column the queries read.
            for table, wanted in (("runs", _RUN_COLUMNS), ("results", _RESULT_COLUMNS)):
                have = {str(row[1]) for row in self._conn.execute(f"PRAGMA table_info({table})")}
                missing = [c for c in wanted if c not in have]
                if missing:
                    raise FairnessConfigError(self._unreadable(
                        f"table {table!r} has no column {missing[0]!r}"))
        except BaseException as error:
            self._conn.close()
            if isinstance(error, (sqlite3.DatabaseError, UnicodeDecodeError)):
                raise FairnessConfigError(self._unreadable(error)) from None
            raise

    def _connect(self, timeout: float) -> sqlite3.Connection:
        if not self.read_only:
            conn = sqlite3.connect(str(self.path), timeout=timeout, isolation_level=None)
        else:
            uri = self.path.resolve().as_uri() + "?mode=ro"
            conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
            try:
                conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            except sqlite3.OperationalError as error:
                if "readonly" not in str(error) and "unable to open" not in str(error):
                    raise
                # A WAL store in a folder we cannot write (no -shm file for a reader): with no
                # -wal file left by a writer, nothing is pending; the file is read as immutable.
                wal = Path(str(self.path) + "-wal")
                if wal.exists() and wal.stat().st_size:
                    raise
                conn.close()
                conn = sqlite3.connect(uri + "&immutable=1", uri=True, timeout=timeout,
                                       isolation_level=None)
            except (sqlite3.DatabaseError, UnicodeDecodeError):
                pass  # reported by quick_check, with the file's name
        conn.row_factory = sqlite3.Row
        return conn

    def _unreadable(self, error: object) -> str:
        if "locked" in str(error):  # "database is locked": another connection holds a lock
            return (f"history {str(self.path)!r} is locked by another process ({error}): a "
                    "pytest run or a sqlite3 session is writing it. Wait for it to finish and "
                    "try again, or point --fairness-history (or `pytest-fairness --history`) "
                    "at another file; the store itself is not damaged.")
        if "readonly" in str(error) or "read-only" in str(error):
            return (f"history {str(self.path)!r} is read-only ({error}): make the file and its "
                    "folder writable, or pass --fairness-no-history (the `pytest-fairness` "
                    "commands only read it); the store itself is not damaged.")
        return (f"{str(self.path)!r} is not a readable pytest-fairness history ({error}). "
                "Restore it from a backup, salvage it with `sqlite3 OLD .recover | sqlite3 NEW`, "
                "or move it aside (pytest starts a new history); to keep it, point "
                "--fairness-history (or `pytest-fairness --history`) at another file.")

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction that takes the write lock up front (no upgrade deadlocks)."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    @property
    def version(self) -> int:
        """The schema version of the store (0 for an empty file)."""
        if not self._conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                  "name = 'schema_version'").fetchone():
            return 0
        row = self._conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        if row[0] is not None and (not isinstance(row[0], int) or row[0] < 0):
            raise FairnessConfigError(self._unreadable(f"schema version {row[0]!r}"))
        return int(row[0] or 0)

    def _migrate(self) -> None:
        if self.version == SCHEMA_VERSION:
            return
        with self._write() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            current = self.version  # again, under the lock: another process may have migrated
            if current > SCHEMA_VERSION:
                raise FairnessConfigError(
                    f"history {str(self.path)!r} has schema version {current}, newer than this "
                    f"pytest-fairness understands ({SCHEMA_VERSION}); upgrade pytest-fairness.")
            for version in range(current, SCHEMA_VERSION):
                for statement in filter(str.strip, MIGRATIONS[version].split(";")):
                    conn.execute(statement)
                conn.execute("DELETE FROM schema_version")
                conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version + 1,))

    @contextmanager
    def _guard(self, *, writing: bool = False) -> Iterator[None]:
        """SQLite errors (and damaged text that is not UTF-8) become one FairnessConfigError."""
        try:
            yield
        except (sqlite3.DatabaseError, UnicodeDecodeError) as error:
            if writing and "locked" not in str(error) and "readonly" not in str(error):
                raise FairnessConfigError(
                    f"cannot record the run in the history {str(self.path)!r} ({error}); check "
                    "that the file and its folder are writable, or pass --fairness-no-history.",
                ) from None
            raise FairnessConfigError(self._unreadable(error)) from None

    def _damaged(self, where: str, column: str, problem: str, run_id: Any) -> FairnessConfigError:
        delete = (f'sqlite3 {str(self.path)!r} "DELETE FROM results WHERE run_id = {run_id}; '
                  f'DELETE FROM runs WHERE id = {run_id}"')
        return FairnessConfigError(
            f"history {str(self.path)!r}: {where} has a damaged {column!r} column ({problem}). "
            f"The store was damaged or edited by hand: delete that run ({delete}) or restore "
            "the file from a backup.")

    def _checked_row(self, row: sqlite3.Row, where: str, run_id: Any) -> dict[str, Any]:
        """The row as a dict, each column of the kind pytest-fairness wrote ("str?", "num?")."""
        out = dict(row)
        try:
            Fields(out, where).check(_KINDS)
        except FieldError as error:
            raise self._damaged(where, str(error.name), f"{type(error.found).__name__} "
                                f"{error.found!r:.40}, expected {error.expected}",
                                run_id) from None
        return out

    def _json(self, text: Any, where: str, column: str, run_id: Any) -> dict[str, Any]:
        """A column of JSON text holding an object, decoded."""
        from pytest_fairness.data.jsonfile import parse_json
        from pytest_fairness.errors import InvalidDataError

        if not isinstance(text, str):
            raise self._damaged(where, column, f"{type(text).__name__}, not JSON text", run_id)
        try:
            value = parse_json(text, source="the text", allow_nan=True)
        except InvalidDataError as error:
            raise self._damaged(where, column, str(error), run_id) from None
        if not isinstance(value, dict):
            raise self._damaged(where, column, f"{type(value).__name__}, not an object", run_id)
        return value

    def _payload(self, text: Any, where: str, run_id: Any) -> _Payload:
        """A result row's ``data``: the result, its checks and its regressions, decoded."""
        payload = self._json(text, where, "data", run_id)
        if not isinstance(payload.get("result"), dict):
            raise self._damaged(where, "data", "no 'result' object", run_id)
        try:
            result = KeyedResult.from_dict(payload["result"])
        except (KeyError, TypeError, ValueError, AttributeError, IndexError,
                OverflowError) as error:
            raise self._damaged(where, "data", f"the result does not rebuild: "
                                f"{type(error).__name__}: {error}", run_id) from None
        decoded: dict[str, list[Any]] = {}
        for name, kind in (("checks", CheckOutcome), ("regressions", Comparison)):
            items = payload.get(name, [])
            if not isinstance(items, list):
                raise self._damaged(where, "data", f"{name!r} is not a list", run_id)
            try:
                decoded[name] = [kind.from_dict(item) for item in items]
            except FieldError as error:
                problem = (f"{type(error.found).__name__}, not an object" if error.name is None
                           else f"no {error.name!r}" if error.missing else
                           f"{error.name}={error.found!r:.40} is not {error.kind.rstrip('?')}")
                raise self._damaged(where, "data", f"an entry of {name!r}: {problem}",
                                    run_id) from None
        return result, decoded["checks"], decoded["regressions"]

    def record_run(self, metadata: Mapping[str, Any], records: Sequence[TestRecord]) -> int:
        """Store a run and its records atomically; return its id (extra metadata kept as JSON)."""
        if self.read_only:
            raise FairnessConfigError(f"history {str(self.path)!r} was opened read-only.")
        extra = {k: v for k, v in metadata.items() if k not in _RUN_COLUMNS}
        rows = []
        for record in records:
            for keyed in record.results:
                summary, rid = ResultSummary.of(keyed), keyed.id
                payload = {
                    "result": keyed.to_dict(),
                    "checks": [c.to_dict() for c in record.checks
                               if (c.indicator, c.metric) == (keyed.result.name,
                                                              keyed.result.metric)],
                    "regressions": [c.to_dict() for c in record.regressions if c.result == rid],
                }
                worst_group, worst_value = summary.worst or (None, None)
                rows.append((record.nodeid, record.test, record.checkpoint, rid, summary.indicator,
                             summary.metric, summary.value, summary.gap, summary.ratio,
                             worst_group, worst_value, record.outcome or None,
                             json.dumps(payload, sort_keys=True, allow_nan=False),
                             record.model_fingerprint, record.dataset_fingerprint))
        with self._guard(writing=True), self._write() as conn:
            cursor = conn.execute(_insert("runs", _RUN_COLUMNS), (
                metadata.get("started") or now(), metadata.get("finished") or now(),
                metadata.get("label"), metadata.get("checkpoint"), metadata.get("git_commit"),
                metadata.get("model_fingerprint"), metadata.get("dataset_fingerprint"),
                None if metadata.get("seed") is None else str(metadata["seed"]),
                json.dumps(dict(metadata.get("versions") or {}), sort_keys=True),
                metadata.get("exitstatus"), json.dumps(extra, sort_keys=True, default=str)))
            run_id = int(cursor.lastrowid or 0)
            conn.executemany(_insert("results", _RESULT_COLUMNS),  # the rows, in this order
                             [(run_id, *row) for row in rows])
        return run_id

    def runs(self) -> list[dict[str, Any]]:
        """Every run, oldest first, with its metadata and its number of results."""
        out = []
        with self._guard():
            rows = self._conn.execute(
                "SELECT runs.*, (SELECT COUNT(*) FROM results WHERE results.run_id = runs.id) "
                "AS n_results FROM runs ORDER BY id").fetchall()
        for row in rows:
            where = f"run {row['id']}"
            run = self._checked_row(row, where, row["id"])
            for column in ("versions", "metadata"):
                run[column] = self._json(run[column] or "{}", where, column, run["id"])
            out.append(run)
        return out

    def run(self, run_id: int) -> dict[str, Any]:
        """One run's metadata; :class:`FairnessConfigError` when there is no such run."""
        for run in self.runs():
            if run["id"] == run_id:
                return run
        raise FairnessConfigError(self._unknown(str(run_id)))

    def _unknown(self, ref: str) -> str:
        runs = self.runs()
        with self._guard():
            checkpoints = [str(r[0]) for r in self._conn.execute(
                "SELECT DISTINCT checkpoint FROM results WHERE checkpoint IS NOT NULL")]
        names = [str(r["id"]) for r in runs][-10:] + sorted(
            {n for r in runs for n in (r["checkpoint"], r["label"]) if n} | set(checkpoints))
        known = ", ".join(names[:30]) or "none (the store is empty)"
        return (f"no run {ref!r} in the history {str(self.path)!r}; give a run id, a checkpoint "
                f"or a run label (known: {known}), or a baseline .json file.")

    def matches(self, ref: str) -> tuple[str, list[tuple[int, str | None, int | None]]]:
        """The runs a reference names, newest first: ``(run id, checkpoint, exit status)``.

        ``ref`` is a run id, a run label or a checkpoint name (a run's, else a result's, by
        its path or the path's end), bare or spelled out: ``run:12``, ``label:12``,
        ``checkpoint:12``. Returns the kind (``"run"`` for an id, else ``"name"``) and the
        runs. A bare reference that is both a run id and a label or checkpoint is an error
        naming both.
        """
        text = str(ref).strip()
        kind, colon, rest = text.partition(":")
        kind, text = (kind, rest.strip()) if colon and kind in ("run", "label",
                                                                "checkpoint") else ("", text)
        by_id: list[Any] = []
        names: list[Any] = []
        with self._guard():
            if kind in ("", "run") and text.isascii() and text.isdigit() and len(text) < 19:
                by_id = self._conn.execute("SELECT id, NULL, exitstatus FROM runs WHERE id = ?",
                                           (int(text),)).fetchall()  # SQLite ints are 64-bit
            if kind != "run":
                names = self._conn.execute(
                    "SELECT id, NULL, exitstatus FROM runs WHERE (? AND label = ?) OR "
                    "(? AND checkpoint = ?) ORDER BY id DESC",
                    (kind != "checkpoint", text, kind != "label", text)).fetchall()
            if kind in ("", "checkpoint") and not names:
                names = self._conn.execute(
                    "SELECT DISTINCT run_id, results.checkpoint, runs.exitstatus FROM results "
                    "JOIN runs ON runs.id = results.run_id WHERE results.checkpoint = ? OR "
                    "results.checkpoint LIKE ? ESCAPE '\\' ORDER BY run_id DESC",
                    (text, "%/" + text.replace("\\", "\\\\").replace("%", "\\%")
                     .replace("_", "\\_"))).fetchall()
        if by_id and names:
            ids = ", ".join(str(row[0]) for row in names[:5])
            raise FairnessConfigError(
                f"{ref!r} is ambiguous in the history {str(self.path)!r}: it is run {text} and "
                f"also a run label or checkpoint of run(s) {ids}. Write run:{text} for the run, "
                f"or label:{text} (checkpoint:{text}) for the name.")
        for run_id, checkpoint, status in by_id or names:
            if not isinstance(run_id, int) or not isinstance(checkpoint, (str, type(None))) \
                    or not isinstance(status, (int, type(None))):
                raise self._damaged(f"a result of run {run_id!r:.20}", "run_id/checkpoint",
                                    f"{run_id!r:.20}, {checkpoint!r:.40}", run_id)
        return "run" if by_id else "name", [tuple(row) for row in by_id or names]

    def resolve(self, ref: str, *, passed: bool = False) -> tuple[int, str | None]:
        """The latest run a reference names (:meth:`matches`), and the checkpoint if a result's.

        With ``passed``, the latest that passed (exit status 0): a baseline must not come
        from a failed run. ``run:ID`` picks that run whatever its status.

        Raises
        ------
        FairnessConfigError
            When the reference names no run, is ambiguous, or (``passed``) names only runs
            that did not pass; the message names them and the fix.
        """
        _, found = self.matches(ref)
        if not found:
            raise FairnessConfigError(self._unknown(str(ref).strip()))
        if passed and not str(ref).strip().startswith("run:"):
            if not any(status == 0 for _, _, status in found):
                runs = ", ".join(f"run {i} ({_status(s)})" for i, _, s in found[:5])
                raise FairnessConfigError(
                    f"{ref!r} names no run that passed in the history {str(self.path)!r}, "
                    f"only {runs}: a baseline must come from a run that passed. Record a "
                    "passing run to compare with, or pick one of these anyway with "
                    f"run:{found[0][0]}.")
            found = [row for row in found if row[2] == 0]
        return found[0][0], found[0][1]

    def records(self, run_id: int, *, checkpoint: str | None = None) -> list[TestRecord]:
        """The per-test records of a run (optionally of one checkpoint only)."""
        by_test: dict[str, TestRecord] = {}
        with self._guard():
            rows = self._conn.execute(
                "SELECT * FROM results WHERE run_id = ? AND (? IS NULL OR checkpoint = ?) "
                "ORDER BY id", (run_id, checkpoint, checkpoint)).fetchall()
        for found in rows:
            where = f"result row {found['id']} (run {found['run_id']})"
            row = self._checked_row(found, where, found["run_id"])
            result, checks, regressions = self._payload(row["data"], where, row["run_id"])
            model, dataset = row["model_fingerprint"], row["dataset_fingerprint"]  # all it keeps
            record = by_test.get(row["nodeid"]) or TestRecord(
                row["nodeid"], row["test"] or row["nodeid"], row["checkpoint"], row["outcome"]
                or "", extractions=() if model is None and dataset is None else (
                    Extraction("", dataset or "", model or "", ""),))
            by_test[record.nodeid] = replace(record, results=(*record.results, result),
                                      checks=(*record.checks, *checks),
                                      regressions=(*record.regressions, *regressions))
        return list(by_test.values())

    def series(self, *, last: int = 20, payloads: bool = False) -> list[dict[str, Any]]:
        """One dict per result of the last ``last`` runs, oldest first (``column``: checkpoint).

        With ``payloads``, ``result`` is the stored :class:`IndicatorResult` and ``reads`` the
        ``metric=`` its limits read (``""`` for the headline); the report's trends need neither.
        """
        with self._guard():
            rows = self._conn.execute(
                "SELECT results.id, results.run_id, results.checkpoint AS result_checkpoint, "
                "runs.checkpoint, runs.label, results.test, results.result_id, results.indicator, "
                "results.value, results.gap, results.ratio, results.worst_value, results.outcome, "
                "results.data FROM results JOIN runs ON runs.id = results.run_id WHERE "
                "results.run_id IN "
                "(SELECT id FROM runs ORDER BY id DESC LIMIT ?) "
                "ORDER BY results.run_id, results.id",
                (int(last),)).fetchall()
        out = []
        for row in rows:
            where = f"result row {row['id']} (run {row['run_id']})"
            item = self._checked_row(row, where, row["run_id"])
            data = item.pop("data")
            if payloads:
                keyed, checks, _ = self._payload(data, where, row["run_id"])
                item["result"] = keyed.result
                item["reads"] = next((c.reads for c in checks if c.reads), "")
            del item["id"]
            item["column"] = item.pop("result_checkpoint") or item["checkpoint"]
            out.append(item)
        ids = {}  # a run's checkpoints named as its test ids named them
        for run in {item["run_id"] for item in out}:
            paths = sorted({i["column"] for i in out if i["run_id"] == run and i["column"]})
            ids.update({(run, p): name for p, name in zip(paths, checkpoint_ids(paths))})
        for item in out:
            item["column"] = (ids[item["run_id"], item["column"]] if item["column"]
                              else item["label"] or f"run {item['run_id']}")
        return out


def write_run(path: Path, metadata: dict[str, Any], records: Sequence[TestRecord], *,
              series: bool) -> tuple[str, list[dict[str, Any]] | None]:
    """Record a run in the store at ``path`` (its id goes into ``metadata``).

    Returns the summary line and, when asked, the last 20 runs' :meth:`~HistoryStore.series`
    for the report; a store that cannot be written is a line, not an error.
    """
    try:
        with HistoryStore(path) as store:
            metadata["history_run_id"] = run_id = store.record_run(metadata, records)
            line = f"fairness history: run {run_id} recorded in {path}"
            try:
                return line, store.series(last=20) if series else None
            except (sqlite3.Error, FairnessConfigError) as error:  # an older run is damaged
                return f"{line}; no trends in the report: {error}", None
    except (OSError, sqlite3.Error, FairnessConfigError) as error:
        return (f"fairness history NOT written to {path}: {error} (use --fairness-history PATH "
                "or --fairness-no-history)"), None
