"""Paths read from annotation files, kept inside the dataset root.

Every loader resolves an image path it read with :func:`path_in_root`: no ``..`` out of the
root, no absolute path unless the format documents them. The check is lexical
(``os.path.normpath``), so symbolic links inside the root still work.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pytest_fairness.errors import FairnessError, InvalidDataError, own_error

__all__ = ["ABSOLUTE_POLICIES", "is_utf8", "path_in_root", "shown"]

__tracebackhide__ = own_error

#: Longest file or folder name (bytes) common file systems store (ext4, APFS, NTFS, ...).
NAME_MAX = 255
#: Longest path (bytes) Linux accepts in one call.
PATH_MAX = 4096

#: How :func:`path_in_root` treats an absolute path: ``"refuse"`` (formats whose paths are
#: relative), ``"inside"`` (accepted when it lies under the root) or ``"any"`` (accepted
#: anywhere; only behind an explicit ``allow_absolute=True`` of the loader).
ABSOLUTE_POLICIES = ("refuse", "inside", "any")


def shown(value: Any, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters for messages (a 400-digit age stays short)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} chars)"


def is_utf8(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8 (no lone surrogate from a foreign file name)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_inside(path: str, roots: list[str]) -> bool:
    for root in roots:
        try:
            if os.path.commonpath([root, path]) == root and path != root:
                return True
        except ValueError:  # different drives (Windows), or mixed absolute/relative
            continue
    return False


def path_in_root(
    value: Any,
    root: str | os.PathLike[str] | None,
    *,
    where: str,
    absolute: Literal["refuse", "inside", "any"] = "refuse",
    root_label: str | None = None,
    error: type[FairnessError] = InvalidDataError,
) -> Path:
    """``root / value`` normalised (``value`` itself when root is None), refusing escapes.

    ``where`` (file, line, column) and ``root_label`` name the value and the root in the
    ``error`` raised; ``absolute`` is one of :data:`ABSOLUTE_POLICIES`.
    """
    label = root_label or ("the root" if root is None else f"the dataset root {str(root)!r}")
    rule = (f"it must stay inside {label}: a path relative to it, without '..' that leaves "
            "it. Correct the entry or move the file under the root.")

    def fail(problem: str, extra: str = "") -> FairnessError:
        return error(f"{where}={shown(value)} {problem}; {rule}{extra}")

    if not isinstance(value, str):
        raise error(
            f"{where} must be a path (a string); got {shown(value)} "
            f"(type={type(value).__name__}). Write the image path relative to {label}.")
    if not value.strip():
        raise error(f"{where} is empty; every entry needs an image path relative to {label}.")
    if "\x00" in value:
        raise fail("contains a NUL byte")
    if not is_utf8(value):
        raise fail("is not valid UTF-8 text (a file name from a foreign encoding)")
    longest = max(value.replace(os.sep, "/").split("/"), key=lambda part: len(part.encode()))
    if len(longest.encode()) > NAME_MAX or len(value.encode()) >= PATH_MAX:
        raise fail(f"holds a name of {len(longest.encode())} bytes (or is {len(value.encode())} "
                   f"bytes long); file systems store names of at most {NAME_MAX} bytes and "
                   f"paths under {PATH_MAX}")
    if os.path.isabs(value):
        if absolute == "refuse":
            raise fail("is an absolute path")
        normal = os.path.normpath(value)
        if absolute == "any":
            return Path(normal)
        if root is None:
            raise fail("is an absolute path")
        base = os.path.abspath(os.fspath(root))
        roots = list(dict.fromkeys([os.path.normpath(base), os.path.realpath(base)]))
        if not _is_inside(normal, roots):
            raise fail("is an absolute path outside the root",
                       " Pass allow_absolute=True to accept absolute paths anywhere.")
        return Path(normal)
    normal = os.path.normpath(value)
    if normal == os.curdir:
        raise fail("names the root folder itself, not a file")
    if normal == os.pardir or normal.startswith(os.pardir + os.sep):
        raise fail("climbs out of the root with '..'")
    if root is None:
        return Path(normal)
    return Path(os.path.normpath(os.path.join(os.fspath(root), normal)))

