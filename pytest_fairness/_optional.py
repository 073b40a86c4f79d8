"""Import a heavy or optional dependency on first use, with an install hint when it is absent."""

from __future__ import annotations

import importlib
from types import ModuleType

from pytest_fairness.errors import MissingDependencyError

__all__ = ["require"]


def require(module: str, *, purpose: str) -> ModuleType:
    """Import ``module``, or raise :class:`MissingDependencyError` naming the extra to install.

    Parameters
    ----------
    module : str
        The module to import (``"faiss"``, ``"torch.distributed"``); the extra is looked up
        by its top-level name in ``errors.EXTRAS``.
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
