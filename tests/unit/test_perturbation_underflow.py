"""A level so small that the blur's sigma underflows leaves the image as it is (no NaN)."""

from __future__ import annotations

import torch

from pytest_fairness.perturbations import perturb


def test_blur_at_a_denormal_level_is_the_identity() -> None:
    x = torch.rand(1, 3, 3, 4, generator=torch.Generator().manual_seed(0))
    assert torch.equal(perturb(x, "gaussian_blur", 5e-324), x)
