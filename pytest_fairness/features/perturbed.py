"""A model over perturbed images: the embeddings Fair SA compares, from the one forward loop."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, final

from pytest_fairness.errors import (
    FairnessConfigError,
    InsufficientDataError,
    InvalidDataError,
    check_int,
    own_error,
    require,
)
from pytest_fairness.features.forward import forward_batches

if TYPE_CHECKING:
    import torch
    from numpy.typing import NDArray

__all__ = ["PerturbedFeatures", "perturbed_features"]

__tracebackhide__ = own_error


def perturbed_features(model: Callable[[Any], Any], images: Any, *,
                       perturbations: Mapping[str, Callable[..., Any]] | None = None,
                       batch_size: int = 64) -> PerturbedFeatures:
    """The embeddings of ``images``, clean or perturbed, as a features callable for Fair SA.

    Parameters
    ----------
    model : nn.Module or callable
        Image batch ``(N, C, H, W)`` → embeddings (or a tuple whose first element they are),
        in eval mode.
    images : tensor, ndarray or re-iterable of batches
        Images ``(N, C, H, W)`` in [0, 1], or batches of them (a tensor, an ``(images, ...)``
        tuple or a dict with key ``"image"``) in a fixed order (``shuffle=False``).
    perturbations : mapping of str to callable, optional
        Your own, ``f(images, level, *, seed, index)``, besides the built-in ones; name them
        in ``fair_sa(perturbations=[...])`` too.
    batch_size : int, default 64
        Images per forward pass when ``images`` is one tensor.

    Returns
    -------
    PerturbedFeatures
        ``features(dataset=None, *, perturbation=None | (name, level[, seed]))`` → float64
        embeddings, one row per image.

    Examples
    --------
    >>> import torch
    >>> from pytest_fairness.indicators import fair_sa
    >>> images = torch.rand(8, 3, 16, 16, generator=torch.Generator().manual_seed(0))
    >>> features = perturbed_features(torch.nn.Flatten().eval(), images)
    >>> features(perturbation=("gaussian_blur", 1.0)).shape
    (8, 768)
    >>> r = fair_sa(features, attribute=[0, 1] * 4, perturbations=["gaussian_blur"],
    ...             levels=[1.0], threshold=0.5, min_group_size=1)
    """
    torch = require("torch", purpose="perturbed_features (a model's forward pass)")
    if isinstance(model, torch.nn.Module) and model.training:
        raise FairnessConfigError(
            "the model is in training mode (dropout and batch norm would change its "
            "embeddings between calls); call model.eval() first.")
    batch_size = check_int("batch_size", batch_size, low=1)
    custom = dict(perturbations or {})
    if not all(isinstance(k, str) and callable(f) for k, f in custom.items()):
        raise FairnessConfigError(
            "perturbations must map names (str) to callables f(images, level, *, seed, "
            f"index); got {perturbations!r}.")
    _batches(images, batch_size)  # a wrong kind of images fails here, not at the first call
    device = next((p.device for p in model.parameters()), None) if isinstance(
        model, torch.nn.Module) else None
    from pytest_fairness.perturbations import PERTURBATIONS

    return PerturbedFeatures(model, images, batch_size, device, custom,
                             frozenset(PERTURBATIONS) | frozenset(custom))


@final
@dataclass(frozen=True, eq=False)
class PerturbedFeatures:
    """The features callable :func:`perturbed_features` returns (build it through that).

    ``fair_sa`` reads ``fairness_source`` and checks ``fairness_perturbations`` before a pass.
    """

    model: Callable[[Any], Any]
    images: Any
    batch_size: int
    device: Any
    custom: Mapping[str, Callable[..., Any]]
    fairness_perturbations: frozenset[str]
    fairness_source: str = "model"

    def __call__(self, dataset: Any = None, *, perturbation: Any = None) -> NDArray[Any]:
        """The embeddings of every image, clean (None) or under ``(name, level[, seed])``."""
        import torch

        from pytest_fairness.perturbations import perturb
        name, level, seed = (None, 0.0, 0) if perturbation is None else (
            *perturbation, 0)[:3]

        def perturbed(batch: Any, index: list[int]) -> Any:
            if name in self.custom:
                return self.custom[name](batch, level, seed=seed, index=index)
            return perturb(batch, str(name), level, seed=seed, index=index)

        outputs = forward_batches(
            self.model, _numbered_batches(self.images, self.batch_size), device=self.device,
            perturb=perturbed if name is not None and level > 0 else None,
            read=_embedding_output, dtype=torch.float64)
        if "embeddings" not in outputs:
            raise InsufficientDataError("images yielded no images; pass at least one batch.")
        return outputs["embeddings"]


def _batches(dataset: Any, batch_size: int) -> Iterable[Any]:
    import numpy as np
    import torch
    if isinstance(dataset, np.ndarray):
        dataset = torch.from_numpy(dataset)
    if isinstance(dataset, torch.Tensor):
        if dataset.ndim != 4:
            raise InvalidDataError(
                f"images must be an image tensor (N, C, H, W) with values in [0, 1] or a "
                f"re-iterable of such batches; got a tensor of shape {tuple(dataset.shape)}.")
        return [dataset[i : i + batch_size] for i in range(0, dataset.shape[0], batch_size)]
    if isinstance(dataset, Iterable) and not isinstance(dataset, (str, bytes, Mapping)):
        return dataset
    raise FairnessConfigError(
        f"images must be an image tensor (N, C, H, W) in [0, 1] or a re-iterable of "
        f"batches (e.g. a DataLoader with shuffle=False); got {type(dataset).__name__}.")


def _numbered_batches(dataset: Any, batch_size: int) -> Iterator[tuple[Any, list[int]]]:
    """The image batches, each with the numbers of its rows (the noise keys)."""
    import numpy as np
    import torch
    start = 0
    for images in _batches(dataset, batch_size):
        if isinstance(images, Mapping):
            images = images.get("image", images.get("images"))
        elif isinstance(images, (tuple, list)) and images:
            images = images[0]
        if isinstance(images, np.ndarray):
            images = torch.from_numpy(images)
        if not isinstance(images, torch.Tensor):
            raise InvalidDataError(
                f"each batch of images must be an image tensor, a (images, ...) tuple or a "
                f"dict with key 'image'; got {type(images).__name__}.")
        yield images, list(range(start, start + images.shape[0]))
        start += images.shape[0]


def _embedding_output(out: Any) -> dict[str, torch.Tensor]:
    """The embeddings of one model call: the output, or its first element."""
    import torch
    if isinstance(out, (tuple, list)):
        out = out[0]
    return {"embeddings": torch.as_tensor(out)}
