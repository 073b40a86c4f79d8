"""Feature extraction: equal to a bare torch loop, cached, locked; ``module=``: features of one
sub-module, cached by its weights alone, so a new head on the same backbone runs no forward pass
through the backbone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from pytest_fairness.data import FairnessDataset, load_manifest, load_miap
from pytest_fairness.errors import FairnessConfigError, InvalidDataError
from pytest_fairness.features import (
    DefaultTransform,
    Features,
    callable_fingerprint,
    extract_features,
    model_fingerprint,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


class Tiny(torch.nn.Module):
    """A small conv net that returns (embeddings, logits) and counts its forward calls."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 4, 3, stride=2)
        self.pool = torch.nn.AdaptiveAvgPool2d(2)
        self.head = torch.nn.Linear(16, 3)
        self.calls = 0

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self.calls += 1
        z = self.pool(torch.relu(self.conv(x))).flatten(1)
        return z, self.head(z)


@pytest.fixture(scope="module")
def dataset():
    return load_manifest(FIXTURES / "manifest" / "manifest.csv")


def bare_loop(model: torch.nn.Module, ds, size: int, batch_size: int) -> tuple[np.ndarray, ...]:
    """What a user would write by hand: PIL → resize → tensor → normalise → model."""
    from torchvision.transforms import functional as TF

    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
    embeddings, logits = [], []
    model.eval()
    with torch.no_grad():
        for start in range(0, len(ds), batch_size):
            images = []
            for path in ds.frame["path"].iloc[start:start + batch_size]:
                with open(path, "rb") as handle:
                    from PIL import Image

                    picture = Image.open(handle).convert("RGB").resize((size, size), 2)
                images.append(TF.pil_to_tensor(picture).float() / 255)
            z, y = model((torch.stack(images) - mean) / std)
            embeddings.append(z.numpy())
            logits.append(y.numpy())
    return np.concatenate(embeddings), np.concatenate(logits)


def test_equals_bare_torch_loop(dataset) -> None:
    model = Tiny()
    features = extract_features(model, dataset, transform=DefaultTransform(16), batch_size=5)
    z, y = bare_loop(Tiny(), dataset, 16, batch_size=7)
    np.testing.assert_allclose(features.embeddings, z, rtol=0, atol=1e-6)
    np.testing.assert_allclose(features.logits, y, rtol=0, atol=1e-6)
    assert model.calls == 4 and not features.from_cache  # ceil(16 / 5) batches
    assert np.asarray(features).shape == (16, 16)
    assert model.training  # restored after extraction


def test_second_run_hits_the_cache(dataset, tmp_path: Path) -> None:
    model = Tiny()
    first = extract_features(model, dataset, transform=DefaultTransform(16), batch_size=8,
                             cache_dir=tmp_path)
    assert model.calls == 2 and not first.from_cache
    again = extract_features(model, dataset, transform=DefaultTransform(16), batch_size=4,
                             cache_dir=tmp_path)
    assert model.calls == 2 and again.from_cache and again.key == first.key
    np.testing.assert_array_equal(again.embeddings, first.embeddings)
    assert [p.suffix for p in tmp_path.rglob("*") if p.is_file()].count(".sha256") == 1
    # No temporary file is left (atomic writes go through a hidden ".NAME.XXXX" file).
    assert {p.suffix for p in tmp_path.rglob("*") if p.is_file()} == {".npy", ".sha256", ".lock"}


def test_cache_key_changes_with_what_changes_the_features(dataset, tmp_path: Path) -> None:
    model = Tiny()
    base = extract_features(model, dataset, transform=DefaultTransform(16), cache_dir=tmp_path)
    keys = {base.key}
    keys.add(extract_features(model, dataset, transform=DefaultTransform(12),
                              cache_dir=tmp_path).key)
    keys.add(extract_features(model, dataset, transform=DefaultTransform(16), normalize=None,
                              cache_dir=tmp_path).key)
    keys.add(extract_features(model, dataset.subset(list(range(8))),
                              transform=DefaultTransform(16), cache_dir=tmp_path).key)
    keys.add(extract_features(model, dataset, transform=DefaultTransform(16),
                              perturbation=("gaussian_blur", 0.5), cache_dir=tmp_path).key)
    with torch.no_grad():
        model.head.bias.add_(1.0)  # weights changed in place
    keys.add(extract_features(model, dataset, transform=DefaultTransform(16),
                              cache_dir=tmp_path).key)
    assert len(keys) == 6 and model.calls == 6


def test_memory_memo_skips_even_the_disk(dataset, tmp_path: Path) -> None:
    memory: dict = {}
    model = Tiny()
    first = extract_features(model, dataset, transform=DefaultTransform(8), cache_dir=tmp_path,
                             memory=memory)
    for entry in tmp_path.rglob("*.sha256"):
        entry.unlink()
    again = extract_features(model, dataset, transform=DefaultTransform(8), cache_dir=tmp_path,
                             memory=memory)
    assert again is first and model.calls == 1


def test_corrupt_cache_entry_is_recomputed(dataset, tmp_path: Path) -> None:
    model = Tiny()
    first = extract_features(model, dataset, transform=DefaultTransform(8), cache_dir=tmp_path)
    next(tmp_path.rglob("*.0.npy")).write_bytes(b"truncated")
    with pytest.warns(UserWarning, match=r"is damaged"):
        again = extract_features(model, dataset, transform=DefaultTransform(8),
                                 cache_dir=tmp_path)
    assert model.calls == 2 and not again.from_cache
    np.testing.assert_allclose(again.embeddings, first.embeddings)


def test_dict_outputs_layers_and_plain_callables(dataset) -> None:
    model = Tiny()
    features = extract_features(model, dataset, transform=DefaultTransform(16),
                                layers=["conv", "pool"])
    assert features["conv"].shape == (16, 4 * 7 * 7) and features["pool"].shape == (16, 16)
    np.testing.assert_allclose(features["pool"], features.embeddings, atol=1e-6)

    def named(x: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"mean": x.mean(dim=(2, 3)), "max": x.amax(dim=(2, 3))}

    out = extract_features(named, dataset, transform=DefaultTransform(4), normalize=None)
    assert sorted(out.outputs) == ["max", "mean"] and out["mean"].shape == (16, 3)
    assert (out["max"] >= out["mean"]).all()
    with pytest.raises(KeyError, match=r"no 'embeddings' output"):
        _ = out.embeddings


def test_box_crops_reach_the_model(tmp_path: Path) -> None:
    ds = load_miap(FIXTURES / "miap").subset(list(range(6)))

    def mean_colour(x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=(2, 3))

    features = extract_features(mean_colour, ds, transform=DefaultTransform(8), normalize=None)
    for i in range(6):
        expected = np.asarray(ds.load_image(i).resize((8, 8), 2), dtype=float).mean(axis=(0, 1))
        np.testing.assert_allclose(features.embeddings[i], expected / 255, atol=1e-5)


def test_perturbation_callable_and_named(dataset) -> None:
    calls = []

    def darken(batch: torch.Tensor) -> torch.Tensor:
        calls.append(batch.shape[0])
        return batch * 0.5

    def identity(x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=(2, 3))

    plain = extract_features(identity, dataset, transform=DefaultTransform(4), normalize=None)
    dark = extract_features(identity, dataset, transform=DefaultTransform(4), normalize=None,
                            perturbation=darken, batch_size=10)
    np.testing.assert_allclose(dark.embeddings, plain.embeddings * 0.5, atol=1e-6)
    assert calls == [10, 6]
    low = extract_features(identity, dataset, transform=DefaultTransform(4), normalize=None,
                           perturbation=("exposure_low", 1.0))
    np.testing.assert_allclose(low.embeddings, plain.embeddings / 8, atol=1e-6)


def test_fingerprints() -> None:
    a, b = Tiny(), Tiny()
    assert model_fingerprint(a) == model_fingerprint(b)  # same seed, same weights
    with torch.no_grad():
        b.conv.weight[0, 0, 0, 0] += 1e-3
    assert model_fingerprint(a) != model_fingerprint(b)
    assert model_fingerprint(a.forward) == model_fingerprint(a) + ".forward"
    assert model_fingerprint(a, model_id="ckpt-7") == "id:ckpt-7"

    def f(x):
        return a(x)

    def g(x):
        return b(x)

    assert callable_fingerprint(f) != callable_fingerprint(g)  # closes over different weights
    assert callable_fingerprint(lambda x: x) == callable_fingerprint(lambda x: x)
    assert callable_fingerprint(DefaultTransform(3)) == "DefaultTransform(size=3)"


def test_argument_errors(dataset) -> None:
    model = Tiny()
    with pytest.raises(FairnessConfigError, match=r"batch_size=0"):
        extract_features(model, dataset, batch_size=0)
    with pytest.raises(FairnessConfigError, match=r"num_workers=-1"):
        extract_features(model, dataset, num_workers=-1)
    with pytest.raises(FairnessConfigError, match=r"FairnessDataset"):
        extract_features(model, [1, 2])
    with pytest.raises(FairnessConfigError, match=r"model must be"):
        extract_features(3, dataset)
    with pytest.raises(FairnessConfigError, match=r"layers=\['conv'\]"):
        extract_features(model, dataset, layers="conv")
    with pytest.raises(FairnessConfigError, match=r"no sub-module 'fc'"):
        extract_features(model, dataset, transform=DefaultTransform(8), layers=["fc"])
    with pytest.raises(FairnessConfigError, match=r"needs a torch.nn.Module"):
        extract_features(model.forward, dataset, transform=DefaultTransform(8), layers=["conv"])
    with pytest.raises(FairnessConfigError, match=r"normalize='zscore'"):
        extract_features(model, dataset, normalize="zscore")
    with pytest.raises(FairnessConfigError, match=r"perturbation=3"):
        extract_features(model, dataset, perturbation=3)
    with pytest.raises(FairnessConfigError, match=r"device='gpu9'"):
        extract_features(model, dataset, device="gpu9")
    with pytest.raises(FairnessConfigError, match=r"transform must be callable"):
        extract_features(model, dataset, transform=3)
    with pytest.raises(InvalidDataError, match=r"returned str"):
        extract_features(lambda x: "no", dataset, transform=DefaultTransform(4))
    with pytest.raises(InvalidDataError, match=r"has 1 rows for a batch of 16"):
        extract_features(lambda x: x[:1].flatten(1), dataset, transform=DefaultTransform(4))
    with pytest.raises(InvalidDataError, match=r"expected \(16, d\)"):
        Features(dataset, {"embeddings": np.zeros((3, 2))})
    with pytest.raises(FairnessConfigError, match=r"size=0"):
        DefaultTransform(0)


def test_features_subset_keeps_rows_aligned(dataset) -> None:
    emb = np.arange(32, dtype=float).reshape(16, 2)
    features = Features(dataset, {"embeddings": emb})
    male = features.subset(features.frame["gender"] == "male")
    assert male.frame["gender"].eq("male").all()
    np.testing.assert_array_equal(male.embeddings, emb[1::2])


# -- module=: one sub-module's features ---------------------------------------------------------


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


def test_progress_line() -> None:
    from pytest_fairness.features import ExtractionProgress
    from pytest_fairness.features.progress import progress_line

    assert (progress_line(ExtractionProgress("faces", "gaussian_blur 0.5", 0, 100, 0.0))
            == "fairness: extracting faces (gaussian_blur 0.5): 100 images")
    assert (progress_line(ExtractionProgress("faces", None, 40, 100, 2.0))
            == "fairness: extracting faces: 40/100 images, 20 images/s, ETA 3.0 s")
    assert (progress_line(ExtractionProgress("faces", None, 100, 100, 4.0, finished=True))
            == "fairness: extracted faces: 100 images in 4.0 s (25 images/s)")


def test_load_model_calls_the_factory() -> None:
    from pytest_fairness.features.job import load_model

    assert repr(load_model("collections:OrderedDict")) == "OrderedDict()"
