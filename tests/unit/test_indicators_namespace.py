"""Every public indicator name resolves to its function, whatever was imported before."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest_fairness.indicators as indicators


def test_modules_never_hide_functions() -> None:
    # Import every submodule first: a submodule named like a function would then shadow it.
    modules = [m.name for m in pkgutil.iter_modules(indicators.__path__)]
    for name in modules:
        importlib.import_module(f"{indicators.__name__}.{name}")
    assert not set(modules) & set(indicators.__all__)
    for name in indicators.__all__:
        function = getattr(indicators, name)
        assert inspect.isfunction(function), (name, function)
        assert function.__module__.startswith(indicators.__name__)


def test_registry_examples() -> None:  # once the registry's docstring examples
    from pytest_fairness.indicators import INDICATORS, headline

    spec = INDICATORS["ieat"]
    assert (spec.module, spec.higher_is_better, "embedding_scale" in spec.properties) == (
        "embedding_association", False, True)
    assert (headline("ieat").read(-0.8, None), headline("group_metrics").read(0.9, 0.05)) == (
        0.8, 0.05)
    assert (headline("ieat").label, headline("fair_sa").metric, headline("mine").metric) == (
        "|effect size|", "l1", "gap")
