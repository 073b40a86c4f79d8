"""Pin the public namespaces: adding or removing a name must be a deliberate change."""

from __future__ import annotations

import importlib.metadata

import pytest

import pytest_fairness
from pytest_fairness import indicators

PUBLIC = [
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

INDICATORS = [
    "bias_amp",
    "delta_dto",
    "directional_bias_amp",
    "fair_sa",
    "geodiversity",
    "group_metrics",
    "ieat",
    "ieat_battery",
    "label_association",
    "landmark_metrics",
    "multi_directional",
    "multi_mals",
    "precision_at_k",
]


def test_package_all_is_pinned_and_sorted() -> None:
    assert pytest_fairness.__all__ == PUBLIC
    assert pytest_fairness.__all__ == sorted(pytest_fairness.__all__)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(pytest_fairness, name) is not None


def test_public_names_are_the_defining_objects() -> None:
    from pytest_fairness import errors, markers, results

    assert pytest_fairness.IndicatorResult is results.IndicatorResult
    assert pytest_fairness.check is markers.check
    assert pytest_fairness.fairness is markers.fairness
    assert pytest_fairness.FairnessViolation is errors.FairnessViolation


def test_version_is_the_installed_version() -> None:
    assert pytest_fairness.__version__ == importlib.metadata.version("pytest-fairness")


def test_unknown_attribute() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        pytest_fairness.nope  # noqa: B018


def test_exception_tree() -> None:
    from pytest_fairness import errors as e

    assert issubclass(e.FairnessConfigError, (e.FairnessError, ValueError))
    assert issubclass(e.InvalidDataError, ValueError)
    assert issubclass(e.InsufficientDataError, e.InvalidDataError)
    assert issubclass(e.MissingDependencyError, ImportError)
    assert issubclass(e.FairnessViolation, AssertionError)
    for name in e.__all__:
        assert issubclass(getattr(e, name), e.FairnessError)


def test_indicators_all_is_pinned_and_sorted() -> None:
    assert indicators.__all__ == INDICATORS
    assert indicators.__all__ == sorted(indicators.__all__)
    assert set(INDICATORS) <= set(dir(indicators))


def test_unknown_indicator() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        indicators.nope  # noqa: B018


#: Positional (data) parameters of each indicator, DESIGN.md §2.1; the rest is keyword-only.
DATA_PARAMETERS = {
    "bias_amp": ["train_attrs", "train_groups", "pred_attrs", "pred_groups"],
    "delta_dto": ["result", "baseline"],
    "directional_bias_amp": ["train_attrs", "train_groups", "test_attrs", "test_groups",
                             "pred_attrs", "pred_groups"],
    "fair_sa": ["features", "dataset"],
    "geodiversity": ["labels", "scores"],
    "group_metrics": ["y_true", "y_pred"],
    "ieat": ["X", "Y", "A", "B"],
    "ieat_battery": ["tests"],
    "label_association": ["labels", "scores"],
    "landmark_metrics": ["y_true", "y_pred"],
    "multi_directional": ["train_attrs", "train_groups", "test_attrs", "test_groups",
                          "pred_attrs", "pred_groups"],
    "multi_mals": ["train_attrs", "train_groups", "test_attrs", "test_groups", "pred_attrs",
                   "pred_groups"],
    "precision_at_k": ["queries", "database"],
}


def test_data_parameters_cover_every_indicator() -> None:
    assert sorted(DATA_PARAMETERS) == INDICATORS


@pytest.mark.parametrize("name", INDICATORS)
def test_indicator_resolves_to_its_function(name: str) -> None:
    """A submodule named like a function must not shadow the function."""
    import inspect

    function = getattr(indicators, name)
    assert inspect.isfunction(function) and function.__name__ == name
    params = inspect.signature(function).parameters.values()
    positional = [p.name for p in params if p.kind is not p.KEYWORD_ONLY]
    assert positional == DATA_PARAMETERS[name]
    assert not [p for p in params if p.kind in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY)]


def test_importing_the_package_is_cheap() -> None:
    import subprocess
    import sys

    code = ("import sys, pytest_fairness; "
            "print(sorted(m for m in ('numpy', 'pandas', 'torch', 'faiss', 'scipy', "
            "'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


FEATURES = [
    "DefaultTransform",
    "ExtractionProgress",
    "Features",
    "ProgressSink",
    "cache_key",
    "callable_fingerprint",
    "extract_features",
    "extract_rows",
    "file_sha256",
    "forward_batches",
    "load_precomputed",
    "model_fingerprint",
    "normalize_spec",
    "perturbation_dir",
    "perturbation_key",
    "perturbation_label",
    "perturbed_features",
    "progress_to",
    "read_manifest",
    "read_shards",
    "shard_name",
]


def test_features_all_is_pinned_and_sorted() -> None:
    from pytest_fairness import features

    assert features.__all__ == FEATURES
    assert features.__all__ == sorted(features.__all__)


@pytest.mark.parametrize("name", FEATURES)
def test_every_features_name_resolves(name: str) -> None:
    from pytest_fairness import features

    assert getattr(features, name) is not None


def test_data_and_perturbations_namespaces_are_pinned() -> None:
    """The names docs and examples import from ``data`` and ``perturbations`` stay there."""
    import importlib
    import subprocess
    import sys

    from pytest_fairness import data, perturbations

    data_names = [
        "CANONICAL_COLUMNS", "FairnessDataset", "IEATStimuli", "IEATTestSpec", "LOADERS",
        "Taxonomy", "age_group", "as_taxonomy", "ieat_tests", "imagenet1k_classes",
        "imagenet1k_taxonomy", "income_bucket", "load_casual_conversations", "load_celeba",
        "load_dollar_street", "load_fairface", "load_fitzpatrick17k", "load_ieat_stimuli",
        "load_manifest", "load_miap", "load_utkface", "parse_utkface_name", "skin_tone_group",
    ]
    assert data.__all__ == data_names == sorted(data_names)
    for name in data_names:  # each is the defining object, not a copy
        value = getattr(data, name)
        module = getattr(value, "__module__", None)
        if module is not None and module.startswith("pytest_fairness.data."):
            assert getattr(importlib.import_module(module), name) is value
    assert sorted(data.LOADERS) == [n.removeprefix("load_") for n in data_names
                                    if n.startswith("load_") and n != "load_ieat_stimuli"]
    assert perturbations.__all__ == ["PERTURBATIONS", "Perturbation", "PerturbationSpec",
                                     "parameter", "perturb"]
    assert all(getattr(perturbations, n) is not None for n in perturbations.__all__)
    code = ("import sys, pytest_fairness.data; "
            "print(sorted(m for m in ('numpy', 'pandas', 'PIL') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def _documented_imports() -> list[tuple[str, str]]:
    """``(module, name)`` of every ``from pytest_fairness... import name`` in the docs,
    the README and the examples: what users copy."""
    import ast
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    found: set[tuple[str, str]] = set()
    texts = [p.read_text(encoding="utf-8") for p in
             [root / "README.md", *sorted((root / "docs").glob("*.md"))]]
    sources = [p.read_text(encoding="utf-8") for p in sorted((root / "examples").rglob("*.py"))]
    # Code in Markdown: fenced blocks and doctest lines, parsed statement by statement.
    for text in texts:
        sources.append("\n".join(re.sub(r"^\s*(>>>|\.\.\.) ?", "", line)
                                  for line in text.splitlines()))
    for source in sources:
        for statement in re.findall(r"from pytest_fairness[\w.]* import \([^)]*\)|"
                                    r"from pytest_fairness[\w.]* import [^\n]+", source):
            try:
                tree = ast.parse(statement.strip())
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module:
                    found.update((node.module, alias.name) for alias in node.names)
    return sorted(found)


@pytest.mark.parametrize(("module", "name"), _documented_imports())
def test_every_documented_import_is_public(module: str, name: str) -> None:
    """A name the docs, README or examples import is in its module's ``__all__``.

    Moving or renaming it must then be a deliberate change of the public surface.
    """
    import importlib

    imported = importlib.import_module(module)
    assert getattr(imported, name) is not None
    if not isinstance(getattr(imported, name), type(importlib)):  # a submodule needs none
        assert name in getattr(imported, "__all__", ()), (
            f"{module}.{name} is used by the docs but not in {module}.__all__")


def test_the_documented_imports_are_found() -> None:
    assert ("pytest_fairness.features", "load_precomputed") in _documented_imports()
    assert ("pytest_fairness", "fairness") in _documented_imports()
    assert ("pytest_fairness.perturbations", "perturb") in _documented_imports()
