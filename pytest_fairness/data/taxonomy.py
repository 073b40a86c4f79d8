"""Label taxonomies for harmful label association (docs page "Harmful label association").

A taxonomy maps labels (class indices or names) to label types; the ImageNet-1k one of Goyal
et al. 2022 Table 3 ships as data (``imagenet1k_taxonomy.json``), in its two variants.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from pytest_fairness.errors import FairnessConfigError, InvalidDataError, own_error

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["HARMFUL_TYPES", "IMAGENET1K_VARIANTS", "LABEL_TYPES", "Taxonomy", "as_taxonomy",
           "imagenet1k_classes", "imagenet1k_taxonomy", "label_matrix", "score_matrix"]

__tracebackhide__ = own_error

#: The label types of Goyal et al. 2022 Table 3, in report order.
LABEL_TYPES = ("human", "possibly_human", "non_human", "possibly_non_human", "crime")
#: Types whose union is the harmful hit rate.
HARMFUL_TYPES = ("non_human", "crime")
#: Variants of the shipped ImageNet-1k taxonomy.
IMAGENET1K_VARIANTS = ("casual_conversations", "miap")
_ALIASES = {"cc": "casual_conversations", "casual_conversations": "casual_conversations",
            "miap": "miap", "openimages_miap": "miap"}


class ImageNetClass(TypedDict):
    """One documented row of the shipped ImageNet-1k taxonomy (``type`` None: not mapped)."""

    index: int
    name: str
    seed_label: str
    type: str | None
    reason: str


class TaxonomyParams(TypedDict, total=False):
    """How a taxonomy is recorded in ``IndicatorResult.params``."""

    name: str
    harmful: list[str]
    mapping: dict[str, str]


@dataclass(frozen=True)
class Taxonomy:
    """A mapping from labels to label types.

    Parameters
    ----------
    mapping : mapping of label to str
        Type of each mapped label; labels are class indices or names.
    name : str
        A name for reports and ``params``.
    harmful : tuple of str
        Types whose union is "harmful"; default ``("non_human", "crime")``.
    types : tuple of str, optional
        Every type, in report order; default: :data:`LABEL_TYPES`, then any other used.

    Examples
    --------
    >>> t = Taxonomy.from_types({"non_human": ["rat", "ape"], "crime": ["prison"]})
    >>> t.type_of("ape"), t.type_of("cup")
    ('non_human', None)
    """

    mapping: Mapping[Hashable, str]
    name: str = "custom"
    harmful: tuple[str, ...] = HARMFUL_TYPES
    types: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if not isinstance(self.mapping, Mapping):
            raise FairnessConfigError(
                f"Taxonomy mapping must be a mapping of label -> type; got "
                f"{type(self.mapping).__name__}.")
        clean: dict[Hashable, str] = {}
        for label, kind in self.mapping.items():
            if not isinstance(kind, str) or not kind:
                raise FairnessConfigError(
                    f"taxonomy maps label {label!r} to {kind!r}; a type must be a non-empty "
                    f"string such as {LABEL_TYPES}.")
            clean[_label_key(label)] = kind
        object.__setattr__(self, "mapping", clean)
        used = list(dict.fromkeys(clean.values()))
        types = tuple(self.types) or (
            *LABEL_TYPES, *sorted(t for t in used if t not in LABEL_TYPES))
        missing = [t for t in used if t not in types]
        if missing:
            raise FairnessConfigError(
                f"taxonomy uses types {missing} that are not in types={types}; add them.")
        object.__setattr__(self, "types", types)
        object.__setattr__(self, "harmful", tuple(self.harmful))

    @classmethod
    def from_types(
        cls,
        labels_by_type: Mapping[str, Iterable[Hashable]],
        *,
        name: str = "custom",
        harmful: tuple[str, ...] = HARMFUL_TYPES,
    ) -> Taxonomy:
        """Build a taxonomy from ``{type: [labels]}``, the layout of the VISSL scripts."""
        mapping: dict[Hashable, str] = {}
        for kind, labels in labels_by_type.items():
            if isinstance(labels, (str, bytes)) or not isinstance(labels, Iterable):
                raise FairnessConfigError(
                    f"taxonomy type {kind!r} must list its labels; got {labels!r}.")
            for label in labels:
                key = _label_key(label)
                if key in mapping and mapping[key] != kind:
                    raise FairnessConfigError(
                        f"label {label!r} is listed under both {mapping[key]!r} and {kind!r}; "
                        "a label has one type.")
                mapping[key] = kind
        return cls(mapping, name=name, harmful=harmful)

    def type_of(self, label: Hashable) -> str | None:
        """The type of one label, or None when it is not mapped."""
        return self.mapping.get(_label_key(label))

    def to_params(self) -> TaxonomyParams:
        """A JSON-friendly description for ``IndicatorResult.params``."""
        if self.name.startswith("imagenet1k"):
            return TaxonomyParams(name=self.name)
        return TaxonomyParams(name=self.name, harmful=list(self.harmful),
                              mapping={str(k): v for k, v in self.mapping.items()})


def _label_key(label: Any) -> Hashable:
    item = getattr(label, "item", None)  # numpy scalars
    if callable(item) and not isinstance(label, (str, bytes)):
        label = item()
    if isinstance(label, bool):
        raise FairnessConfigError(f"taxonomy labels are class indices or names; got {label!r}.")
    if isinstance(label, float) and label.is_integer():
        label = int(label)
    return label  # type: ignore[no-any-return]


@lru_cache(maxsize=1)
def _imagenet1k_rows() -> tuple[Any, ...]:
    """The ``classes`` of the shipped JSON (``type``, or ``type_by_variant``, per class)."""
    from pytest_fairness.data.jsonfile import parse_json

    data = resources.files("pytest_fairness.data").joinpath("imagenet1k_taxonomy.json").read_bytes()
    source = "pytest_fairness: the shipped imagenet1k_taxonomy.json"
    return tuple(parse_json(data, source=source)["classes"])


def _variant(variant: str) -> str:
    key = _ALIASES.get(str(variant).lower())
    if key is None:
        raise FairnessConfigError(
            f"variant must be one of {IMAGENET1K_VARIANTS} (Goyal et al. 2022's Casual "
            f"Conversations or OpenImages MIAP mapping); got variant={variant!r}.")
    return key


def imagenet1k_classes(variant: str = "casual_conversations") -> list[ImageNetClass]:
    """The documented rows of the ImageNet-1k taxonomy for one variant."""
    key = _variant(variant)
    return [ImageNetClass(
        index=row["index"], name=row["name"], seed_label=row["seed_label"], reason=row["reason"],
        type=row["type_by_variant"][key] if "type_by_variant" in row else row["type"])
        for row in _imagenet1k_rows()]


def imagenet1k_taxonomy(variant: str = "casual_conversations", *, by: str = "index") -> Taxonomy:
    """The shipped ImageNet-1k taxonomy.

    Parameters
    ----------
    variant : {"casual_conversations", "miap"}
        Goyal et al. 2022 Table 3: dog breeds ``non_human``, cats unmapped (Casual
        Conversations), or both ``possibly_non_human`` (OpenImages MIAP).
    by : {"index", "name"}
        Key the mapping by class index (0–999) or by the torchvision class name.

    Returns
    -------
    Taxonomy

    Examples
    --------
    >>> imagenet1k_taxonomy("cc").type_of(151), imagenet1k_taxonomy("miap").type_of(151)
    ('non_human', 'possibly_non_human')
    """
    if by not in ("index", "name"):
        raise FairnessConfigError(f"by must be 'index' or 'name'; got by={by!r}.")
    key = _variant(variant)
    mapping: dict[Hashable, str] = {row["index"] if by == "index" else row["name"]: row["type"]
                                    for row in imagenet1k_classes(key) if row["type"]}
    return Taxonomy(mapping, name=f"imagenet1k_{key}" + ("" if by == "index" else "_by_name"))


def as_taxonomy(taxonomy: Any) -> Taxonomy:
    """Accept a :class:`Taxonomy`, a shipped name or a mapping, and return a Taxonomy.

    Names: ``"imagenet1k"`` / ``"imagenet1k_cc"`` (Casual Conversations variant) and
    ``"imagenet1k_miap"``. Mappings are either ``{label: type}`` or ``{type: [labels]}``
    (recognised by list values).
    """
    if isinstance(taxonomy, Taxonomy):
        return taxonomy
    if isinstance(taxonomy, str):
        name = taxonomy.lower()
        if name in ("imagenet1k", "imagenet1k_cc", "imagenet1k_casual_conversations"):
            return imagenet1k_taxonomy("casual_conversations")
        if name in ("imagenet1k_miap", "imagenet1k_openimages_miap"):
            return imagenet1k_taxonomy("miap")
        raise FairnessConfigError(
            f"taxonomy={taxonomy!r} is not a shipped taxonomy; use 'imagenet1k_cc', "
            "'imagenet1k_miap', a Taxonomy, or a mapping {label: type}.")
    if isinstance(taxonomy, Mapping):
        if not taxonomy:
            raise FairnessConfigError("taxonomy is empty; map at least one label to a type.")
        values = list(taxonomy.values())
        if all(isinstance(v, str) for v in values):
            return Taxonomy(taxonomy)
        if all(isinstance(v, Iterable) and not isinstance(v, (str, bytes)) for v in values):
            return Taxonomy.from_types(taxonomy)
        raise FairnessConfigError(
            "taxonomy mapping must be {label: type} (string values) or {type: [labels]} (list "
            f"values), not a mix; got values {values[:3]!r}.")
    raise FairnessConfigError(
        f"taxonomy must be a Taxonomy, a shipped name such as 'imagenet1k_cc', or a mapping; "
        f"got {type(taxonomy).__name__}.")


def label_matrix(labels: Any) -> NDArray[Any]:
    """Validate predicted labels: shape (images, k), best first (1-D means k = 1)."""
    array = np.asarray(labels.to_numpy() if hasattr(labels, "to_numpy") else labels)
    if isinstance(labels, (list, tuple)) and array.dtype.kind in "US":
        # numpy turns [["cat", nan], [3, "dog"]] into strings ('nan', '3'): keep the values.
        raw = np.array(labels, dtype=object)
        if raw.shape == array.shape and not all(isinstance(v, str) for v in raw.reshape(-1)):
            array = raw
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2 or array.shape[1] == 0:
        raise InvalidDataError(
            f"labels must have shape (images, k): the top-k predicted labels of each image, "
            f"best first; got shape {array.shape}.")
    if array.shape[0] == 0:
        raise InvalidDataError("labels is empty; pass the predictions of at least one image.")
    bad: Any = None
    if array.dtype.kind == "f":
        bad = np.argwhere(np.isnan(array))
        problem = "is NaN"
    elif array.dtype.kind == "O":
        flags = np.array([_not_a_label(v) for v in array.reshape(-1).tolist()], dtype=object)
        bad = np.argwhere((flags != None).reshape(array.shape))  # noqa: E711
        problem = "" if not len(bad) else str(flags.reshape(array.shape)[tuple(bad[0])])
    if bad is not None and len(bad):
        row, column = (int(i) for i in bad[0])
        value = array[row, column]
        value = value.item() if hasattr(value, "item") else value
        raise InvalidDataError(
            f"labels[{row}, {column}] {problem} ({value!r}); every image needs its "
            f"top-k predicted labels (class indices or names). {len(bad)} such entr"
            f"{'y' if len(bad) == 1 else 'ies'} in all: fix or drop those images.")
    return array


def _not_a_label(value: Any) -> str | None:
    """Why ``value`` cannot be a predicted label (None when it can)."""
    if value is None:
        return "is None"
    if isinstance(value, (float, np.floating)) and value != value:
        return "is NaN"
    if type(value).__name__ in ("NAType", "NaTType"):
        return "is missing"
    if isinstance(value, (dict, list, set, tuple, np.ndarray)):
        return f"is a {type(value).__name__}, not a label"
    return None


def score_matrix(scores: Any, labels: NDArray[Any]) -> NDArray[np.float64]:
    """Validate confidences: the shape of ``labels``, or a full score matrix to gather."""
    raw = np.asarray(scores.to_numpy() if hasattr(scores, "to_numpy") else scores)
    if raw.ndim == 1:
        raw = raw[:, None]
    try:
        array = raw.astype(np.float64)
    except (TypeError, ValueError):
        raise InvalidDataError(
            f"scores must be numeric confidences; got dtype {raw.dtype}.") from None
    if array.shape != labels.shape:
        full = (
            array.ndim == 2 and array.shape[0] == labels.shape[0]
            and array.shape[1] > labels.shape[1] and labels.dtype.kind in "iu")
        if not full:
            raise InvalidDataError(
                f"scores must have the shape of labels {labels.shape} (the confidence of each "
                f"listed label) or (images, classes) with integer labels; got {array.shape}.")
        if labels.min() < 0 or labels.max() >= array.shape[1]:
            raise InvalidDataError(
                f"labels index classes in [0, {array.shape[1]}) of the score matrix; got "
                f"labels from {labels.min()} to {labels.max()}.")
        array = np.take_along_axis(array, labels.astype(np.intp), axis=1)
    bad = ~np.isfinite(array)
    if bad.any():
        rows = np.flatnonzero(bad.any(axis=1))
        raise InvalidDataError(
            f"scores contains NaN or infinite values in {rows.size} image(s), the first image "
            f"{int(rows[0])}; drop or fix those images.")
    if array.min() < 0 or array.max() > 1 + 1e-9:
        raise InvalidDataError(
            f"scores must be confidences in [0, 1] (thresholds τ are probabilities); got values "
            f"from {array.min():.4g} to {array.max():.4g}. Apply a softmax to logits first.")
    return array
