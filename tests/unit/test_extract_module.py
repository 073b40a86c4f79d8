"""module=: features of one sub-module, cached by its weights alone, so a new head on the same
backbone runs no forward pass through the backbone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from pytest_fairness.data import FairnessDataset, load_manifest
from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.features import DefaultTransform, extract_features, model_fingerprint

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


class Classifier(torch.nn.Module):
    """A backbone (the expensive part) and a classification head."""

    def __init__(self, head_seed: int) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.backbone = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(),
                                            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
        torch.manual_seed(head_seed)
        self.head = torch.nn.Linear(4, 2)

    def forward(self, images: torch.Tensor) -> dict[str, torch.Tensor]:
        embeddings = self.backbone(images)
        return {"embeddings": embeddings, "logits": self.head(embeddings)}


def count_backbone_calls(model: Classifier) -> list[int]:
    """A forward hook on the backbone; the list's length is its number of forward passes."""
    calls: list[int] = []
    model.backbone.register_forward_hook(lambda module, inputs, output: calls.append(1))
    return calls


@pytest.fixture(scope="module")
def dataset() -> FairnessDataset:
    return load_manifest(FIXTURES / "manifest" / "manifest.csv")


def extract(model: Any, dataset: FairnessDataset, cache: Path, **kwargs: Any) -> Any:
    return extract_features(model, dataset, transform=DefaultTransform(8), cache_dir=cache,
                            **kwargs)


def test_a_new_head_reuses_the_cached_backbone_features(dataset: FairnessDataset,
                                                        tmp_path: Path) -> None:
    """A second model, same backbone weights, another head: no backbone forward pass."""
    first = Classifier(head_seed=1)
    first_calls = count_backbone_calls(first)
    backbone = extract(first, dataset, tmp_path, module="backbone")
    assert not backbone.from_cache and len(first_calls) > 0

    second = Classifier(head_seed=2)  # a new head; the backbone's weights are the same
    assert not torch.equal(first.head.weight, second.head.weight)
    second_calls = count_backbone_calls(second)
    again = extract(second, dataset, tmp_path, module="backbone")
    assert again.from_cache and second_calls == []
    np.testing.assert_array_equal(again.embeddings, backbone.embeddings)

    # The head runs on the cached embeddings: the logits are the new head's.
    with torch.inference_mode():
        logits = second.head(torch.from_numpy(again.embeddings)).numpy()
        whole = second(torch.zeros(1, 3, 8, 8))  # (the head is not the first one)
    assert logits.shape == (16, 2) and whole["logits"].shape == (1, 2)
    del second_calls[:]
    full = extract(second, dataset, tmp_path)  # the whole model: a new head is a new key
    assert not full.from_cache and len(second_calls) > 0
    np.testing.assert_allclose(full.logits, logits, rtol=1e-5, atol=1e-6)


def test_the_key_follows_the_backbone_weights(dataset: FairnessDataset, tmp_path: Path) -> None:
    """Other backbone weights: extracted again (the head does not matter, the backbone does)."""
    extract(Classifier(head_seed=1), dataset, tmp_path, module="backbone")
    changed = Classifier(head_seed=1)
    with torch.no_grad():
        changed.backbone[0].bias.add_(1.0)
    assert not extract(changed, dataset, tmp_path, module="backbone").from_cache


def test_a_fixture_names_its_model_once(dataset: FairnessDataset, tmp_path: Path) -> None:
    """A fairness_fingerprint attribute is the model's cache identity (no weights hashed)."""
    model = Classifier(head_seed=1)
    model.backbone.fairness_fingerprint = "effnet-lite0-backbone@v3"  # type: ignore[assignment]
    assert model_fingerprint(model.backbone) == "id:effnet-lite0-backbone@v3"
    extract(model, dataset, tmp_path, module="backbone")
    other = Classifier(head_seed=5)
    other.backbone.fairness_fingerprint = "effnet-lite0-backbone@v3"  # type: ignore[assignment]
    calls = count_backbone_calls(other)
    assert extract(other, dataset, tmp_path, module="backbone").from_cache and calls == []


def test_module_errors(dataset: FairnessDataset, tmp_path: Path) -> None:
    with pytest.raises(FairnessConfigError, match=r"no sub-module 'neck'; some names: "
                                                  r"\['backbone', 'backbone.0'"):
        extract(Classifier(head_seed=1), dataset, tmp_path, module="neck")
    with pytest.raises(FairnessConfigError, match=r"module='backbone' needs a torch.nn.Module"):
        extract(lambda x: x.flatten(1), dataset, tmp_path, module="backbone")


@pytest.fixture
def heavy_modules() -> None:
    """Imported before pytester's snapshot of sys.modules: they cannot be imported twice."""
    import filelock  # noqa: F401
    import pandas  # noqa: F401
    import PIL.Image  # noqa: F401
    import pyarrow  # noqa: F401
    import torchvision  # noqa: F401


CONFTEST = '''
import os
import pytest
import torch


class Classifier(torch.nn.Module):
    def __init__(self, head_seed):
        super().__init__()
        torch.manual_seed(0)
        self.backbone = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(),
                                            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
        torch.manual_seed(head_seed)
        self.head = torch.nn.Linear(4, 2)

    def forward(self, images):
        embeddings = self.backbone(images)
        return {"embeddings": embeddings, "logits": self.head(embeddings)}


BACKBONE_CALLS = []


@pytest.fixture(scope="session")
def fairness_model():
    model = Classifier(head_seed=int(os.environ["HEAD_SEED"]))
    model.backbone.register_forward_hook(lambda *args: BACKBONE_CALLS.append(1))
    return model
'''

TEST = '''
import torch
from pytest_fairness import indicators
from pytest_fairness.features import DefaultTransform
from conftest import BACKBONE_CALLS


def test_accuracy(fairness_model, fairness_features, fairness_manifest):
    backbone = fairness_features(fairness_manifest, module="backbone",
                                 transform=DefaultTransform(8))
    with torch.inference_mode():
        logits = fairness_model.head(torch.from_numpy(backbone.embeddings))
    print(f"backbone passes: {len(BACKBONE_CALLS)}, from cache: {backbone.from_cache}")
    truth = (fairness_manifest.frame["skin_tone"] == "darker").to_numpy().astype(int)
    return indicators.group_metrics(truth, logits.argmax(1).numpy(),
                                    groups=backbone.groups("gender"), min_group_size=1)
'''


def test_through_the_fixture_a_new_head_runs_no_backbone_pass(
        heavy_modules: None, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two sessions, two heads: the second session's backbone never runs."""
    torch.set_num_threads(1)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_heads=TEST)
    args = ("--fairness", "-s", "-p", "no:xdist", "--fairness-no-history", "--fairness-data",
            f"manifest={FIXTURES / 'manifest' / 'manifest.csv'}")
    monkeypatch.setenv("HEAD_SEED", "1")
    first = pytester.runpytest(*args)
    first.assert_outcomes(passed=1)
    first.stdout.fnmatch_lines(["*backbone passes: [1-9]*, from cache: False*"])
    monkeypatch.setenv("HEAD_SEED", "2")
    monkeypatch.delitem(__import__("sys").modules, "conftest", raising=False)
    second = pytester.runpytest(*args)
    second.assert_outcomes(passed=1)
    second.stdout.fnmatch_lines(["*backbone passes: 0, from cache: True*"])
