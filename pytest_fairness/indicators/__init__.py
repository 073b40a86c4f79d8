"""The indicator functions, one module per family of DESIGN.md §2.

Every function is pure (arrays or frames in, a frozen
:class:`~pytest_fairness.results.IndicatorResult` out) and needs no pytest. The modules
load on first use, so ``from pytest_fairness import indicators`` costs nothing.

A module never has the name of a function: importing a submodule makes it an attribute of
this package, which would hide the function of the same name.

=====================  =====================  ===========================================
function               module                 source
=====================  =====================  ===========================================
group_metrics          cross_domain           seed 003 (classification)
landmark_metrics       cross_domain           seed 003 (landmark detection)
delta_dto              cross_domain           seed 003
label_association      harmful_labels         seed 000 §3.1
geodiversity           geographic             seed 000 §3.2
precision_at_k         retrieval              seed 000 §3.3
ieat                   embedding_association  seed 004
ieat_battery           embedding_association  seed 004 (several tests, Holm-adjusted)
bias_amp               amplification          Zhao et al. 2017
directional_bias_amp   amplification          Wang & Russakovsky 2021
multi_mals             amplification          seed 001
multi_directional      amplification          seed 001
fair_sa                sensitivity            seed 002
=====================  =====================  ===========================================
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public function name → the module of this package that defines it.
_FUNCTIONS: dict[str, str] = {
    "group_metrics": "cross_domain",
    "landmark_metrics": "cross_domain",
    "delta_dto": "cross_domain",
    "label_association": "harmful_labels",
    "geodiversity": "geographic",
    "precision_at_k": "retrieval",
    "ieat": "embedding_association",
    "ieat_battery": "embedding_association",
    "bias_amp": "amplification",
    "directional_bias_amp": "amplification",
    "multi_mals": "amplification",
    "multi_directional": "amplification",
    "fair_sa": "sensitivity",
}

__all__ = sorted(_FUNCTIONS)


def __getattr__(name: str) -> Any:
    module = _FUNCTIONS.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_fairness.indicators' has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    except ModuleNotFoundError as exc:
        if exc.name == f"{__name__}.{module}":
            raise AttributeError(
                f"pytest_fairness.indicators.{name} is not available in this version "
                f"(module {module!r} is not implemented yet)."
            ) from None
        raise
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_FUNCTIONS])
