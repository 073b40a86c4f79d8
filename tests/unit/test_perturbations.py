"""The nine perturbations: identity at 0, monotone effect, determinism, batching."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_fairness.errors import FairnessConfigError, InvalidDataError
from pytest_fairness.perturbations import PERTURBATIONS, Perturbation, parameter, perturb

LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)


def texture(n: int = 3, size: int = 32, seed: int = 0) -> torch.Tensor:
    """Colourful images with fine detail and smooth gradients, values inside (0, 1)."""
    g = torch.Generator().manual_seed(seed)
    noise = torch.rand((n, 3, size, size), generator=g)
    ramp = torch.linspace(0, 1, size).view(1, 1, 1, size)
    colour = torch.rand((n, 3, 1, 1), generator=g)
    return (0.15 + 0.7 * (0.4 * noise + 0.3 * ramp + 0.3 * colour)).clamp(0, 1)


def hf_energy(x: torch.Tensor, axis: int = -1) -> float:
    return float(x.diff(dim=axis).pow(2).mean())


def mse(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).pow(2).mean())


def channel_spread(x: torch.Tensor) -> float:
    return float(x.std(dim=1).mean())


def strictly_monotone(values: list[float], increasing: bool) -> bool:
    pairs = list(zip(values, values[1:]))
    return all(b > a for a, b in pairs) if increasing else all(b < a for a, b in pairs)


@pytest.mark.parametrize("name", PERTURBATIONS)
def test_level_zero_is_exact_identity_copy(name: str) -> None:
    """Level 0 returns an equal tensor that is a new object."""
    x = texture()
    out = perturb(x, name, 0.0, seed=3)
    assert torch.equal(out, x) and out is not x and out.data_ptr() != x.data_ptr()


@pytest.mark.parametrize("name", PERTURBATIONS)
def test_output_shape_dtype_range_and_input_untouched(name: str) -> None:
    """Shape and dtype are kept, values stay in [0, 1], the input is not modified."""
    x = texture().double()
    before = x.clone()
    out = perturb(x, name, 0.7, seed=1)
    assert out.shape == x.shape and out.dtype == torch.float64
    assert float(out.min()) >= 0.0 and float(out.max()) <= 1.0
    assert torch.equal(x, before)


@pytest.mark.parametrize("name", PERTURBATIONS)
def test_positive_level_changes_the_image(name: str) -> None:
    """Every perturbation does something at level 0.5."""
    x = texture()
    assert not torch.equal(perturb(x, name, 0.5), x)


STATISTICS = {
    "gaussian_blur": (lambda x, o: hf_energy(o), False),
    "motion_blur": (lambda x, o: hf_energy(o, -1), False),
    "gamma_contrast": (lambda x, o: float(o.mean()), False),
    "rotation": (lambda x, o: mse(o, x), True),
    "speckle_noise": (lambda x, o: float((o - x).abs().mean()), True),
    "exposure_low": (lambda x, o: float(o.mean()), False),
    "exposure_high": (lambda x, o: float(o.mean()), True),
    "saturation_low": (lambda x, o: channel_spread(o), False),
    "saturation_high": (lambda x, o: channel_spread(o), True),
    "jpeg": (lambda x, o: mse(o, x), True),
    "vignette": (lambda x, o: float(o.mean()), False),
}


@pytest.mark.parametrize("name", PERTURBATIONS)
def test_effect_is_monotone_in_level(name: str) -> None:
    """A simple statistic moves strictly one way as the level grows."""
    statistic, increasing = STATISTICS[name]
    x = texture(size=48)
    if name == "rotation":  # a ramp: MSE to the original is 2σ²(1 − cos θ) plus the corners
        x = torch.linspace(0.1, 0.9, 48).view(1, 1, 1, 48).expand(1, 3, 48, 48).clone()
    values = [statistic(x, perturb(x, name, level, seed=2)) for level in LEVELS]
    assert strictly_monotone(values, increasing), values


def test_every_perturbation_has_a_monotonicity_check() -> None:
    assert set(STATISTICS) == set(PERTURBATIONS)


@pytest.mark.parametrize("name", PERTURBATIONS)
def test_deterministic_for_a_seed(name: str) -> None:
    """The same seed gives the same output."""
    x = texture()
    assert torch.equal(perturb(x, name, 0.6, seed=11), perturb(x, name, 0.6, seed=11))


def test_speckle_noise_depends_on_seed_and_image() -> None:
    x = texture(n=2)
    assert not torch.equal(perturb(x, "speckle_noise", 0.6, seed=1),
                           perturb(x, "speckle_noise", 0.6, seed=2))
    same = x[[0, 0]]
    out = perturb(same, "speckle_noise", 0.6, index=[0, 1])
    assert not torch.equal(out[0], out[1])  # different rows get different noise


@pytest.mark.parametrize("name", PERTURBATIONS)
@pytest.mark.parametrize("with_index", [False, True])
def test_batched_equals_one_image_at_a_time(name: str, with_index: bool) -> None:
    """A batch gives the same images as perturbing each alone (same seed, same keys)."""
    x = texture(n=4)
    index = [10, 11, 12, 13] if with_index else None
    batched = perturb(x, name, 0.55, seed=5, index=index)
    for i in range(4):
        alone = perturb(x[i : i + 1], name, 0.55, seed=5,
                        index=None if index is None else [index[i]])
        torch.testing.assert_close(batched[i : i + 1], alone, atol=1e-6, rtol=0)


def test_single_image_and_transform_match_batch() -> None:
    x = texture(n=1)
    t = Perturbation("motion_blur", 0.4, seed=3)
    assert t(x[0]).shape == x[0].shape
    torch.testing.assert_close(t(x[0]), perturb(x, "motion_blur", 0.4, seed=3)[0])
    assert repr(t) == "Perturbation('motion_blur', 0.4, seed=3)"


def test_hand_computed_values() -> None:
    """Gamma, exposure, vignette and saturation on constant images."""
    x = torch.full((1, 3, 5, 5), 0.5)
    assert math.isclose(float(perturb(x, "gamma_contrast", 0.5).mean()), 0.25, rel_tol=1e-6)
    assert math.isclose(float(perturb(x, "exposure_high", 1 / 3).mean()), 1.0)
    assert math.isclose(float(perturb(x, "exposure_high", 1 / 6)[0, 0, 0, 0]), 0.5 * 2 ** 0.5,
                        rel_tol=1e-6)
    v = perturb(x, "vignette", 0.5)
    assert float(v[0, 0, 2, 2]) == 0.5 and math.isclose(float(v[0, 0, 0, 0]), 0.25)
    rgb = torch.tensor([1.0, 0.0, 0.0]).view(1, 3, 1, 1).expand(1, 3, 2, 2).clone()
    gray = perturb(rgb, "saturation_low", 1.0)
    torch.testing.assert_close(gray, torch.full_like(rgb, 0.299))


def test_blur_of_constant_image_is_constant() -> None:
    x = torch.full((2, 3, 9, 9), 0.3)
    for name in ("gaussian_blur", "motion_blur"):
        torch.testing.assert_close(perturb(x, name, 1.0), x)


def test_rotation_by_ninety_degrees_rotates_a_square() -> None:
    x = torch.zeros(1, 1, 7, 7)
    x[0, 0, 0, 3] = 1.0  # top centre
    out = perturb(x, "rotation", 1.0)
    assert float(out[0, 0, 3, 0]) == pytest.approx(1.0, abs=1e-5)  # counter-clockwise: left


def test_saturation_low_keeps_luminance_and_skips_gray_images() -> None:
    x = texture()
    out = perturb(x, "saturation_low", 0.8)
    luma = torch.tensor([0.299, 0.587, 0.114]).view(1, 3, 1, 1)
    torch.testing.assert_close((out * luma).sum(1), (x * luma).sum(1), atol=1e-6, rtol=0)
    g = texture()[:, :1]
    assert torch.equal(perturb(g, "saturation_high", 1.0), g)


def test_jpeg_works_on_grayscale_and_quantises() -> None:
    g = texture()[:, :1]
    out = perturb(g, "jpeg", 0.5)
    assert out.shape == g.shape
    assert torch.equal(out * 255, (out * 255).round())


def test_parameter_mapping_and_size_scaling() -> None:
    assert parameter("gaussian_blur", 1.0) == 4.0
    assert parameter("gaussian_blur", 1.0, size=112) == 2.0
    assert parameter("motion_blur", 0.5) == 5.0
    assert parameter("jpeg", 0.0) == 100.0 and parameter("jpeg", 0.5) == 52.0
    assert parameter("exposure_low", 1.0) == -3.0
    assert parameter("saturation_low", 0.25) == 0.75
    assert parameter("gamma_contrast", 0.5) == 2.0


def test_empty_batch() -> None:
    x = torch.zeros(0, 3, 4, 4)
    assert perturb(x, "jpeg", 0.5).shape == (0, 3, 4, 4)


@given(
    name=st.sampled_from(PERTURBATIONS),
    level=st.floats(0, 1),
    seed=st.integers(0, 2**32),
    size=st.integers(3, 12),
)
@settings(max_examples=40, deadline=None)
def test_property_range_and_shape(name: str, level: float, seed: int, size: int) -> None:
    x = torch.rand((2, 3, size, size + 1), generator=torch.Generator().manual_seed(seed))
    out = perturb(x, name, level, seed=seed)
    assert out.shape == x.shape
    assert float(out.min()) >= 0.0 and float(out.max()) <= 1.0


# -- validation -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"name": "blur"}, r"perturbation=.blur."),
        ({"name": None}, r"perturbation=None"),
        ({"level": 1.5}, r"level=1\.5"),
        ({"level": -0.1}, r"level=-0\.1"),
        ({"level": float("nan")}, r"level=nan"),
        ({"level": True}, r"type=bool"),
        ({"level": "0.5"}, r"type=str"),
        ({"seed": -1}, r"seed=-1"),
        ({"seed": 1.5}, r"seed=1\.5"),
        ({"index": [0, 1]}, r"index must hold one non-negative int per image \(length 3\)"),
        ({"index": [0, -1, 2]}, r"index must hold"),
        ({"index": [0.0, 1.0, 2.0]}, r"index must hold"),
    ],
)
def test_bad_arguments_raise_config_error(kwargs: dict, fragment: str) -> None:
    args = {"name": "jpeg", "level": 0.5, "seed": 0, "index": None, **kwargs}
    with pytest.raises(FairnessConfigError, match=fragment):
        perturb(texture(), args.pop("name"), args.pop("level"), **args)


@pytest.mark.parametrize(
    ("images", "fragment"),
    [
        (np.zeros((1, 3, 4, 4)), r"must be a torch\.Tensor.*got ndarray"),
        (torch.zeros(1, 3, 4, 4, dtype=torch.uint8), r"float tensor.*torch\.uint8"),
        (torch.zeros(3, 4), r"shape \(N, C, H, W\).*got shape \(3, 4\)"),
        (torch.zeros(1, 2, 4, 4), r"C = 1 or 3; got shape \(1, 2, 4, 4\)"),
        (torch.full((1, 3, 4, 4), 2.0), r"values in \[0, 1\]; got min=2\.0, max=2\.0"),
        (torch.full((1, 3, 4, 4), float("nan")), r"min=nan"),
    ],
)
def test_bad_images_raise_invalid_data(images: object, fragment: str) -> None:
    with pytest.raises(InvalidDataError, match=fragment):
        perturb(images, "gaussian_blur", 0.5)  # type: ignore[arg-type]


def test_transform_validates_at_construction() -> None:
    with pytest.raises(FairnessConfigError, match=r"level=2"):
        Perturbation("jpeg", 2)
    with pytest.raises(FairnessConfigError, match=r"perturbation='nope'"):
        Perturbation("nope", 0.1)
    with pytest.raises(FairnessConfigError, match=r"seed=-3"):
        Perturbation("jpeg", 0.1, seed=-3)


def test_blur_at_a_denormal_level_is_the_identity() -> None:
    """A level so small that the blur's sigma underflows leaves the image as it is (no NaN)."""
    x = torch.rand(1, 3, 3, 4, generator=torch.Generator().manual_seed(0))
    assert torch.equal(perturb(x, "gaussian_blur", 5e-324), x)
