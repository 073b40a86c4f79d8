"""Files and stores read back: atomic writes, the ``report.json`` header, typed field reads."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, BinaryIO, Final, TypeVar, final

from pytest_fairness.errors import FairnessConfigError, shown
from pytest_fairness.options import LIMITS

__all__ = ["REPORT_FORMAT", "REPORT_SCHEMA", "FieldError", "Fields", "atomic_write",
           "atomic_write_text", "load_report"]

T = TypeVar("T")
#: The ``format`` field of ``report.json``.
REPORT_FORMAT: Final = "pytest-fairness-report"
#: Version of the ``report.json`` layout.
REPORT_SCHEMA: Final = 1


def atomic_write(target: str | os.PathLike[str], write: Callable[[BinaryIO], object]) -> Path:
    """Write ``target`` with ``write(handle)`` via a temporary file: never seen half-written."""
    path = Path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            write(stream)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(target: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``target`` atomically (:func:`atomic_write`)."""
    return atomic_write(target, lambda stream: stream.write(text.encode("utf-8")))


def load_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read ``report.json`` (a file or the directory holding it) and check its schema."""
    source = Path(path)
    if source.is_dir():
        source = source / "report.json"
    try:
        document = json.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FairnessConfigError(f"report {str(source)!r} does not exist; write one with "
                                  "`pytest --fairness --fairness-report DIR`.") from None
    except json.JSONDecodeError as error:
        raise FairnessConfigError(f"report {str(source)!r} is not valid JSON ({error}).") from None
    if not isinstance(document, dict) or document.get("format") != REPORT_FORMAT:
        raise FairnessConfigError(f"{str(source)!r} is not a pytest-fairness report (expected "
                                  f"format {REPORT_FORMAT!r}).")
    schema = document.get("schema")
    if not isinstance(schema, int) or schema < 1 or schema > REPORT_SCHEMA:
        raise FairnessConfigError(
            f"{str(source)!r} has report schema {schema!r}; this pytest-fairness reads "
            f"1 to {REPORT_SCHEMA}. Upgrade pytest-fairness or regenerate the report.")
    return document


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _finite(value: Any) -> bool:
    return _number(value) and math.isfinite(value)


#: Each kind of stored value: its test, and what it is in words. A kind ending in "?"
#: also takes null; in a field list, one ending in "!" is required.
_KINDS: Final[Mapping[str, tuple[Callable[[Any], bool], str]]] = {
    "num": (_finite, "a finite number"),
    "int": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "str": (lambda v: isinstance(v, str), "a string"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "object": (lambda v: isinstance(v, dict), "an object"),
    "float": (lambda v: v in ("inf", "-inf") or _number(v), "a number, 'inf', '-inf'"),
    "limit": (lambda v: isinstance(v, str) and v in LIMITS, "a limit keyword"),
    "strs": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "strs"),
    "groups": (lambda v: isinstance(v, list) and all(
        isinstance(g, list) and len(g) == 3 and isinstance(g[0], str)
        and all(x is None or _number(x) for x in g[1:]) for g in v), "groups"),
    "span": (lambda v: isinstance(v, list) and len(v) == 2 and all(map(_finite, v)),
             "null or two numbers"),
    "pair": (lambda v: isinstance(v, list) and len(v) == 2
             and all(x is None or _finite(x) for x in v), "null or a pair of numbers"),
    "worst": (lambda v: isinstance(v, dict) and isinstance(v.get("group"), str)
              and (v.get("value") is None or _finite(v.get("value"))),
              'null or {"group": ..., "value": ...}'),
}


class FieldError(FairnessConfigError):
    """A stored value of the wrong kind (``name`` None: the object itself), or a missing one."""

    def __init__(self, path: str, name: str | None, found: Any, kind: str, *,
                 missing: bool = False) -> None:
        self.path, self.name, self.found, self.kind = path, name, found, kind
        self.missing = missing
        if missing:
            super().__init__(f"{path} has no {name!r} (expected {self.expected})")
        else:
            where = path if name is None else f"{path}[{name!r}]"
            super().__init__(f"{where} is {shown(found)}, not {self.expected}")

    @property
    def expected(self) -> str:
        """What was expected, in words."""
        words = _KINDS[self.kind.rstrip("?")][1]
        nullable = self.kind.endswith("?") and not words.startswith("null")
        return f"{words} or null" if nullable else words


@final
class Fields:
    """Typed reads of one stored object at key path ``path``; a wrong kind is a FieldError."""

    def __init__(self, data: object, path: str) -> None:
        if not isinstance(data, dict):
            raise FieldError(path, None, data, "object")
        self.data: dict[str, object] = data
        self.path = path

    def get(self, name: str, kind: str, *, required: bool = False, default: Any = None) -> Any:
        """The field ``name``, of ``kind`` (``"num?"``: a finite number or None)."""
        if name not in self.data:
            if required:
                raise FieldError(self.path, name, None, kind, missing=True)
            return default
        value = self.data[name]
        if not (value is None and kind.endswith("?")) and not _KINDS[kind.rstrip("?")][0](value):
            raise FieldError(self.path, name, value, kind)
        return value

    def check(self, kinds: Mapping[str, str]) -> None:
        """Check every field of ``kinds`` (``"num!"``: required, ``"num?"``: or None)."""
        for name, kind in kinds.items():
            self.get(name, kind.rstrip("!"), required=kind.endswith("!"))

    def inner(self, name: str, *, required: bool = False) -> Fields:
        """The object at ``name``, to read in turn (an empty one when absent)."""
        return Fields(self.get(name, "object", required=required) or {}, f"{self.path}[{name!r}]")

    def each(self, name: str, read: Callable[[object, str], T], *,
             required: bool = False) -> dict[str, T]:
        """``read(value, path)`` of every entry of the object at ``name``, by key."""
        inner = self.inner(name, required=required)
        return {key: read(value, f"{inner.path}[{key!r}]") for key, value in inner.data.items()}
