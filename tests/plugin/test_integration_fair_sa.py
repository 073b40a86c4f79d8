"""Fair SA end to end: dataset fixture, ``fairness_features`` and its cache, threshold markers.

The data is built so the answer is known by hand. Sixteen 32-pixel PNGs are listed in a
manifest: eight *smooth* images (a linear gradient) and eight *textured* ones (uniform
noise). The model embeds an image as its pixels minus their per-channel mean, so its
self-match cosine under a perturbation is what the perturbation does to the image's detail:

* Gaussian blur at level 1 (σ = 4 · 32/224 ≈ 0.57 px) leaves a gradient as it is (cos > 0.999)
  but cuts the noise (cos ≈ 0.92 < t = 0.95); at level 0.5 (σ ≈ 0.29 px) both still match;
* low exposure multiplies every pixel by a constant, which the cosine ignores.

With levels (0, 0.5, 1) the textured subgroup's α(δ) is (0, 0, −1), so its blur AUC is the
trapezoid −(0 + 1)/2 · 0.5 = −0.25; the smooth subgroup's is +0.25; exposure gives 0; the
matrix L1 norm is 0.5. The scenarios check these numbers through pytest (with and without
``-n 2``), the cache across runs, and the same sweep through ``perturbed_features`` (a
model over image tensors).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

# Import the heavy modules once, before pytester: an in-process run restores sys.modules
# afterwards, and numpy/torch cannot be imported a second time in one process.
pytest.importorskip("torch")
pytest.importorskip("torchvision")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from PIL import Image  # noqa: E402

import pytest_fairness.features  # noqa: E402, F401
from pytest_fairness.data import FairnessDataset, load_manifest  # noqa: E402
from pytest_fairness.errors import FairnessConfigError  # noqa: E402
from pytest_fairness.features import (  # noqa: E402
    DefaultTransform,
    extract_features,
    perturbed_features,
)
from pytest_fairness.indicators.sensitivity import fair_sa  # noqa: E402
from pytest_fairness.results import IndicatorResult  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
N_IMAGES = 16
SIZE = 32
THRESHOLD = 0.95
LEVELS = [0.5, 1.0]
PERTURBATIONS = ["gaussian_blur", "exposure_low"]
#: Hand-computed (module docstring): rows smooth, textured; columns blur, exposure.
EXPECTED_AUC = ((0.25, 0.0), (-0.25, 0.0))
EXPECTED_L1 = 0.5
#: One extraction per (perturbation, level) plus the clean one, one batch each.
EXTRACTIONS = 1 + len(PERTURBATIONS) * len(LEVELS)


def write_texture_dataset(folder: Path, *, seed: int = 0) -> Path:
    """Write 16 PNGs (even rows smooth, odd rows textured) and their manifest; return it."""
    rng = np.random.default_rng(seed)
    (folder / "images").mkdir(parents=True, exist_ok=True)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] / (SIZE - 1)
    rows = []
    for i in range(N_IMAGES):
        texture = "textured" if i % 2 else "smooth"
        if texture == "textured":
            pixels = rng.uniform(0.2, 0.8, (SIZE, SIZE, 3))
        else:
            angle = rng.uniform(0, 2 * np.pi)
            ramp = np.cos(angle) * xx + np.sin(angle) * yy - 0.5
            tint = rng.uniform(-0.1, 0.1, 3)
            pixels = 0.5 + 0.3 * ramp[..., None] + tint
        image = Image.fromarray((np.clip(pixels, 0, 1) * 255).round().astype(np.uint8))
        image.save(folder / "images" / f"{i:02d}.png")
        rows.append((f"img{i:02d}", f"images/{i:02d}.png", texture))
    manifest = folder / "manifest.csv"
    pd.DataFrame(rows, columns=["image_id", "path", "texture"]).to_csv(manifest, index=False)
    return manifest


class CenteredPixels(torch.nn.Module):
    """Embed an image as its pixels minus their per-channel mean (sensitive to lost detail)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - x.mean(dim=(2, 3), keepdim=True)).flatten(1)


CONFTEST = """
import functools
import os

import pytest
import torch

from pytest_fairness.features import DefaultTransform


class CenteredPixels(torch.nn.Module):
    def forward(self, x):
        with open(os.environ["FORWARD_LOG"], "a") as log:
            log.write(f"{os.getpid()} {x.shape[0]}\\n")
        return (x - x.mean(dim=(2, 3), keepdim=True)).flatten(1)


@pytest.fixture(scope="session")
def fairness_model():
    return CenteredPixels()


@pytest.fixture
def features(fairness_features):
    # The sweep calls features(dataset, perturbation=...): fix the rest with a partial.
    return functools.partial(fairness_features, transform=DefaultTransform(32),
                             normalize=None, batch_size=16)
"""

SWEEP = """
from pytest_fairness import fairness, indicators


def sweep(features, dataset):
    return indicators.fair_sa(
        features, dataset, attribute=dataset.frame["texture"].to_numpy(),
        perturbations=["gaussian_blur", "exposure_low"], levels=[0.5, 1.0],
        threshold=0.95, min_group_size=4, n_bootstrap=0,
    )
"""

#: The hand-computed numbers against their limits, by the point rule.
GATED_TESTS = SWEEP + """

@fairness.threshold(max_auc=0.3, max_l1=0.6, confidence="point")
def test_within_limits(features, fairness_manifest):
    return sweep(features, fairness_manifest)


@fairness.threshold(max_auc=0.2, confidence="point")
def test_auc_beyond_limit(features, fairness_manifest):
    return sweep(features, fairness_manifest)


@fairness.threshold(max_l1=0.4, confidence="point")
def test_l1_beyond_limit(features, fairness_manifest):
    return sweep(features, fairness_manifest)
"""

SIGN_TEST = SWEEP + """

def test_blur_hurts_the_textured_subgroup(features, fairness_manifest):
    result = sweep(features, fairness_manifest)
    auc = result.matrices["auc"]
    cell = dict(zip(auc.rows, auc.values))
    blur, exposure = auc.columns.index("gaussian_blur"), auc.columns.index("exposure_low")
    assert cell["textured"][blur] < 0 < cell["smooth"][blur]
    assert cell["textured"][exposure] == cell["smooth"][exposure] == 0
    assert result.curves["fair_sa/textured/gaussian_blur"].y == (0.0, 0.0, -1.0)
    assert result.curves["irc/textured/gaussian_blur"].y == (1.0, 1.0, 0.0)
    assert result.params["source"] == "features"
"""

MODES = {"no_xdist": ["-p", "no:xdist"], "xdist_two": ["-n", "2"]}


def forward_calls(log: Path) -> list[str]:
    """Lines the model appended: one per forward pass (``pid batch``)."""
    return log.read_text().splitlines() if log.exists() else []


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user project: the counting model in conftest and the manifest under ``data/``."""
    log = pytester.path / "forward.log"
    monkeypatch.setenv("FORWARD_LOG", str(log))
    pytester.makeconftest(CONFTEST)
    write_texture_dataset(pytester.path / "data")
    return log


def run(pytester: pytest.Pytester, mode: str, *args: str) -> pytest.RunResult:
    """Run the fairness suite on the manifest, in one of :data:`MODES`."""
    return pytester.runpytest("--fairness", "-p", "no:cacheprovider",
                              f"--fairness-data=manifest={pytester.path / 'data'}",
                              *MODES[mode], *args)


# -- through pytest ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", list(MODES))
def test_markers_pass_and_fail_as_the_numbers_say(pytester: pytest.Pytester, project: Path,
                                                  mode: str) -> None:
    pytester.makepyfile(test_sweep=GATED_TESTS)
    result = run(pytester, mode)
    result.assert_outcomes(passed=1, failed=2)
    # The failure names the worst cell and lists its curve points.
    # (separate calls: under xdist the failures arrive in either order)
    result.stdout.fnmatch_lines(
        ["*FAIL fair_sa: max_auc observed 0.25 (cell textured × gaussian_blur), needs <= 0.2*"])
    result.stdout.fnmatch_lines(["*FAIL max_l1=0.4: l1 0.5, needs <= 0.4*"])
    result.stdout.fnmatch_lines(["*cell textured × gaussian_blur: AUC -0.25; "
                                 "α(δ) = 0: +0, 0.5: +0, 1: -1*"])
    # Three tests, one sweep of five extractions: the memo (per process) and the locked
    # disk cache (across xdist workers) make every (perturbation, level) run once.
    assert len(forward_calls(project)) == EXTRACTIONS


@pytest.mark.parametrize("rerun", [
    "no_xdist",
    # Two fresh workers importing torch: about 15 s on a loaded 2-core machine.
    pytest.param("xdist_two", marks=pytest.mark.slow),
])
def test_second_run_reads_the_cache_without_a_forward_pass(
        pytester: pytest.Pytester, project: Path, rerun: str) -> None:
    pytester.makepyfile(test_sweep=GATED_TESTS)
    run(pytester, "no_xdist").assert_outcomes(passed=1, failed=2)
    first = forward_calls(project)
    assert len(first) == EXTRACTIONS
    assert all(line.endswith(f" {N_IMAGES}") for line in first)  # one batch of 16 each
    entries = list((pytester.path / ".fairness" / "cache").rglob("*.sha256"))
    assert len(entries) == EXTRACTIONS
    result = run(pytester, rerun)
    result.assert_outcomes(passed=1, failed=2)  # same verdicts from the cached features
    result.stdout.fnmatch_lines(["*max_auc observed 0.25 (cell textured × gaussian_blur)*"])
    assert forward_calls(project) == first  # no forward pass on the re-run


def test_no_cache_option_recomputes_every_level(pytester: pytest.Pytester,
                                                project: Path) -> None:
    pytester.makepyfile(test_sweep=GATED_TESTS)
    run(pytester, "no_xdist", "--fairness-no-cache").assert_outcomes(passed=1, failed=2)
    assert len(forward_calls(project)) == 3 * EXTRACTIONS  # no disk cache, no memo
    assert not (pytester.path / ".fairness" / "cache").exists()


def test_subgroup_that_degrades_gets_the_negative_auc(pytester: pytest.Pytester,
                                                      project: Path) -> None:
    pytester.makepyfile(test_sign=SIGN_TEST)
    run(pytester, "no_xdist").assert_outcomes(passed=1)


def test_column_name_attribute_on_a_dataset_fixture(pytester: pytest.Pytester,
                                                    project: Path) -> None:
    """``attribute="texture"`` on the dataset fixture names a column of its frame."""
    pytester.makepyfile(test_named="""
        from pytest_fairness import fairness, indicators

        @fairness.threshold(max_auc=0.3)
        def test_named(features, fairness_manifest):
            return indicators.fair_sa(
                features, fairness_manifest, attribute="texture",
                perturbations=["gaussian_blur"], levels=[0.5, 1.0], threshold=0.95,
                min_group_size=4)
    """)
    result = run(pytester, "no_xdist")
    result.assert_outcomes(passed=1)



def test_fixture_replica_through_the_real_loader(pytester: pytest.Pytester,
                                                 project: Path) -> None:
    """UTKFace's replica via ``--fairness-data utkface=``: gender from its file names."""
    pytester.makepyfile(test_utk="""
        import numpy as np
        from pytest_fairness import fairness, indicators

        @fairness.threshold(max_l1=2.0)
        def test_utkface(features, utkface):
            gender = utkface.frame["gender"].to_numpy()
            result = indicators.fair_sa(
                features, utkface, attribute=gender, perturbations=["gaussian_blur"],
                levels=[1.0], far=0.1, min_group_size=1)
            assert result.params["n"] == len(utkface) == 24
            assert set(result.matrices["auc"].rows) == set(np.unique(gender))
            # α at the clean point is 0: every image matches itself exactly.
            assert all(c["clean_alpha"] == 0 for c in result.tables["cells"])
            return result
    """)
    result = pytester.runpytest("--fairness", "-p", "no:xdist",
                                f"--fairness-data=utkface={FIXTURES / 'utkface'}")
    result.assert_outcomes(passed=1)
    batches = [int(line.split()[1]) for line in forward_calls(project)]
    assert sum(batches) == 2 * 24  # clean + blur at level 1, in batches of 16


# -- the same sweep without pytest: sources agree, properties hold -----------------------------


@pytest.fixture(scope="module")
def textures(tmp_path_factory: pytest.TempPathFactory) -> FairnessDataset:
    """The 16-image manifest, loaded."""
    return load_manifest(write_texture_dataset(tmp_path_factory.mktemp("textures")))


def features_of(dataset: FairnessDataset) -> Any:
    """A features callable like the fixture's, with no cache."""
    return functools.partial(extract_features, CenteredPixels(), transform=DefaultTransform(SIZE),
                             normalize=None, batch_size=8)


def images_of(dataset: FairnessDataset) -> torch.Tensor:
    """The dataset's images as one tensor (N, 3, 32, 32) in [0, 1]."""
    transform = DefaultTransform(SIZE)
    return torch.stack([transform(dataset.load_image(i)) for i in range(len(dataset))])


def sweep(source: Any, dataset: Any, labels: Any, **kwargs: Any) -> IndicatorResult:
    """The module's sweep on any source."""
    options: dict[str, Any] = {"perturbations": PERTURBATIONS, "levels": LEVELS,
                               "threshold": THRESHOLD, "min_group_size": 4, **kwargs}
    return fair_sa(source, dataset, attribute=labels, **options)


def test_hand_computed_matrix_through_extract_features(textures: FairnessDataset) -> None:
    labels = textures.frame["texture"].to_numpy()
    result = sweep(features_of(textures), textures, labels)
    auc = result.matrices["auc"]
    assert auc.rows == ("smooth", "textured")
    assert auc.columns == tuple(PERTURBATIONS)
    assert auc.values == EXPECTED_AUC
    assert result.stats["l1"] == result.value == EXPECTED_L1
    assert result.stats["l1_row[textured]"] == 0.25
    assert result.stats["l1_col[gaussian_blur]"] == 0.5
    assert result.stats["l1_col[exposure_low]"] == 0.0
    assert result.stats["irc_auc[gaussian_blur]"] == 0.875  # (1 + 1)/4 + (1 + 0.5)/4


@pytest.mark.parametrize("perturbations", [
    ["gaussian_blur", "exposure_low"],
    ["speckle_noise", "jpeg", "rotation"],
])
def test_features_source_equals_model_source(textures: FairnessDataset,
                                             perturbations: list[str]) -> None:
    """``fairness_features``-style extraction and the model source see the same probes."""
    labels = textures.frame["texture"].to_numpy()
    via_features = sweep(features_of(textures), textures, labels, perturbations=perturbations,
                         threshold=None, far=0.25)
    via_model = sweep(perturbed_features(CenteredPixels().eval(), images_of(textures),
                                         batch_size=5), None, labels,
                      perturbations=perturbations, threshold=None, far=0.25)
    assert via_features.params["source"] == "features"
    assert via_model.params["source"] == "model"
    assert via_features.stats["threshold"] == pytest.approx(via_model.stats["threshold"],
                                                           abs=1e-9)
    assert via_features.curves.keys() == via_model.curves.keys()
    for key, curve in via_features.curves.items():
        np.testing.assert_allclose(curve.y, via_model.curves[key].y, atol=1e-9, err_msg=key)
    np.testing.assert_allclose(via_features.matrices["auc"].values,
                               via_model.matrices["auc"].values, atol=1e-9)


#: Speckle at level 0.5 leaves textured images at cos ≈ 0.78-0.81 with their clean selves, so
#: at this threshold which of them match depends on the noise drawn, i.e. on the seed.
SPECKLE = {"perturbations": ["speckle_noise"], "levels": [0.5], "threshold": 0.796}


def test_seed_changes_the_speckle_sweep_on_the_model_source(textures: FairnessDataset) -> None:
    """Control for the test below: seeds 0 and 7 give different Fair SA curves."""
    labels = textures.frame["texture"].to_numpy()
    images = images_of(textures)
    model = perturbed_features(CenteredPixels().eval(), images)
    curves = [sweep(model, None, labels, seed=seed, **SPECKLE)
              .curves["fair_sa/textured/speckle_noise"].y for seed in (0, 7)]
    assert curves[0] != curves[1]


def test_seed_reaches_a_features_callable(textures: FairnessDataset) -> None:
    labels = textures.frame["texture"].to_numpy()
    via_features = sweep(features_of(textures), textures, labels, seed=7, **SPECKLE)
    via_model = sweep(perturbed_features(CenteredPixels().eval(), images_of(textures)), None,
                      labels, seed=7, **SPECKLE)
    assert via_features.params["seed"] == 7
    assert via_features.curves == via_model.curves


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.permutations(range(N_IMAGES)), names=st.sampled_from([("a", "b"), ("z", "y")]))
def test_manifest_row_order_and_labels_do_not_change_the_matrix(
        textures: FairnessDataset, order: list[int], names: tuple[str, str]) -> None:
    """Shuffling the manifest rows and renaming the subgroups moves nothing but labels."""
    shuffled = textures.subset(np.asarray(order, dtype=np.intp))
    rename = {"smooth": names[0], "textured": names[1]}
    labels = shuffled.frame["texture"].map(rename).to_numpy()
    result = sweep(features_of(shuffled), shuffled, labels)
    cells = dict(zip(result.matrices["auc"].rows, result.matrices["auc"].values))
    assert cells == {names[0]: EXPECTED_AUC[0], names[1]: EXPECTED_AUC[1]}
    assert result.stats["l1"] == EXPECTED_L1


def test_unknown_column_names_the_column(textures: FairnessDataset) -> None:
    """A column that really is absent: the error names it and says what to pass instead."""
    with pytest.raises(FairnessConfigError, match=r"no column 'skin'.*Pass the labels"):
        sweep(features_of(textures), textures, "skin")
