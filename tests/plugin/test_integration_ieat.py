"""iEAT end to end: an image-folder stimuli tree, the stimuli loader, feature extraction, gates.

The stimuli are tiny PNGs (32 px) laid out like ryansteed/ieat, ``<root>/<group>/<category>``:

* ``targets/red`` and ``targets/blue`` (X and Y): a reddish or bluish field with a grey square;
* ``valence/warm`` and ``valence/cool`` (A and B): reddish and bluish fields likewise;
* ``targets/mixed`` and ``targets/mixed-copy``: the same five red and blue images twice.

The model embeds an image as its mean colour minus mid-grey, so red images point one way and
blue ones another: X shares A's colour, so s(x, A, B) > 0 > s(y, A, B) for every item and the
effect size is positive (negative with X and Y swapped); the observed split is the most
extreme of all C(10, 5) = 252 re-partitions, so the exact p-value is 0. Two identical target
sets give an effect size of exactly 0. The scenarios run the indicator through pytest and
``fairness_features``, and check the pipeline against an oracle written from the definitions.
"""

from __future__ import annotations

import itertools
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

# Import the heavy modules once, before pytester: an in-process run restores sys.modules
# afterwards, and numpy/torch cannot be imported a second time in one process.
pytest.importorskip("torch")
pytest.importorskip("torchvision")
import numpy as np  # noqa: E402
import pandas  # noqa: E402, F401
import torch  # noqa: E402
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from PIL import Image  # noqa: E402

import pytest_fairness.features  # noqa: E402, F401
from pytest_fairness.data.ieat_stimuli import (  # noqa: E402
    IEATStimuli,
    IEATTestSpec,
    load_ieat_stimuli,
)
from pytest_fairness.errors import InvalidDataError  # noqa: E402
from pytest_fairness.features import DefaultTransform, extract_features  # noqa: E402
from pytest_fairness.indicators.embedding_association import ieat, ieat_battery  # noqa: E402

SIZE = 32
PER_CATEGORY = 5
RED = (200, 60, 60)
BLUE = (60, 60, 200)
CATEGORIES = {
    "targets/red": [RED] * PER_CATEGORY,
    "targets/blue": [BLUE] * PER_CATEGORY,
    "valence/warm": [RED] * PER_CATEGORY,
    "valence/cool": [BLUE] * PER_CATEGORY,
    "targets/mixed": [RED, BLUE, RED, BLUE, RED],
}
TESTS = (
    IEATTestSpec("colour", X="targets/red", Y="targets/blue", A="valence/warm",
                 B="valence/cool"),
    IEATTestSpec("swapped", X="targets/blue", Y="targets/red", A="valence/warm",
                 B="valence/cool"),
    IEATTestSpec("null", X="targets/mixed", Y="targets/mixed-copy", A="valence/warm",
                 B="valence/cool"),
)


def write_image(path: Path, base: tuple[int, int, int], rng: np.random.Generator) -> None:
    """A field of ``base`` (jittered per image) with a grey square at a random place."""
    colour = np.clip(np.asarray(base) + rng.integers(-30, 31, 3), 0, 255)
    pixels = np.empty((SIZE, SIZE, 3), dtype=np.uint8)
    pixels[:] = colour
    side = int(rng.integers(4, 10))
    top, left = (int(v) for v in rng.integers(0, SIZE - side, 2))
    pixels[top:top + side, left:left + side] = int(rng.integers(90, 170))
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path)


def write_stimuli(root: Path, *, seed: int = 0) -> Path:
    """Write the stimuli tree of the module docstring under ``root``; return ``root``."""
    rng = np.random.default_rng(seed)
    for category, bases in CATEGORIES.items():
        for i, base in enumerate(bases):
            write_image(root / category / f"{i:02d}.png", base, rng)
    shutil.copytree(root / "targets/mixed", root / "targets/mixed-copy")
    return root


class MeanColour(torch.nn.Module):
    """Embed an image as its mean colour minus mid-grey (3 numbers)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=(2, 3)) - 0.5


# -- an oracle from the definitions (DESIGN.md §2), independent of the implementation ---------


def oracle_embedding(path: Path) -> np.ndarray:
    """The model's output computed with PIL and numpy instead of torch."""
    pixels = np.asarray(Image.open(path).convert("RGB"), dtype=np.float64) / 255.0
    out: np.ndarray = pixels.reshape(-1, 3).mean(axis=0) - 0.5
    return out


def oracle_ieat(X: np.ndarray, Y: np.ndarray, A: np.ndarray, B: np.ndarray) -> dict[str, float]:
    """Statistic, effect size and the exact paper p-value by enumerating every split."""
    def cos(u: np.ndarray, v: np.ndarray) -> float:
        return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))

    def s(w: np.ndarray) -> float:
        return float(np.mean([cos(w, a) for a in A]) - np.mean([cos(w, b) for b in B]))

    sx, sy = [s(x) for x in X], [s(y) for y in Y]
    both = sx + sy
    statistic = sum(sx) - sum(sy)
    exceed = total = 0
    for part in itertools.combinations(range(len(both)), len(sx)):
        inside = sum(both[i] for i in part)
        value = inside - (sum(both) - inside)
        total += 1
        exceed += value > statistic + 1e-9  # a tie (to rounding) does not exceed
    std = float(np.std(both, ddof=1))
    return {"statistic": statistic, "std_association": std,
            "effect_size": float(np.mean(sx) - np.mean(sy)) / std if std else math.nan,
            "p_value": exceed / total}


# -- the pipeline without pytest ------------------------------------------------------------


@pytest.fixture(scope="module")
def stimuli(tmp_path_factory: pytest.TempPathFactory) -> IEATStimuli:
    """The stimuli tree, loaded for the three tests."""
    return load_ieat_stimuli(write_stimuli(tmp_path_factory.mktemp("stimuli")), tests=TESTS)


def embed(stimuli: IEATStimuli, **kwargs: Any) -> dict[str, np.ndarray]:
    """Embeddings per category through the dataset and ``extract_features``."""
    features = extract_features(MeanColour(), stimuli.to_dataset(),
                                transform=DefaultTransform(SIZE), normalize=None, batch_size=7,
                                **kwargs)
    return stimuli.split(features)


def test_loader_lists_every_category_in_order(stimuli: IEATStimuli) -> None:
    assert stimuli.categories == ("targets/red", "targets/blue", "valence/warm", "valence/cool",
                                  "targets/mixed", "targets/mixed-copy")
    assert len(stimuli) == 6 * PER_CATEGORY
    dataset = stimuli.to_dataset()
    assert dataset.frame["category"].tolist() == list(stimuli.labels)
    assert dataset.image_ids[0] == "targets/red/00.png"


def test_extracted_embeddings_are_the_mean_colours(stimuli: IEATStimuli) -> None:
    """Folder → dataset → DataLoader → model → split keeps every image with its category."""
    by_category = embed(stimuli)
    for category in stimuli.categories:
        paths = [p for p, c in zip(stimuli.paths, stimuli.labels) if c == category]
        expected = np.stack([oracle_embedding(p) for p in paths])
        np.testing.assert_allclose(by_category[category], expected, atol=1e-6)


def test_effect_direction_follows_the_shared_colour(stimuli: IEATStimuli) -> None:
    results = ieat_battery(stimuli.test_sets(embed(stimuli)), seed=0,
                           names=stimuli.set_names())
    colour, swapped, null = results["colour"], results["swapped"], results["null"]
    assert colour.stats["effect_size"] > 1.5  # X is red like A: a large positive effect
    assert colour.stats["p_value"] == 0.0  # the observed split is the most extreme of 252
    assert colour.params["exact"] and colour.params["n_partitions"] == math.comb(10, 5)
    assert swapped.stats["effect_size"] == pytest.approx(-colour.stats["effect_size"], abs=1e-12)
    assert swapped.stats["statistic"] == pytest.approx(-colour.stats["statistic"], abs=1e-12)
    # One-sided: every other split exceeds the swapped (most negative) one.
    assert swapped.stats["p_value"] == 251 / 252
    assert null.stats["effect_size"] == 0.0
    # Identical X and Y: the 2**5 splits taking one image of each pair tie with the observed
    # statistic 0 and do not exceed it; the other 220 split evenly above and below.
    assert null.stats["p_value"] == 110 / 252
    assert null.params["n_ties"] == 32
    assert colour.groups[0].label == "targets/red"  # names= carries the folder names


@pytest.mark.parametrize("test", TESTS, ids=[t.name for t in TESTS])
def test_pipeline_matches_the_oracle(stimuli: IEATStimuli, test: IEATTestSpec) -> None:
    """On the extracted features, the indicator equals the definitions to 1e-9."""
    sets = stimuli.test_sets(embed(stimuli))[test.name]
    result = ieat(*sets, exact_limit=1_000)
    expected = oracle_ieat(*(np.asarray(s, dtype=np.float64) for s in sets))
    for key, value in expected.items():
        assert result.stats[key] == pytest.approx(value, abs=1e-9), key


def test_holm_adjustment_over_the_folder_battery(stimuli: IEATStimuli) -> None:
    results = ieat_battery(stimuli.test_sets(embed(stimuli)), seed=0)
    raw = {k: r.stats["p_value"] for k, r in results.items()}
    ordered = sorted(raw.values())
    # m = 3 tests; Holm multiplies the i-th smallest by (m - i) and keeps it monotone.
    running = 0.0
    for i, p in enumerate(ordered):
        running = max(running, min(1.0, (3 - i) * p))
        key = next(k for k, v in raw.items() if v == p)
        assert results[key].stats["p_value_holm"] == pytest.approx(running, abs=1e-12)


def test_cached_features_give_the_same_battery(stimuli: IEATStimuli, tmp_path: Path) -> None:
    """A second extraction reads the cache entry, and the battery is unchanged."""
    fresh = embed(stimuli, cache_dir=tmp_path)
    dataset = stimuli.to_dataset()
    again = extract_features(MeanColour(), dataset, transform=DefaultTransform(SIZE),
                             normalize=None, batch_size=7, cache_dir=tmp_path)
    assert again.from_cache
    first = ieat_battery(stimuli.test_sets(fresh), seed=3)
    second = ieat_battery(stimuli.test_sets(stimuli.split(again)), seed=3)
    assert {k: r.stats for k, r in first.items()} == {k: r.stats for k, r in second.items()}


def test_features_of_another_dataset_are_refused(stimuli: IEATStimuli) -> None:
    features = embed(stimuli)["targets/red"]
    with pytest.raises(InvalidDataError, match=r"one row per stimulus image, shape \(30, d\)"):
        stimuli.split(features)


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(colours=st.lists(st.tuples(*[st.integers(0, 255)] * 3), min_size=12, max_size=12),
       seed=st.integers(0, 2**16))
def test_random_colours_swap_antisymmetry_and_oracle(tmp_path_factory: pytest.TempPathFactory,
                                                     colours: list[tuple[int, int, int]],
                                                     seed: int) -> None:
    """Any colours: swapping X↔Y or A↔B negates d; the pipeline equals the oracle."""
    root = tmp_path_factory.mktemp("random")
    rng = np.random.default_rng(seed)
    spec = IEATTestSpec("random", X="t/x", Y="t/y", A="a/a", B="a/b")
    for k, category in enumerate(spec.categories):
        for i in range(3):
            write_image(root / category / f"{i}.png", colours[3 * k + i], rng)
    loaded = load_ieat_stimuli(root, tests=[spec])
    X, Y, A, B = loaded.test_sets(embed(loaded))["random"]
    expected = oracle_ieat(X, Y, A, B)
    assume(expected["std_association"] > 1e-6)  # else 0/0, refused by design
    result = ieat(X, Y, A, B)
    assert result.stats["effect_size"] == pytest.approx(expected["effect_size"], abs=1e-9)
    assert ieat(Y, X, A, B).stats["effect_size"] == pytest.approx(-result.value, abs=1e-9)
    assert ieat(X, Y, B, A).stats["effect_size"] == pytest.approx(-result.value, abs=1e-9)


# -- through pytest and fairness_features --------------------------------------------------


CONFTEST = """
import pytest
import torch

from pytest_fairness.data.ieat_stimuli import IEATTestSpec, load_ieat_stimuli
from pytest_fairness.features import DefaultTransform


class MeanColour(torch.nn.Module):
    def forward(self, x):
        return x.mean(dim=(2, 3)) - 0.5


@pytest.fixture(scope="session")
def fairness_model():
    return MeanColour()


TESTS = [
    IEATTestSpec("colour", X="targets/red", Y="targets/blue", A="valence/warm",
                 B="valence/cool"),
    IEATTestSpec("swapped", X="targets/blue", Y="targets/red", A="valence/warm",
                 B="valence/cool"),
    IEATTestSpec("null", X="targets/mixed", Y="targets/mixed-copy", A="valence/warm",
                 B="valence/cool"),
]


@pytest.fixture(scope="session")
def stimuli(request):
    return load_ieat_stimuli(request.config.rootpath / "stimuli", tests=TESTS)


@pytest.fixture
def sets(fairness_features, stimuli):
    features = fairness_features(stimuli.to_dataset(), transform=DefaultTransform(32),
                                 normalize=None)
    return stimuli.test_sets(stimuli.split(features))
"""

GATED = """
from pytest_fairness import fairness, indicators

# The point rule: the test pins the effect sizes' point verdicts and messages.
GATE = fairness.threshold(max_effect_size=0.5, min_p_value=0.05, confidence="point")


@GATE
def test_colour(sets):
    result = indicators.ieat(*sets["colour"], seed=0, n_bootstrap=0)
    assert result.stats["effect_size"] > 0
    return result


@GATE
def test_swapped(sets):
    result = indicators.ieat(*sets["swapped"], seed=0, n_bootstrap=0)
    assert result.stats["effect_size"] < 0
    return result


@GATE
def test_null(sets):
    result = indicators.ieat(*sets["null"], seed=0, n_bootstrap=0)
    assert result.stats["effect_size"] == 0
    return result


@fairness.threshold(max_effect_size=0.5, confidence="point")
def test_battery(sets, stimuli):
    return indicators.ieat_battery(sets, seed=0, names=stimuli.set_names(), n_bootstrap=0)
"""

MODES = {
    "no_xdist": ["-p", "no:xdist"],
    # Two fresh workers importing torch: about 10 s on a loaded 2-core machine.
    "xdist_two": ["-n", "2"],
}


@pytest.mark.parametrize("mode", [
    "no_xdist", pytest.param("xdist_two", marks=pytest.mark.slow)])
def test_markers_gate_the_folder_iEATs(pytester: pytest.Pytester, mode: str) -> None:
    write_stimuli(pytester.path / "stimuli")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_ieat=GATED)
    result = pytester.runpytest("--fairness", "-p", "no:cacheprovider", *MODES[mode])
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines(["*FAILED*test_colour*FairnessViolation*"])
    result.stdout.fnmatch_lines(["*FAILED*test_swapped*FairnessViolation*"])
    result.stdout.fnmatch_lines(["*FAILED*test_battery*FairnessViolation*"])
    result.stdout.fnmatch_lines(["*FAIL min_p_value=0.05: p value 0, needs >= 0.05*"])
    result.stdout.fnmatch_lines(["*ok   min_p_value=0.05: p value 0.996, needs >= 0.05*"])
    result.stdout.fnmatch_lines(["colour: ieat (effect_size): |effect size| 1.881, p_value 0",
                                 "  FAIL max_effect_size=0.5: effect size 1.881, needs <= 0.5"])
    result.stdout.fnmatch_lines(["swapped: ieat (effect_size): |effect size| 1.881, p_value 0.996",
                                 "  FAIL max_effect_size=0.5: effect size 1.881, needs <= 0.5"])
    # The cache entry of the stimuli dataset: one, shared by the four tests.
    assert len(list((pytester.path / ".fairness" / "cache").rglob("*.sha256"))) == 1
