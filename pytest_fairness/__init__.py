"""pytest-fairness: fairness indicators for computer-vision models as pytest assertions.

Importing this package is cheap: numpy, pandas, torch and faiss load only when an
indicator or a fixture that needs them runs.
"""

from __future__ import annotations

from typing import Any

from pytest_fairness import indicators
from pytest_fairness.errors import (
    CheckpointIgnoredError,
    FairnessConfigError,
    FairnessError,
    FairnessViolation,
    InsufficientDataError,
    InvalidDataError,
    MissingDependencyError,
    MissingFeaturesError,
)
from pytest_fairness.markers import check, fairness
from pytest_fairness.results import Curve, GroupStat, IndicatorResult, Matrix

__all__ = [
    "CheckOutcome",
    "CheckpointIgnoredError",
    "Curve",
    "FairnessConfigError",
    "FairnessError",
    "FairnessViolation",
    "GroupStat",
    "IndicatorResult",
    "InsufficientDataError",
    "InvalidDataError",
    "Matrix",
    "MissingDependencyError",
    "MissingFeaturesError",
    "__version__",
    "check",
    "fairness",
    "indicators",
]


def __getattr__(name: str) -> Any:
    if name == "CheckOutcome":  # loaded on first use: plugin load stays cheap
        from pytest_fairness.records import CheckOutcome

        return CheckOutcome
    if name == "__version__":
        from importlib.metadata import version

        return version("pytest-fairness")
    raise AttributeError(f"module 'pytest_fairness' has no attribute {name!r}")
