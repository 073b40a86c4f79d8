"""The image perturbations of Fair SA, batched on float tensors ``(N, C, H, W)`` in [0, 1].

Fair SA is "Fair SA: Sensitivity Analysis for Fairness in Face Recognition" (Joshi et al. 2022).
A level in [0, 1] sets each parameter linearly from the identity to the strongest setting; the
table is on the docs page "Fair SA and VPSA: fairness under image perturbations".
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, final

import numpy as np

from pytest_fairness.errors import (
    FairnessConfigError,
    InvalidDataError,
    check_int,
    own_error,
    require,
)

if TYPE_CHECKING:  # torch loads when a perturbation runs: the names need no torch
    import torch

__all__ = ["PERTURBATIONS", "Perturbation", "PerturbationSpec", "parameter", "perturb"]

__tracebackhide__ = own_error

#: Side length (pixels) the pixel parameters are given for; they scale with min(H, W).
REFERENCE_SIZE: Final = 224

_LUMA: Final = (0.299, 0.587, 0.114)


@final
@dataclass(frozen=True)
class PerturbationSpec:
    """One perturbation: the ``parameter`` its level sets, and how.

    From ``at_zero`` (the identity) to ``at_one`` (pixels for a 224-pixel image); ``random``
    when the output depends on the seed.
    """

    name: str
    parameter: str
    at_zero: float
    at_one: float
    random: bool = False

    def value(self, level: float) -> float:
        """The parameter at ``level`` (linear between ``at_zero`` and ``at_one``)."""
        return self.at_zero + (self.at_one - self.at_zero) * level


_SPECS: Final[dict[str, PerturbationSpec]] = {
    spec.name: spec
    for spec in (
        PerturbationSpec("gaussian_blur", "sigma_px", 0.0, 4.0),
        PerturbationSpec("gamma_contrast", "gamma", 1.0, 3.0),
        PerturbationSpec("rotation", "degrees", 0.0, 90.0),
        PerturbationSpec("speckle_noise", "sigma", 0.0, 0.5, random=True),
        PerturbationSpec("exposure_low", "ev", 0.0, -3.0),
        PerturbationSpec("exposure_high", "ev", 0.0, 3.0),
        PerturbationSpec("saturation_low", "saturation_factor", 1.0, 0.0),
        PerturbationSpec("saturation_high", "saturation_factor", 1.0, 3.0),
        PerturbationSpec("motion_blur", "half_width_px", 0.0, 10.0),
        PerturbationSpec("jpeg", "quality", 100.0, 5.0),
        PerturbationSpec("vignette", "strength", 0.0, 1.0),
    )
}

#: The perturbation names, in the order of Joshi et al. 2022's figures.
PERTURBATIONS: Final[tuple[str, ...]] = tuple(_SPECS)


def _check_name(name: Any) -> PerturbationSpec:
    spec = _SPECS.get(name) if isinstance(name, str) else None
    if spec is None:
        raise FairnessConfigError(
            f"perturbation must be one of {', '.join(PERTURBATIONS)}; got perturbation={name!r}.")
    return spec


def _check_level(level: Any) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float, np.integer, np.floating)):
        raise FairnessConfigError(
            f"level must be a number in [0, 1] (0 is the identity, 1 the strongest setting); "
            f"got level={level!r} (type={type(level).__name__}).")
    value = float(level)
    if not 0.0 <= value <= 1.0:  # also rejects NaN
        raise FairnessConfigError(
            f"level must be in [0, 1] (0 is the identity, 1 the strongest setting); "
            f"got level={level!r}.")
    return value


def _check_images(images: Any) -> torch.Tensor:
    import torch
    if not isinstance(images, torch.Tensor):
        raise InvalidDataError(
            f"images must be a torch.Tensor of shape (N, C, H, W) with values in [0, 1]; got "
            f"{type(images).__name__}. Convert with torch.as_tensor(...) / 255 or "
            "torchvision.transforms.v2.ToDtype(torch.float32, scale=True).")
    if not images.is_floating_point():
        raise InvalidDataError(
            f"images must be a float tensor with values in [0, 1]; got dtype {images.dtype}. "
            "Convert with images.float() / 255.")
    if images.ndim != 4 or images.shape[1] not in (1, 3):
        raise InvalidDataError(
            f"images must have shape (N, C, H, W) with C = 1 or 3; got shape "
            f"{tuple(images.shape)}.")
    if images.numel():
        low, high = torch.aminmax(images)
        if not (float(low) >= 0.0 and float(high) <= 1.0):  # NaN fails both
            raise InvalidDataError(
                f"images must have values in [0, 1]; got min={float(low)!r}, "
                f"max={float(high)!r}. Scale them (x / 255) and replace NaN before perturbing.")
    return images


def _check_index(index: Any, n: int) -> list[int] | None:
    if index is None:
        return None
    values = np.asarray(index)
    if values.shape != (n,) or values.dtype.kind not in "iu" or (values < 0).any():
        raise FairnessConfigError(
            f"index must hold one non-negative int per image (length {n}); got "
            f"{index!r:.80}. Pass the images' row numbers in the dataset, or None.")
    return [int(v) for v in values]


def _conv_rows(images: torch.Tensor, kernel: torch.Tensor) -> torch.Tensor:
    """Convolve every row (last axis) with a 1-D kernel of odd length, replicating edges."""
    # A sum of shifted, weighted copies: ~10x faster on CPU than conv2d with a 1-row
    # kernel over N·C single-channel planes (see benchmarks/perturbations.py).
    w = images.shape[-1]
    import torch.nn.functional as F
    radius = kernel.numel() // 2
    padded = F.pad(images, (radius, radius, 0, 0), mode="replicate")
    weights = kernel.tolist()
    out: torch.Tensor = padded[..., 0:w] * weights[0]
    for k in range(1, len(weights)):
        out.add_(padded[..., k : k + w], alpha=weights[k])
    return out


def _gaussian_blur(x: torch.Tensor, sigma: float) -> torch.Tensor:
    import torch
    radius = max(1, math.ceil(3 * sigma))
    t = torch.arange(-radius, radius + 1, dtype=torch.float64)
    if sigma <= 0:  # a level so small that sigma underflows: no blur, not 0 / 0
        kernel = (t == 0).to(torch.float64)
    else:
        kernel = torch.exp(-0.5 * (t / sigma) ** 2)
        kernel = kernel / kernel.sum()
    rows = _conv_rows(x, kernel)
    return _conv_rows(rows.transpose(-1, -2), kernel).transpose(-1, -2)


def _motion_blur(x: torch.Tensor, half_width: float) -> torch.Tensor:
    """A box of width ``2·half_width + 1`` px sampled by area, so it grows continuously."""
    import torch
    radius = math.ceil(half_width)
    t = torch.arange(-radius, radius + 1, dtype=torch.float64)
    kernel = torch.clamp(half_width + 0.5 - t.abs(), 0.0, 1.0)
    return _conv_rows(x, kernel / kernel.sum())


def _rotation(x: torch.Tensor, angle: float) -> torch.Tensor:
    from torchvision.transforms.v2 import InterpolationMode  # type: ignore[import-untyped,unused-ignore]
    from torchvision.transforms.v2 import functional as TF  # type: ignore[import-untyped,unused-ignore]

    out: torch.Tensor = TF.rotate(x, angle, interpolation=InterpolationMode.BILINEAR, fill=[0.0])
    return out.clamp_(0.0, 1.0)


def _speckle_noise(x: torch.Tensor, sigma: float, seed: int, keys: Any) -> torch.Tensor:
    import torch
    noise = torch.empty(x.shape, dtype=torch.float32)
    for i, image in enumerate(x):
        if keys is not None:
            key = keys[i]
        else:  # a hash of the image's bytes
            data = image.detach().to("cpu", torch.float32).contiguous().numpy().tobytes()
            key = int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")
        state = np.random.SeedSequence([seed, key]).generate_state(1, dtype=np.uint64)[0]
        noise[i] = torch.randn(x.shape[1:], generator=torch.Generator().manual_seed(int(state)))
    noise = noise.to(device=x.device, dtype=x.dtype)
    return (x + sigma * x * noise).clamp_(0.0, 1.0)


def _saturation(x: torch.Tensor, factor: float) -> torch.Tensor:
    if x.shape[1] == 1:
        return x.clone()
    gray = _LUMA[0] * x[:, 0:1] + _LUMA[1] * x[:, 1:2] + _LUMA[2] * x[:, 2:3]  # ITU-R 601
    return (gray + factor * (x - gray)).clamp_(0.0, 1.0)


def _jpeg(x: torch.Tensor, quality: float) -> torch.Tensor:
    import torch
    from torchvision.io import decode_jpeg, encode_jpeg  # type: ignore[import-untyped,unused-ignore]

    with warnings.catch_warnings():
        # torchvision 0.29 deprecates its codecs in favour of torchcodec; they still work
        # and are what Fair SA's JPEG perturbation needs, so keep user logs quiet.
        warnings.filterwarnings("ignore", message=".*TorchVision are deprecated",
                                category=DeprecationWarning)
        pixels = list((x.detach() * 255.0).round_().to("cpu", torch.uint8).unbind(0))
        decoded = decode_jpeg(encode_jpeg(pixels, quality=int(quality)))
    return torch.stack(decoded).to(device=x.device, dtype=x.dtype).div_(255.0)


def _vignette(x: torch.Tensor, strength: float) -> torch.Tensor:
    import torch
    h, w = x.shape[-2:]
    ys = torch.arange(h, dtype=torch.float64) - (h - 1) / 2
    xs = torch.arange(w, dtype=torch.float64) - (w - 1) / 2
    r2 = ys[:, None] ** 2 + xs[None, :] ** 2
    mask = 1.0 - strength * r2 / (float(r2.max()) or 1.0)
    return x * mask.to(device=x.device, dtype=x.dtype)


def _exposure(x: torch.Tensor, ev: float) -> torch.Tensor:
    return (x * float(2.0**ev)).clamp_(0.0, 1.0)


def _gamma(x: torch.Tensor, gamma: float) -> torch.Tensor:
    return x.pow(gamma)


#: Each deterministic perturbation, from the images and its parameter (see :func:`parameter`).
_APPLY: Final[dict[str, Callable[[torch.Tensor, float], torch.Tensor]]] = {
    "gaussian_blur": _gaussian_blur,
    "gamma_contrast": _gamma,
    "rotation": _rotation,
    "exposure_low": _exposure,
    "exposure_high": _exposure,
    "saturation_low": _saturation,
    "saturation_high": _saturation,
    "motion_blur": _motion_blur,
    "jpeg": _jpeg,
    "vignette": _vignette,
}


def parameter(name: str, level: float, *, size: int = REFERENCE_SIZE) -> float:
    """The physical parameter a level sets for one perturbation.

    Parameters
    ----------
    name, level : str, float
        One of :data:`PERTURBATIONS`; a level in [0, 1].
    size : int, default 224
        The shorter image side; pixel parameters scale with ``size / 224``.

    Returns
    -------
    float
        σ or half-width in pixels, γ, degrees, EV, saturation factor, quality or strength.

    Examples
    --------
    >>> parameter("gaussian_blur", 0.5), parameter("jpeg", 1.0), parameter("rotation", 0.5)
    (2.0, 5.0, 45.0)
    """
    spec = _check_name(name)
    value = spec.value(_check_level(level))
    if spec.parameter.endswith("_px"):
        value *= size / REFERENCE_SIZE
    if spec.parameter == "quality":
        value = float(round(value))
    return value


def perturb(images: torch.Tensor, name: str, level: float, *, seed: int = 0,
            index: Sequence[int] | None = None) -> torch.Tensor:
    r"""Apply one perturbation at one level to a batch of images.

    :math:`T(x, 0) = x`, :math:`T(x, l) = T_{p(l)}(x)` with :math:`p(l) = p_0 + (p_1 - p_0)\,l`.

    Parameters
    ----------
    images : torch.Tensor of shape (N, C, H, W) or (C, H, W)
        Float images with values in [0, 1], ``C`` = 1 or 3. Never modified.
    name, level : str, float
        One of :data:`PERTURBATIONS`; a level in [0, 1] (0 returns an exact copy).
    seed : int, default 0
        Seeds the random perturbations (speckle noise).
    index : sequence of int, optional
        Each image's row in its dataset, the key of its noise (default: a hash of its bytes).

    Returns
    -------
    torch.Tensor
        The perturbed images, same shape, dtype and device, values in [0, 1].

    Raises
    ------
    FairnessConfigError
        An unknown name, a level outside [0, 1], a bad seed or index.
    InvalidDataError
        Images that are not float tensors of shape (N, C, H, W) in [0, 1].

    Examples
    --------
    >>> import torch
    >>> x = torch.full((2, 3, 8, 8), 0.5)
    >>> bool(torch.equal(perturb(x, "gaussian_blur", 0.0), x))
    True
    >>> round(float(perturb(x, "exposure_low", 1 / 3).mean()), 4)
    0.25
    """
    torch = require("torch", purpose="perturbing images")
    spec = _check_name(name)
    level = _check_level(level)
    seed = check_int("seed", seed, low=0)
    single = isinstance(images, torch.Tensor) and images.ndim == 3
    batch = _check_images(images.unsqueeze(0) if single else images)
    keys = _check_index(index, batch.shape[0])
    value = parameter(spec.name, level, size=min(batch.shape[-2:]))
    if level == 0.0 or not len(batch):
        out = batch.clone()
    elif spec.random:
        out = _speckle_noise(batch, value, seed, keys)
    else:
        out = _APPLY[spec.name](batch, value)
    return out.squeeze(0) if single else out


@final
class Perturbation:
    """A perturbation at a fixed level, usable as a torchvision-style transform.

    Parameters
    ----------
    name, level, seed
        As in :func:`perturb` (noise keyed by the image's content).

    Examples
    --------
    >>> import torch
    >>> t = Perturbation("vignette", 1.0)
    >>> t(torch.ones(3, 5, 5))[0, 2, 2].item(), t(torch.ones(3, 5, 5))[0, 0, 0].item()
    (1.0, 0.0)
    """

    __slots__ = ("level", "name", "seed")

    def __init__(self, name: str, level: float, *, seed: int = 0) -> None:
        self.name = _check_name(name).name
        self.level = _check_level(level)
        self.seed = check_int("seed", seed, low=0)

    def __call__(self, images: torch.Tensor) -> torch.Tensor:
        """Perturb one image ``(C, H, W)`` or a batch ``(N, C, H, W)``."""
        return perturb(images, self.name, self.level, seed=self.seed)

    def __repr__(self) -> str:
        return f"Perturbation({self.name!r}, {self.level!r}, seed={self.seed})"
