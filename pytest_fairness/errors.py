"""The exceptions pytest-fairness raises, all under :class:`FairnessError`.

Every message names the parameter, column or file, the offending value, and the fix.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from numbers import Integral
from types import ModuleType
from typing import Any, Final

__all__ = [
    "CheckpointIgnoredError", "FairnessConfigError", "FairnessError", "FairnessViolation",
    "InsufficientDataError", "InvalidDataError", "MissingDependencyError", "MissingFeaturesError",
]


class FairnessError(Exception):
    """Root of every exception pytest-fairness raises on purpose."""


class FairnessConfigError(FairnessError, ValueError):
    """A marker, option or indicator argument is invalid."""


class InvalidDataError(FairnessError, ValueError):
    """Input data is malformed: NaN, mismatched lengths, unreadable or inconsistent files."""


class InsufficientDataError(InvalidDataError):
    """There is too little data to compute the requested number."""


class MissingFeaturesError(InvalidDataError):
    """Extracted features are incomplete, damaged, of another dataset or lack a perturbation."""


#: The pip extra of pytest-fairness that installs each optional top-level module (the one
#: place the names live; pyproject.toml lists the same sets).
EXTRAS: Final = {
    "torch": "models", "torchvision": "models", "PIL": "models",  # extraction, perturbations
    "faiss": "retrieval", "matplotlib": "plots",
    "pyarrow": "scale",  # in the core install; the extra is kept for old install lines
}


class MissingDependencyError(FairnessError, ImportError):
    """An optional dependency is not installed; the message names the pip extra."""

    @classmethod
    def of(cls, module: str, purpose: str) -> MissingDependencyError:
        """The error for ``module`` (``"faiss"``, ``"torch.nn"``) that ``purpose`` needs."""
        top = module.partition(".")[0]
        fix = f"pytest-fairness[{EXTRAS[top]}]" if top in EXTRAS else top
        return cls(f"{purpose} needs {top!r}, which is not installed; install it with "
                   f"pip install '{fix}'.")


def require(module: str, *, purpose: str) -> ModuleType:
    """Import ``module`` on first use, or raise :class:`MissingDependencyError` naming the extra.

    Parameters
    ----------
    module : str
        The module to import (``"faiss"``, ``"torch.distributed"``); the extra is looked up
        by its top-level name in :data:`EXTRAS`.
    purpose : str
        What needs it, for the message (``"retrieval"``).

    Examples
    --------
    >>> require("math", purpose="arithmetic").sqrt(4.0)
    2.0
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError.of(module, purpose) from exc


class CheckpointIgnoredError(FairnessError):
    """Two checkpoints of one test gave the same features: the model ignores its checkpoint."""


class FairnessViolation(FairnessError, AssertionError):
    """A result breaks one or more fairness limits.

    Parameters
    ----------
    message : str
        The rendered failure: limits, observed values and per-group tables.
    outcomes : sequence of CheckOutcome
        Every check made, passed ones included.
    """

    def __init__(self, message: str, outcomes: Any = ()) -> None:
        super().__init__(message)
        self.outcomes: tuple[Any, ...] = tuple(outcomes)

    @property
    def violations(self) -> tuple[Any, ...]:
        """The checks that failed (each a :class:`pytest_fairness.CheckOutcome`)."""
        return tuple(o for o in self.outcomes if not o.passed)


def own_error(excinfo: Any) -> bool:
    """Whether pytest hides a package frame: under a :class:`FairnessError`, yes.

    Each module's ``__tracebackhide__``: the error's message names the fix, so the user's
    line and the message are the story; a bug (any other exception) keeps its traceback.

    Examples
    --------
    >>> import types
    >>> own_error(types.SimpleNamespace(value=InvalidDataError("x"))), own_error(None)
    (True, False)
    """
    return excinfo is not None and isinstance(excinfo.value, FairnessError)


def did_you_mean(name: object, choices: Iterable[str]) -> str:
    """`` Did you mean 'x'?`` for the closest of ``choices`` to ``name``, or ``""``.

    Examples
    --------
    >>> did_you_mean("max_gapp", ["max_gap", "min_ratio"])
    " Did you mean 'max_gap'?"
    """
    import difflib

    close = difflib.get_close_matches(str(name), list(choices), n=1)
    return f" Did you mean {close[0]!r}?" if close else ""


def plain(text: str) -> str:
    r"""``text`` with control characters escaped as ``repr`` does (``\x1b``, ``\n``).

    Every line shown on the terminal, and every label a message names unquoted, goes
    through it: a group label, result key or test id cannot start a line or change colours.
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def plain_lines(text: str) -> str:
    """``text`` with each line :func:`plain`: its line breaks stay, other controls are escaped."""
    return "\n".join(map(plain, text.split("\n")))


def shown(value: Any) -> str:
    """``repr(value)``, cut to 40 characters: a damaged value in a message (not an error)."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


def check_int(name: str, value: Any, *, low: int, why: str = "") -> int:
    """``value`` as an int if it is an integer (not a bool) ``>= low``; else an error naming it."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
        raise FairnessConfigError(
            f"{name} must be an int >= {low}{why}; got {name}={value!r} "
            f"(type={type(value).__name__}).")
    return int(value)
