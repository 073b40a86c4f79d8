"""The one disk cache: named arrays saved with ``numpy.save`` behind a sha256 sidecar.

An entry is a key (a sha256 hex string, see :func:`~pytest_fairness.features.cache_key`)
under a folder::

    cache_dir/ab/abcdef….0.npy      one file per array, numpy's own format
    cache_dir/ab/abcdef….1.npy
    cache_dir/ab/abcdef….sha256     the sidecar (JSON): each array's name, file and sha256

The sidecar is written last, atomically (a temporary file, then ``os.replace``): an entry
exists once its sidecar does. Reading checks every file against the sidecar before numpy
sees it, and loads with ``allow_pickle=False``: a damaged entry (truncated, flipped bytes,
a missing file, a directory in a file's place, a sidecar that does not parse or match) is
never read; one warning names it, and the caller recomputes. A file lock per entry makes two
processes (pytest-xdist workers) asking for one entry compute it once: the second waits,
then reads what the first wrote. A folder that cannot be written costs a warning, not the
result.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["CACHE_VERSION", "cached", "file_sha256", "read_entry", "write_entry"]

#: Bumped when the layout or the meaning of an entry changes (3: ``.npy`` files behind a
#: sha256 sidecar, one cache for features and decoded shards).
CACHE_VERSION: Final = 3
SIDECAR: Final = ".sha256"
_CHUNK: Final = 1 << 20

Arrays = dict[str, "NDArray[Any]"]


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _sidecar(entry: Path) -> Path:
    return entry.with_name(entry.name + SIDECAR)


def _warn(entry: Path, problem: str, what: str) -> None:
    warnings.warn(f"fairness cache: entry {str(_sidecar(entry))!r} {problem}; the {what} "
                  "recomputed and the entry is written again.", stacklevel=4)


def _damage(entry: Path, mmap: bool) -> tuple[Arrays | None, str | None]:
    """The arrays of ``entry`` (None when absent), or why it cannot be read."""
    import numpy as np

    sidecar = _sidecar(entry)
    if sidecar.is_dir():
        return None, "is a directory"
    if not sidecar.is_file():
        return None, None
    try:
        listed = json.loads(sidecar.read_text(encoding="utf-8"))
        members = {str(k): (str(v["file"]), str(v["sha256"])) for k, v in
                   listed["arrays"].items()}
        assert listed["version"] == CACHE_VERSION and members
    except (OSError, ValueError, KeyError, TypeError, AttributeError, AssertionError) as exc:
        return None, f"is damaged (its sidecar does not parse: {type(exc).__name__})"
    arrays: Arrays = {}
    for name, (file, digest) in members.items():
        path = entry.parent / Path(file).name
        if path.is_dir():
            return None, "is a directory"
        try:
            if file_sha256(path) != digest:
                return None, f"is damaged ({name!r}: its sha256 does not match the sidecar)"
            arrays[name] = np.load(path, mmap_mode="c" if mmap else None, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            return None, f"is damaged ({name!r}: {type(exc).__name__}: {exc})"
    return arrays, None


def read_entry(entry: Path, *, what: str = "features are",
               check: Callable[[Arrays], str | None] | None = None,
               mmap: bool = False) -> Arrays | None:
    """The arrays stored at ``entry``, or None (with one warning when damaged) to recompute.

    ``check`` says why arrays that passed their checksums are still not what the caller
    stored (e.g. another dataset's rows), or None. ``mmap`` maps the files copy-on-write
    instead of reading them, so that processes reading one entry share its pages.
    """
    arrays, problem = _damage(entry, mmap)
    if problem is None and arrays is not None and check is not None:
        problem = check(arrays)
    if problem == "is a directory":
        warnings.warn(f"fairness cache: entry {str(_sidecar(entry))!r} is a directory, or has "
                      f"one in a file's place; the {what} recomputed and not cached until you "
                      "remove it.",
                      stacklevel=3)
        return None
    if problem is not None:
        _warn(entry, problem, what)
        _sidecar(entry).unlink(missing_ok=True)  # read once more under the lock: no warning
        return None
    return arrays


def _atomic(target: Path, write: Callable[[Any], None]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=target.name, suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.replace(tmp, target)  # readers see the old state or the whole file
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _save(handle: Any, array: NDArray[Any]) -> None:
    import numpy as np

    np.save(handle, array, allow_pickle=False)


def write_entry(entry: Path, arrays: Mapping[str, NDArray[Any]]) -> None:
    """Store ``arrays`` at ``entry``: the files, then the sidecar; a failure only warns."""
    files = [entry.with_name(f"{entry.name}.{i}.npy") for i in range(len(arrays))]
    if any(path.is_dir() for path in [_sidecar(entry), *files]):
        return  # already reported by read_entry
    listed = {}
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        for path, (name, array) in zip(files, arrays.items()):
            _atomic(path, functools.partial(_save, array=array))
            listed[name] = {"file": path.name, "sha256": file_sha256(path)}
        text = json.dumps({"version": CACHE_VERSION, "arrays": listed}, sort_keys=True)
        _atomic(_sidecar(entry), lambda handle: handle.write(text.encode()))
    except OSError as exc:
        warnings.warn(f"fairness cache: cannot write entry {str(_sidecar(entry))!r} ({exc}); "
                      "the results are used without caching them.", stacklevel=3)


def cached(entry: Path, compute: Callable[[], Mapping[str, NDArray[Any]]], *,
           what: str = "features are", check: Callable[[Arrays], str | None] | None = None,
           mmap: bool = False) -> tuple[Arrays, bool]:
    """The arrays at ``entry``, computed (once, under the entry's file lock) when absent.

    Returns the arrays and whether they came from the cache. With ``mmap``, arrays computed
    here are returned as read back from the entry (see :func:`read_entry`).
    """
    def read() -> Arrays | None:
        return read_entry(entry, what=what, check=check, mmap=mmap)

    existed = os.path.lexists(_sidecar(entry))  # then read() has judged (and warned about) it
    arrays = read()
    if arrays is not None:
        return arrays, True
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        from filelock import FileLock

        lock: Any = FileLock(str(entry) + ".lock")
        lock.acquire()
    except OSError:
        lock = None  # an unwritable folder: compute; write_entry warns
    try:
        # Another process may have written the entry while this one waited for the lock.
        arrays = read() if lock is not None and not existed else None
        if arrays is not None:
            return arrays, True
        computed = dict(compute())
        write_entry(entry, computed)
        if mmap:
            computed = read() or computed
        return computed, False
    finally:
        if lock is not None:
            lock.release()
