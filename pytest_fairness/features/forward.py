"""The one batched forward loop: image batches through a model, outputs stacked."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_fairness.errors import FairnessConfigError, InvalidDataError, own_error, require

if TYPE_CHECKING:
    import torch
    from numpy.typing import NDArray

__all__ = ["as_outputs", "forward_batches", "resolve_device"]

__tracebackhide__ = own_error


def as_outputs(value: Any) -> dict[str, torch.Tensor]:
    """A model's output as named tensors: a tensor, an (embeddings, logits) pair, a dict."""
    import torch
    if isinstance(value, torch.Tensor):
        return {"embeddings": value}
    if isinstance(value, Mapping):
        tensors = {str(k): v for k, v in value.items() if isinstance(v, torch.Tensor)}
        if not tensors:
            raise InvalidDataError(
                f"the model returned a dict with no tensor (keys {list(value)[:5]}); return a "
                "dict of named tensors, one row per image.")
        return tensors
    if isinstance(value, (tuple, list)) and 1 <= len(value) <= 2 and all(
            isinstance(v, torch.Tensor) for v in value):
        return dict(zip(("embeddings", "logits"), value))
    raise InvalidDataError(
        f"the model returned {type(value).__name__}; return a tensor (embeddings), a "
        "tuple (embeddings, logits) or a dict of named tensors.")


def resolve_device(device: Any) -> torch.device:
    """``"auto"`` or None (CUDA when there is one), ``"cpu"``, ``"cuda:N"``, ``"mps"``: a device."""
    require("torch", purpose="extracting features (a model's forward pass)")
    import torch
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise FairnessConfigError(
            f"device must be 'cpu', 'cuda', 'cuda:N', 'mps' or 'auto'; got device={device!r}."
        ) from exc


def forward_batches(model: Callable[[Any], Any], batches: Iterable[tuple[Any, list[int]]], *,
                    device: torch.device | None = None,
                    perturb: Callable[[Any, list[int]], Any] | None = None,
                    normalize: tuple[Sequence[float], Sequence[float]] | None = None,
                    amp: bool = False, read: Callable[[Any], Mapping[str, object]] = as_outputs,
                    dtype: Any = None, on_batch: Callable[[int], None] | None = None
                    ) -> dict[str, NDArray[Any]]:
    """Run ``model`` over image batches and stack its outputs: the one batched forward loop.

    Each batch is moved to ``device``, perturbed, normalised and passed to ``model`` under
    ``torch.inference_mode()``; only one batch is in flight.

    Parameters
    ----------
    model : callable
        An image batch ``(N, C, H, W)`` → its outputs.
    batches : iterable of (tensor, list of int)
        The images and their row numbers (the keys of per-image noise), in order.
    device : torch.device, optional
        Where to run; None leaves each batch where it is.
    perturb, normalize : callable, (mean, std), optional
        ``perturb(images, rows)`` → perturbed images; then per-channel normalisation.
    amp : bool
        Run under ``torch.autocast``.
    read, dtype, on_batch : optional
        Model output → ``{name: tensor}`` (default :func:`as_outputs`); the stacked outputs'
        dtype (default float32); called with each batch's image count (progress).

    Returns
    -------
    dict of str to ndarray
        Every output, one row per image, flattened to ``(N, -1)``.
    """
    import numpy as np
    torch = require("torch", purpose="extracting features (a model's forward pass)")
    dtype = torch.float32 if dtype is None else dtype
    device_type = "cpu" if device is None else device.type
    if normalize is not None:
        mean = torch.tensor(normalize[0], device=device).view(1, -1, 1, 1)
        std = torch.tensor(normalize[1], device=device).view(1, -1, 1, 1)
    chunks: dict[str, list[NDArray[Any]]] = {}
    with torch.inference_mode(), torch.autocast(device_type=device_type, enabled=amp):
        for images, rows in batches:
            if device is not None:
                images = images.to(device, non_blocking=True)
            if perturb is not None:
                images = perturb(images, rows)
            if normalize is not None:
                images = (images - mean) / std
            for name, value in read(model(images)).items():
                if not isinstance(value, torch.Tensor):
                    raise InvalidDataError(
                        f"layer {name!r} produced {type(value).__name__}, not a tensor.")
                if value.dim() == 0:
                    raise InvalidDataError(
                        f"output {name!r} is one number for a batch of {len(rows)} images; "
                        "the model must return one row per image.")
                if value.shape[0] != len(rows):
                    raise InvalidDataError(
                        f"output {name!r} has {value.shape[0]} rows for a batch of "
                        f"{len(rows)} images; the model must return one row per image.")
                array = value.detach().to(dtype).reshape(len(rows), -1).cpu().numpy()
                earlier = chunks.setdefault(name, [])
                if earlier and array.shape[1] != earlier[0].shape[1]:
                    raise InvalidDataError(
                        f"output {name!r} has {array.shape[1]} values per image in this batch, "
                        f"{earlier[0].shape[1]} in the first; the width must not vary.")
                earlier.append(array)
            if on_batch is not None:
                on_batch(len(rows))
    return {name: np.concatenate(parts) for name, parts in chunks.items()}
