"""Import a heavy or optional dependency on first use, with an install hint when it is absent."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Final

from pytest_fairness.errors import MissingDependencyError

__all__ = ["EXTRAS", "require"]

#: The pip extra of pytest-fairness that installs each optional top-level module (the one
#: place the package names live; pyproject.toml lists the same sets).
EXTRAS: Final = {
    "torch": "models", "torchvision": "models", "PIL": "models",  # extraction, perturbations
    "faiss": "retrieval",
    "matplotlib": "plots",
    "pyarrow": "scale",  # in the core install; the extra is kept for old install lines
}


def require(module: str, *, purpose: str) -> ModuleType:
    """Import ``module``, or raise :class:`MissingDependencyError` naming the extra to install.

    Parameters
    ----------
    module : str
        The module to import (``"faiss"``, ``"torch.distributed"``); its top-level name is a
        key of :data:`EXTRAS`.
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
        top = module.partition(".")[0]
        extra = EXTRAS.get(top)
        fix = f"pytest-fairness[{extra}]" if extra else top
        raise MissingDependencyError(
            f"{purpose} needs {top!r}, which is not installed; install it with "
            f"pip install '{fix}'.") from exc
