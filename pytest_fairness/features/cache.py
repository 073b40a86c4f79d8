"""The one disk cache: named ``.npy`` arrays behind a sha256 sidecar written last.

A damaged entry is never read (one warning, then the caller recomputes); a file lock per entry
makes pytest-xdist workers compute it once; an unwritable folder costs a warning, not the result.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_fairness.errors import own_error
from pytest_fairness.files import atomic_write, atomic_write_text

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["CACHE_VERSION", "cached", "file_sha256", "read_entry", "write_entry"]

__tracebackhide__ = own_error

#: Bumped when the layout or the meaning of an entry changes (3: ``.npy`` files behind a
#: sha256 sidecar, one cache for features and decoded shards).
CACHE_VERSION: Final = 3
SIDECAR: Final = ".sha256"
_CHUNK: Final = 1 << 20

Arrays = dict[str, "NDArray[Any]"]


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes, read in 1 MiB chunks.

    Parameters
    ----------
    path : str or Path
    """
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _sidecar(entry: Path) -> Path:
    return entry.with_name(entry.name + SIDECAR)


#: Files whose sha256 this process checked: (path, inode, size, mtime, ctime) → sha256. A warm
#: read of a large memory-mapped entry then costs no second pass over its bytes; an overwrite
#: changes the ctime even when the mtime is set back (``os.utime`` cannot set the ctime).
_CHECKED: dict[tuple[str, int, int, int, int], str] = {}
#: Folders (or files in a folder's place) the cache could not write: warned once, then skipped.
_UNWRITABLE: set[str] = set()


def _verified(path: Path, digest: str) -> bool:
    """Whether ``path`` has the sha256 ``digest`` (hashed once per process per file state)."""
    stat = path.stat()
    state = (str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
    if _CHECKED.get(state) != digest:
        if file_sha256(path) != digest:
            return False
        _CHECKED[state] = digest
    return True


def _implausible(path: Path) -> str | None:
    """Why the ``.npy`` header of ``path`` does not fit its size (checked before any allocation)."""
    import math

    from numpy.lib import format as npy
    with open(path, "rb") as handle:
        try:
            version = npy.read_magic(handle)
            read = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
            shape, _, dtype = read(handle)
        except Exception as exc:  # numpy parses the header with ast and tokenize: any error
            return f"its .npy header does not parse: {type(exc).__name__}: {exc}"
        claimed = handle.tell() + math.prod(shape) * dtype.itemsize
    size = path.stat().st_size
    if dtype.hasobject or claimed != size:
        return (f"its header claims {'×'.join(map(str, shape)) or 'a scalar'} {dtype} "
                f"({claimed:,} bytes), the file holds {size:,} bytes")
    return None


def _blocking(folder: Path) -> Path:
    """The nearest of ``folder`` and its parents that exists (the one a write fails on)."""
    return next(p for p in (folder, *folder.parents) if os.path.lexists(p))


def _skipped(entry: Path) -> bool:
    """Whether ``entry`` lies under a folder the cache already failed to write (and warned)."""
    return any(str(p) in _UNWRITABLE for p in entry.parents)


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
        # This entry's own files only: a name copied from another entry is damage, not data.
        if not (listed["version"] == CACHE_VERSION and members and all(
                Path(file).name.startswith(entry.name + ".") for file, _ in members.values())):
            raise AssertionError  # (not an assert: python -O must not skip the check)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, AssertionError,
            RecursionError) as exc:
        return None, f"is damaged (its sidecar does not parse: {type(exc).__name__})"
    arrays: Arrays = {}
    for name, (file, digest) in members.items():
        path = entry.parent / Path(file).name
        if path.is_dir():
            return None, "is a directory"
        try:
            if not _verified(path, digest):
                return None, f"is damaged ({name!r}: its sha256 does not match the sidecar)"
            if (implausible := _implausible(path)) is not None:
                return None, f"is damaged ({name!r}: {implausible})"
            arrays[name] = np.load(path, mmap_mode="c" if mmap else None, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            return None, f"is damaged ({name!r}: {type(exc).__name__}: {exc})"
    return arrays, None


def read_entry(entry: Path, *, what: str = "features are",
               check: Callable[[Arrays], str | None] | None = None,
               mmap: bool = False) -> Arrays | None:
    """The arrays at ``entry`` (``cache_dir/ab/abcdef…``), or None (warned when damaged).

    ``check`` says why arrays that passed their checksums are still not what was stored;
    ``mmap`` maps the files copy-on-write, so processes reading one entry share its pages.
    """
    arrays, problem = _damage(entry, mmap)
    if problem is None and arrays is not None and check is not None:
        problem = check(arrays)
    if problem == "is a directory":
        if str(_sidecar(entry)) in _UNWRITABLE:
            return None  # warned once
        _UNWRITABLE.add(str(_sidecar(entry)))
        warnings.warn(f"fairness cache: entry {str(_sidecar(entry))!r} is a directory, or has "
                      f"one in a file's place; the {what} recomputed and not cached until you "
                      "remove it.", stacklevel=3)
        return None
    if problem is not None:
        warnings.warn(f"fairness cache: entry {str(_sidecar(entry))!r} {problem}; the {what} "
                      "recomputed and the entry is written again.", stacklevel=3)
        with contextlib.suppress(OSError):  # read once more under the lock: no warning
            _sidecar(entry).unlink(missing_ok=True)
        return None
    return arrays


def write_entry(entry: Path, arrays: Mapping[str, NDArray[Any]]) -> None:
    """Store ``arrays`` (numbers or strings) at ``entry``: files, then sidecar; failing warns."""
    import numpy as np
    files = [entry.with_name(f"{entry.name}.{i}.npy") for i in range(len(arrays))]
    if _skipped(entry) or any(path.is_dir() for path in [_sidecar(entry), *files]):
        return  # already reported (an unwritable folder, or by read_entry)
    listed = {}
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        for path, (name, array) in zip(files, arrays.items()):
            atomic_write(path, functools.partial(np.save, arr=array, allow_pickle=False))
            listed[name] = {"file": path.name, "sha256": file_sha256(path)}
        text = json.dumps({"version": CACHE_VERSION, "arrays": listed}, sort_keys=True)
        atomic_write_text(_sidecar(entry), text)
    except OSError as exc:
        where = _blocking(entry.parent)
        _UNWRITABLE.add(str(where))
        warnings.warn(f"fairness cache: cannot write entry {str(_sidecar(entry))!r} ({exc}); "
                      f"the run goes on without writing to the cache under {str(where)!r}. "
                      "Point --fairness-cache-dir at a folder you can write, or pass "
                      "--fairness-no-cache.", stacklevel=3)


def cached(entry: Path, compute: Callable[[], Mapping[str, NDArray[Any]]], *,
           what: str = "features are", check: Callable[[Arrays], str | None] | None = None,
           mmap: bool = False) -> tuple[Arrays, bool]:
    """The arrays at ``entry`` and whether they were cached; computed under a lock if absent."""
    def read() -> Arrays | None:
        return read_entry(entry, what=what, check=check, mmap=mmap)

    existed = os.path.lexists(_sidecar(entry))  # then read() has judged (and warned about) it
    arrays = read()
    if arrays is not None:
        return arrays, True
    try:
        if _skipped(entry):
            raise PermissionError  # warned once already: no folder, no lock, no write
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
