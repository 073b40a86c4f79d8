"""Fair SA: hand-computed curves, constructed models, sources, pruning, validation."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from pytest_fairness import fairness
from pytest_fairness.errors import (
    FairnessConfigError,
    FairnessViolation,
    InsufficientDataError,
    InvalidDataError,
)
from pytest_fairness.features import perturbed_features
from pytest_fairness.indicators import fair_sa
from pytest_fairness.perturbations import perturb
from pytest_fairness.results import IndicatorResult
from tests.unit import pin_cases
from tests.unit.pin_cases import differences

# -- brute-force oracles (independent of the implementation) ---------------------------------


def oracle_threshold(impostor: np.ndarray, far: float) -> float:
    """The lowest threshold among all candidates with FAR <= far (scores >= t accepted)."""
    candidates = np.unique(np.concatenate([impostor, np.nextafter(impostor, np.inf)]))
    ok = [t for t in candidates if (impostor >= t).mean() <= far + 1e-12]
    return float(min(ok))


def oracle_gar(emb: np.ndarray, clean: np.ndarray, ids: list[Any], subset: list[int],
               far: float) -> float:
    def cos(a: np.ndarray, b: np.ndarray) -> float:
        return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))

    genuine, impostor = [], []
    for i in subset:
        for j in subset:
            if i == j:
                continue
            (genuine if ids[i] == ids[j] else impostor).append(cos(emb[i], clean[j]))
    t = oracle_threshold(np.array(impostor), far)
    return float(np.mean(np.array(genuine) >= t))


def trapezoid(x: list[float], y: list[float]) -> float:
    return sum((y[k] + y[k - 1]) / 2 * (x[k] - x[k - 1]) for k in range(1, len(x))) / x[-1]


# -- hand-computed self-matching ---------------------------------------------------------------


def four_images() -> dict[Any, np.ndarray]:
    clean = np.eye(4)
    half = np.eye(4)
    half[3] = [1, 1, 1, 0]  # image 3 (group b) fails at level 0.5 and 1
    full = half.copy()
    full[0] = [0, 1, 1, 1]  # image 0 (group a) fails at level 1 as well
    return {None: clean, ("blur", 0.5): half, ("blur", 1.0): full}


def test_hand_computed_self_matching() -> None:
    """α, AUC, IRC and every L1 norm on four images and two levels."""
    r = fair_sa(four_images(), attribute=["a", "a", "b", "b"], perturbations="blur",
                levels=[0.5, 1.0], threshold=0.5, min_group_size=1)
    # match rates: a = (1, 1, 0.5), b = (1, 0.5, 0.5); α_a = (0, 0.5, 0), α_b = −α_a
    assert r.curves["fair_sa/a/blur"].y == (0.0, 0.5, 0.0)
    assert r.curves["fair_sa/b/blur"].y == (0.0, -0.5, 0.0)
    assert r.curves["fair_sa/a/blur"].x == (0.0, 0.5, 1.0)
    assert r.curves["irc/blur"].y == (1.0, 0.75, 0.5)
    assert r.curves["irc/b/blur"].y == (1.0, 0.5, 0.5)
    auc = trapezoid([0, 0.5, 1], [0, 0.5, 0])
    assert auc == 0.25
    assert r.matrices["auc"].values == ((0.25,), (-0.25,))
    assert r.matrices["auc"].rows == ("a", "b") and r.matrices["auc"].columns == ("blur",)
    assert r.value == r.stats["l1"] == 0.5
    assert r.stats["l1_row[a]"] == r.stats["l1_row[b]"] == 0.25
    assert r.stats["l1_col[blur]"] == 0.5
    assert r.stats["irc_auc[blur]"] == trapezoid([0, 0.5, 1], [1, 0.75, 0.5])
    assert r.matrices["irc_auc"].values[0] == (0.75,)
    assert r.group("b").value == 0.25 and r.group("b").stats["worst_auc"] == -0.25
    assert r.group("a").stats["clean_alpha"] == 0.0 and r.group("a").n == 2
    assert not r.higher_is_better and r.metric == "auc_l1 (self-matching)"
    assert r.tables["cells"][0]["auc"] == 0.25
    assert any("cell a × blur: AUC +0.25" in note for note in r.notes)


def test_auc_normalises_by_the_largest_level() -> None:
    """Levels [0, 0.5] give the same AUC as the same curve over [0, 1]."""
    features = {None: np.eye(4), ("blur", 0.5): four_images()[("blur", 0.5)]}
    r = fair_sa(features, attribute=["a", "a", "b", "b"], perturbations="blur",
                levels=[0.5], threshold=0.5, min_group_size=1)
    assert r.matrices["auc"].values == ((0.25,), (-0.25,))  # mean height of (0, 0.5)


def test_levels_int_gives_even_grid_with_zero() -> None:
    calls = []

    def features(dataset: Any, *, perturbation: Any = None) -> np.ndarray:
        calls.append(perturbation)
        return np.eye(4)

    r = fair_sa(features, "ds", attribute=[0, 0, 1, 1], perturbations=["a", "b"], levels=3,
                threshold=0.5, min_group_size=1)
    assert r.params["levels"] == [0.0, 0.5, 1.0]
    assert calls == [None, ("a", 0.5), ("a", 1.0), ("b", 0.5), ("b", 1.0)]
    assert r.value == 0.0 and r.params["source"] == "features"


# -- constructed models with real perturbations --------------------------------------------------


class Centered(torch.nn.Module):
    """Embedding = the image with its mean removed: fine detail dominates for textures."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f = x.flatten(1)
        return f - f.mean(1, keepdim=True)


class Luma(torch.nn.Module):
    """Embedding = the ITU-R 601 luma image (plus a constant): blind to desaturation."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        luma = 0.299 * x[:, 0] + 0.587 * x[:, 1] + 0.114 * x[:, 2]
        return torch.cat([luma.flatten(1), torch.ones(x.shape[0], 1)], dim=1)


def sharp_and_smooth(n: int = 12, size: int = 48) -> tuple[torch.Tensor, list[str]]:
    g = torch.Generator().manual_seed(0)
    sharp = torch.rand((n, 3, size, size), generator=g)
    ramp = torch.linspace(0, 1, size)
    smooth = 0.2 + 0.3 * (ramp.view(1, 1, 1, size) * torch.rand((n, 3, 1, 1), generator=g)
                          + ramp.view(1, 1, size, 1) * torch.rand((n, 3, 1, 1), generator=g))
    return torch.cat([sharp, smooth]), ["sharp"] * n + ["smooth"] * n


def test_model_degrading_one_subgroup_gives_negative_alpha_and_auc() -> None:
    """Blur destroys textures (sharp) but not gradients (smooth): α_sharp < 0, AUC < 0."""
    images, groups = sharp_and_smooth()
    r = fair_sa(perturbed_features(Centered().eval(), images, batch_size=7), attribute=groups,
                perturbations=["gaussian_blur", "motion_blur"], levels=4, threshold=0.9,
                min_group_size=5)
    for name in ("gaussian_blur", "motion_blur"):
        alpha = r.curves[f"fair_sa/sharp/{name}"].y
        assert alpha[0] == 0.0 and min(alpha) < 0 and max(alpha) <= 0
        assert r.matrices["auc"].values[0][r.matrices["auc"].columns.index(name)] < 0
        assert r.curves[f"irc/smooth/{name}"].y == (1.0,) * 4
    assert r.matrices["auc"].values[1] == tuple(-v for v in r.matrices["auc"].values[0])
    assert r.worst_group is not None and r.stats["l1"] > 0


def test_invariant_model_gives_zeros() -> None:
    """Desaturation keeps luma exactly, so a luma model sees no change: all zeros."""
    images, groups = sharp_and_smooth(n=6, size=16)
    r = fair_sa(perturbed_features(Luma().eval(), images), attribute=groups,
                perturbations=["saturation_low"],
                levels=3, far=0.05, min_group_size=1)
    assert r.matrices["auc"].values == ((0.0,), (0.0,))
    assert r.value == 0.0 and r.stats["irc_auc[saturation_low]"] == 1.0


def test_model_path_equals_precomputed_features() -> None:
    """Streaming batches through the model equals embedding whole perturbed tensors."""
    images, groups = sharp_and_smooth(n=5, size=24)
    model = Centered().eval()
    names, levels = ["speckle_noise", "jpeg"], [0.5, 1.0]
    features: dict[Any, Any] = {None: model(images)}
    for name in names:
        for level in levels:
            features[(name, level)] = model(perturb(images, name, level, seed=4,
                                                    index=range(10)))
    a = fair_sa(perturbed_features(model, images, batch_size=3), attribute=groups,
                perturbations=names, levels=levels, threshold=0.8, seed=4, min_group_size=1)
    b = fair_sa(features, attribute=groups, perturbations=names, levels=levels,
                threshold=0.8, min_group_size=1)
    assert a.matrices == b.matrices and a.curves == b.curves


def test_model_streams_batches_from_an_iterable_dataset() -> None:
    """A re-iterable of (images, labels) batches is read batch by batch, never all at once."""
    images, groups = sharp_and_smooth(n=4, size=16)
    seen: list[int] = []

    def model(x: torch.Tensor) -> tuple[torch.Tensor, None]:
        seen.append(x.shape[0])
        return Centered()(x), None

    batches = [(images[i : i + 3], None) for i in range(0, 8, 3)]
    r = fair_sa(perturbed_features(model, batches), attribute=groups,
                perturbations=["vignette"], levels=[1.0], threshold=0.5, min_group_size=1)
    assert max(seen) == 3 and sum(seen) == 8 * 2  # clean + one level
    assert r.params["source"] == "model"


def test_an_unknown_perturbation_fails_before_any_forward_pass() -> None:
    """A name neither built in nor given to perturbed_features says how to add it, at once."""
    images, groups = sharp_and_smooth(n=4, size=16)
    seen: list[int] = []

    def model(x: torch.Tensor) -> torch.Tensor:
        seen.append(x.shape[0])
        return Centered()(x)

    with pytest.raises(FairnessConfigError, match=r"perturbations=\['mine'\]: not a built-in.*"
                                                  r"perturbed_features\(model, images, "
                                                  r"perturbations=\{'mine': callable\}\)"):
        fair_sa(perturbed_features(model, images), attribute=groups, perturbations=["mine"],
                levels=[1.0], threshold=0.5, min_group_size=1)
    assert seen == []


def test_batch_size_may_be_a_numpy_integer() -> None:
    images, groups = sharp_and_smooth(n=4, size=16)
    features = perturbed_features(Centered().eval(), images, batch_size=np.int64(3))
    assert features().shape[0] == 8


def test_custom_perturbation_callable() -> None:
    images, groups = sharp_and_smooth(n=4, size=16)

    def flip_first_half(x: torch.Tensor, level: float, *, seed: int, index: Any) -> Any:
        out = x.clone()
        rows = [i for i, k in enumerate(index) if k < 4]
        out[rows] = x[rows].flip(-1)
        return out

    features = perturbed_features(Centered().eval(), images,
                                  perturbations={"flip": flip_first_half})
    r = fair_sa(features, attribute=groups, perturbations=["flip"], levels=[1.0],
                threshold=0.5, min_group_size=1)
    # the sharp textures (rows 0-3) are mirrored, so they fail; smooth ones are untouched
    assert r.curves["fair_sa/sharp/flip"].y == (0.0, -1.0)


# -- thresholds and pruning ----------------------------------------------------------------------


def random_features(n: int = 30, d: int = 6, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, d))


@pytest.mark.parametrize("far", [0.01, 0.1, 0.29])
def test_threshold_from_far_matches_brute_force(far: float, monkeypatch: Any) -> None:
    clean = random_features()
    unit = clean / np.linalg.norm(clean, axis=1, keepdims=True)
    sims = unit @ unit.T
    impostor = sims[np.triu_indices(30, 1)]
    expected = oracle_threshold(impostor, far)
    features = {None: clean, ("p", 1.0): clean + 0.3}
    r = fair_sa(features, attribute=[0, 1] * 15, perturbations="p", levels=[1.0], far=far,
                min_group_size=1)
    assert r.stats["threshold"] == expected
    module = sys.modules["pytest_fairness.indicators._pairs"]
    monkeypatch.setattr(module, "_BLOCK", 4)  # the blockwise path
    again = fair_sa(features, attribute=[0, 1] * 15, perturbations="p", levels=[1.0], far=far,
                    min_group_size=1)
    assert again.stats["threshold"] == expected


def test_threshold_with_identities_uses_different_identity_pairs_only() -> None:
    clean = random_features(12)
    ids = np.repeat(np.arange(6), 2)
    unit = clean / np.linalg.norm(clean, axis=1, keepdims=True)
    sims = unit @ unit.T
    iu = np.triu_indices(12, 1)
    impostor = sims[iu][ids[iu[0]] != ids[iu[1]]]
    r = fair_sa({None: clean, ("p", 1.0): clean}, attribute=[0, 1] * 6, perturbations="p",
                levels=[1.0], far=0.1, identities=ids, min_group_size=1)
    assert r.stats["threshold"] == oracle_threshold(impostor, 0.1)


def test_self_matching_pruning_drops_false_matches() -> None:
    clean = np.eye(5)
    clean[4] = clean[3]  # images 3 and 4 are identical: each falsely matches the other
    features = {None: clean, ("p", 1.0): clean}
    r = fair_sa(features, attribute=["a", "a", "b", "b", "b"], perturbations="p",
                levels=[1.0], threshold=0.5, prune=True, min_group_size=1)
    assert r.group("b").n == 1 and r.group("a").n == 2
    assert any("pruning dropped 2 of 5 images" in note for note in r.notes)


def verification_data() -> tuple[dict[Any, np.ndarray], list[int], list[str]]:
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(8, 16))
    ids = [i // 3 for i in range(24)]
    clean = centres[ids] + 0.3 * rng.normal(size=(24, 16))
    groups = ["p" if i < 4 else "q" for i in ids]
    noisy = clean.copy()
    noisy[:12] += 1.5 * rng.normal(size=(12, 16))  # the p identities degrade
    mild = clean.copy()
    mild[:12] += 0.7 * rng.normal(size=(12, 16))
    return {None: clean, ("noise", 0.5): mild, ("noise", 1.0): noisy}, ids, groups


def test_verification_matches_brute_force_gar() -> None:
    features, ids, groups = verification_data()
    r = fair_sa(features, attribute=groups, perturbations="noise", levels=[0.5, 1.0],
                task="verification", identities=ids, far=0.1, min_group_size=1)
    p = [i for i in range(24) if groups[i] == "p"]
    q = [i for i in range(24) if groups[i] == "q"]
    for k, key in enumerate([None, ("noise", 0.5), ("noise", 1.0)]):
        emb = features[key]
        expected = (oracle_gar(emb, features[None], ids, p, 0.1)
                    - oracle_gar(emb, features[None], ids, q, 0.1))
        assert math.isclose(r.curves["fair_sa/p/noise"].y[k], expected, abs_tol=1e-12)
        overall = oracle_gar(emb, features[None], ids, list(range(24)), 0.1)
        assert math.isclose(r.curves["irc/noise"].y[k], overall, abs_tol=1e-12)
    assert r.matrices["auc"].values[0][0] < 0
    assert r.metric == "auc_l1 (verification)" and "threshold" not in r.stats


def test_verification_pruning_makes_clean_gar_one() -> None:
    features, ids, groups = verification_data()
    r = fair_sa(features, attribute=groups, perturbations="noise", levels=[1.0],
                task="verification", identities=ids, far=0.1, prune=True, min_group_size=1)
    assert r.curves["irc/noise"].y[0] == 1.0 and r.curves["irc/p/noise"].y[0] == 1.0
    assert r.curves["fair_sa/p/noise"].y[0] == 0.0
    assert any("pruning dropped" in note for note in r.notes)


# -- subgroups, exclusion, lookups ----------------------------------------------------------------


def test_small_subgroup_is_reported_but_excluded_from_matrix() -> None:
    clean = random_features(12)
    features = {None: clean, ("p", 1.0): clean + np.arange(12)[:, None] * 0.2}
    groups = ["big"] * 9 + ["small"] * 3
    r = fair_sa(features, attribute=groups, perturbations="p", levels=[1.0], threshold=0.9,
                min_group_size=4)
    assert r.group("small").excluded and r.group("big").excluded  # big's rest has 3 images
    assert r.matrices["auc"].rows == () and math.isnan(r.value)
    assert r.matrices["auc_all"].rows == ("big", "small")
    r2 = fair_sa(features, attribute=groups, perturbations="p", levels=[1.0], threshold=0.9,
                 min_group_size=4, protected="small")
    assert [g.group for g in r2.groups] == ["small"]


def test_several_attribute_columns_and_protected_value() -> None:
    clean = np.eye(4)
    features = {None: clean, ("blur", 0.5): four_images()[("blur", 0.5)]}
    attrs = {"young": [1, 1, 0, 0], "male": [0, 1, 0, 1]}
    r = fair_sa(features, attribute=attrs, protected=1, perturbations="blur", levels=[0.5],
                threshold=0.5, min_group_size=1)
    assert r.matrices["auc"].rows == ("young=1", "male=1")
    assert r.matrices["auc"].values == ((0.25,), (-0.25,))


def test_attribute_and_identities_by_column_name() -> None:
    import pandas as pd

    frame = pd.DataFrame({"g": ["a", "a", "b", "b"], "id": [0, 1, 2, 3]})

    class Dataset:
        attributes = frame

    r1 = fair_sa(four_images(), Dataset(), attribute="g", perturbations="blur",
                 levels=[0.5, 1.0], threshold=0.5, identities="id", min_group_size=1)
    r2 = fair_sa(four_images(), frame, attribute="g", perturbations="blur",
                 levels=[0.5, 1.0], threshold=0.5, min_group_size=1)
    assert r1.matrices == r2.matrices
    assert r1.params["attribute"] == "g" and r1.params["identities"] == "id"


# -- gating and serialisation ----------------------------------------------------------------------


def test_markers_gate_cells_and_matrix_and_list_worst_cells() -> None:
    """By the point rule: four images leave every interval straddling these limits."""
    r = fair_sa(four_images(), attribute=["a", "a", "b", "b"], perturbations="blur",
                levels=[0.5, 1.0], threshold=0.5, min_group_size=1, n_bootstrap=0)
    fairness.check(r, max_auc=0.25, max_l1=0.5, confidence="point")
    with pytest.raises(FairnessViolation, match=r"cell a × blur") as info:
        fairness.check(r, max_auc=0.2, confidence="point")
    assert "α(δ) = 0: +0, 0.5: +0.5, 1: +0" in str(info.value)
    with pytest.raises(FairnessViolation, match=r"l1 0\.5"):
        fairness.check(r, max_l1=0.4, confidence="point")


def test_json_round_trip() -> None:
    features, ids, groups = verification_data()
    r = fair_sa(features, attribute=groups, perturbations="noise", levels=[0.5, 1.0],
                task="verification", identities=ids, far=0.1, min_group_size=1)
    assert IndicatorResult.from_dict(r.to_dict()) == r


# -- validation --------------------------------------------------------------------------------


def base_kwargs(**changes: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"attribute": ["a", "a", "b", "b"], "perturbations": "blur",
                              "levels": [0.5, 1.0], "threshold": 0.5, "min_group_size": 1}
    kwargs.update(changes)
    return kwargs


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"task": "identify"}, r"task='identify'"),
        ({"levels": 1}, r"levels=1"),
        ({"levels": [0.5, 1.5]}, r"levels=\[0\.5, 1\.5\]"),
        ({"levels": "abc"}, r"levels='abc'"),
        ({"levels": []}, r"levels=\[\]"),
        ({"levels": [1.0, 0.5]}, r"strictly increasing"),
        ({"levels": [0.0]}, r"include a level above 0"),
        ({"far": 0}, r"far=0"),
        ({"far": 1.0}, r"far=1\.0"),
        ({"far": True}, r"far=True"),
        ({"threshold": 1.5}, r"threshold=1\.5"),
        ({"threshold": "x"}, r"threshold='x'"),
        ({"prune": "yes"}, r"prune='yes'"),
        ({"seed": -1}, r"seed=-1"),
        ({"min_group_size": 0}, r"min_group_size=0"),
        ({"perturbations": []}, r"non-empty list of distinct names"),
        ({"perturbations": ["blur", "blur"]}, r"distinct names"),
        ({"perturbations": {"x": 3}}, r"perturbations takes names.*perturbed_features"),
        ({"perturbations": "jpeg"}, r"no entry for \('jpeg', 0\.5\)"),
        ({"protected": "z"}, r"protected='z'.*do not occur"),
        ({"attribute": "g"}, r"attribute='g' names a column"),
        ({"attribute": {}}, r"attribute has no columns"),
        ({"task": "verification", "identities": [0, 0, 1, 1]}, r"threshold= applies to"),
        ({"task": "verification", "threshold": None}, r"needs identities="),
    ],
)
def test_bad_arguments_raise_config_error(changes: dict[str, Any], fragment: str) -> None:
    with pytest.raises(FairnessConfigError, match=fragment):
        fair_sa(four_images(), **base_kwargs(**changes))


def test_bad_sources_raise() -> None:
    with pytest.raises(FairnessConfigError, match=r"got int"):
        fair_sa(3, **base_kwargs())
    with pytest.raises(FairnessConfigError, match=r"got Centered.*perturbed_features"):
        fair_sa(Centered().eval(), **base_kwargs())  # a model is not features
    with pytest.raises(FairnessConfigError, match=r"no clean embeddings"):
        fair_sa({("blur", 0.5): np.eye(4)}, **base_kwargs())
    with pytest.raises(FairnessConfigError, match=r"training mode"):
        perturbed_features(Centered(), torch.zeros(4, 3, 4, 4))
    with pytest.raises(FairnessConfigError, match=r"'blur'"):  # not a built-in perturbation
        fair_sa(perturbed_features(Centered().eval(), torch.rand(4, 3, 4, 4)), **base_kwargs())
    with pytest.raises(FairnessConfigError, match=r"got str"):
        perturbed_features(Centered().eval(), "images")
    with pytest.raises(FairnessConfigError, match=r"batch_size=0"):
        perturbed_features(Centered().eval(), torch.zeros(4, 3, 4, 4), batch_size=0)
    with pytest.raises(FairnessConfigError, match=r"map names \(str\) to callables"):
        perturbed_features(Centered().eval(), torch.zeros(4, 3, 4, 4), perturbations={"x": 3})
    with pytest.raises(InvalidDataError, match=r"shape \(4, 3, 4\)"):
        perturbed_features(Centered().eval(), torch.zeros(4, 3, 4))
    jpeg = base_kwargs(perturbations="jpeg")
    with pytest.raises(InvalidDataError, match=r"got str"):
        fair_sa(perturbed_features(Centered().eval(), ["x"]), **jpeg)
    with pytest.raises(InsufficientDataError, match=r"no images"):
        fair_sa(perturbed_features(Centered().eval(), []), **jpeg)


@pytest.mark.parametrize(
    ("clean", "fragment"),
    [
        (np.zeros(4), r"2-D array.*shape \(4,\)"),
        (np.array([[1.0, np.nan]] * 4), r"NaN or infinite values in row 0"),
        (np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0], [0.0, 1.0]]), r"zero vector in row 1"),
    ],
)
def test_bad_embeddings_raise_invalid_data(clean: np.ndarray, fragment: str) -> None:
    with pytest.raises(InvalidDataError, match=fragment):
        fair_sa({None: clean, ("blur", 0.5): clean, ("blur", 1.0): clean}, **base_kwargs())


def test_insufficient_data() -> None:
    with pytest.raises(InsufficientDataError, match=r"single value 'a'"):
        fair_sa(four_images(), **base_kwargs(attribute=["a"] * 4))
    with pytest.raises(InvalidDataError, match=r"lengths differ"):
        fair_sa(four_images(), **base_kwargs(attribute=["a", "b"]))
    with pytest.raises(InsufficientDataError, match=r"no impostor pairs"):
        fair_sa(four_images(), **base_kwargs(threshold=None, identities=[1, 1, 1, 1]))
    with pytest.raises(InsufficientDataError, match=r"genuine \(same identity\) pairs"):
        fair_sa(four_images(), **base_kwargs(threshold=None, task="verification",
                                             identities=[0, 1, 2, 3]))
    clean = np.ones((4, 2))
    with pytest.raises(InsufficientDataError, match=r"protected subgroup has no images after"):
        fair_sa({None: clean, ("blur", 0.5): clean, ("blur", 1.0): clean},
                **base_kwargs(prune=True))


# -- outputs pinned before intervals were added (n_bootstrap=0 must not move them) ----------


def pinned_cases() -> dict[str, IndicatorResult]:
    features, ids, groups = verification_data()
    verification = {"attribute": groups, "perturbations": "noise", "levels": [0.5, 1.0],
                    "task": "verification", "identities": ids, "far": 0.1, "min_group_size": 1}
    clean = random_features(40, 6, 5)
    rng = np.random.default_rng(9)
    noisy: dict[Any, np.ndarray] = {None: clean}
    for name in ("p", "q"):
        for level in (0.25, 0.5, 1.0):
            noisy[(name, level)] = clean + level * rng.normal(size=clean.shape) * rng.uniform(
                0, 2, (40, 1))
    derived = {"attribute": np.array(["x", "y", "z", "x"] * 10), "perturbations": ["p", "q"],
               "levels": [0.25, 0.5, 1.0], "identities": np.repeat(np.arange(20), 2)}
    # nine subgroups and twelve levels: sums long enough for numpy's pairwise summation
    wide: dict[Any, np.ndarray] = {None: random_features(90, 8, 12)}
    rng = np.random.default_rng(11)
    for name in ("p", "q"):
        for level in np.linspace(0, 1, 12)[1:].tolist():
            wide[(name, level)] = wide[None] + level * rng.normal(size=(90, 8)) * rng.uniform(
                0, 1.5, (90, 1))
    ids = np.repeat(np.arange(30), 3)
    many = {"attribute": ids % 9, "perturbations": ["p", "q"], "levels": 12,
            "min_group_size": 1}
    none = {"n_bootstrap": 0}  # the pins were recorded without intervals
    return {
        "wide": fair_sa(wide, far=0.05, **many, **none),
        "wide_verification": fair_sa(wide, far=0.1, task="verification", identities=ids, **many,
                                     **none),
        "four": fair_sa(four_images(), **base_kwargs(), **none),
        "verification": fair_sa(features, **verification, **none),
        "verification_pruned": fair_sa(features, prune=True, **verification, **none),
        "far": fair_sa(noisy, far=0.05, min_group_size=5, **derived, **none),
        "far_pruned": fair_sa(noisy, far=0.005, prune=True, min_group_size=8, **derived,
                             **none),
    }


#: Every number of seven cases (params aside), recorded before bootstrap intervals existed.
PINNED = json.loads((Path(__file__).parent / "golden" / "fair_sa_pins.json").read_text())


def test_outputs_pinned_within_tolerance() -> None:
    """Floats within rel 1e-9 (their last bits differ between CPUs), the rest exactly."""
    results = pinned_cases()
    assert sorted(results) == sorted(PINNED)
    for name, result in results.items():
        got = json.loads(json.dumps(pin_cases._numbers(result)))
        assert differences(got, PINNED[name]) == [], name


# -- bootstrap intervals -------------------------------------------------------------------------


def inside(interval: tuple[float, float] | None, value: float) -> bool:
    return interval is not None and interval[0] <= value <= interval[1]


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("task", ["self_matching", "verification"])
def test_intervals_contain_the_estimate_and_leave_it_unchanged(task: str, method: str) -> None:
    features, ids, groups = verification_data()
    kwargs: dict[str, Any] = {"attribute": groups, "perturbations": "noise", "levels": [0.5, 1.0],
                              "far": 0.1, "identities": ids, "task": task, "min_group_size": 1}
    plain = fair_sa(features, n_bootstrap=0, **kwargs)
    r = fair_sa(features, n_bootstrap=200, interval_method=method, seed=5, **kwargs)
    assert (r.value, r.stats, r.curves, r.groups[0].value) == (
        plain.value, plain.stats, plain.curves, plain.groups[0].value)
    assert r.matrices["auc"].values == plain.matrices["auc"].values
    assert plain.intervals == {} and plain.matrices["auc"].intervals is None
    assert r.intervals["value"] == r.intervals["l1"]
    for name in ("l1", "max_abs_auc", "l1_row[p]", "l1_row[q]", "l1_col[noise]"):
        assert inside(r.intervals[name], r.stats[name]), name
    m = r.matrices["auc"]
    assert m.intervals is not None
    for row_values, row_intervals in zip(m.values, m.intervals):
        assert all(inside(i, v) for i, v in zip(row_intervals, row_values))
    assert all(inside(g.interval, g.value) for g in r.groups)
    assert r.params["n_bootstrap"] == 200 and r.params["seed"] == 5
    assert r.params["confidence_level"] == 0.95 and r.params["interval_method"] == method
    assert plain.params["n_bootstrap"] == 0 and "confidence_level" not in plain.params


def test_intervals_reproducible_for_a_seed_and_round_trip() -> None:
    kwargs = base_kwargs(n_bootstrap=300, confidence_level=0.9)
    a, b = fair_sa(four_images(), **kwargs), fair_sa(four_images(), **kwargs)
    assert a.intervals == b.intervals and a.matrices == b.matrices
    features, _, groups = verification_data()
    kwargs = base_kwargs(attribute=groups, perturbations="noise", threshold=None, far=0.1,
                         n_bootstrap=300)
    other, again = fair_sa(features, seed=1, **kwargs), fair_sa(features, seed=2, **kwargs)
    assert other.value == again.value and other.intervals != again.intervals
    assert IndicatorResult.from_dict(a.to_dict()) == a
    assert IndicatorResult.from_dict(other.to_dict()) == other


def test_replicates_without_a_subgroup_are_left_out_and_said() -> None:
    """Four images, two per subgroup: about 6 % of replicates draw no image of one side."""
    r = fair_sa(four_images(), **base_kwargs(n_bootstrap=400))
    note = [n for n in r.notes if "bootstrap replicates left out" in n]
    assert note and " of 400 " in note[0]
    assert inside(r.intervals["l1"], r.value)


def test_identities_are_resampled_whole() -> None:
    """With identities, replicates draw identities: two images of one person move together."""
    features, ids, groups = verification_data()
    kwargs = {"attribute": groups, "perturbations": "noise", "levels": [0.5, 1.0],
              "far": 0.1, "min_group_size": 1, "n_bootstrap": 200, "seed": 0}
    by_image = fair_sa(features, **kwargs)
    by_identity = fair_sa(features, identities=ids, **kwargs)
    assert by_image.intervals != by_identity.intervals


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"n_bootstrap": 50}, r"n_bootstrap=50 is too few"),
        ({"n_bootstrap": -1}, r"n_bootstrap=-1"),
        ({"n_bootstrap": 1.5}, r"n_bootstrap=1\.5"),
        ({"n_bootstrap": 200, "confidence_level": 1.2}, r"confidence_level=1\.2"),
        ({"n_bootstrap": 200, "interval_method": "normal"}, r"interval_method='normal'"),
    ],
)
def test_bad_interval_keywords_raise_config_error(changes: dict[str, Any], fragment: str) -> None:
    with pytest.raises(FairnessConfigError, match=fragment):
        fair_sa(four_images(), **base_kwargs(**changes))


def test_weighted_gar_equals_gar_of_the_resampled_dataset() -> None:
    """A replicate's GAR is the GAR of the data set it stands for: each drawn identity's
    images copied as often as it was drawn; pairs between two copies of one identity are
    neither genuine nor impostor (the self pair of an image with its copy)."""
    from pytest_fairness.indicators._pairs import Verification as _Verification
    from pytest_fairness.stats import Units

    features, ids, _ = verification_data()
    clean, emb = features[None], features[("noise", 1.0)]
    unit = clean / np.linalg.norm(clean, axis=1, keepdims=True)
    probe = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    scores = probe @ unit.T
    subset = np.arange(24)
    part = _Verification(subset, np.asarray(ids, dtype=object), 0.1, "all")
    part.weigh(Units.of(24, clusters=ids), spare=True)
    rng = np.random.default_rng(7)
    weights = rng.multinomial(8, np.full(8, 1 / 8), size=30).astype(np.float64)
    got = part.weighted_gar([part.pairs(scores)], weights)[:, 0]
    for w, value in zip(weights, got):
        copies = [(i, c) for i in subset for c in range(int(w[ids[i]]))]
        genuine, impostor = [], []
        for i, c in copies:
            for j, d in copies:
                if ids[i] != ids[j]:
                    impostor.append(scores[i, j])
                elif c == d and i != j:
                    genuine.append(scores[i, j])
        t = oracle_threshold(np.array(impostor), 0.1)
        assert value == float(np.mean(np.array(genuine) >= t))
    assert part.weighted_gar([part.pairs(scores)], np.ones((1, 8)))[0, 0] == part.gar(scores)


# -- perturbed features of another shape ---------------------------------------------------------


@pytest.mark.parametrize("shape", [(3, 4), (4, 5)], ids=["fewer-rows", "other-dimension"])
def test_perturbed_features_of_another_shape_name_the_entry(shape: tuple[int, int]) -> None:
    features = four_images()
    features[("blur", 1.0)] = np.ones(shape)
    with pytest.raises(InvalidDataError,
                       match=rf"\('blur', 1\) have shape \({shape[0]}, {shape[1]}\) but the "
                             r"clean ones have shape \(4, 4\).*one row per clean image"):
        fair_sa(features, **base_kwargs())

    def callable_features(dataset: Any, *, perturbation: Any = None) -> np.ndarray:
        return np.eye(4) if perturbation is None else np.ones(shape)

    with pytest.raises(InvalidDataError, match=r"\('blur', 0\.5\) have shape"):
        fair_sa(callable_features, "ds", **base_kwargs())


def test_supported_confidence_gates_the_l1_norm_and_the_worst_row_by_their_intervals() -> None:
    features, _, groups = verification_data()
    r = fair_sa(features, **base_kwargs(attribute=groups, perturbations="noise", threshold=None,
                                         far=0.1, n_bootstrap=300, seed=3))
    low, high = r.intervals["l1"]
    assert low < r.value < high
    fairness.check(r, max_l1=(low + r.value) / 2, confidence="supported")  # low end within
    with pytest.raises(FairnessViolation):  # the point rule, on the estimate alone
        fairness.check(r, max_l1=(low + r.value) / 2, confidence="point")
    with pytest.raises(FairnessViolation):
        fairness.check(r, max_l1=(r.value + high) / 2, confidence="strict")
    worst = max(g.interval[0] for g in r.groups if g.interval is not None)
    fairness.check(r, max_value=worst, confidence="supported")


# -- the review's findings (rows for a binary attribute) ------------------------------------------


def test_binary_attribute_default_rows_count_each_cell_twice_in_l1() -> None:
    """Documented behaviour: by default both values of a 0/1 attribute are rows.

    Their α curves are exact negatives (P vs R and R vs P), so the matrix L1 norm is twice
    the seed's, whose CelebA rows are one protected value per binary attribute; the
    ``protected=`` docstring says so and ``protected=1`` gives the seed's single row.
    """
    rng = np.random.default_rng(0)
    clean = rng.normal(size=(8, 4))
    noise = rng.normal(size=(8, 4)) * np.r_[[0.1] * 4, [2.0] * 4][:, None]
    features = {None: clean, ("blur", 1.0): clean + noise}
    kw = dict(attribute=[0] * 4 + [1] * 4, perturbations=["blur"], levels=[1.0],
              threshold=0.9, min_group_size=1)
    both = fair_sa(features, **kw)
    one = fair_sa(features, protected=1, **kw)
    (auc0,), (auc1,) = both.matrices["auc"].values
    assert auc0 == -auc1 != 0
    assert one.matrices["auc"].values == ((auc1,),)
    assert both.stats["l1"] == pytest.approx(2 * one.stats["l1"])
