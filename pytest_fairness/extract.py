"""Batched feature extraction with a disk cache, and precomputed features.

:func:`extract_features` streams a :class:`~pytest_fairness.data.FairnessDataset` through a
torch ``DataLoader`` (worker processes, pinned memory on CUDA, inference mode, optional
AMP), calls the model once per batch and returns :class:`Features` aligned with the
dataset's frame. Images are never all in memory: only one batch (per worker) is.

The cache stores one ``.npz`` per (model, dataset, transform, perturbation) under
``cache_dir``, keyed by

* the model: a sha256 of its ``state_dict`` and architecture (``repr``), or a given id;
  with ``module="backbone"`` only that sub-module runs and only it is hashed, so a new head
  on the same backbone reuses the cached features;
* the dataset: :attr:`FairnessDataset.fingerprint` (annotations and file list);
* the transform, the normalisation, the perturbation and the hooked layers.

Writes are atomic (a temporary file, then ``os.replace``) and each entry has a file lock,
so two pytest-xdist workers asking for the same features extract them once: the second
waits for the lock, then reads what the first wrote. Every member of an entry has a CRC-32
and the entry a sha256 of its arrays: a damaged entry (truncated, flipped bytes, a member
missing or not an array, a directory in its place) is never read as features; a warning
names it and the features are recomputed.

Precomputed features (``.npy``, ``.npz``, ``.parquet``) are read by
:func:`load_precomputed`, so extraction can run elsewhere and the gate stays cheap.
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
import inspect
import json
import os
import struct
import sys
import tempfile
import time
import tokenize
import warnings
import weakref
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, final

from pytest_fairness.errors import FairnessConfigError, FairnessError, InvalidDataError

if TYPE_CHECKING:
    import torch
    from numpy.typing import NDArray
    from PIL import Image

    from pytest_fairness.data.dataset import FairnessDataset

__all__ = [
    "DefaultTransform",
    "ExtractionProgress",
    "Features",
    "ProgressSink",
    "cache_key",
    "callable_fingerprint",
    "extract_features",
    "extract_rows",
    "forward_batches",
    "load_precomputed",
    "model_fingerprint",
    "normalize_spec",
    "progress_to",
]

#: Bumped when the cache layout or the meaning of an entry changes (2: entries carry a
#: sha256 of their arrays).
CACHE_VERSION = 2
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
_IDS = "__image_ids__"
_DIGEST = "__sha256__"


# -- features ------------------------------------------------------------------------------
class Features:
    """Model outputs for every row of a dataset, in the dataset's row order.

    Parameters
    ----------
    dataset : FairnessDataset
        The images the outputs belong to; row ``i`` of every output is row ``i`` of
        ``dataset.frame``.
    outputs : mapping of str to ndarray
        Named 2-D arrays ``(len(dataset), d)``: ``"embeddings"``, ``"logits"``, hooked layer
        names, or the keys of a model that returns a dict.
    key : str, optional
        The cache key the outputs were stored under.
    from_cache : bool
        Whether they were read from the cache (no forward pass ran).

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

    def __init__(self, dataset: FairnessDataset, outputs: Mapping[str, Any], *,
                 key: str | None = None, from_cache: bool = False) -> None:
        import numpy as np

        if not outputs:
            raise InvalidDataError(
                "features: the model returned no outputs; return a tensor (embeddings), a "
                "pair (embeddings, logits) or a dict of named tensors."
            )
        arrays: dict[str, NDArray[Any]] = {}
        for name, value in outputs.items():
            array = np.asarray(value)
            if array.ndim == 1:
                array = array.reshape(-1, 1)
            if array.ndim != 2 or array.shape[0] != len(dataset):
                raise InvalidDataError(
                    f"features: output {name!r} has shape {array.shape}; expected "
                    f"({len(dataset)}, d), one row per image of dataset {dataset.name!r}."
                )
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
            raise KeyError(
                f"no output {name!r}; this model produced {sorted(self.outputs)}"
            )
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
            "with features[name]."
        )

    @property
    def logits(self) -> NDArray[Any]:
        """The ``"logits"`` output."""
        return self["logits"]

    @functools.cached_property
    def digest(self) -> str:
        """sha256 of the outputs (names, dtypes, shapes and values), computed once.

        Equal digests mean equal features: two checkpoints whose features share a digest
        measured the same model.
        """
        return _arrays_digest(self.outputs)

    def groups(self, by: str | Sequence[str]) -> Any:
        """Group labels from the dataset frame (see :meth:`FairnessDataset.groups`)."""
        return self.dataset.groups(by)

    def subset(self, rows: Any) -> Features:
        """Rows of the features and the dataset together (mask, positions or image ids)."""
        import numpy as np

        sub = self.dataset.subset(rows)
        index = {v: i for i, v in enumerate(self.dataset.frame["image_id"])}
        positions = np.array([index[v] for v in sub.frame["image_id"]], dtype=np.intp)
        return Features(sub, {k: v[positions] for k, v in self.outputs.items()},
                        key=None, from_cache=self.from_cache)


# -- transforms and fingerprints -----------------------------------------------------------
class DefaultTransform:
    """Resize a PIL image to ``size × size`` (bilinear, antialiased) and return a float tensor.

    Values stay in [0, 1] so a perturbation can act on them; normalisation (ImageNet mean
    and std by default) runs after the perturbation, on the batch.
    """

    def __init__(self, size: int = 224) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise FairnessConfigError(f"size must be a positive int; got size={size!r}.")
        self.size = size

    def __call__(self, image: Image.Image) -> torch.Tensor:
        """Resize and convert one image."""
        from torchvision.transforms import functional as TF

        image = image.resize((self.size, self.size), resample=2)  # PIL.Image.BILINEAR
        tensor: torch.Tensor = TF.pil_to_tensor(image).float().div_(255.0)
        return tensor

    def __repr__(self) -> str:
        return f"DefaultTransform(size={self.size})"


def callable_fingerprint(obj: Any) -> str:
    """A string that changes when a transform/perturbation/model callable changes.

    Uses, in order: a ``fairness_fingerprint`` attribute; the ``repr`` when it does not
    contain a memory address (torchvision transforms, dataclasses, :class:`Perturbation`);
    otherwise the qualified name plus a hash of the code, constants, defaults and closure.

    Examples
    --------
    >>> callable_fingerprint(DefaultTransform(224))
    'DefaultTransform(size=224)'
    """
    if obj is None:
        return "None"
    explicit = getattr(obj, "fairness_fingerprint", None)
    if explicit is not None:
        return str(explicit() if callable(explicit) else explicit)
    text = repr(obj)
    if " at 0x" not in text and "object at" not in text:
        return text
    function = getattr(obj, "func", None) if hasattr(obj, "keywords") else None  # partial
    if function is not None:
        return (f"partial({callable_fingerprint(function)}, "
                f"{[callable_fingerprint(a) for a in obj.args]}, "
                f"{ {k: callable_fingerprint(v) for k, v in sorted(obj.keywords.items())} })")
    code = getattr(obj, "__code__", None)
    if code is None:
        code = getattr(vars(type(obj)).get("__call__"), "__code__", None)
    digest = hashlib.sha256()
    if code is not None:
        try:
            digest.update(inspect.getsource(code).encode())
        except (OSError, TypeError):
            digest.update(code.co_code)
            digest.update(repr(code.co_consts).encode())
    for cell in getattr(obj, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        digest.update(_value_fingerprint(value).encode())
    for value in getattr(obj, "__defaults__", None) or ():
        digest.update(_value_fingerprint(value).encode())
    if hasattr(obj, "__dict__") and not inspect.isfunction(obj):
        for name, value in sorted(vars(obj).items()):
            digest.update(name.encode() + _value_fingerprint(value).encode())
    name = getattr(obj, "__qualname__", type(obj).__qualname__)
    return f"{getattr(obj, '__module__', '')}.{name}#{digest.hexdigest()[:16]}"


def _value_fingerprint(value: Any) -> str:
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.nn.Module):
        return model_fingerprint(value)
    if torch is not None and isinstance(value, torch.Tensor):
        return _tensor_digest(value)
    if callable(value) and not isinstance(value, type):
        return callable_fingerprint(value)
    text = repr(value)
    return text if " at 0x" not in text else type(value).__qualname__


def _tensor_digest(tensor: torch.Tensor) -> str:
    data = tensor.detach().cpu().contiguous().reshape(-1)
    raw = data.view(__import__("torch").uint8) if data.numel() else data
    digest = hashlib.sha256(f"{tensor.dtype}{tuple(tensor.shape)}".encode())
    digest.update(raw.numpy().data)  # a memoryview: no copy of the weights
    return digest.hexdigest()


_MODEL_MEMO: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], str]] = (
    weakref.WeakKeyDictionary()
)


def model_fingerprint(model: Any, *, model_id: str | None = None) -> str:
    """Identify a model's weights and architecture for the cache key.

    ``model_id`` wins when given (e.g. a checkpoint id), then a ``fairness_fingerprint``
    attribute of the model (set it where the model is built, e.g. in the ``fairness_model``
    fixture, to name the model once for every extraction). An ``nn.Module`` (or a bound
    method of one) hashes its ``state_dict`` and ``repr``; the hash is memoised until a
    parameter or buffer changes in place. Another callable is fingerprinted with
    :func:`callable_fingerprint` (modules it closes over are hashed too).

    Examples
    --------
    >>> model_fingerprint(print, model_id="resnet50-epoch-90")
    'id:resnet50-epoch-90'
    """
    if model_id is not None:
        return f"id:{model_id}"
    explicit = getattr(model, "fairness_fingerprint", None)
    if explicit is not None:  # the fixture named its model
        return f"id:{explicit() if callable(explicit) else explicit}"
    torch = sys.modules.get("torch")
    owner = getattr(model, "__self__", None)
    if torch is not None and not isinstance(model, torch.nn.Module) and isinstance(
            owner, torch.nn.Module):
        return f"{model_fingerprint(owner)}.{getattr(model, '__name__', '?')}"
    if torch is None or not isinstance(model, torch.nn.Module):
        return "callable:" + callable_fingerprint(model)
    state = model.state_dict(keep_vars=True)
    version = tuple((k, v.data_ptr(), v._version, tuple(v.shape)) for k, v in state.items())
    memo = _MODEL_MEMO.get(model)
    if memo is not None and memo[0] == version:
        return memo[1]
    digest = hashlib.sha256(repr(model).encode())
    for name, tensor in state.items():
        digest.update(name.encode() + b"\0" + _tensor_digest(tensor).encode())
    result = "state:" + digest.hexdigest()
    _MODEL_MEMO[model] = (version, result)
    return result


def normalize_spec(normalize: Any) -> str:
    """How a normalisation is recorded: ``"imagenet"``, ``"None"`` or the (mean, std) pair."""
    return _normalizer(normalize)[1]


def cache_key(**parts: Any) -> str:
    """sha256 of the JSON of the named parts (sorted), prefixed by the cache version."""
    payload = json.dumps({"version": CACHE_VERSION, **parts}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


# -- the torch side -----------------------------------------------------------------------
class _ImageRows:
    """Map-style dataset for the DataLoader: row i → (image tensor, i). Picklable."""

    def __init__(self, dataset: FairnessDataset, transform: Callable[[Any], Any]) -> None:
        self.dataset = dataset
        self.transform = transform

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> tuple[Any, int]:
        return self.transform(self.dataset.load_image(index)), index


def _as_outputs(value: Any) -> dict[str, Any]:
    import torch

    if isinstance(value, torch.Tensor):
        return {"embeddings": value}
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items() if isinstance(v, torch.Tensor)}
    if isinstance(value, (tuple, list)) and 1 <= len(value) <= 2 and all(
            isinstance(v, torch.Tensor) for v in value):
        return dict(zip(("embeddings", "logits"), value))
    raise InvalidDataError(
        f"fairness_model returned {type(value).__name__}; return a tensor (embeddings), a "
        "tuple (embeddings, logits) or a dict of named tensors."
    )


@final
@dataclass(frozen=True)
class ExtractionProgress:
    """Where one extraction stands; sent when it starts, after every batch, and at its end.

    Parameters
    ----------
    dataset : str
        The dataset's name.
    perturbation : str or None
        The perturbation applied (``"gaussian_blur 0.5"``), or None for clean images.
    done, total : int
        Images extracted so far, and in all.
    elapsed : float
        Seconds since the extraction started.
    finished : bool
        True on the last event of an extraction.

    Examples
    --------
    >>> p = ExtractionProgress("faces", None, done=50, total=100, elapsed=2.0)
    >>> p.rate, p.eta
    (25.0, 2.0)
    """

    dataset: str
    perturbation: str | None
    done: int
    total: int
    elapsed: float
    finished: bool = False

    @property
    def milestone(self) -> bool:
        """The start or the end of an extraction: what a log without a live line shows."""
        return self.finished or not self.done

    @property
    def rate(self) -> float | None:
        """Images per second so far (None before the first batch)."""
        return self.done / self.elapsed if self.done and self.elapsed > 0 else None

    @property
    def eta(self) -> float | None:
        """Seconds left at the current rate (None before the first batch)."""
        rate = self.rate
        return None if rate is None else max(self.total - self.done, 0) / rate


#: Receives the :class:`ExtractionProgress` events of extractions.
ProgressSink = Callable[[ExtractionProgress], None]

_SINK: contextvars.ContextVar[ProgressSink | None] = contextvars.ContextVar(
    "pytest_fairness_progress", default=None
)


@contextmanager
def progress_to(sink: ProgressSink | None) -> Iterator[None]:
    """Send the progress of extractions run in the block (``progress=None``) to ``sink``.

    The pytest plugin wraps each fairness test in it, so that extraction progress reaches
    pytest's terminal writer.
    """
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


def _stderr_bar(event: ExtractionProgress) -> None:
    """The stand-alone progress bar: one line on stderr, rewritten in place."""
    width = 30
    filled = int(width * event.done / max(event.total, 1))
    what = event.dataset + (f" ({event.perturbation})" if event.perturbation else "")
    rate = "" if event.rate is None else f" ({event.rate:.0f}/s)"
    sys.stderr.write(f"\rfairness: extracting {what} [{'#' * filled}{'.' * (width - filled)}] "
                     f"{event.done}/{event.total} images{rate}")
    if event.finished:
        sys.stderr.write("\n")
    sys.stderr.flush()


class _Progress:
    """Sends the :class:`ExtractionProgress` of one extraction to its sink.

    ``progress`` is the keyword of :func:`extract_features`: a sink, True (the stderr bar),
    False (nothing), or None: the sink set by :func:`progress_to`, else the stderr bar when
    stderr is a terminal.
    """

    def __init__(self, dataset: str, perturbation: str | None, total: int,
                 progress: bool | ProgressSink | None) -> None:
        sink: ProgressSink | None
        if progress is None:
            sink = _SINK.get() or (_stderr_bar if sys.stderr.isatty() else None)
        elif progress is True:
            sink = _stderr_bar
        elif progress is False:
            sink = None
        elif callable(progress):
            sink = progress
        else:
            raise FairnessConfigError(
                "progress must be True, False, None or a callable taking ExtractionProgress; "
                f"got progress={progress!r}."
            )
        self.sink = sink
        self.dataset, self.perturbation, self.total = dataset, perturbation, total
        self.done = 0
        self.start = time.perf_counter()

    def _send(self, finished: bool = False) -> None:
        if self.sink is not None:
            self.sink(ExtractionProgress(self.dataset, self.perturbation, self.done, self.total,
                                         time.perf_counter() - self.start, finished))

    def begin(self) -> None:
        """The extraction starts (a forward pass will run)."""
        self.done = 0
        self.start = time.perf_counter()
        self._send()

    def update(self, n: int) -> None:
        """``n`` more images are done."""
        self.done += n
        self._send()

    def close(self) -> None:
        """The extraction ended."""
        self._send(finished=True)


def _perturbation_label(perturbation: Any) -> str | None:
    """How progress lines name a perturbation: ``"gaussian_blur 0.5"``."""
    if perturbation is None:
        return None
    if isinstance(perturbation, tuple) and perturbation and isinstance(perturbation[0], str):
        label = " ".join([perturbation[0], *(f"{v:g}" if isinstance(v, float) else str(v)
                                             for v in perturbation[1:2])])
        if len(perturbation) == 3 and perturbation[2]:
            label += f" seed={perturbation[2]}"
        return label
    text = repr(perturbation)
    if " at 0x" in text or len(text) > 60:
        text = getattr(perturbation, "__name__", type(perturbation).__name__)
    return text


def _resolve_device(device: Any) -> torch.device:
    import torch

    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise FairnessConfigError(
            f"device must be 'cpu', 'cuda', 'cuda:N', 'mps' or 'auto'; got device={device!r}."
        ) from exc


def _check_positive(name: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise FairnessConfigError(f"{name} must be an int >= {minimum}; got {name}={value!r}.")
    return value


def _normalizer(normalize: Any) -> tuple[Any, str]:
    if normalize is None or normalize is False:
        return None, "None"
    if normalize == "imagenet":
        return (IMAGENET_MEAN, IMAGENET_STD), "imagenet"
    if isinstance(normalize, tuple) and len(normalize) == 2:
        mean, std = (tuple(float(v) for v in part) for part in normalize)
        return (mean, std), repr((mean, std))
    raise FairnessConfigError(
        f"normalize must be 'imagenet', None or a (mean, std) pair; got normalize={normalize!r}."
    )


def _perturbation(perturbation: Any) -> tuple[Callable[[Any, Any], Any] | None, str]:
    if perturbation is None:
        return None, "None"
    if isinstance(perturbation, tuple) and len(perturbation) in (2, 3) and isinstance(
            perturbation[0], str):
        from pytest_fairness.perturbations import perturb

        name, level = perturbation[0], perturbation[1]
        seed = perturbation[2] if len(perturbation) == 3 else 0

        def apply(batch: Any, index: Any) -> Any:
            return perturb(batch, name, level, seed=seed, index=index)

        return apply, f"perturb({name!r}, {level!r}, seed={seed!r})"
    if not callable(perturbation):
        raise FairnessConfigError(
            "perturbation must be a callable on image batches, a (name, level) or a (name, "
            f"level, seed) tuple; got perturbation={perturbation!r}."
        )
    return (lambda batch, index: perturbation(batch)), callable_fingerprint(perturbation)


def extract_features(
    model: Any,
    dataset: FairnessDataset,
    *,
    transform: Callable[[Any], Any] | None = None,
    normalize: Any = "imagenet",
    perturbation: Any = None,
    layers: Sequence[str] = (),
    batch_size: int = 64,
    num_workers: int = 0,
    device: Any = "cpu",
    amp: bool = False,
    cache_dir: str | os.PathLike[str] | None = None,
    model_id: str | None = None,
    module: str | None = None,
    progress: bool | ProgressSink | None = None,
    memory: MutableMapping[str, Features] | None = None,
) -> Features:
    r"""Run ``model`` over every image of ``dataset`` in batches; cache the outputs on disk.

    For row :math:`i`: :math:`o_i = f(\mathrm{norm}(P(T(\mathrm{crop}(x_i)))))` with the
    dataset's box/square crop, the transform :math:`T` (default: resize to 224×224, values
    in [0, 1]), the perturbation :math:`P` on the batch, normalisation, and the model
    :math:`f` under ``torch.inference_mode()`` (``model.eval()`` for the call).

    Parameters
    ----------
    model : torch.nn.Module or callable
        Maps a float batch ``(N, C, H, W)`` to a tensor (embeddings), a tuple
        ``(embeddings, logits)`` or a dict of named tensors.
    dataset : FairnessDataset
        The images.
    transform : callable, optional
        PIL image → tensor ``(C, H, W)``; default :class:`DefaultTransform` (224).
    normalize : "imagenet", None or (mean, std)
        Per-channel normalisation after the perturbation.
    perturbation : callable, (name, level) or (name, level, seed), optional
        Applied to each batch before normalisation; a tuple calls
        :func:`pytest_fairness.perturbations.perturb` with the rows as noise keys.
    layers : sequence of str
        Names of sub-modules (``dict(model.named_modules())``) whose outputs are captured by
        a forward hook, flattened, under their own names.
    batch_size, num_workers : int
        DataLoader settings.
    device : str
        ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"mps"`` or ``"auto"``.
    amp : bool
        Run under ``torch.autocast`` (outputs are stored as float32).
    cache_dir : str or Path, optional
        Where to cache; ``None`` disables the cache.
    model_id : str, optional
        Identify the model by this id instead of hashing its weights.
    module : str, optional
        Run only this sub-module of ``model`` (a name of ``dict(model.named_modules())``,
        e.g. ``"backbone"``) and return its outputs. The cache is keyed by that sub-module's
        weights alone, so a model with a new head and the same backbone reuses the cached
        backbone features: no forward pass runs. ``layers`` are then names within it.
    progress : bool or callable, optional
        Where progress goes: a callable receiving :class:`ExtractionProgress` events, True
        (a bar on stderr) or False (nowhere). By default the sink set by
        :func:`progress_to` (under pytest, the plugin shows it through pytest's terminal
        writer), else the bar when stderr is a terminal.
    memory : mutable mapping, optional
        An in-process memo (cache key → Features) checked before the disk, so repeated
        calls in one session skip even the file read. Used only with ``cache_dir``.

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
    from pytest_fairness.data.dataset import FairnessDataset

    if not isinstance(dataset, FairnessDataset):
        raise FairnessConfigError(
            f"dataset must be a FairnessDataset (from a loader or load_manifest); got "
            f"{type(dataset).__name__}."
        )
    if not callable(model):
        raise FairnessConfigError(
            f"model must be a torch.nn.Module or a callable on image batches; got "
            f"{type(model).__name__}."
        )
    if module is not None:
        model = _submodule(model, module)
    _check_positive("batch_size", batch_size)
    _check_positive("num_workers", num_workers, 0)
    if isinstance(layers, str):
        raise FairnessConfigError(
            f"layers must be a sequence of module names; got the string layers={layers!r} "
            f"(write layers=[{layers!r}])."
        )
    transform = DefaultTransform() if transform is None else transform
    if not callable(transform):
        raise FairnessConfigError(f"transform must be callable; got transform={transform!r}.")
    norm, norm_spec = _normalizer(normalize)
    perturb_fn, perturb_spec = _perturbation(perturbation)
    torch_device = _resolve_device(device)
    bar = _Progress(dataset.name, _perturbation_label(perturbation), len(dataset), progress)

    key = entry = None
    if cache_dir is not None:
        key = cache_key(
            model=model_fingerprint(model, model_id=model_id),
            dataset=dataset.fingerprint,
            transform=callable_fingerprint(transform),
            normalize=norm_spec,
            perturbation=perturb_spec,
            layers=list(layers),
            amp=bool(amp),
        )
        if memory is not None and key in memory:
            return memory[key]
        entry = Path(cache_dir) / key[:2] / f"{key}.npz"
        features = _cached_or_extract(entry, key, model, dataset, transform, norm, perturb_fn,
                                      layers, batch_size, num_workers, torch_device, amp,
                                      bar)
        if memory is not None:
            memory[key] = features
        return features
    outputs = _run(model, dataset, transform, norm, perturb_fn, layers, batch_size,
                   num_workers, torch_device, amp, bar)
    return Features(dataset, outputs, key=None, from_cache=False)


def _submodule(model: Any, name: str) -> Any:
    """``model.get_submodule(name)``, or a FairnessConfigError listing some names."""
    get = getattr(model, "get_submodule", None)
    if get is None or not isinstance(name, str):
        raise FairnessConfigError(
            f"module={name!r} needs a torch.nn.Module model and a sub-module name; got "
            f"{type(model).__name__}."
        )
    try:
        return get(name)
    except AttributeError:
        names = [n for n, _ in model.named_modules() if n][:10]
        raise FairnessConfigError(
            f"module: the model has no sub-module {name!r}; some names: {names}."
        ) from None


def _cached_or_extract(entry: Path, key: str, model: Any, dataset: FairnessDataset,
                       transform: Any, norm: Any, perturb_fn: Any, layers: Sequence[str],
                       batch_size: int, num_workers: int, torch_device: torch.device,
                       amp: bool, bar: _Progress) -> Features:
    """Read the entry, or extract under the entry's file lock and write it atomically."""
    cached = _read_entry(entry, dataset)
    if cached is not None:
        return Features(dataset, cached, key=key, from_cache=True)
    entry.parent.mkdir(parents=True, exist_ok=True)
    from filelock import FileLock

    with FileLock(str(entry) + ".lock"):
        cached = _read_entry(entry, dataset)  # another process may have just written it
        if cached is not None:
            return Features(dataset, cached, key=key, from_cache=True)
        outputs = _run(model, dataset, transform, norm, perturb_fn, layers, batch_size,
                       num_workers, torch_device, amp, bar)
        _write_entry(entry, outputs, dataset)
    return Features(dataset, outputs, key=key, from_cache=False)


def _run(model: Any, dataset: FairnessDataset, transform: Any, norm: Any, perturb_fn: Any,
         layers: Sequence[str], batch_size: int, num_workers: int, device: torch.device,
         amp: bool, bar: _Progress, rows: Sequence[int] | None = None
         ) -> dict[str, NDArray[Any]]:
    import torch

    source: Any = _ImageRows(dataset, transform)
    if rows is not None:  # a part of the dataset; batches keep the dataset's row numbers
        source = torch.utils.data.Subset(source, list(rows))
    loader: Any = torch.utils.data.DataLoader(
        source,
        batch_size=batch_size,
        shuffle=False,
        num_workers=num_workers,
        pin_memory=device.type == "cuda",
        persistent_workers=False,
    )
    module = model if isinstance(model, torch.nn.Module) else None
    captured: dict[str, Any] = {}
    handles = []
    if layers:
        if module is None:
            raise FairnessConfigError(
                f"layers={list(layers)!r} needs a torch.nn.Module model; got "
                f"{type(model).__name__}."
            )
        named = dict(module.named_modules())
        for name in layers:
            if name not in named:
                raise FairnessConfigError(
                    f"layers: the model has no sub-module {name!r}; some names: "
                    f"{[n for n in named if n][:10]}."
                )

            def hook(_m: Any, _inputs: Any, output: Any, name: str = name) -> None:
                captured[name] = output

            handles.append(named[name].register_forward_hook(hook))

    def read(value: Any) -> dict[str, Any]:
        outputs = _as_outputs(value)
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
            perturb=perturb_fn, normalize=norm, amp=amp, read=read, on_batch=bar.update,
        )
    finally:
        bar.close()
        for handle in handles:
            handle.remove()
        if module is not None:
            module.train(was_training)


def extract_rows(
    model: Any,
    dataset: FairnessDataset,
    rows: Sequence[int],
    *,
    transform: Callable[[Any], Any] | None = None,
    normalize: Any = "imagenet",
    perturbation: Any = None,
    batch_size: int = 64,
    num_workers: int = 0,
    device: Any = "cpu",
    progress: bool | ProgressSink | None = None,
) -> dict[str, NDArray[Any]]:
    """Run ``model`` over the given rows of ``dataset`` only: one part of a sharded job.

    The same forward pass as :func:`extract_features` (same arguments, no cache), over the
    images ``rows`` (row numbers of ``dataset``, in that order). Perturbation noise is keyed
    by those row numbers, so the parts of a split extraction, stacked, equal the whole.

    Returns
    -------
    dict of str to ndarray
        Every output, one row per entry of ``rows``.
    """
    _check_positive("batch_size", batch_size)
    _check_positive("num_workers", num_workers, 0)
    transform = DefaultTransform() if transform is None else transform
    norm, _ = _normalizer(normalize)
    perturb_fn, _ = _perturbation(perturbation)
    bar = _Progress(dataset.name, _perturbation_label(perturbation), len(rows), progress)
    return _run(model, dataset, transform, norm, perturb_fn, (), batch_size, num_workers,
                _resolve_device(device), False, bar, rows=rows)


def forward_batches(
    model: Callable[[Any], Any],
    batches: Iterable[tuple[Any, list[int]]],
    *,
    device: torch.device | None = None,
    perturb: Callable[[Any, list[int]], Any] | None = None,
    normalize: tuple[Sequence[float], Sequence[float]] | None = None,
    amp: bool = False,
    read: Callable[[Any], Mapping[str, Any]] = _as_outputs,
    dtype: Any = None,
    on_batch: Callable[[int], None] | None = None,
) -> dict[str, NDArray[Any]]:
    """Run ``model`` over image batches and stack its outputs: the one batched forward loop.

    Each batch ``(images, rows)`` is moved to ``device``, perturbed with ``perturb(images,
    rows)`` (the row numbers key per-image noise), normalised, and passed to ``model`` under
    ``torch.inference_mode()`` (and ``torch.autocast`` with ``amp``). Only one batch is in
    flight, so the images are never all in memory.

    Parameters
    ----------
    model : callable
        An image batch ``(N, C, H, W)`` → its outputs.
    batches : iterable of (tensor, list of int)
        The images and their row numbers, in order.
    device : torch.device, optional
        Where to run; None leaves each batch where it is.
    perturb : callable, optional
        ``perturb(images, rows)`` → perturbed images.
    normalize : (mean, std), optional
        Per-channel normalisation after the perturbation.
    amp : bool
        Run under ``torch.autocast``.
    read : callable
        Model output → ``{name: tensor}``; by default a tensor (embeddings), a tuple
        ``(embeddings, logits)`` or a dict of named tensors.
    dtype : torch.dtype, optional
        The dtype of the stacked outputs; default float32.
    on_batch : callable, optional
        Called with the number of images of each batch done (progress).

    Returns
    -------
    dict of str to ndarray
        Every output, one row per image, flattened to ``(N, -1)``.
    """
    import numpy as np
    import torch

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
                        f"layer {name!r} produced {type(value).__name__}, not a tensor."
                    )
                if value.shape[0] != len(rows):
                    raise InvalidDataError(
                        f"output {name!r} has {value.shape[0]} rows for a batch of "
                        f"{len(rows)} images; the model must return one row per image."
                    )
                array = value.detach().to(dtype).reshape(len(rows), -1).cpu().numpy()
                chunks.setdefault(name, []).append(array)
            if on_batch is not None:
                on_batch(len(rows))
    return {name: np.concatenate(parts) for name, parts in chunks.items()}


# -- cache entries -------------------------------------------------------------------------
class _Damaged(Exception):
    """An ``.npz``/``.npy`` file that cannot be read back as it was written; says why."""


# What a damaged zip or npy file raises from zipfile, zlib, struct and numpy's header parser
# (bad CRC-32, truncated members, unsupported compression, an unparsable header: numpy's
# fallback parser lets tokenize.TokenError out, ...).
_READ_ERRORS = (zipfile.BadZipFile, zlib.error, struct.error, tokenize.TokenError, SyntaxError,
                OSError, EOFError, ValueError, KeyError, TypeError, NotImplementedError,
                RuntimeError, OverflowError)


def _read_npy(stream: Any, size: int, name: str) -> NDArray[Any]:
    """One ``.npy`` array from ``stream`` holding ``size`` bytes, its header checked first.

    numpy would allocate whatever shape a damaged header claims before noticing the data is
    short; here the header must agree with the size, and object arrays (pickles) are refused.
    """
    import numpy as np
    from numpy.lib import format as npy

    version = npy.read_magic(stream)
    read_header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
    shape, fortran, dtype = read_header(stream)
    if dtype.hasobject:
        raise _Damaged(f"{name} holds Python objects (a pickle), which are never loaded")
    count = 1
    for extent in shape:
        count *= int(extent)
    expected = count * dtype.itemsize
    if stream.tell() + expected != size:
        raise _Damaged(f"{name}'s header says shape {tuple(shape)} of {dtype} "
                       f"({expected} bytes) but it holds {size - stream.tell()}")
    array = np.empty(shape, dtype=dtype, order="F" if fortran else "C")
    if expected:
        view = array.reshape(-1, order="A").view(np.uint8)
        if stream.readinto(view.data) != expected:
            raise _Damaged(f"{name} ends before its data")
    if stream.read(1):
        raise _Damaged(f"{name} holds more bytes than its header says")
    return array


def _read_arrays(file: Path) -> dict[str, NDArray[Any]]:
    """Every array of an ``.npz`` (or the one of an ``.npy``) file, read strictly.

    ``numpy.load`` lets damage through as bare ``zipfile``/``zlib`` errors, returns a member
    that is not an ``.npy`` array as ``bytes``, and trusts a damaged header's shape. Here
    every member must be a whole ``.npy`` array whose CRC-32 and header check out;
    anything else raises :class:`_Damaged` naming the member and the problem.
    """
    try:
        if file.suffix.lower() == ".npy":
            with open(file, "rb") as handle:
                return {"": _read_npy(handle, os.fstat(handle.fileno()).st_size, "the array")}
        arrays: dict[str, NDArray[Any]] = {}
        with zipfile.ZipFile(file) as archive:
            for info in archive.infolist():
                name = info.filename
                if not name.endswith(".npy") or info.is_dir():  # is_dir fails on an empty name
                    raise _Damaged(f"member {name!r} is not an .npy array")
                key = name[:-4]
                if key in arrays:
                    raise _Damaged(f"member {name!r} appears twice")
                try:
                    with archive.open(info) as member:  # reading to the end checks the CRC-32
                        arrays[key] = _read_npy(member, info.file_size, f"member {name!r}")
                except _READ_ERRORS as exc:
                    raise _Damaged(f"member {name!r}: {type(exc).__name__}: {exc}") from None
        return arrays
    except _Damaged:
        raise
    except _READ_ERRORS as exc:
        raise _Damaged(f"{type(exc).__name__}: {exc}") from None


def _numeric_outputs(arrays: Mapping[str, NDArray[Any]], rows: int) -> str | None:
    """Why ``arrays`` are not feature outputs of ``rows`` rows (numbers, 1-D or 2-D), or None."""
    if not arrays:
        return "it holds no feature arrays"
    for name, array in arrays.items():
        if array.dtype.kind not in "biuf":
            return f"{name!r} holds {array.dtype} values, not numbers"
        if array.ndim not in (1, 2) or array.shape[0] != rows:
            return f"{name!r} has shape {array.shape}, not ({rows}, d)"
    return None


def _arrays_digest(arrays: Mapping[str, NDArray[Any]]) -> str:
    """sha256 of named arrays: their names, dtypes, shapes and bytes.

    An entry rewritten with other well-formed arrays (a member dropped, retyped or replaced)
    passes the zip's CRC-32 checks but no longer matches it.
    """
    import numpy as np

    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}\0{array.dtype.str}\0{array.shape}\0".encode())
        digest.update(array.reshape(-1).view(np.uint8).data if array.size else b"")
    return digest.hexdigest()


def _read_entry(entry: Path, dataset: FairnessDataset) -> dict[str, NDArray[Any]] | None:
    """The outputs cached at ``entry``; None (with a warning if it was damaged) to recompute."""
    if entry.is_dir():
        warnings.warn(f"fairness cache: entry {str(entry)!r} is a directory, not a cache file; "
                      "the features are recomputed and not cached until you remove it.",
                      stacklevel=3)
        return None
    if not entry.is_file():
        return None
    try:
        arrays = _read_arrays(entry)
    except _Damaged as exc:
        problem = f"is damaged ({exc})"
    else:
        digest = arrays.pop(_DIGEST, None)
        ids = arrays.get(_IDS)
        if digest is None or digest.shape != () or str(digest) != _arrays_digest(arrays):
            problem = "is damaged (its sha256 does not match its arrays)"
        elif ids is None or ids.dtype.kind != "U" or ids.tolist() != dataset.image_ids:
            problem = "does not match the dataset's rows"
        else:
            del arrays[_IDS]
            reason = _numeric_outputs(arrays, len(dataset))
            if reason is None:
                return arrays
            problem = f"is damaged ({reason})"
    warnings.warn(f"fairness cache: entry {str(entry)!r} {problem}; the features are "
                  "recomputed and the entry is written again.", stacklevel=3)
    entry.unlink(missing_ok=True)  # read once more under the lock: no second warning
    return None


def _write_entry(entry: Path, outputs: Mapping[str, NDArray[Any]], dataset: FairnessDataset
                 ) -> None:
    """Store the outputs atomically; a cache that cannot be written only costs a warning."""
    import numpy as np

    if entry.is_dir():
        return  # already reported by _read_entry
    try:
        fd, tmp = tempfile.mkstemp(prefix=entry.name, suffix=".tmp", dir=entry.parent)
    except OSError as exc:
        warnings.warn(f"fairness cache: cannot write entry {str(entry)!r} ({exc}); the "
                      "features are used without caching them.", stacklevel=3)
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            arrays: dict[str, Any] = {**outputs, _IDS: np.asarray(dataset.image_ids, dtype=str)}
            arrays[_DIGEST] = np.asarray(_arrays_digest(arrays))
            np.savez(handle, **arrays)
        os.replace(tmp, entry)  # atomic: readers see the old state or the whole entry
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        warnings.warn(f"fairness cache: cannot write entry {str(entry)!r} ({exc}); the "
                      "features are used without caching them.", stacklevel=3)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# -- precomputed features ------------------------------------------------------------------
def load_precomputed(path: str | os.PathLike[str], dataset: FairnessDataset, *,
                     id_column: str = "image_id", perturbation: Any = None,
                     transform: Any = None, normalize: Any = None,
                     cache_dir: str | os.PathLike[str] | None = None) -> Features:
    """Read features computed elsewhere and align them with ``dataset``'s rows.

    Parameters
    ----------
    path : str or Path
        * a directory written by ``pytest-fairness extract`` (Parquet shards and their
          manifest, see :mod:`pytest_fairness.shards`): the manifest is checked (dataset
          fingerprint, every id once, each shard's sha256) and one extraction read;
        * ``.npy``: one 2-D array, rows in the dataset's order (no ids to check against).
        * ``.npz``: named 2-D arrays (``embeddings``, ``logits``, …) and optionally an
          ``id_column`` array of image ids; with ids, rows are matched by id.
        * ``.parquet``: an ``id_column`` column; every list/array-valued column becomes an
          output of that name, and the numeric scalar columns, in order, the
          ``embeddings``.
    dataset : FairnessDataset
        The images the features belong to. Extra ids in the file are ignored; ids of the
        dataset missing from the file are an error.
    id_column : str
        Name of the id array/column.
    perturbation : None, (name, level) or (name, level, seed)
        Directories only: which extraction to read (default: the clean images).
    transform, normalize : optional
        Directories only: when given, the extraction must have used the same transform
        and normalisation (as :func:`extract_features` takes them).
    cache_dir : str or Path, optional
        Directories only: keep the decoded matrices there and memory-map them, so
        processes (pytest-xdist workers) share one copy.

    Returns
    -------
    Features

    Examples
    --------
    >>> import numpy as np, pandas as pd, tempfile, os
    >>> from pytest_fairness.data import FairnessDataset
    >>> ds = FairnessDataset(pd.DataFrame({"image_id": ["a", "b"], "path": ["a", "b"]}))
    >>> file = os.path.join(tempfile.mkdtemp(), "f.npz")
    >>> np.savez(file, image_id=np.array(["b", "a"]), embeddings=np.array([[2.0], [1.0]]))
    >>> load_precomputed(file, ds).embeddings.ravel().tolist()
    [1.0, 2.0]
    """
    import numpy as np

    file = Path(path)
    if file.is_dir() and file.suffix.lower() not in (".npy", ".npz", ".parquet"):
        from pytest_fairness.shards import read_shards

        return Features(dataset, read_shards(
            file, dataset, perturbation=perturbation, cache_dir=cache_dir,
            transform=None if transform is None else callable_fingerprint(transform),
            normalize=None if normalize is None else normalize_spec(normalize)))
    if not file.is_file():
        raise InvalidDataError(
            f"precomputed features {str(file)!r} do not exist; pass a .npy, .npz or .parquet "
            "file, or a directory written by `pytest-fairness extract`."
        )
    suffix = file.suffix.lower()
    if suffix not in (".npy", ".npz", ".parquet"):
        raise FairnessConfigError(
            f"precomputed features {str(file)!r}: suffix {suffix!r} is not .npy, .npz or "
            ".parquet."
        )
    fix = ("write the file again (numpy.save/numpy.savez or DataFrame.to_parquet) or "
           "recompute the features")
    ids: Any = None
    try:
        if suffix == ".parquet":
            outputs, ids = _read_parquet(file, id_column)
        else:
            outputs = _read_arrays(file)
            if suffix == ".npy":
                outputs = {"embeddings": outputs[""]}
            ids = outputs.pop(id_column, None)
    except _Damaged as exc:
        raise InvalidDataError(
            f"precomputed features {str(file)!r} are damaged or not a numpy {suffix} file "
            f"({exc}); {fix}."
        ) from None
    if not outputs:
        raise InvalidDataError(f"precomputed features {str(file)!r} hold no arrays; {fix}.")
    for name, array in outputs.items():
        if array.dtype.kind not in "biuf" or array.ndim not in (1, 2):
            raise InvalidDataError(
                f"precomputed features {str(file)!r}: {name!r} holds {array.dtype} values of "
                f"shape {array.shape}; each output must be a 1-D or 2-D array of numbers. "
                f"Save only feature arrays (and the {id_column!r} ids), or {fix}."
            )
        finite = np.isfinite(array.reshape(len(array), -1)).all(axis=1)
        bad = np.flatnonzero(~finite)
        if len(bad):
            raise InvalidDataError(
                f"precomputed features {str(file)!r}: {name!r} holds NaN or infinite values "
                f"(row {int(bad[0])} first, {len(bad)} rows in all); {fix}."
            )
    if ids is None:
        for name, array in outputs.items():
            if len(array) != len(dataset):
                raise InvalidDataError(
                    f"precomputed features {str(file)!r}: {name!r} has {len(array)} rows but "
                    f"dataset {dataset.name!r} has {len(dataset)}; without an {id_column!r} "
                    "array, rows must match the dataset one to one. Save the ids too."
                )
        return Features(dataset, outputs)
    ids = np.asarray(ids)
    if ids.ndim != 1 or ids.dtype.kind not in "UiuO":
        raise InvalidDataError(
            f"precomputed features {str(file)!r}: the {id_column!r} ids are {ids.dtype} of "
            f"shape {ids.shape}; save them as one string per row "
            f"(dataset.frame['image_id']), or {fix}."
        )
    for name, array in outputs.items():
        if len(array) != len(ids):
            raise InvalidDataError(
                f"precomputed features {str(file)!r}: {name!r} has {len(array)} rows but there "
                f"are {len(ids)} {id_column!r} ids; {fix}."
            )
    ids = [str(v) for v in np.asarray(ids).tolist()]
    position: dict[str, int] = {}
    for i, value in enumerate(ids):
        if value in position:
            raise InvalidDataError(
                f"precomputed features {str(file)!r}: id {value!r} appears at rows "
                f"{position[value]} and {i}; each image needs one row."
            )
        position[value] = i
    missing = [v for v in dataset.image_ids if v not in position]
    if missing:
        raise InvalidDataError(
            f"precomputed features {str(file)!r} lack {len(missing)} of the {len(dataset)} "
            f"images of dataset {dataset.name!r}, e.g. {missing[0]!r}; recompute them on the "
            "same dataset (ids from dataset.frame['image_id'])."
        )
    order = np.array([position[v] for v in dataset.image_ids], dtype=np.intp)
    return Features(dataset, {k: np.asarray(v)[order] for k, v in outputs.items()})


def _read_parquet(file: Path, id_column: str) -> tuple[dict[str, Any], Any]:
    """The outputs and ids of a Parquet file; pyarrow's errors on damage become _Damaged."""
    try:
        return _parquet_outputs(file, id_column)
    except (FairnessError, _Damaged, ImportError):
        raise
    except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid, ArrowException
        # (bytes that are not UTF-8, found only when a column is converted), OSError, ...
        raise _Damaged(f"{type(exc).__name__}: {exc}") from None


def _parquet_outputs(file: Path, id_column: str) -> tuple[dict[str, Any], Any]:
    import numpy as np
    import pandas as pd

    frame = pd.read_parquet(file)
    if id_column not in frame.columns:
        raise InvalidDataError(
            f"precomputed features {str(file)!r} have no {id_column!r} column (columns: "
            f"{list(frame.columns)[:10]}); add the image ids."
        )
    outputs: dict[str, Any] = {}
    scalars = []
    for column in frame.columns:
        if column == id_column:
            continue
        first = frame[column].iloc[0] if len(frame) else None
        if isinstance(first, (list, tuple, np.ndarray)):
            try:
                outputs[str(column)] = np.stack([np.asarray(v, dtype=float)
                                                 for v in frame[column]])
            except (TypeError, ValueError) as exc:
                raise _Damaged(f"column {column!r} is not one equal-length list of numbers "
                               f"per row ({exc})") from None
        elif pd.api.types.is_numeric_dtype(frame[column]):
            scalars.append(column)
    if scalars:
        outputs.setdefault("embeddings", frame[scalars].to_numpy(dtype=float))
    return outputs, frame[id_column].to_numpy()
