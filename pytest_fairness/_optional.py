"""Import a heavy or optional dependency on first use, with an install hint when it is absent."""

from __future__ import annotations

import importlib
from types import ModuleType

from pytest_fairness.errors import MissingDependencyError

__all__ = ["require"]


def require(module: str, *, package: str, purpose: str) -> ModuleType:
    """Import ``module``, or raise :class:`MissingDependencyError` saying what to install.

    Parameters
    ----------
    module : str
        The module to import (``"faiss"``).
    package : str
        What to ``pip install`` for it (``"faiss-cpu"`` or ``"pytest-fairness[faces]"``).
    purpose : str
        What needs it, for the message (``"retrieval"``).
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f"{purpose} needs {module!r}, which is not installed; install it with "
            f"pip install '{package}'."
        ) from exc
