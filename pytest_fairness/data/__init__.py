"""Datasets, loaders for the public fairness datasets, and label taxonomies.

Each loader reads a dataset as distributed into a :class:`FairnessDataset`; numpy, pandas
and PIL load on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pytest_fairness.data.casual_conversations import load_casual_conversations, skin_tone_group
from pytest_fairness.data.celeba import load_celeba
from pytest_fairness.data.dataset import CANONICAL_COLUMNS, FairnessDataset, age_group
from pytest_fairness.data.dollar_street import income_bucket, load_dollar_street
from pytest_fairness.data.fairface import load_fairface
from pytest_fairness.data.fitzpatrick17k import load_fitzpatrick17k
from pytest_fairness.data.manifest import load_manifest
from pytest_fairness.data.miap import load_miap
from pytest_fairness.data.utkface import load_utkface, parse_utkface_name

if TYPE_CHECKING:
    from pytest_fairness.data.ieat_stimuli import IEATStimuli as IEATStimuli
    from pytest_fairness.data.ieat_stimuli import IEATTestSpec as IEATTestSpec
    from pytest_fairness.data.ieat_stimuli import ieat_tests as ieat_tests
    from pytest_fairness.data.ieat_stimuli import load_ieat_stimuli as load_ieat_stimuli
    from pytest_fairness.data.taxonomy import Taxonomy as Taxonomy
    from pytest_fairness.data.taxonomy import as_taxonomy as as_taxonomy
    from pytest_fairness.data.taxonomy import imagenet1k_classes as imagenet1k_classes
    from pytest_fairness.data.taxonomy import imagenet1k_taxonomy as imagenet1k_taxonomy

__all__ = ["CANONICAL_COLUMNS", "FairnessDataset", "IEATStimuli", "IEATTestSpec", "LOADERS",
           "Taxonomy", "age_group", "as_taxonomy", "ieat_tests", "imagenet1k_classes",
           "imagenet1k_taxonomy", "income_bucket", "load_casual_conversations", "load_celeba",
           "load_dollar_street", "load_fairface", "load_fitzpatrick17k", "load_ieat_stimuli",
           "load_manifest", "load_miap", "load_utkface", "parse_utkface_name", "skin_tone_group"]

#: Names whose modules import numpy: loaded on first use (name → module of this package).
_LAZY = {
    "IEATStimuli": "ieat_stimuli", "IEATTestSpec": "ieat_stimuli", "ieat_tests": "ieat_stimuli",
    "load_ieat_stimuli": "ieat_stimuli", "Taxonomy": "taxonomy", "as_taxonomy": "taxonomy",
    "imagenet1k_classes": "taxonomy", "imagenet1k_taxonomy": "taxonomy",
}

#: Dataset name (as in ``--fairness-data NAME=PATH`` and the fixture) → loader.
LOADERS: dict[str, Callable[..., FairnessDataset]] = {
    "casual_conversations": load_casual_conversations,
    "celeba": load_celeba,
    "dollar_street": load_dollar_street,
    "fairface": load_fairface,
    "fitzpatrick17k": load_fitzpatrick17k,
    "manifest": load_manifest,
    "miap": load_miap,
    "utkface": load_utkface,
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_fairness.data' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
