"""Damaged stores: the feature cache, precomputed features, baselines and the history.

Each example writes a sound file (a cache entry, an ``.npz``/``.npy``/``.parquet`` of
features, a baseline, a history store), damages a fresh copy (truncation, byte flips,
overwritten or zeroed ranges, inserted bytes, byte-order marks, wrong JSON types and values,
deep nesting, invalid JSON in a store's column, wrong column types, members that are not
arrays, a directory in the file's place) and reads it the way pytest-fairness does.
Outcomes:

* **clear error**: a :class:`~pytest_fairness.errors.FairnessError` (for the command: exit 2
  and a message);
* **valid**: the reader returned exactly what was written (the damage missed the content);
* **recovered**: the documented recovery — a damaged cache entry is recomputed, with a
  warning naming it;
* **changed, well-formed**: a format without a checksum (JSON, ``.npy``, Parquet, a SQLite
  cell) decoded to other content of the right form and types — as if the file had been
  edited; no reader can tell. A cache entry's files are checked against the sha256s of its
  sidecar, and an ``.npz`` carries a CRC-32 per member, so this cannot happen to them and
  counts as silent wrong;

and two are failures: any other exception (**traceback**), and a result that breaks an
invariant (**silent wrong**: features that differ from the ones written in a checksummed
file, a non-finite or mistyped number, a result that does not rebuild, a store the
read-only command wrote to).

The default run tries 25 inputs per reader; the slow tier (marked ``slow``) tries 200 per
reader and prints the table. ``python -m tests.fuzz.test_stores_fuzz --examples N`` prints
the same table without pytest.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import io
import json
import math
import sqlite3
import sys
import tempfile
import traceback
import warnings
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import strategies as st

from pytest_fairness.baseline import load_baseline, save_baseline
from pytest_fairness.cli import main
from pytest_fairness.data import FairnessDataset, load_manifest
from pytest_fairness.errors import FairnessError
from pytest_fairness.features import DefaultTransform, extract_features, load_precomputed
from pytest_fairness.history import HistoryStore
from pytest_fairness.records import TestRecord
from pytest_fairness.regression import compare_baselines
from pytest_fairness.report import figures
from pytest_fairness.results import GroupStat, IndicatorResult
from tests.fuzz import harness

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
DEFAULT_EXAMPLES = 25
SLOW_EXAMPLES = 200
OUTCOMES = ("tried", "clear error", "valid", "recovered", "changed, well-formed", "traceback",
            "silent wrong")


class SilentWrong(AssertionError):
    """A reader returned something that breaks an invariant."""


class Changed(Exception):
    """Well-formed content other than what was written, from a format with no checksum."""


# -- shared damage -----------------------------------------------------------------------------
def byte_damage(data: st.DataObject, raw: bytes) -> bytes:
    """Truncation, flips, overwritten/zeroed ranges, insertions, byte-order marks, junk."""
    n = len(raw)
    kind = data.draw(st.sampled_from(("truncate", "short", "flip", "flip", "overwrite", "zero",
                                      "insert", "bom", "append", "empty")), label="bytes")
    if kind == "truncate":
        return raw[: data.draw(st.integers(0, max(n - 1, 0)))]
    if kind == "short":
        return raw[: max(n - data.draw(st.integers(1, 64)), 0)]
    if kind == "flip":
        out = bytearray(raw)
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, n - 1))
            out[i] ^= data.draw(st.integers(1, 255))
        return bytes(out)
    if kind in ("overwrite", "zero"):
        start = data.draw(st.integers(0, n - 1))
        length = data.draw(st.sampled_from([1, 16, 512, 4096]))
        chunk = (bytes(length) if kind == "zero"
                 else bytes((start + k * 37) % 256 for k in range(length)))
        return (raw[:start] + chunk + raw[start + length:])[: max(n, start + length)]
    if kind == "insert":
        i = data.draw(st.integers(0, n))
        chunk = data.draw(st.one_of(st.sampled_from([b"\x00", b"\xff\xfe", b"[" * 100_000]),
                                    st.binary(min_size=1, max_size=16)))
        return raw[:i] + chunk + raw[i:]
    if kind == "bom":
        return data.draw(st.sampled_from([b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf"])) + raw
    if kind == "append":
        return raw + data.draw(st.binary(min_size=1, max_size=64))
    return b""


HOSTILE_JSON: tuple[Any, ...] = (
    None, True, False, 0, -1, 1.5, 1e308, "x", "", "0.25", [], {}, [None], [0.1, 0.2],
    {"group": "a"}, {"value": "x"}, "\u00e9", "1" * 400,
)
DEEP = "\x00DEEP\x00"


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            out.extend(_paths(child, (*path, key)))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            out.extend(_paths(child, (*path, i)))
    return out


def json_damage(data: st.DataObject, document: Any) -> str:
    """A JSON text: one value replaced by a hostile one, deleted, or nested 100,000 deep."""
    document = copy.deepcopy(document)
    path = data.draw(st.sampled_from(_paths(document)), label="json path")
    kind = data.draw(st.sampled_from(("replace", "replace", "delete", "deep")), label="json")
    value: Any = DEEP if kind == "deep" else data.draw(
        st.one_of(st.sampled_from(HOSTILE_JSON), st.text(max_size=6)), label="value")
    if not path:
        document = value
    else:
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        if kind == "delete":
            del parent[path[-1]]
        else:
            parent[path[-1]] = value
    return json.dumps(document).replace(json.dumps(DEEP), "[" * 100_000 + "]" * 100_000)


def _same_arrays(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> bool:
    return got.keys() == want.keys() and all(
        got[k].shape == want[k].shape and np.array_equal(got[k], want[k]) for k in want)


# -- the feature cache ----------------------------------------------------------------------------
class Counting(torch.nn.Module):
    """A linear embedder returning (embeddings, logits); counts its forward passes."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = torch.nn.Linear(3 * 4 * 4, 5)
        self.head = torch.nn.Linear(5, 2)
        self.calls = 0

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self.calls += 1
        z = self.embed(x.flatten(1))
        return z, self.head(z)


_STATE: dict[str, Any] = {}


def _dataset() -> FairnessDataset:
    if "dataset" not in _STATE:
        _STATE["dataset"] = load_manifest(FIXTURES / "manifest" / "manifest.csv")
    dataset: FairnessDataset = _STATE["dataset"]
    return dataset


def _extract(model: Counting, cache: Path) -> Any:
    return extract_features(model, _dataset(), transform=DefaultTransform(4), cache_dir=cache)


def _pristine_entry() -> tuple[dict[Path, bytes], dict[str, np.ndarray]]:
    """A sound cache entry (its files relative to the cache, their bytes) and its outputs."""
    if "entry" not in _STATE:
        with tempfile.TemporaryDirectory() as tmp:
            features = _extract(Counting(), Path(tmp))
            files = {p.relative_to(tmp): p.read_bytes() for p in Path(tmp).rglob("*")
                     if p.is_file() and p.suffix in (".npy", ".sha256")}
            _STATE["entry"] = (files, dict(features.outputs))
    entry: tuple[dict[Path, bytes], dict[str, np.ndarray]] = _STATE["entry"]
    return entry


def _rewrite_npy(data: st.DataObject, file: Path) -> None:
    """One array file rewritten as another well-formed (or pickled) array, or removed."""
    array = np.load(file)
    kind = data.draw(st.sampled_from(("drop", "strings", "shape", "nan", "object", "rows",
                                      "float16")), label="member damage")
    if kind == "drop":
        file.unlink()
        return
    other = {"strings": lambda: array.astype(str),
             "shape": lambda: array.reshape(-1) if array.ndim > 1 else array.reshape(1, -1, 1),
             "nan": lambda: np.full(array.shape, np.nan),
             "object": lambda: np.array([None] * len(array), dtype=object),
             "rows": lambda: array[:-1],
             "float16": lambda: array.astype(np.float16) if array.dtype.kind == "f"
             else array[::-1]}[kind]()
    np.save(file, other, allow_pickle=True)


def _rewrite_npz(data: st.DataObject, raw: bytes) -> bytes:
    """The archive rewritten with one member changed: dropped, retyped, reshaped, not npy."""
    with np.load(io.BytesIO(raw)) as archive:
        arrays = {k: archive[k] for k in archive.files}
    name = data.draw(st.sampled_from(sorted(arrays)), label="member")
    kind = data.draw(st.sampled_from(("drop", "strings", "shape", "nan", "object", "bytes",
                                      "rows", "dir", "float16")), label="member damage")
    buffer = io.BytesIO()
    if kind in ("bytes", "dir"):
        with zipfile.ZipFile(buffer, "w") as target, zipfile.ZipFile(io.BytesIO(raw)) as source:
            for info in source.infolist():
                if info.filename == f"{name}.npy":
                    if kind == "dir":
                        target.writestr(f"{name}.npy/", b"")
                    else:
                        target.writestr(info.filename, data.draw(st.binary(max_size=200)))
                else:
                    target.writestr(info, source.read(info))
        return buffer.getvalue()
    array = arrays[name]
    if array.ndim == 0 and kind in ("shape", "object", "rows"):
        kind = "drop"
    if kind == "drop":
        del arrays[name]
    elif kind == "strings":
        arrays[name] = array.astype(str)
    elif kind == "shape":
        arrays[name] = array.reshape(-1) if array.ndim > 1 else array.reshape(1, -1, 1)
    elif kind == "nan" and array.dtype.kind == "f":
        arrays[name] = np.where(np.arange(array.size).reshape(array.shape) == 0, np.nan, array)
    elif kind == "object":
        arrays[name] = np.array([None] * len(array), dtype=object)
    elif kind == "rows":
        arrays[name] = array[:-1]
    elif kind == "float16" and array.dtype.kind == "f":
        arrays[name] = array.astype(np.float16)
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    return buffer.getvalue()


def read_cache(data: st.DataObject, tmp: Path) -> str:
    files, want = _pristine_entry()
    for relative, raw in files.items():
        (tmp / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp / relative).write_bytes(raw)
    sidecar = next(tmp / r for r in files if r.suffix == ".sha256")
    target = tmp / data.draw(st.sampled_from(sorted(files)), label="file")
    layer = data.draw(st.sampled_from(("bytes", "bytes", "members", "directory")), label="layer")
    if layer == "directory":
        target.unlink()
        target.mkdir()
        (target / "x").write_bytes(b"")
    elif layer == "bytes" or target.suffix == ".sha256":
        target.write_bytes(byte_damage(data, target.read_bytes()))
    else:
        _rewrite_npy(data, target)
    model = Counting()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        features = _extract(model, tmp)
    named = [w for w in caught if sidecar.name in str(w.message)]
    if not _same_arrays(dict(features.outputs), want):
        raise SilentWrong(f"the features differ from those written ({layer} damage)")
    if features.from_cache:
        return "valid"
    if model.calls and named:
        return "recovered"
    raise SilentWrong(f"recomputed without a warning naming the entry: {caught}")


# -- precomputed features -------------------------------------------------------------------------
def _expected_features() -> dict[str, np.ndarray]:
    rows = len(_dataset())
    return {"embeddings": np.arange(rows * 3, dtype=np.float64).reshape(rows, 3) / 7,
            "logits": np.arange(rows * 2, dtype=np.float32).reshape(rows, 2)}


def read_precomputed(data: st.DataObject, tmp: Path) -> str:
    dataset = _dataset()
    want = _expected_features()
    ids = np.array(dataset.image_ids)
    order = np.random.default_rng(0).permutation(len(ids))
    suffix = data.draw(st.sampled_from((".npz", ".npz", ".npy", ".parquet")), label="format")
    file = tmp / f"features{suffix}"
    if suffix == ".npz":
        np.savez(file, image_id=ids[order], **{k: v[order] for k, v in want.items()})
    elif suffix == ".npy":
        np.save(file, want["embeddings"])
        want = {"embeddings": want["embeddings"]}
    else:
        frame = pd.DataFrame(want["embeddings"][order], columns=["f0", "f1", "f2"])
        frame.insert(0, "image_id", ids[order])
        frame["logits"] = list(want["logits"][order].astype(np.float64))
        frame.to_parquet(file)
        want = {"embeddings": want["embeddings"], "logits": want["logits"].astype(np.float64)}
    layer = data.draw(st.sampled_from(("bytes", "structure")), label="layer")
    if layer == "bytes":
        file.write_bytes(byte_damage(data, file.read_bytes()))
    elif suffix == ".npz":
        file.write_bytes(_rewrite_npz(data, file.read_bytes()))
    elif suffix == ".npy":
        bad = data.draw(st.sampled_from(["strings", "3d", "nan", "object", "rows"]))
        array = want["embeddings"]
        np.save(file, {"strings": array.astype(str), "3d": array.reshape(len(array), 3, 1),
                       "nan": np.where(array > 1, np.inf, array),
                       "object": np.array([None] * len(array), dtype=object),
                       "rows": array[:-2]}[bad], allow_pickle=True)
    else:
        frame = pd.read_parquet(file).astype(object)
        row = data.draw(st.integers(0, len(frame) - 1))
        column = data.draw(st.sampled_from(list(frame.columns)))
        frame.loc[row, column] = data.draw(st.sampled_from(
            [None, "x", 1.5, float("nan"), [1.0], [1.0, "a", 2.0], True, b"\xff"]))
        try:
            frame.to_parquet(file)
        except Exception:  # a mix pyarrow cannot store: store the column as text
            frame[column] = frame[column].map(repr)
            frame.to_parquet(file)
    features = load_precomputed(file, dataset)
    got = dict(features.outputs)
    for name, array in got.items():
        if array.dtype.kind not in "biuf" or array.shape[0] != len(dataset):
            raise SilentWrong(f"output {name!r}: {array.dtype} {array.shape}")
        if not np.isfinite(array).all():
            raise SilentWrong(f"output {name!r} holds NaN or infinity")
    if _same_arrays(got, want):
        return "valid"
    if suffix == ".npz" and layer == "bytes":
        raise SilentWrong("an .npz (CRC-32 checked) gave other features than were written")
    return "changed, well-formed"  # another well-formed file (or a format with no checksum)


# -- baselines --------------------------------------------------------------------------------
def _records(shift: float = 0.0, checks: list[dict[str, Any]] | None = None
             ) -> list[TestRecord]:
    out = []
    for i in range(3):
        r = IndicatorResult("group_metrics", "accuracy", 0.6, min_group_size=1,
                            groups=(GroupStat("a", 10, 0.7 + shift), GroupStat("b", 10, 0.5)),
                            params={"seed": i})
        out.append(TestRecord.from_dict({"nodeid": f"t.py::test_{i}", "outcome": "passed",
                                         "results": [{**r.to_dict(), "key": None}],
                                         "checks": checks or []}))
    return out


TOLERANCES = {"gap": 0.0, "ratio": 0.0, "value": 0.0, "worst": 0.0}


def read_baseline(data: st.DataObject, tmp: Path) -> str:
    file = save_baseline(tmp / "base.json", _records(), metadata={"label": "x"})
    pristine = load_baseline(file)
    raw = json.loads(file.read_text())
    if data.draw(st.booleans(), label="bytes?"):
        file.write_bytes(byte_damage(data, file.read_bytes()))
    else:
        file.write_text(json_damage(data, raw))
    document = load_baseline(file)
    for base, other in ((document, pristine), (pristine, document)):
        comparisons, _ = compare_baselines(base, other, TOLERANCES)
        for c in comparisons:
            for number in (c.baseline, c.now):
                if number is not None and (isinstance(number, bool) or not math.isfinite(number)):
                    raise SilentWrong(f"compared a non-number: {number!r}")
            _ = c.regressed, c.to_dict()
    return "valid" if document == pristine else "changed, well-formed"


# -- the history store -------------------------------------------------------------------------
def _pristine_store() -> bytes:
    if "store" not in _STATE:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "h.sqlite"
            with HistoryStore(path) as store:
                for epoch in range(1, 4):
                    records = _records(0.01 * epoch, [{
                        "indicator": "group_metrics", "metric": "accuracy", "limit": "max_gap",
                        "threshold": 0.3, "observed": 0.2, "passed": True}])
                    store.record_run({"checkpoint": f"epoch{epoch}", "label": f"run{epoch}"},
                                     records)
            conn = sqlite3.connect(path)
            conn.execute("PRAGMA journal_mode = DELETE")  # one file: the damage is all in it
            conn.close()
            _STATE["store"] = path.read_bytes()
    store: bytes = _STATE["store"]
    return store


def _snapshot(path: Path) -> Any:
    """What the command shows of a store: every run, its records, the series."""
    with HistoryStore(path, read_only=True) as store:
        runs = store.runs()
        return ([{k: v for k, v in r.items() if k != "n_results"} for r in runs],
                [store.records(r["id"]) for r in runs], store.series(last=10))


def _sql_damage(data: st.DataObject, path: Path) -> None:
    conn = sqlite3.connect(path)
    table, column = data.draw(st.sampled_from([
        ("results", "data"), ("results", "data"), ("results", "data"), ("results", "gap"),
        ("results", "value"), ("results", "nodeid"), ("results", "checkpoint"),
        ("runs", "versions"), ("runs", "metadata"), ("runs", "label"), ("runs", "checkpoint"),
        ("schema_version", "version")]), label="column")
    row = data.draw(st.integers(1, 9)) if table != "schema_version" else None
    if column == "data":
        (text,) = conn.execute("SELECT data FROM results WHERE id = ?", (row,)).fetchone()
        value: Any = data.draw(st.one_of(
            st.just(None), st.sampled_from(["{", "[]", "null", "", "{\"result\": 5}"]),
            st.just(b"\xff\xfe{}"), st.just(7),
            st.just(json_damage(data, json.loads(text)))), label="data")
    else:
        value = data.draw(st.one_of(st.sampled_from(HOSTILE_JSON[:-3]), st.text(max_size=6),
                                    st.just(b"\xff"), st.just("[" * 100_000)), label="value")
        if isinstance(value, (list, dict)):
            value = json.dumps(value)
    where = "" if row is None else f" WHERE id = {row}"
    with contextlib.suppress(sqlite3.IntegrityError):  # NOT NULL columns refuse NULL
        conn.execute(f"UPDATE {table} SET {column} = ?{where}", (value,))
    conn.commit()
    conn.close()


def read_history(data: st.DataObject, tmp: Path) -> str:
    raw = _pristine_store()
    path = tmp / "h.sqlite"
    path.write_bytes(raw)
    pristine = _snapshot(path)
    if data.draw(st.booleans(), label="bytes?"):
        damaged = byte_damage(data, raw)
        if data.draw(st.booleans(), label="keep header?") and len(damaged) >= 100:
            damaged = raw[:100] + damaged[100:]  # pages overwritten, header intact
        path.write_bytes(damaged)
    else:
        _sql_damage(data, path)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    out, err = io.StringIO(), io.StringIO()
    codes = []
    # The report's tables, not its matplotlib figures (1-2 s each; a drawing problem is a
    # note in the page anyway): keep the examples fast.
    problem, figures.import_problem = figures.import_problem, lambda: "figures off"
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            for argv in (["history"], ["compare", "run1", "run3"],
                         ["report", "2", "--html", str(tmp / "report")]):
                codes.append(main(["--history", str(path), *argv]))
    finally:
        figures.import_problem = problem
    if hashlib.sha256(path.read_bytes()).hexdigest() != before:
        raise SilentWrong("the read-only command changed the store")
    if any(code not in (0, 1, 2) for code in codes):
        raise SilentWrong(f"exit codes {codes}")
    if 2 in codes:
        if "error:" not in err.getvalue():
            raise SilentWrong(f"exit 2 without a message: {err.getvalue()!r}")
        with contextlib.suppress(FairnessError):
            _snapshot(path)
        return "clear error"
    snapshot = _snapshot(path)
    for records in snapshot[1]:
        for record in records:
            for keyed in record.results:
                IndicatorResult.from_dict(keyed.to_dict())  # rebuilds, or it is a traceback
    for row in snapshot[2]:
        for key in ("value", "gap", "ratio", "worst_value"):
            if row[key] is not None and not isinstance(row[key], (int, float)):
                raise SilentWrong(f"series {key}={row[key]!r}")
    return "valid" if snapshot == pristine else "changed, well-formed"


# -- running and counting ----------------------------------------------------------------------
@dataclass
class Reader:
    """One reader under test: read a damaged copy in ``tmp``, return the outcome."""

    name: str
    run: Callable[[st.DataObject, Path], str]


READERS = {r.name: r for r in (
    Reader("feature cache", read_cache),
    Reader("load_precomputed", read_precomputed),
    Reader("baseline", read_baseline),
    Reader("history store", read_history),
)}
COUNTS: dict[str, Counter[str]] = {name: Counter() for name in READERS}
FAILURES: dict[str, list[str]] = {name: [] for name in READERS}


def attempt(reader: Reader, data: st.DataObject) -> str:
    """Damage and read once; classify the outcome (recorded in COUNTS)."""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            outcome = reader.run(data, Path(tmp))
        except FairnessError:
            outcome = "clear error"
        except SilentWrong as exc:
            outcome = "silent wrong"
            FAILURES[reader.name].append(str(exc))
        except Exception:
            outcome = "traceback"
            FAILURES[reader.name].append(traceback.format_exc(limit=6))
    COUNTS[reader.name]["tried"] += 1
    COUNTS[reader.name][outcome] += 1
    return outcome


def fuzz(name: str, examples: int, *, explore: bool = False) -> None:
    """Run ``examples`` damaged inputs through one reader (see :func:`harness.fuzz`)."""
    harness.fuzz(functools.partial(attempt, READERS[name]), FAILURES[name], examples,
                 explore=explore,
                 shrink=False)


def table(names: list[str] | None = None) -> str:
    """The counts as a Markdown table."""
    return harness.table(COUNTS, OUTCOMES, names)


# -- tests ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(READERS))
def test_damaged_store_gives_a_clear_error_or_the_documented_recovery(name: str) -> None:
    fuzz(name, DEFAULT_EXAMPLES)


@pytest.mark.slow
def test_slow_tier_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    harness.slow_tier(fuzz, COUNTS, OUTCOMES, FAILURES, SLOW_EXAMPLES, capsys)


def test_undamaged_files_are_read_as_written() -> None:
    """The harness itself: sound files are valid (no damage drawn)."""
    with tempfile.TemporaryDirectory() as tmp:
        files, want = _pristine_entry()
        for relative, raw in files.items():
            (Path(tmp) / relative).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / relative).write_bytes(raw)
        features = _extract(Counting(), Path(tmp))
        assert features.from_cache and _same_arrays(dict(features.outputs), want)
        path = Path(tmp) / "h.sqlite"
        path.write_bytes(_pristine_store())
        runs, records, series = _snapshot(path)
        assert len(runs) == 3 and all(len(r) == 3 for r in records) and len(series) == 9
        assert load_baseline(save_baseline(Path(tmp) / "b.json", _records())).tests


if __name__ == "__main__":
    import argparse

    torch.set_num_threads(1)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES)
    parser.add_argument("readers", nargs="*", default=list(READERS))
    args = parser.parse_args()
    status = 0
    for reader_name in args.readers:
        try:
            fuzz(reader_name, args.examples, explore=True)
        except AssertionError as exc:
            status = 1
            print(f"{reader_name}: FAILED\n{exc}", file=sys.stderr)
    print(table(args.readers))
    sys.exit(status)
