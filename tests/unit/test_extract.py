"""Feature extraction: equal to a bare torch loop, cached, locked, precomputed inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from pytest_fairness.data import load_manifest, load_miap
from pytest_fairness.errors import FairnessConfigError, InvalidDataError
from pytest_fairness.features import (
    DefaultTransform,
    Features,
    callable_fingerprint,
    extract_features,
    load_precomputed,
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
    assert not list(tmp_path.rglob("*.tmp"))


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


def test_precomputed_npy_npz_parquet(dataset, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(16, 5))
    ids = np.array(dataset.image_ids)
    np.save(tmp_path / "e.npy", emb)
    assert np.array_equal(load_precomputed(tmp_path / "e.npy", dataset).embeddings, emb)
    order = rng.permutation(16)
    np.savez(tmp_path / "e.npz", image_id=ids[order], embeddings=emb[order],
             logits=emb[order, :2])
    loaded = load_precomputed(tmp_path / "e.npz", dataset)
    np.testing.assert_array_equal(loaded.embeddings, emb)
    np.testing.assert_array_equal(loaded.logits, emb[:, :2])
    frame = pd.DataFrame(emb[order], columns=[f"f{k}" for k in range(5)])
    frame.insert(0, "image_id", ids[order])
    frame["logits"] = list(emb[order, :2])
    frame.to_parquet(tmp_path / "e.parquet")
    loaded = load_precomputed(tmp_path / "e.parquet", dataset)
    np.testing.assert_array_equal(loaded.embeddings, emb)
    np.testing.assert_array_equal(loaded.logits, emb[:, :2])


def test_precomputed_errors(dataset, tmp_path: Path) -> None:
    np.save(tmp_path / "short.npy", np.zeros((3, 2)))
    with pytest.raises(InvalidDataError, match=r"has 3 rows but dataset 'manifest' has 16"):
        load_precomputed(tmp_path / "short.npy", dataset)
    np.savez(tmp_path / "missing.npz", image_id=np.array(["img000"]), embeddings=np.zeros((1, 2)))
    with pytest.raises(InvalidDataError, match=r"lack 15 of the 16 images.*'img001'"):
        load_precomputed(tmp_path / "missing.npz", dataset)
    np.savez(tmp_path / "dup.npz", image_id=np.array(["a", "a"]), embeddings=np.zeros((2, 2)))
    with pytest.raises(InvalidDataError, match=r"id 'a' appears at rows 0 and 1"):
        load_precomputed(tmp_path / "dup.npz", dataset)
    pd.DataFrame({"x": [1.0]}).to_parquet(tmp_path / "noid.parquet")
    with pytest.raises(InvalidDataError, match=r"no 'image_id' column"):
        load_precomputed(tmp_path / "noid.parquet", dataset)
    (tmp_path / "bad.npy").write_bytes(b"nope")
    with pytest.raises(InvalidDataError, match=r"bad.npy.* are damaged or not a numpy .npy file"):
        load_precomputed(tmp_path / "bad.npy", dataset)
    (tmp_path / "f.csv").write_text("x")
    with pytest.raises(FairnessConfigError, match=r"suffix '.csv'"):
        load_precomputed(tmp_path / "f.csv", dataset)
    with pytest.raises(InvalidDataError, match=r"do not exist"):
        load_precomputed(tmp_path / "none.npz", dataset)


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
