r"""Reading JSON files strictly, with every problem reported as an :class:`InvalidDataError`.

Where :func:`json.loads` lets damage through (deep nesting, non-UTF-8 bytes, ``NaN``,
``1e400``, lone ``"\ud800"`` surrogates, repeated keys, huge integers), :func:`read_json`
names the file, the place and the fix. Nesting is bounded before parsing.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_fairness.data.paths import is_utf8
from pytest_fairness.errors import InsufficientDataError, InvalidDataError, own_error

__all__ = ["DEFAULT_MAX_DEPTH", "check_nesting", "parse_json", "read_json"]

__tracebackhide__ = own_error

#: Deepest nesting of arrays and objects accepted by default. Dataset annotations nest 3-4
#: levels; the bound stays far below Python's recursion limit.
DEFAULT_MAX_DEPTH = 64

# A JSON string (possibly unterminated: the closing quote is optional so the pattern always
# matches and never backtracks) or one bracket.
_TOKENS = re.compile(r'"(?:[^"\\]+|\\.)*"?|[\[\]{}]', re.DOTALL)
_BOMS = {b"\xff\xfe": "UTF-16 (little-endian)", b"\xfe\xff": "UTF-16 (big-endian)"}
_FIX = "repair the file or write it again"
_Hook = Callable[[list[tuple[str, Any]]], Any]


class _Rejected(Exception):
    """Raised from the decoder hooks; turned into an InvalidDataError with the source."""


def check_nesting(text: str, *, source: str, max_depth: int = DEFAULT_MAX_DEPTH) -> int:
    """How deeply arrays and objects nest in JSON ``text`` (valid or not); raise past max_depth."""
    depth = deepest = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token == "[" or token == "{":
            depth += 1
            if depth > max_depth:
                at = (f" (line {text.count(chr(10), 0, match.start()) + 1})"
                      if "\n" in text else "")
                raise InvalidDataError(
                    f"{source} nests arrays/objects more than {max_depth} levels deep{at}; "
                    f"no valid file for this reader nests that deep, so it is damaged "
                    f"or not the expected file: {_FIX}.")
            deepest = max(deepest, depth)
        elif token == "]" or token == "}":
            depth -= 1
    return deepest


def _position(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}"


def _first_surrogate(value: Any) -> str | None:
    """JSON path of the first string (or key) that is not valid Unicode, else None."""
    stack: list[tuple[str, Any]] = [("$", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str) and not is_utf8(item):
            return where
        if isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                if not is_utf8(key):
                    return f"{where} (a key)"
                stack.append((f"{where}[{key!r}]", child))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", child) for i, child in reversed(list(enumerate(item))))
    return None


def parse_json(text: str | bytes, *, source: str, max_depth: int = DEFAULT_MAX_DEPTH,
               allow_nan: bool = False, object_pairs_hook: _Hook | None = None) -> Any:
    """Parse JSON text or UTF-8 bytes strictly, ``source`` naming it; see :func:`read_json`."""
    if isinstance(text, bytes):
        for bom, encoding in _BOMS.items():
            if text.startswith(bom):
                raise InvalidDataError(
                    f"{source} starts with the byte-order mark of {encoding}; JSON must be "
                    "UTF-8. Re-save the file as UTF-8 (without a byte-order mark).")
        data = text[3:] if text.startswith(b"\xef\xbb\xbf") else text
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise InvalidDataError(
                f"{source} is not UTF-8 text: byte {exc.start} (line {line}) is "
                f"{data[exc.start:exc.start + 1]!r} ({exc.reason}); JSON must be UTF-8. "
                f"Re-save it as UTF-8 or {_FIX}.") from None
    if not text.strip():
        raise InsufficientDataError(f"{source} is empty; {_FIX}.")
    check_nesting(text, source=source, max_depth=max_depth)

    def constant(name: str) -> float:
        if not allow_nan:
            raise _Rejected(
                f"{source} contains {name}, which is not a JSON value; write null (missing) "
                f"or a number, or {_FIX}.")
        return float(name)

    def number(literal: str) -> float:
        value = float(literal)
        if not allow_nan and value - value != 0:  # overflowed to ±inf (1e400)
            raise _Rejected(
                f"{source} contains the number {literal[:40]!r}, beyond the range of a float; "
                f"write a smaller number, or {_FIX}.")
        return value

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise _Rejected(
                    f"{source} repeats the key {key!r} in one object; JSON readers keep only "
                    "one of the values. Remove the repeated entry.")
            out[key] = value
        return out

    try:
        data = json.loads(text, parse_constant=constant, parse_float=number,
                          object_pairs_hook=object_pairs_hook or pairs)
    except _Rejected as exc:
        raise InvalidDataError(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise InvalidDataError(
            f"{source} is not valid JSON ({_position(text, exc.pos)}: {exc.msg}); {_FIX}."
        ) from None
    except RecursionError:  # only when the caller's own stack is already deep
        raise InvalidDataError(
            f"{source} nests arrays/objects too deeply to parse here; {_FIX}.") from None
    except ValueError as exc:  # an integer longer than Python's digit limit (4300)
        reason = str(exc).split(";")[0]
        raise InvalidDataError(
            f"{source} holds a number Python cannot read ({reason}); {_FIX}.") from None
    bad = _first_surrogate(data)
    if bad is not None:
        raise InvalidDataError(
            f"{source}: the string at {bad} holds a lone UTF-16 surrogate escape (\\ud800-"
            "\\udfff), which is not text; write the character itself or a valid pair.")
    return data


def read_json(path: str | os.PathLike[str], *, what: str, max_depth: int = DEFAULT_MAX_DEPTH,
              allow_nan: bool = False, object_pairs_hook: _Hook | None = None) -> Any:
    """Read a JSON file strictly, ``what`` (the reader) first in every message.

    ``allow_nan`` accepts NaN, ±Infinity and floats out of range; ``object_pairs_hook``
    replaces the refusal of repeated keys. Every problem is an InvalidDataError (empty:
    InsufficientDataError).
    """
    file = Path(path)
    source = f"{what}: {str(file)!r}"
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise InvalidDataError(f"{source} does not exist; check the path.") from None
    except OSError as exc:
        raise InvalidDataError(f"{source} cannot be read ({exc.strerror or exc}).") from None
    return parse_json(data, source=source, max_depth=max_depth, allow_nan=allow_nan,
                      object_pairs_hook=object_pairs_hook)
