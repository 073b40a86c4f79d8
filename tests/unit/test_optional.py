"""Each missing extra gives one MissingDependencyError naming the extra, when it is needed."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from pytest_fairness import MissingDependencyError
from pytest_fairness.errors import EXTRAS, require


def _hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make ``import <module>`` (and its submodules) fail as if it were not installed."""
    for name in list(sys.modules):
        if name.partition(".")[0] in modules:
            monkeypatch.delitem(sys.modules, name)
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize("module", sorted(EXTRAS))
def test_require_names_the_extra(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    """require() on an absent module says which pytest-fairness extra installs it."""
    _hide(monkeypatch, module)
    with pytest.raises(MissingDependencyError,
                       match=rf"pip install 'pytest-fairness\[{EXTRAS[module]}\]'"):
        require(f"{module}.sub", purpose="something")


def test_require_an_unknown_module_names_the_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """A module outside the table is named as the package to install."""
    _hide(monkeypatch, "no_such_module_here")
    with pytest.raises(MissingDependencyError, match="pip install 'no_such_module_here'"):
        require("no_such_module_here", purpose="something")


def _retrieval() -> Any:
    from pytest_fairness import indicators
    rows = (np.eye(2), {"gender": ["f", "m"]})
    return indicators.precision_at_k(rows, rows, k=1, match="gender", by="gender",
                                     min_group_size=1)


def _perturb() -> Any:
    from pytest_fairness.perturbations import perturb
    return perturb(np.zeros((1, 3, 4, 4)), "gaussian_blur", 0.5)


def _perturbed_features() -> Any:
    from pytest_fairness.features import perturbed_features
    return perturbed_features(lambda x: x, np.zeros((1, 3, 4, 4)))


def _extract() -> Any:
    from pytest_fairness.data import FairnessDataset
    from pytest_fairness.features import extract_features
    dataset = FairnessDataset(pd.DataFrame({"image_id": ["a"], "path": ["a.jpg"]}))
    return extract_features(lambda x: x, dataset)


def _load_image() -> Any:
    from pytest_fairness.data import FairnessDataset
    return FairnessDataset(pd.DataFrame({"image_id": ["a"], "path": ["a.jpg"]})).load_image(0)


def _figure() -> Any:
    from pytest_fairness.report import figures
    return figures.new_figure()


@pytest.mark.parametrize(("call", "hidden", "extra"), [
    (_retrieval, "faiss", "retrieval"),
    (_perturb, "torch", "models"),
    (_perturbed_features, "torch", "models"),
    (_extract, "torch", "models"),
    (_load_image, "PIL", "models"),
    (_figure, "matplotlib", "plots"),
], ids=["precision_at_k", "perturb", "perturbed_features", "extract_features", "load_image",
        "new_figure"])
def test_each_entry_point_names_its_extra(monkeypatch: pytest.MonkeyPatch,
                                          call: Callable[[], Any], hidden: str,
                                          extra: str) -> None:
    """The function that needs the extra raises one message naming it, and nothing else."""
    _hide(monkeypatch, hidden)
    with pytest.raises(MissingDependencyError) as raised:
        call()
    message = str(raised.value)
    assert f"pip install 'pytest-fairness[{extra}]'" in message
    assert repr(hidden) in message and message.count("pip install") == 1
