"""Loading the plugin must cost nothing: no heavy imports until a fairness test runs."""

from __future__ import annotations

import json
import sys

import pytest

HEAVY = ("torch", "pandas", "faiss", "scipy", "numpy", "matplotlib", "torchvision", "jinja2")


def test_loading_the_plugin_imports_nothing_heavy(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
import json, sys

def pytest_unconfigure(config):
    with open("modules.json", "w") as f:
        json.dump(sorted(sys.modules), f)
""")
    pytester.makepyfile("def test_plain():\n    pass\n")
    result = pytester.runpytest_subprocess("--help")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*--fairness*run fairness tests*"])
    modules = set(json.loads((pytester.path / "modules.json").read_text()))
    assert "pytest_fairness.plugin" in modules
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))

    result = pytester.runpytest_subprocess("--fairness", "-q")
    assert result.ret == 0
    modules = set(json.loads((pytester.path / "modules.json").read_text()))
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


def test_importing_the_package_is_light(pytester: pytest.Pytester) -> None:
    result = pytester.run(
        sys.executable, "-c",
        "import sys, pytest_fairness; from pytest_fairness import fairness, indicators; "
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))",
    )
    assert result.ret == 0
    assert result.stdout.lines[-1] == "[]"
