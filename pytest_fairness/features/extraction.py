"""Batched feature extraction: a dataset through a model, once per (model, data, transform)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_fairness.errors import FairnessConfigError, InvalidDataError, check_int, own_error
from pytest_fairness.features.cache import cached
from pytest_fairness.features.fingerprint import (
    cache_key,
    callable_fingerprint,
    model_fingerprint,
    normalization,
)
from pytest_fairness.features.forward import (
    as_outputs,
    forward_batches,
    resolve_device,
)
from pytest_fairness.features.progress import Progress, ProgressSink

if TYPE_CHECKING:
    import torch
    from numpy.typing import ArrayLike, NDArray
    from PIL import Image

    from pytest_fairness.data.dataset import FairnessDataset

__all__ = ["DefaultTransform", "Features", "extract_features", "extract_rows"]

__tracebackhide__ = own_error

_IDS = "__image_ids__"


class Features:
    """Model outputs for every row of a dataset, in the dataset's row order.

    Parameters
    ----------
    dataset : FairnessDataset
        Row ``i`` of every output is row ``i`` of ``dataset.frame``.
    outputs : mapping of str to ndarray
        Named 2-D arrays ``(len(dataset), d)``: ``"embeddings"``, ``"logits"``, hooked layer
        names, or the keys of a model that returns a dict.
    key, from_cache : str or None, bool
        The cache key the outputs were stored under; whether they were read from the cache.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from pytest_fairness.data import FairnessDataset
    >>> ds = FairnessDataset(pd.DataFrame({"image_id": ["a", "b"], "path": ["a", "b"],
    ...                                    "gender": ["f", "m"]}))
    >>> f = Features(ds, {"embeddings": np.eye(2)})
    >>> f.embeddings.shape, f.groups(by="gender").tolist()
    ((2, 2), ['f', 'm'])
    """

    def __init__(self, dataset: FairnessDataset, outputs: Mapping[str, ArrayLike], *,
                 key: str | None = None, from_cache: bool = False) -> None:
        import numpy as np
        if not outputs:
            raise InvalidDataError(
                "features: the model returned no outputs; return a tensor (embeddings), a "
                "pair (embeddings, logits) or a dict of named tensors.")
        arrays: dict[str, NDArray[Any]] = {}
        for name, value in outputs.items():
            array = np.asarray(value)
            if array.ndim == 1:
                array = array.reshape(-1, 1)
            if array.ndim != 2 or array.shape[0] != len(dataset):
                raise InvalidDataError(
                    f"features: output {name!r} has shape {array.shape}; expected "
                    f"({len(dataset)}, d), one row per image of dataset {dataset.name!r}.")
            arrays[str(name)] = array
        self.dataset = dataset
        self.outputs = arrays
        self.key = key
        self.from_cache = from_cache

    def __len__(self) -> int:
        return len(self.dataset)

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}={v.shape}" for k, v in self.outputs.items())
        return f"Features(dataset={self.dataset.name!r}, {shapes}, from_cache={self.from_cache})"

    def __getitem__(self, name: str) -> NDArray[Any]:
        if name not in self.outputs:
            raise KeyError(f"no output {name!r}; this model produced {sorted(self.outputs)}")
        return self.outputs[name]

    def __array__(self, dtype: Any = None, copy: Any = None) -> NDArray[Any]:
        import numpy as np
        return np.asarray(self.embeddings, dtype=dtype)

    @property
    def frame(self) -> Any:
        """The dataset's attribute frame (row ``i`` ↔ feature row ``i``)."""
        return self.dataset.frame

    @property
    def embeddings(self) -> NDArray[Any]:
        """The ``"embeddings"`` output (or the only output when there is one)."""
        if "embeddings" in self.outputs:
            return self.outputs["embeddings"]
        if len(self.outputs) == 1:
            return next(iter(self.outputs.values()))
        raise KeyError(
            f"no 'embeddings' output; this model produced {sorted(self.outputs)}: pick one "
            "with features[name].")

    @property
    def logits(self) -> NDArray[Any]:
        """The ``"logits"`` output."""
        return self["logits"]

    @functools.cached_property
    def digest(self) -> str:
        """sha256 of the outputs (names, dtypes, shapes, values): equal digests, equal features."""
        import hashlib

        import numpy as np
        digest = hashlib.sha256()
        for name in sorted(self.outputs):
            array = np.ascontiguousarray(self.outputs[name])
            digest.update(f"{name}\0{array.dtype.str}\0{array.shape}\0".encode())
            digest.update(array.reshape(-1).view(np.uint8).data if array.size else b"")
        return digest.hexdigest()

    def groups(self, by: str | Sequence[str]) -> Any:
        """Group labels from the dataset frame (see :meth:`FairnessDataset.groups`)."""
        return self.dataset.groups(by)

    def subset(self, rows: Any) -> Features:
        """Rows of the features and the dataset together (mask, positions or image ids)."""
        import pandas as pd
        sub = self.dataset.subset(rows)
        positions = pd.Index(self.dataset.frame["image_id"]).get_indexer(sub.frame["image_id"])
        return Features(sub, {k: v[positions] for k, v in self.outputs.items()},
                        key=None, from_cache=self.from_cache)


class DefaultTransform:
    """Resize a PIL image to ``size × size`` (bilinear) and return a float tensor in [0, 1].

    Normalisation runs after the perturbation, on the batch: a perturbation acts on [0, 1].
    """

    def __init__(self, size: int = 224) -> None:
        self.size = check_int("size", size, low=1)

    def __call__(self, image: Image.Image) -> torch.Tensor:
        """Resize and convert one image."""
        from torchvision.transforms import functional as TF
        image = image.resize((self.size, self.size), resample=2)  # PIL.Image.BILINEAR
        tensor: torch.Tensor = TF.pil_to_tensor(image).float().div_(255.0)
        return tensor

    def __repr__(self) -> str:
        return f"DefaultTransform(size={self.size})"


class _ImageRows:
    """Map-style dataset for the DataLoader: row i → (image tensor, i). Picklable."""

    def __init__(self, dataset: FairnessDataset, transform: Callable[[Any], Any]) -> None:
        self.dataset = dataset
        self.transform = transform

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> tuple[Any, int]:
        return self.transform(self.dataset.load_image(index)), index


def _perturbation(perturbation: Any) -> tuple[Callable[[Any, Any], Any] | None, str]:
    """The batch function of a perturbation argument, and its fingerprint."""
    if perturbation is None:
        return None, "None"
    if isinstance(perturbation, tuple) and len(perturbation) in (2, 3) and isinstance(
            perturbation[0], str):
        from pytest_fairness.perturbations import perturb
        name, level, seed = (*perturbation, 0)[:3]

        def apply(batch: Any, index: Any) -> Any:
            return perturb(batch, name, level, seed=seed, index=index)

        return apply, f"perturb({name!r}, {level!r}, seed={seed!r})"
    if not callable(perturbation):
        raise FairnessConfigError(
            "perturbation must be a callable on image batches, a (name, level) or a (name, "
            f"level, seed) tuple; got perturbation={perturbation!r}.")
    return (lambda batch, index: perturbation(batch)), callable_fingerprint(perturbation)


def extract_features(model: Any, dataset: FairnessDataset, *,
                     transform: Callable[[Any], Any] | None = None, normalize: Any = "imagenet",
                     perturbation: Any = None, layers: Sequence[str] = (), batch_size: int = 64,
                     num_workers: int = 0, device: Any = "cpu", amp: bool = False,
                     cache_dir: str | os.PathLike[str] | None = None, model_id: str | None = None,
                     module: str | None = None, progress: bool | ProgressSink | None = None,
                     memory: MutableMapping[str, Features] | None = None) -> Features:
    r"""Run ``model`` over every image of ``dataset`` in batches; cache the outputs on disk.

    Row :math:`i` gives :math:`f(\mathrm{norm}(P(T(\mathrm{crop}(x_i)))))`, the model in eval
    mode under ``torch.inference_mode()``; the page "Wiring a model repository" shows it in use.

    Parameters
    ----------
    model : torch.nn.Module or callable
        A float batch ``(N, C, H, W)`` → a tensor (embeddings), a tuple ``(embeddings,
        logits)`` or a dict of named tensors.
    dataset : FairnessDataset
    transform : callable, optional
        PIL image → tensor ``(C, H, W)``; default :class:`DefaultTransform` (224).
    normalize : "imagenet", None or (mean, std)
        Per-channel normalisation after the perturbation.
    perturbation : callable, (name, level) or (name, level, seed), optional
        Applied to each batch before normalisation; a tuple calls
        :func:`pytest_fairness.perturbations.perturb` with the rows as noise keys.
    layers : sequence of str
        Sub-modules whose outputs a forward hook captures, flattened, under their names.
    batch_size, num_workers : int
        DataLoader settings.
    device, amp : str, bool
        ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"mps"`` or ``"auto"``; run under
        ``torch.autocast`` (outputs are stored as float32).
    cache_dir : str or Path, optional
        Where to cache; ``None`` disables the cache.
    model_id : str, optional
        Identify the model by this id instead of hashing its weights.
    module : str, optional
        Run only this sub-module (e.g. ``"backbone"``), keyed by its weights alone, so a new
        head on the same backbone reuses the cached features. ``layers`` are then within it.
    progress : bool or callable, optional
        A callable receiving :class:`ExtractionProgress` events, True (a bar on stderr) or
        False; by default the sink of :func:`progress_to`, else the bar on a terminal.
    memory : mutable mapping, optional
        An in-process memo (cache key → Features) checked before the disk; with ``cache_dir``.

    Returns
    -------
    Features
        Outputs aligned with ``dataset.frame``; ``from_cache`` says whether a forward pass ran.

    Examples
    --------
    >>> import torch, pandas as pd
    >>> from PIL import Image
    >>> from pytest_fairness.data import FairnessDataset
    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> for name in ("a", "b"):
    ...     Image.new("RGB", (8, 8), (255, 0, 0)).save(os.path.join(folder, name + ".png"))
    >>> ds = FairnessDataset(pd.DataFrame({"image_id": ["a", "b"],
    ...     "path": [os.path.join(folder, n + ".png") for n in "ab"]}))
    >>> model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.LazyLinear(4))
    >>> extract_features(model, ds, transform=DefaultTransform(8)).embeddings.shape
    (2, 4)
    """
    model = _checked(model, dataset, module, batch_size, num_workers, layers)
    transform = DefaultTransform() if transform is None else transform
    if not callable(transform):
        raise FairnessConfigError(f"transform must be callable; got transform={transform!r}.")
    norm, norm_spec = normalization(normalize)
    perturb_fn, perturb_spec = _perturbation(perturbation)
    torch_device = resolve_device(device)
    bar = Progress(dataset.name, perturbation, len(dataset), progress)

    def run() -> dict[str, NDArray[Any]]:
        return _run(model, dataset, transform, norm, perturb_fn, layers, batch_size,
                    num_workers, torch_device, amp, bar)

    if cache_dir is None:
        return Features(dataset, run(), key=None, from_cache=False)
    key = cache_key(model=model_fingerprint(model, model_id=model_id),
                    dataset=dataset.fingerprint, transform=callable_fingerprint(transform),
                    normalize=norm_spec, perturbation=perturb_spec, layers=list(layers),
                    amp=bool(amp))
    if memory is not None and key in memory:
        return memory[key]
    features = _cached(Path(cache_dir) / key[:2] / key, key, dataset, run)
    if memory is not None:
        memory[key] = features
    return features


def _checked(model: Any, dataset: Any, module: str | None, batch_size: Any, num_workers: Any,
             layers: Any) -> Any:
    """The model to run (``module`` of it when given), once the arguments are checked."""
    from pytest_fairness.data.dataset import FairnessDataset
    if not isinstance(dataset, FairnessDataset):
        raise FairnessConfigError(
            f"dataset must be a FairnessDataset (from a loader or load_manifest); got "
            f"{type(dataset).__name__}.")
    if not callable(model):
        raise FairnessConfigError(
            f"model must be a torch.nn.Module or a callable on image batches; got "
            f"{type(model).__name__}.")
    if module is not None:
        if getattr(model, "get_submodule", None) is None or not isinstance(module, str):
            raise FairnessConfigError(
                f"module={module!r} needs a torch.nn.Module model and a sub-module name; got "
                f"{type(model).__name__}.")
        try:
            model = model.get_submodule(module)
        except AttributeError:
            names = [n for n, _ in model.named_modules() if n][:10]
            raise FairnessConfigError(
                f"module: the model has no sub-module {module!r}; some names: {names}.") from None
    check_int("batch_size", batch_size, low=1)
    check_int("num_workers", num_workers, low=0)
    if isinstance(layers, str):
        raise FairnessConfigError(
            f"layers must be a sequence of module names; got the string layers={layers!r} "
            f"(write layers=[{layers!r}]).")
    return model


def _cached(entry: Path, key: str, dataset: FairnessDataset,
            run: Callable[[], dict[str, NDArray[Any]]]) -> Features:
    """The features at ``entry`` of the cache, extracted (and stored) when absent or damaged."""
    import numpy as np
    def extract() -> dict[str, NDArray[Any]]:
        return {**run(), _IDS: np.asarray(dataset.image_ids, dtype=str)}

    def check(arrays: Mapping[str, NDArray[Any]]) -> str | None:
        ids = arrays.get(_IDS)
        if ids is None or ids.dtype.kind != "U" or ids.tolist() != dataset.image_ids:
            return "does not match the dataset's rows"
        if len(arrays) == 1:
            return "is damaged (it holds no feature arrays)"
        for name, array in arrays.items():
            if array.dtype.kind not in "biuf" and name != _IDS:
                return f"is damaged ({name!r} holds {array.dtype} values, not numbers)"
            if array.ndim not in (1, 2) or array.shape[0] != len(dataset):
                return f"is damaged ({name!r} has shape {array.shape}, not ({len(dataset)}, d))"
        return None

    arrays, hit = cached(entry, extract, check=check)
    arrays.pop(_IDS)
    return Features(dataset, arrays, key=key, from_cache=hit)


def _run(model: Any, dataset: FairnessDataset, transform: Any, norm: Any, perturb_fn: Any,
         layers: Sequence[str], batch_size: int, num_workers: int, device: torch.device,
         amp: bool, bar: Progress, rows: Sequence[int] | None = None
         ) -> dict[str, NDArray[Any]]:
    import torch
    source: Any = _ImageRows(dataset, transform)
    if rows is not None:  # a part of the dataset; batches keep the dataset's row numbers
        source = torch.utils.data.Subset(source, list(rows))
    loader: Any = torch.utils.data.DataLoader(
        source, batch_size=batch_size, shuffle=False, num_workers=num_workers,
        pin_memory=device.type == "cuda", persistent_workers=False)
    module = model if isinstance(model, torch.nn.Module) else None
    captured: dict[str, object] = {}
    handles = []
    if layers and module is None:
        raise FairnessConfigError(
            f"layers={list(layers)!r} needs a torch.nn.Module model; got "
            f"{type(model).__name__}.")
    named = dict(module.named_modules()) if layers and module is not None else {}
    for name in layers:
        if name not in named:
            raise FairnessConfigError(
                f"layers: the model has no sub-module {name!r}; some names: "
                f"{[n for n in named if n][:10]}.")

        def hook(_m: Any, _inputs: Any, output: object, name: str = name) -> None:
            captured[name] = output

        handles.append(named[name].register_forward_hook(hook))

    def read(value: Any) -> dict[str, object]:
        outputs: dict[str, object] = {**as_outputs(value)}
        for name in layers:
            outputs[name] = captured.pop(name)
        return outputs

    was_training = module.training if module is not None else False
    if module is not None:
        module.eval()
    bar.begin()
    try:
        return forward_batches(
            model, ((images, index.tolist()) for images, index in loader), device=device,
            perturb=perturb_fn, normalize=norm, amp=amp, read=read, on_batch=bar.update)
    finally:
        bar.close()
        for handle in handles:
            handle.remove()
        if module is not None:
            module.train(was_training)


def extract_rows(model: Any, dataset: FairnessDataset, rows: Sequence[int], *,
                 transform: Callable[[Any], Any] | None = None, normalize: Any = "imagenet",
                 perturbation: Any = None, batch_size: int = 64, num_workers: int = 0,
                 device: Any = "cpu", progress: bool | ProgressSink | None = None
                 ) -> dict[str, NDArray[Any]]:
    """Run ``model`` over the given rows of ``dataset`` only: one part of a sharded job.

    The forward pass of :func:`extract_features`, without cache; noise is keyed by the row
    numbers, so the parts of a split extraction, stacked, equal the whole.

    Parameters
    ----------
    model, dataset, transform, normalize, perturbation, batch_size, num_workers, device, progress
        As for :func:`extract_features`.
    rows : sequence of int
        Row numbers of ``dataset``, in the order of the outputs.

    Returns
    -------
    dict of str to ndarray
        Every output, one row per entry of ``rows``.
    """
    check_int("batch_size", batch_size, low=1)
    check_int("num_workers", num_workers, low=0)
    transform = DefaultTransform() if transform is None else transform
    norm, _ = normalization(normalize)
    perturb_fn, _ = _perturbation(perturbation)
    bar = Progress(dataset.name, perturbation, len(rows), progress)
    return _run(model, dataset, transform, norm, perturb_fn, (), batch_size, num_workers,
                resolve_device(device), False, bar, rows=rows)
