"""Damaged copies of every fixture dataset: a reader gives a FairnessError or a sound dataset.

Each example copies one replica from ``fixtures/`` into a temporary folder, damages it
(truncation, byte flips and insertions, byte-order marks, hostile cell and JSON values,
deep nesting, paths that leave the root, file names that are not UTF-8, missing files) and
loads it. Three outcomes are allowed to happen:

* a :class:`~pytest_fairness.errors.FairnessError` (a clear error);
* a dataset that passes the invariants below (a valid result, possibly a documented
  recovery: rows skipped and counted);

and two are failures: any other exception (an internal traceback), and a dataset that
breaks an invariant (a silent wrong result: a path outside the root, an age of -5, a
class index of 5000, ...).

The default run tries 25 inputs per reader; the slow tier (marked ``slow``, deselected with
``-m "not slow"``) tries 100 per reader and prints the table of outcomes.
``python -m tests.fuzz.test_readers_fuzz --examples N [READER ...]`` prints the same table
without pytest, for deeper runs.
"""

from __future__ import annotations

import functools
import json
import math
import os
import shutil
import sys
import tempfile
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import strategies as st

from pytest_fairness.data import (
    FairnessDataset,
    load_casual_conversations,
    load_celeba,
    load_dollar_street,
    load_fairface,
    load_fitzpatrick17k,
    load_manifest,
    load_miap,
    load_utkface,
)
from pytest_fairness.data.ieat_stimuli import IEATStimuli, load_ieat_stimuli
from pytest_fairness.data.jsonfile import DEFAULT_MAX_DEPTH, read_json
from pytest_fairness.errors import FairnessError
from tests.fuzz import harness

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
DEFAULT_EXAMPLES = 25
SLOW_EXAMPLES = 100

# -- hostile values -----------------------------------------------------------------------------
HOSTILE_TEXT = (
    "", " ", "../../etc/passwd", "/etc/passwd", "..", ".", "a/../../b", "val/../../x.jpg",
    "a\x00b", "inf", "-inf", "nan", "NaN", "1e400", "-5", "1" + "0" * 30, "1" * 400, "9" * 5000,
    "[892.7]", "[true]", "[5000]", "[-3]", "[null]", "[[1]]", "{}", "[", "[" * 5000, "'", '"',
    "True", "None", "N/A", "\u0663", "\u00b2", "+3", "3_0", "\u00e9", "\ufeff", "\u2028",
    "C:\\x", "~/x", "-1", "0", "7", "1", "2", "Predominantly Feminine", "Unknown", "Middle",
    "val/1.jpg", "\udcff", "x,y", "a\nb", "\r", "[1, 2", "{'a': 1}", "1.5", "-0",
    "http://[x/media/Kenya 1/image/u/f.jpg", "http://h/media/../..", "x" * 300,
)
DEEP = "\x00DEEP\x00"  # replaced by raw nesting after json.dumps
HOSTILE_JSON: tuple[Any, ...] = (
    None, True, False, 0, -5, 5, 1.5, 1e308, float("nan"), float("inf"), "x", "", "../../x",
    "/etc/passwd", "\ud800", "1" * 400, "-5", "1" + "0" * 30, [], {}, [None], [5], ["a", 1],
    {"a": None}, DEEP, ["../../x.MP4"], ["/etc/passwd"], "N/A", "Female",
)


@dataclass
class Reader:
    """One reader under test: which replica it reads, which files damage hits, how to load."""

    name: str
    fixture: str | None
    files: tuple[str, ...]
    kind: str  # "csv", "text", "json", "names", "parquet", "ieat"
    load: Callable[[Path], Any]
    check: Callable[[Any, Path], None] = lambda result, root: None
    prepare: Callable[[Path], None] = lambda root: None
    baseline_skipped: dict[str, int] | None = field(default=None)


# -- invariants of a valid result ---------------------------------------------------------------
class SilentWrong(AssertionError):
    """A dataset was returned that breaks an invariant."""


def _inside(path: str, root: Path) -> bool:
    real = os.path.normpath(os.path.realpath(root))
    normal = os.path.normpath(path)
    return any(os.path.commonpath([r, normal]) == r and normal != r
               for r in {real, os.path.normpath(os.path.abspath(root))})


def _dataset_invariants(ds: Any, root: Path) -> None:
    if not isinstance(ds, FairnessDataset):
        raise SilentWrong(f"returned {type(ds).__name__}, not a FairnessDataset")
    frame = ds.frame
    if len(frame) == 0:
        raise SilentWrong("an empty dataset was returned")
    if not frame["image_id"].is_unique:
        raise SilentWrong("image ids are not unique")
    for path in frame["path"]:
        if not _inside(path, root):
            raise SilentWrong(f"path {path!r} lies outside the dataset root {str(root)!r}")
    assert len(ds.fingerprint) == 64
    for column in ("gender", "age_group", "skin_tone", "race", "region", "income_bucket"):
        values = frame[column].tolist()
        for value in values:
            if isinstance(value, str) and value.strip() != value:
                raise SilentWrong(f"{column} value {value!r} carries whitespace")


def _allowed(column: str, allowed: set[Any]) -> Callable[[Any, Path], None]:
    def check(ds: Any, root: Path) -> None:
        _dataset_invariants(ds, root)
        bad = set(ds.frame[column].tolist()) - allowed
        if bad:
            raise SilentWrong(f"{column} holds {sorted(map(repr, bad))[:3]}")
    return check


def _check_cc(ds: Any, root: Path) -> None:
    _dataset_invariants(ds, root)
    f = ds.frame
    ages = f["age"].to_numpy(dtype=float)
    if np.any((ages < 0) | (ages > 130)):
        raise SilentWrong(f"ages out of range: {ages[(ages < 0) | (ages > 130)][:3]}")
    if not set(f["fitzpatrick"]) <= {-1, 1, 2, 3, 4, 5, 6}:
        raise SilentWrong(f"fitzpatrick {set(f['fitzpatrick'])}")
    if not set(f["gender"]) <= {"female", "male", "other", "unknown"}:
        raise SilentWrong(f"gender {set(f['gender'])}")
    if not set(f["age_group"]) <= {"<18", "18-30", "30-45", "45-70", "70+", "unknown"}:
        raise SilentWrong(f"age_group {set(f['age_group'])}")


def _check_dollar_street(ds: Any, root: Path) -> None:
    _dataset_invariants(ds, root)
    f = ds.frame
    if not all(math.isfinite(x) and x > 0 for x in f["income"]):
        raise SilentWrong("an income is not a positive finite number")
    if not set(f["region"]) <= {"Africa", "Asia", "Europe", "The Americas"}:
        raise SilentWrong(f"region {set(f['region'])}")
    for labels in f["labels"]:
        if ds.frame.get("topics") is not None:  # Kaggle: class indices
            if not all(type(v) is int and 0 <= v < 1000 for v in labels):
                raise SilentWrong(f"labels {labels!r} are not ImageNet-1k indices")
        elif not all(isinstance(v, str) and v for v in labels):
            raise SilentWrong(f"labels {labels!r} are not topic names")


def _check_fitzpatrick(ds: Any, root: Path) -> None:
    _dataset_invariants(ds, root)
    f = ds.frame
    if not set(f["fitzpatrick"]) <= {-1, 1, 2, 3, 4, 5, 6}:
        raise SilentWrong(f"fitzpatrick {set(f['fitzpatrick'])}")
    if not all(isinstance(c, str) and c for c in f["condition"]):
        raise SilentWrong("an empty condition was kept")


def _check_celeba(ds: Any, root: Path) -> None:
    _dataset_invariants(ds, root)
    if not set(ds.frame["Male"]) <= {0, 1}:
        raise SilentWrong(f"Male {set(ds.frame['Male'])}")


def _check_utkface(ds: Any, root: Path) -> None:
    _dataset_invariants(ds, root)
    ages = ds.frame["age"].to_numpy(dtype=float)
    if np.any((ages < 0) | (ages > 116)):
        raise SilentWrong("an age is outside 0-116")
    for image_id in ds.frame["image_id"]:
        image_id.encode("utf-8")


def _check_miap(ds: Any, root: Path) -> None:
    _dataset_invariants(ds, root)
    f = ds.frame
    if not (f["box_x0"] <= f["box_x1"]).all() or not (f["box_y0"] <= f["box_y1"]).all():
        raise SilentWrong("a box has min > max")
    if not set(f["gender"]) <= {"female", "male", "unknown"}:
        raise SilentWrong(f"gender {set(f['gender'])}")


def _check_json(value: Any, root: Path) -> None:
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > DEFAULT_MAX_DEPTH:
            raise SilentWrong("nesting deeper than the bound was accepted")
        if isinstance(item, float) and not math.isfinite(item):
            raise SilentWrong(f"{item!r} was accepted")
        if isinstance(item, str):
            item.encode("utf-8")
        if isinstance(item, dict):
            for key, child in item.items():
                key.encode("utf-8")
                stack.append((child, depth + 1))
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)


def _check_ieat(result: Any, root: Path) -> None:
    if not isinstance(result, IEATStimuli):
        raise SilentWrong(f"returned {type(result).__name__}")
    for path in result.paths:
        if not _inside(str(path), root):
            raise SilentWrong(f"stimulus {str(path)!r} lies outside the root")
    _dataset_invariants(result.to_dataset(), root)


# -- readers --------------------------------------------------------------------------------
def _write_flat(root: Path) -> None:
    """A flattened Casual Conversations file (Meta's fairness-indicators layout)."""
    images = sorted((root / "images").rglob("*.jpg"))[:8]
    records = [{"age": str(20 + 7 * i), "gender": ("Female", "Male", "Other", "N/A")[i % 4],
                "img_path": p.relative_to(root).as_posix(), "skin-type": str(1 + i % 6),
                "subject_id": str(i)} for i, p in enumerate(images)]
    (root / "flat.json").write_text(json.dumps(records, indent=1))


def _write_parquet(root: Path) -> None:
    import pandas as pd

    pd.read_csv(root / "manifest.csv").to_parquet(root / "manifest.parquet")


def _write_stimuli(root: Path) -> None:
    for category in ("t/x", "t/y", "a/good", "a/bad"):
        (root / category).mkdir(parents=True)
        for i in range(3):
            (root / category / f"{i}.jpg").write_bytes(bytes([i]))
    spec = {"name": "toy", "X": "t/x", "Y": "t/y", "A": "a/good", "B": "a/bad"}
    (root / "spec.json").write_text(json.dumps(spec))


def _load_ieat(root: Path) -> Any:
    spec = json.loads((root / "spec.json").read_text())
    return load_ieat_stimuli(root, tests=[spec])


def _write_json_docs(root: Path) -> None:
    shutil.copy(FIXTURES / "casual_conversations" / "CasualConversations_mini.json",
                root / "doc.json")


READERS: dict[str, Reader] = {r.name: r for r in (
    Reader("casual_conversations", "casual_conversations", ("CasualConversations_mini.json",),
           "json", load_casual_conversations, _check_cc),
    Reader("casual_conversations_flat", "casual_conversations", ("flat.json",), "json",
           lambda r: load_casual_conversations(r, annotations="flat.json"), _check_cc,
           prepare=_write_flat),
    Reader("celeba", "celeba", ("list_attr_celeba.txt", "identity_CelebA.txt",
                                "list_eval_partition.txt"), "text",
           lambda r: load_celeba(r, split="test"), _check_celeba),
    Reader("celeba_kaggle", "celeba_kaggle", ("list_attr_celeba.csv", "list_eval_partition.csv"),
           "csv", load_celeba, _check_celeba),
    Reader("dollar_street", "dollar_street", ("dataset_dollarstreet/images_v2.csv",), "csv",
           load_dollar_street, _check_dollar_street),
    Reader("dollar_street_meta", "dollar_street", ("dataset_dollarstreet/metadata.csv",), "csv",
           lambda r: load_dollar_street(r, split="meta"), _check_dollar_street),
    Reader("fairface", "fairface", ("fairface_label_val.csv", "fairface_label_train.csv"), "csv",
           lambda r: load_fairface(r, split="all"),
           _allowed("race", {"white", "black", "latino_hispanic", "east_asian",
                             "southeast_asian", "indian", "middle_eastern"})),
    Reader("fitzpatrick17k", "fitzpatrick17k", ("fitzpatrick17k.csv",), "csv",
           load_fitzpatrick17k, _check_fitzpatrick),
    Reader("fitzpatrick17k_2021", "fitzpatrick17k", ("fitzpatrick17k_2021.csv",), "csv",
           lambda r: load_fitzpatrick17k(r, csv="fitzpatrick17k_2021.csv"), _check_fitzpatrick),
    Reader("manifest", "manifest", ("manifest.csv",), "csv",
           lambda r: load_manifest(r / "manifest.csv"), _dataset_invariants),
    Reader("manifest_parquet", "manifest", ("manifest.parquet",), "parquet",
           lambda r: load_manifest(r / "manifest.parquet"), _dataset_invariants,
           prepare=_write_parquet),
    Reader("miap", "miap", ("open_images_extended_miap_boxes_test.csv",), "csv",
           lambda r: load_miap(r, drop_unknown=True), _check_miap),
    Reader("utkface", "utkface", (), "names", load_utkface, _check_utkface),
    Reader("ieat_stimuli", None, ("spec.json",), "ieat", _load_ieat, _check_ieat,
           prepare=_write_stimuli),
    Reader("read_json", None, ("doc.json",), "json",
           lambda r: read_json(r / "doc.json", what="fuzz"), _check_json,
           prepare=_write_json_docs),
)}


# -- damage -------------------------------------------------------------------------------------
def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape") if not any(
        0xD800 <= ord(c) <= 0xDBFF for c in text) else text.encode("utf-8", "surrogatepass")


def _byte_damage(data: st.DataObject, raw: bytes) -> bytes:
    n = len(raw)
    kind = data.draw(st.sampled_from(
        ("truncate", "flip", "insert", "delete", "bom", "utf16", "empty")), label="bytes")
    if kind == "truncate":
        return raw[: data.draw(st.integers(0, max(n - 1, 0)))]
    if kind == "flip" and n:
        i = data.draw(st.integers(0, n - 1))
        return raw[:i] + bytes([raw[i] ^ data.draw(st.integers(1, 255))]) + raw[i + 1:]
    if kind == "insert":
        i = data.draw(st.integers(0, n))
        chunk = data.draw(st.one_of(
            st.sampled_from([b"\x00", b"\xff", b"\xff\xfe", b'"', b",", b"\n", b"\r", b"[" * 200,
                             b"../", b"/", b"\xed\xa0\x80", b"{" * 100_000]),
            st.binary(min_size=1, max_size=20)))
        return raw[:i] + chunk + raw[i:]
    if kind == "delete" and n:
        i = data.draw(st.integers(0, n - 1))
        return raw[:i] + raw[i + data.draw(st.integers(1, 50)):]
    if kind == "bom":
        return data.draw(st.sampled_from([b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf"])) + raw
    if kind == "utf16":
        return raw.decode("utf-8", "replace").encode("utf-16")
    return b""


def _hostile_text(data: st.DataObject) -> str:
    return data.draw(st.one_of(st.sampled_from(HOSTILE_TEXT), st.text(max_size=12)),
                     label="value")


def _table_damage(data: st.DataObject, raw: bytes, sep: str | None) -> bytes:
    lines = raw.decode("utf-8").split("\n")
    kind = data.draw(st.sampled_from(("cell", "cell", "cell", "line", "header")), label="table")
    i = data.draw(st.integers(0 if kind == "header" else 1, max(len(lines) - 1, 1)))
    i = min(i, len(lines) - 1)
    if kind == "line":
        action = data.draw(st.sampled_from(("duplicate", "drop", "swap")))
        if action == "duplicate":
            lines.insert(i, lines[i])
        elif action == "drop":
            del lines[i]
        else:
            j = data.draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        return "\n".join(lines).encode("utf-8")
    if kind == "header":
        i = 0
    fields = lines[i].split(sep) if sep else lines[i].split(" ")
    j = data.draw(st.integers(0, max(len(fields) - 1, 0)))
    value = _hostile_text(data)
    if sep == "," and data.draw(st.booleans()):
        value = '"' + value.replace('"', '""') + '"'  # keep the CSV structure
    fields[j] = value
    lines[i] = (sep or " ").join(fields)
    return _encode("\n".join(lines))


def _json_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            out.extend(_json_paths(child, (*path, key)))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            out.extend(_json_paths(child, (*path, i)))
    return out


def _json_damage(data: st.DataObject, raw: bytes) -> bytes:
    document = json.loads(raw)
    paths = _json_paths(document)
    path = data.draw(st.sampled_from(paths), label="json path")
    kind = data.draw(st.sampled_from(("replace", "replace", "delete", "duplicate")), label="json")
    deep = data.draw(st.sampled_from([65, 1000, 100_000]))
    if not path:
        document = data.draw(st.sampled_from(HOSTILE_JSON))
    else:
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        if kind == "delete":
            del parent[path[-1]]
        elif kind == "duplicate" and isinstance(parent, dict):
            text = json.dumps(document)
            key = json.dumps(path[-1])
            text = text.replace(f"{key}: ", f"{key}: null, {key}: ", 1)
            return text.encode("utf-8")
        else:
            parent[path[-1]] = data.draw(st.one_of(st.sampled_from(HOSTILE_JSON),
                                                   st.text(max_size=8)))
    text = json.dumps(document, allow_nan=True)
    return text.replace(json.dumps(DEEP), "[" * deep + "]" * deep).encode("utf-8")


def _names_damage(data: st.DataObject, root: Path) -> None:
    folder = next(p for p in root.iterdir() if p.is_dir())
    name = data.draw(st.one_of(
        st.sampled_from([b"20_0_0_2017\xff.jpg", b"\xff\xfe.jpg", b"1_1_1_x.jpg\xed\xa0\x80",
                         "\u0663\u0660_0_0_x.jpg".encode(), "30_\u00b2_0_x.jpg".encode(),
                         b"999999999999999999999_0_0_x.jpg", b"-5_0_0_x.jpg", b"+3_0_0_x.jpg",
                         b" 3_0_0_x.jpg", b"3_0_0_x .jpg", b".hidden_0_0_x.jpg"]),
        st.text(alphabet=st.characters(blacklist_characters="/\x00"), min_size=1,
                max_size=20).map(lambda s: s.encode("utf-8", "surrogatepass")
                                 if any(0xD800 <= ord(c) <= 0xDFFF for c in s)
                                 else s.encode())),
        label="file name")
    if name in (b".", b".."):
        return
    target = data.draw(st.sampled_from(["new", "rename", "subdir"]))
    base = os.fsencode(folder)
    if target == "new":
        with open(os.path.join(base, name), "wb") as handle:
            handle.write(b"")
    elif target == "rename":
        victim = sorted(os.listdir(base))[data.draw(st.integers(0, 5))]
        os.rename(os.path.join(base, victim), os.path.join(base, name))
    else:
        os.makedirs(os.path.join(base, name), exist_ok=True)
        source = next(p for p in sorted(folder.iterdir()) if p.is_file())
        shutil.copy(os.fsencode(source), os.path.join(base, name, b"1_0_0_x.jpg"))


def _ieat_damage(data: st.DataObject, root: Path) -> None:
    spec = json.loads((root / "spec.json").read_text())
    kind = data.draw(st.sampled_from(("spec", "names", "remove")), label="ieat")
    if kind == "spec":
        role = data.draw(st.sampled_from(["X", "Y", "A", "B", "name"]))
        spec[role] = data.draw(st.one_of(st.sampled_from(HOSTILE_JSON),
                                         st.sampled_from(HOSTILE_TEXT)))
        (root / "spec.json").write_text(json.dumps(spec, allow_nan=True).replace(
            json.dumps(DEEP), '"x"'))
    elif kind == "names":
        name = data.draw(st.sampled_from([b"\xff.jpg", b"a\xed\xa0\x80.png", b"..jpg",
                                          b" .webp", b"x.JPG"]))
        with open(os.path.join(os.fsencode(root / "t/x"), name), "wb") as handle:
            handle.write(b"\x00")
    else:
        category = data.draw(st.sampled_from(["t/x", "a/bad"]))
        for p in sorted((root / category).iterdir())[: data.draw(st.integers(1, 3))]:
            p.unlink()


def damage(data: st.DataObject, reader: Reader, root: Path) -> None:
    """Apply one drawn damage to the copy of the replica at ``root``."""
    if reader.kind == "names":
        _names_damage(data, root)
        return
    if reader.kind == "ieat":
        _ieat_damage(data, root)
        return
    file = root / data.draw(st.sampled_from(reader.files), label="file")
    if data.draw(st.integers(0, 19), label="remove?") == 0:
        file.unlink()
        return
    raw = file.read_bytes()
    if reader.kind == "parquet":
        _parquet_damage(data, file)
        return
    layer = data.draw(st.sampled_from(("bytes", "structure", "structure")), label="layer")
    if layer == "bytes":
        file.write_bytes(_byte_damage(data, raw))
    elif reader.kind == "json":
        file.write_bytes(_json_damage(data, raw))
    else:
        file.write_bytes(_table_damage(data, raw, "," if reader.kind == "csv" else None))


def _parquet_damage(data: st.DataObject, file: Path) -> None:
    import pandas as pd

    if data.draw(st.booleans(), label="parquet bytes"):
        file.write_bytes(_byte_damage(data, file.read_bytes()))
        return
    frame = pd.read_parquet(file).astype(object)
    row = data.draw(st.integers(0, len(frame) - 1))
    column = data.draw(st.sampled_from(list(frame.columns)))
    frame.loc[row, column] = data.draw(st.one_of(
        st.sampled_from([None, 5, 1.5, float("nan"), b"\xff", "../../x.png", "/etc/passwd",
                         "", True])), label="cell")
    try:
        frame.to_parquet(file)
    except Exception:  # a mix pyarrow cannot store: store the column as text
        frame[column] = frame[column].map(repr)
        frame.to_parquet(file)


# -- running and counting -----------------------------------------------------------------------
OUTCOMES = ("tried", "clear error", "valid", "recovered", "traceback", "silent wrong")
COUNTS: dict[str, Counter[str]] = {name: Counter() for name in READERS}
FAILURES: dict[str, list[str]] = {name: [] for name in READERS}


def _baseline(reader: Reader) -> dict[str, int]:
    if reader.baseline_skipped is None:
        with tempfile.TemporaryDirectory() as tmp:
            root = _fresh_copy(reader, Path(tmp))
            result = reader.load(root)
            reader.baseline_skipped = dict(getattr(result, "skipped", {}) or {})
    return reader.baseline_skipped


def _fresh_copy(reader: Reader, tmp: Path) -> Path:
    root = tmp / "root"
    if reader.fixture is None:
        root.mkdir()
    else:
        shutil.copytree(FIXTURES / reader.fixture, root)
    reader.prepare(root)
    return root.resolve()


def attempt(reader: Reader, data: st.DataObject) -> str:
    """Damage a fresh copy, load it, and classify the outcome (recorded in COUNTS)."""
    baseline = _baseline(reader)
    with tempfile.TemporaryDirectory() as tmp:
        root = _fresh_copy(reader, Path(tmp))
        damage(data, reader, root)
        try:
            result = reader.load(root)
        except FairnessError:
            outcome = "clear error"
        except Exception:
            outcome = "traceback"
            FAILURES[reader.name].append(traceback.format_exc(limit=4))
        else:
            try:
                reader.check(result, root)
            except SilentWrong as exc:
                outcome = "silent wrong"
                FAILURES[reader.name].append(str(exc))
            except Exception:
                outcome = "traceback"
                FAILURES[reader.name].append(traceback.format_exc(limit=4))
            else:
                skipped = dict(getattr(result, "skipped", {}) or {})
                outcome = "recovered" if skipped != baseline else "valid"
    COUNTS[reader.name]["tried"] += 1
    COUNTS[reader.name][outcome] += 1
    return outcome


def fuzz(name: str, examples: int, *, explore: bool = False) -> None:
    """Run ``examples`` damaged inputs through one reader (see :func:`harness.fuzz`)."""
    harness.fuzz(functools.partial(attempt, READERS[name]), FAILURES[name], examples,
                 explore=explore)


def table(names: list[str] | None = None) -> str:
    """The counts as a Markdown table."""
    return harness.table(COUNTS, OUTCOMES, names)


# -- tests ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(READERS))
def test_damaged_input_gives_a_clear_error_or_a_sound_result(name: str) -> None:
    fuzz(name, DEFAULT_EXAMPLES)


@pytest.mark.slow
def test_slow_tier_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    harness.slow_tier(fuzz, COUNTS, OUTCOMES, FAILURES, SLOW_EXAMPLES, capsys)


def test_undamaged_replicas_are_valid() -> None:
    """The harness itself: every reader loads its fresh replica and the invariants hold."""
    for reader in READERS.values():
        with tempfile.TemporaryDirectory() as tmp:
            root = _fresh_copy(reader, Path(tmp))
            reader.check(reader.load(root), root)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES)
    parser.add_argument("readers", nargs="*", default=sorted(READERS))
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
