"""Fingerprints: what identifies a model, a transform or a perturbation in a cache key."""

from __future__ import annotations

import hashlib
import inspect
import json
import sys
import weakref
from typing import TYPE_CHECKING, Any

from pytest_fairness.errors import FairnessConfigError, own_error
from pytest_fairness.features.cache import CACHE_VERSION

if TYPE_CHECKING:
    import torch

__all__ = ["cache_key", "callable_fingerprint", "model_fingerprint", "normalization",
           "normalize_spec"]

__tracebackhide__ = own_error

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def callable_fingerprint(obj: Any) -> str:
    """A string that changes when a transform/perturbation/model callable changes.

    Parameters
    ----------
    obj : callable or None
        Fingerprinted by, in order: a ``fairness_fingerprint`` attribute; its ``repr`` when
        free of memory addresses; its qualified name and a hash of its code, constants,
        defaults and closure.

    Examples
    --------
    >>> callable_fingerprint(len)
    '<built-in function len>'
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


_MODEL_MEMO: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], str]]
_MODEL_MEMO = weakref.WeakKeyDictionary()


def model_fingerprint(model: Any, *, model_id: str | None = None) -> str:
    """Identify a model's weights and architecture for the cache key.

    Parameters
    ----------
    model : torch.nn.Module or callable
        A module (or its bound method) hashes its ``state_dict`` and ``repr``, memoised until
        a parameter changes in place; a ``fairness_fingerprint`` attribute names it instead;
        another callable goes to :func:`callable_fingerprint`.
    model_id : str, optional
        Wins when given (e.g. a checkpoint id).

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
    """How a normalisation is recorded: ``"imagenet"``, ``"None"`` or the (mean, std) pair.

    Parameters
    ----------
    normalize : "imagenet", None or (mean, std)
    """
    return normalization(normalize)[1]


def normalization(normalize: Any) -> tuple[Any, str]:
    """``normalize`` (``"imagenet"``, None or (mean, std)) as a (mean, std) pair and its spec."""
    if normalize is None or normalize is False:
        return None, "None"
    if normalize == "imagenet":
        return (IMAGENET_MEAN, IMAGENET_STD), "imagenet"
    if isinstance(normalize, tuple) and len(normalize) == 2:
        mean, std = (tuple(float(v) for v in part) for part in normalize)
        return (mean, std), repr((mean, std))
    raise FairnessConfigError(
        f"normalize must be 'imagenet', None or a (mean, std) pair; got normalize={normalize!r}.")


def cache_key(*, version: int = CACHE_VERSION, **parts: Any) -> str:
    """sha256 of the JSON of the named parts (sorted), prefixed by a layout version.

    Parameters
    ----------
    version : int
        The version of what the key names (default: the feature cache's).
    **parts
        JSON-able values (others by ``str``) naming what the entry depends on.
    """
    payload = json.dumps({"version": version, **parts}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()
