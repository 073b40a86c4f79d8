"""Datasets, loaders for the public fairness datasets, and label taxonomies.

Each loader reads a dataset exactly as it is distributed and returns a
:class:`FairnessDataset` with canonical columns. Importing this package is cheap: pandas
and PIL load when a loader runs.
"""

from __future__ import annotations

from collections.abc import Callable

from pytest_fairness.data.casual_conversations import load_casual_conversations
from pytest_fairness.data.celeba import load_celeba
from pytest_fairness.data.dataset import CANONICAL_COLUMNS, FairnessDataset
from pytest_fairness.data.dollar_street import load_dollar_street
from pytest_fairness.data.fairface import load_fairface
from pytest_fairness.data.fitzpatrick17k import load_fitzpatrick17k
from pytest_fairness.data.manifest import load_manifest
from pytest_fairness.data.miap import load_miap
from pytest_fairness.data.utkface import load_utkface

__all__ = [
    "CANONICAL_COLUMNS",
    "LOADERS",
    "FairnessDataset",
    "load_casual_conversations",
    "load_celeba",
    "load_dollar_street",
    "load_fairface",
    "load_fitzpatrick17k",
    "load_manifest",
    "load_miap",
    "load_utkface",
]

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
