"""The indicator functions, pure (arrays in, an IndicatorResult out), loaded on first use.

A module never has the name of a function (it would hide it). The table is a view of
:data:`INDICATORS`; each family's docs page names the paper.

=====================  =====================  ==================================================
function               module                 source
=====================  =====================  ==================================================
group_metrics          cross_domain           Iurada et al. 2023 (classification)
landmark_metrics       cross_domain           Iurada et al. 2023 (landmark detection)
delta_dto              cross_domain           Iurada et al. 2023
label_association      harmful_labels         Goyal et al. 2022 §3.1
geodiversity           geographic             Goyal et al. 2022 §3.2
precision_at_k         retrieval              Goyal et al. 2022 §3.3
ieat                   embedding_association  Steed & Caliskan 2021 §3.3
ieat_battery           embedding_association  Steed & Caliskan 2021 §3.3 (Holm-adjusted battery)
bias_amp               amplification          Zhao et al. 2017
directional_bias_amp   amplification          Wang & Russakovsky 2021
multi_mals             amplification          Zhao et al. 2023 (Multi_MALS)
multi_directional      amplification          Zhao et al. 2023 (Multi→)
fair_sa                sensitivity            Joshi et al. 2022 §3
=====================  =====================  ==================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from pytest_fairness.indicators.registry import GAP_HEADLINE as GAP_HEADLINE
from pytest_fairness.indicators.registry import INDICATORS as INDICATORS
from pytest_fairness.indicators.registry import PROPERTIES as PROPERTIES
from pytest_fairness.indicators.registry import Headline as Headline
from pytest_fairness.indicators.registry import IndicatorSpec as IndicatorSpec
from pytest_fairness.indicators.registry import headline as headline

#: Public function name → the module of this package that defines it.
_FUNCTIONS: Mapping[str, str] = MappingProxyType(
    {name: spec.module for name, spec in INDICATORS.items()})

__all__ = sorted(_FUNCTIONS)


def __getattr__(name: str) -> Any:
    spec = INDICATORS.get(name)
    if spec is None:
        raise AttributeError(f"module 'pytest_fairness.indicators' has no attribute {name!r}")
    value = spec.function
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_FUNCTIONS])
