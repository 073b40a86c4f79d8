"""The feature cache under hostile input, one realistic damage per row (issue #26, item 6).

Each row writes a sound entry with :func:`~pytest_fairness.features.cache.cached`, damages
it (or the folder it lives in) and reads it again the way the extraction and the shard
reader do. The documented outcome is **recovered**: the arrays equal a fresh computation,
with at most one warning naming the entry or the folder. Failures are counted, not raised
first: any exception (**traceback**), arrays that differ from the computed ones (**silent
wrong**), and a file outside the cache folder that changed (**data lost**).
``python -m tests.fuzz.test_cache_table`` prints the table.
"""

from __future__ import annotations

import json
import os
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from pytest_fairness.features.cache import cached, file_sha256

WANT = {"embeddings": np.arange(80, dtype=np.float32).reshape(16, 5),
        "__image_ids__": np.array([f"img{i}" for i in range(16)])}


class Entry:
    """One cache entry under ``tmp/cache`` and a user's folder beside it."""

    def __init__(self, tmp: Path) -> None:
        self.cache = tmp / "cache"
        self.user = tmp / "user"
        self.user.mkdir()
        (self.user / "notes.json").write_text('{"mine": true}')
        np.save(self.user / "mine.npy", np.ones(3))
        self.path = self.cache / "ab" / "abcdef"
        self.calls = 0

    def compute(self) -> dict[str, np.ndarray]:
        self.calls += 1
        return {k: v.copy() for k, v in WANT.items()}

    @property
    def sidecar(self) -> Path:
        return self.path.with_name(self.path.name + ".sha256")

    def member(self, name: str = "embeddings") -> Path:
        listed = json.loads(self.sidecar.read_text())["arrays"]
        return self.path.parent / listed[name]["file"]

    def edit(self, change: Callable[[dict[str, object]], object]) -> None:
        listed = json.loads(self.sidecar.read_text())
        self.sidecar.write_text(json.dumps(change(listed)))

    def reseal(self, name: str = "embeddings") -> None:
        """Make the sidecar agree with the (edited) member: damage no checksum can see."""
        digest = file_sha256(self.member(name))
        self.edit(lambda d: d["arrays"][name].__setitem__("sha256", digest) or d)  # type: ignore


def _npy(header: str, body: bytes = b"") -> bytes:
    text = header.ljust(118) + "\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode() + body


def _set(key: str, value: object, name: str = "embeddings") -> Callable[[Entry], None]:
    def damage(e: Entry) -> None:
        e.edit(lambda d: d["arrays"][name].__setitem__(key, value) or d)  # type: ignore
    return damage


def _whole(value: object) -> Callable[[Entry], None]:
    return lambda e: e.sidecar.write_text(json.dumps(value))


def _crafted(raw: bytes) -> Callable[[Entry], None]:
    def damage(e: Entry) -> None:
        e.member().write_bytes(raw)
        e.reseal()
    return damage


def _overwrite_keep_mtime(e: Entry) -> None:
    member = e.member()
    before = member.stat()
    raw = bytearray(member.read_bytes())
    raw[-4:] = b"\x00\x00\x80\x7f"  # the last float becomes +inf; the size is the same
    member.write_bytes(bytes(raw))
    os.utime(member, ns=(before.st_atime_ns, before.st_mtime_ns))


def _swap_in_directory(which: str) -> Callable[[Entry], None]:
    def damage(e: Entry) -> None:
        path = e.sidecar if which == "sidecar" else e.member()
        path.unlink()
        path.mkdir()
    return damage


def _symlink_out(which: str) -> Callable[[Entry], None]:
    def damage(e: Entry) -> None:
        path = e.sidecar if which == "sidecar" else e.member()
        path.unlink()
        path.symlink_to(e.user / ("notes.json" if which == "sidecar" else "mine.npy"))
    return damage


def _other_entry(e: Entry) -> None:
    other = e.path.with_name("ffffff.0.npy")
    np.save(other, np.zeros((16, 5), np.float32))
    _set("file", other.name)(e)
    e.reseal()


def _unwritable(where: str) -> Callable[[Entry], None]:
    def damage(e: Entry) -> None:
        blocker = e.user.parent / "a-file"
        blocker.write_text("not a folder")
        e.cache = blocker if where == "file" else blocker / "sub"
        e.path = e.cache / "ab" / "abcdef"
    return damage


def _lock_is_a_directory(e: Entry) -> None:
    lock = Path(str(e.path) + ".lock")
    lock.unlink(missing_ok=True)
    lock.mkdir()
    e.sidecar.write_text("{")


def _subfolder_is_a_file(e: Entry) -> None:
    for file in e.path.parent.iterdir():
        file.unlink()
    e.path.parent.rmdir()
    e.path.parent.write_text("x")


#: name → damage applied to a sound entry (after one warm read, so the per-process memo of
#: checked files is filled).
DAMAGES: dict[str, Callable[[Entry], None]] = {
    "npy truncated": lambda e: e.member().write_bytes(e.member().read_bytes()[:100]),
    "npy empty": lambda e: e.member().write_bytes(b""),
    "npy bytes flipped": lambda e: e.member().write_bytes(
        e.member().read_bytes()[:-3] + b"\xff\xfe\xfd"),
    "npy overwritten, mtime set back": _overwrite_keep_mtime,
    "npy replaced by other values": lambda e: np.save(e.member(), np.zeros((16, 5), "f4")),
    "npy deleted": lambda e: e.member().unlink(),
    "npy is a directory": _swap_in_directory("member"),
    "npy symlink to a user's file": _symlink_out("member"),
    "npy header claims 3.7 GiB (resealed)": _crafted(
        _npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000,), }",
             b"\x00" * 4_000_000)),
    "npy header claims -1 rows (resealed)": _crafted(
        _npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 5), }", b"\x00" * 320)),
    "npy object dtype (resealed)": _crafted(
        _npy("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", b"\x00" * 16)),
    "npy trailing bytes (resealed)": lambda e: _crafted(
        e.member().read_bytes() + b"\x00" * 64)(e),
    "npy bad magic (resealed)": _crafted(b"NOTNUMPY" + b"\x00" * 400),
    "npy header not a dict (resealed)": _crafted(_npy("[1, 2, 3]", b"\x00" * 8)),
    "npy header unparsable (resealed)": _crafted(_npy("{'descr': ", b"\x00" * 8)),
    "npy unknown dtype (resealed)": _crafted(
        _npy("{'descr': '<q99', 'fortran_order': False, 'shape': (2,), }", b"\x00" * 8)),
    "sidecar not JSON": lambda e: e.sidecar.write_text("{"),
    "sidecar empty": lambda e: e.sidecar.write_bytes(b""),
    "sidecar truncated": lambda e: e.sidecar.write_bytes(e.sidecar.read_bytes()[:30]),
    "sidecar not UTF-8": lambda e: e.sidecar.write_bytes(b"\xff\xfe{\x00"),
    "sidecar a list": _whole([1, 2]),
    "sidecar null": _whole(None),
    "sidecar version 2": lambda e: e.edit(lambda d: {**d, "version": 2}),
    "sidecar version '3'": lambda e: e.edit(lambda d: {**d, "version": "3"}),
    "sidecar version 1e999": lambda e: e.sidecar.write_text(
        e.sidecar.read_text().replace('"version": 3', '"version": 1e999')),
    "sidecar arrays empty": lambda e: e.edit(lambda d: {**d, "arrays": {}}),
    "sidecar arrays null": lambda e: e.edit(lambda d: {**d, "arrays": None}),
    "sidecar sha256 null": _set("sha256", None),
    "sidecar sha256 wrong": _set("sha256", "0" * 64),
    "sidecar file null": _set("file", None),
    "sidecar file ../ outside": lambda e: (_set("file", "../../user/mine.npy")(e),
                                           e.reseal()),
    "sidecar file absolute": _set("file", "/etc/hostname"),
    "sidecar names another entry's file": _other_entry,
    "sidecar nested 100000 deep": lambda e: e.sidecar.write_text("[" * 100_000 + "]" * 100_000),
    "sidecar is a directory": _swap_in_directory("sidecar"),
    "sidecar symlink to a user's file": _symlink_out("sidecar"),
    "lock file is a directory, sidecar bad": _lock_is_a_directory,
    "entry subfolder is a file": _subfolder_is_a_file,
    "cache folder is a file": _unwritable("file"),
    "cache folder under a file": _unwritable("under"),
}


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def attempt(name: str, tmp: Path) -> tuple[str, str]:
    """The outcome of one row, and what happened (the warnings, or the exception)."""
    entry = Entry(tmp)
    cached(entry.path, entry.compute)
    cached(entry.path, entry.compute)  # warm: the memo of checked files is filled
    DAMAGES[name](entry)
    mine = _tree(entry.user)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = [cached(entry.path, entry.compute)[0] for _ in range(2)]
            got.append(cached(entry.path.with_name("cdef01"), entry.compute)[0])
    except Exception as error:  # noqa: BLE001 - counted: the goal is none
        return "traceback", f"{type(error).__name__}: {error}"
    said = [str(w.message) for w in caught]
    if _tree(entry.user) != mine:
        return "data lost", "; ".join(said)
    if any(set(a) != set(WANT) or any(not np.array_equal(a[k], WANT[k]) for k in WANT)
           for a in got):
        return "silent wrong", "; ".join(said)
    if len(said) > 1 or any("fairness cache:" not in s for s in said):
        return "too many warnings", " | ".join(said)
    return ("recovered" if said else "read, no warning"), "; ".join(said)


def table(tmp: Path) -> tuple[Counter[str], dict[str, tuple[str, str]]]:
    outcomes = {}
    for i, name in enumerate(DAMAGES):
        (tmp / str(i)).mkdir()
        outcomes[name] = attempt(name, tmp / str(i))
    return Counter(o for o, _ in outcomes.values()), outcomes


@pytest.mark.parametrize("name", list(DAMAGES))
def test_damaged_cache_is_recomputed_with_one_warning(name: str, tmp_path: Path) -> None:
    """Each damage: the computed arrays, one warning naming the entry, nothing else touched."""
    outcome, said = attempt(name, tmp_path)
    assert outcome == "recovered", said
    assert "abcdef.sha256'" in said, said  # the entry is named


def test_the_table(tmp_path: Path) -> None:
    """All rows recovered: no traceback, no silent wrong, no data lost."""
    counts, outcomes = table(tmp_path)
    assert counts == Counter({"recovered": len(DAMAGES)}), outcomes


if __name__ == "__main__":  # pragma: no cover
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        counts, outcomes = table(Path(folder))
    for name, (outcome, said) in outcomes.items():
        print(f"{outcome:18} {name:40} {said[:150]}")
    print(dict(counts), "of", len(DAMAGES))
