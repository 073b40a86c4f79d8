"""iEAT stimuli: one image folder per category (``<root>/valence/pleasant``), as ryansteed/ieat.

The tests of "Image Representations Learned With Unsupervised Pre-Training Contain Human-like
Biases" (Steed & Caliskan, FAccT 2021) ship as data (:func:`ieat_tests`), the images do not.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_fairness.data.jsonfile import parse_json
from pytest_fairness.data.paths import is_utf8, path_in_root
from pytest_fairness.errors import (
    FairnessConfigError,
    InsufficientDataError,
    InvalidDataError,
    check_int,
    own_error,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from pytest_fairness.data.dataset import FairnessDataset

__all__ = ["IMAGE_EXTENSIONS", "IEATStimuli", "IEATTestSpec", "category_paths", "ieat_tests",
           "load_ieat_stimuli"]

__tracebackhide__ = own_error

#: File extensions the released iEAT code embeds (compared case-insensitively).
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".webp")
_ROLES = ("X", "Y", "A", "B")


@dataclass(frozen=True)
class IEATTestSpec:
    """One iEAT as four category folders.

    Parameters
    ----------
    name, label : str
        Test name (as in ryansteed/ieat ``ieat/utils.py``) and its row in the paper's table
        (``"Valence (WMBM)"``; default ``name``).
    X, Y, A, B : str
        Target and attribute folders, relative to the stimuli root (``"valence/pleasant"``).
    table : int or None
        The table of Steed & Caliskan 2021 (1 or 2), None for user tests.
    """

    name: str
    X: str
    Y: str
    A: str
    B: str
    label: str = ""
    table: int | None = None

    def __post_init__(self) -> None:
        for role in _ROLES:
            value = getattr(self, role)
            if not isinstance(value, str) or not value.strip("/"):
                raise FairnessConfigError(
                    f"IEATTestSpec {self.name!r}: {role} must be a category folder relative "
                    f"to the stimuli root, like 'valence/pleasant'; got {role}={value!r}.")
            folder = path_in_root(value, None, where=f"IEATTestSpec {self.name!r}: {role}",
                                  root_label="the stimuli root", error=FairnessConfigError)
            object.__setattr__(self, role, folder.as_posix())
        if self.X == self.Y:
            raise FairnessConfigError(
                f"IEATTestSpec {self.name!r}: X and Y are the same folder {self.X!r}; the "
                "targets must differ.")
        if not self.label:
            object.__setattr__(self, "label", self.name)

    @property
    def categories(self) -> tuple[str, str, str, str]:
        """The four folders in the order (X, Y, A, B)."""
        return (self.X, self.Y, self.A, self.B)


def _spec(value: Any) -> IEATTestSpec:
    if isinstance(value, IEATTestSpec):
        return value
    if isinstance(value, Mapping):
        try:
            return IEATTestSpec(**{k: value[k] for k in ("name", *_ROLES)},
                                label=value.get("label", ""), table=value.get("table"))
        except KeyError as exc:
            raise FairnessConfigError(
                f"an iEAT test given as a mapping needs the keys name, X, Y, A, B; "
                f"{exc.args[0]!r} is missing in {dict(value)!r}.") from None
    raise FairnessConfigError(
        f"tests must hold test names, IEATTestSpec objects or mappings with keys name, X, Y, "
        f"A, B; got {value!r} (type={type(value).__name__}).")


def _shipped() -> tuple[IEATTestSpec, ...]:
    text = resources.files("pytest_fairness.data").joinpath("ieat_tests.json").read_bytes()
    document = parse_json(text, source="pytest_fairness: the shipped ieat_tests.json")
    return tuple(_spec(row) for row in document["tests"])


def ieat_tests(
    names: str | Iterable[str] | None = None, *, table: int | None = None
) -> tuple[IEATTestSpec, ...]:
    """The iEATs of Steed & Caliskan 2021: Table 1 (15 tests) and Table 2 (16 intersectional tests).

    Parameters
    ----------
    names : str or iterable of str, optional
        Select tests by ``name`` or ``label`` (``"Valence (BW)"``), returned in this order.
    table : {1, 2}, optional
        Keep the tests of one table.

    Examples
    --------
    >>> len(ieat_tests(table=1)), len(ieat_tests(table=2))
    (15, 16)
    >>> ieat_tests("Insect-Flower")[0].categories
    ('insect-flower/flower', 'insect-flower/insect', 'valence/pleasant', 'valence/unpleasant')
    """
    specs = _shipped()
    if table is not None:
        if table not in (1, 2):
            raise FairnessConfigError(
                f"table must be 1 (Table 1 of Steed & Caliskan 2021) or 2 (its intersectional "
                f"Table 2); got table={table!r}.")
        specs = tuple(s for s in specs if s.table == table)
    if names is None:
        return specs
    wanted = [names] if isinstance(names, str) else list(names)
    index = {**{s.label: s for s in specs}, **{s.name: s for s in specs}}
    missing = [n for n in wanted if n not in index]
    if missing:
        raise FairnessConfigError(
            f"unknown iEAT test(s) {missing}; known names: {sorted(s.name for s in specs)}.")
    return tuple(index[n] for n in wanted)


def category_paths(
    root: str | os.PathLike[str], category: str, *, extensions: Sequence[str] = IMAGE_EXTENSIONS
) -> list[Path]:
    """Sorted image files directly inside ``<root>/<category>`` (extensions case-insensitive)."""
    folder = Path(root) / category
    if not folder.is_dir():
        raise InvalidDataError(
            f"iEAT category folder {category!r} is missing under {str(root)!r} (looked for "
            f"{str(folder)!r}); lay the stimuli out as <root>/<group>/<category>/*.jpg.")
    allowed = {e.lower() for e in extensions}
    found = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in allowed)
    for path in found:
        if not is_utf8(path.name):
            shown = path.name.encode("utf-8", "surrogateescape")
            raise InvalidDataError(
                f"iEAT category folder {category!r} under {str(root)!r} holds the file {shown!r}, "
                "whose name is not valid UTF-8; rename it (its path cannot be recorded).")
    return found


@dataclass(frozen=True)
class IEATStimuli:
    """Image paths (grouped by category, sorted) and their categories for a set of iEATs."""

    root: Path
    tests: tuple[IEATTestSpec, ...]
    paths: tuple[Path, ...]
    labels: tuple[str, ...]

    @property
    def categories(self) -> tuple[str, ...]:
        """The distinct categories, in order of first use."""
        return tuple(dict.fromkeys(self.labels))

    def __len__(self) -> int:
        return len(self.paths)

    def embed(
        self, embed: Callable[[list[Path]], Any], *, batch_size: int | None = None
    ) -> dict[str, NDArray[np.float64]]:
        """Embed every image with ``embed(paths) -> (len(paths), d)``, split by category.

        ``batch_size`` caps the paths per call (default: all at once).
        """
        if not callable(embed):
            raise FairnessConfigError(
                f"embed must be a callable from a list of image paths to an (n, d) array; got "
                f"{type(embed).__name__}.")
        step = len(self.paths) if batch_size is None else batch_size
        check_int("batch_size", step, low=1, why=" or None")
        parts = []
        for start in range(0, len(self.paths), step):
            chunk = list(self.paths[start : start + step])
            out = embed(chunk)
            if hasattr(out, "detach"):  # torch tensors
                out = out.detach().cpu().numpy()
            array = np.asarray(out, dtype=np.float64)
            if array.ndim != 2 or array.shape[0] != len(chunk):
                raise InvalidDataError(
                    f"embed returned shape {array.shape} for {len(chunk)} paths; it must return "
                    "one embedding per path, shape (len(paths), d).")
            parts.append(array)
        return self.split(np.concatenate(parts))

    def split(self, features: Any) -> dict[str, NDArray[np.float64]]:
        """Split features computed in the order of :attr:`paths` into one array per category."""
        if hasattr(features, "detach"):
            features = features.detach().cpu().numpy()
        array = np.asarray(features, dtype=np.float64)
        if array.ndim != 2 or array.shape[0] != len(self.paths):
            raise InvalidDataError(
                f"features must have one row per stimulus image, shape ({len(self.paths)}, d) "
                f"in the order of IEATStimuli.paths; got shape {array.shape}.")
        labels = np.asarray(self.labels, dtype=object)
        return {c: array[labels == c] for c in self.categories}

    def test_sets(
        self, features: Mapping[str, ArrayLike]
    ) -> dict[str, tuple[NDArray[np.float64], ...]]:
        """Test name → (X, Y, A, B) embeddings for ``ieat_battery``, from :meth:`embed`'s output."""
        missing = sorted({c for t in self.tests for c in t.categories} - set(features))
        if missing:
            raise InvalidDataError(
                f"features has no embeddings for categories {missing}; pass the output of "
                "IEATStimuli.embed() or IEATStimuli.split().")
        return {t.name: tuple(np.asarray(features[c]) for c in t.categories) for t in self.tests}

    def set_names(self) -> dict[str, tuple[str, str, str, str]]:
        """Test name → the four category folders, for ``ieat_battery(names=...)``."""
        return {t.name: t.categories for t in self.tests}

    def to_dataset(self) -> FairnessDataset:
        """The stimuli as a FairnessDataset (``image_id`` relative to the root, ``category``)."""
        import pandas as pd

        from pytest_fairness.data.dataset import FairnessDataset

        frame = pd.DataFrame({
            "image_id": [p.relative_to(self.root).as_posix() for p in self.paths],
            "path": [str(p) for p in self.paths],
            "category": list(self.labels),
        })
        return FairnessDataset(frame, name="ieat_stimuli", root=self.root)


def load_ieat_stimuli(
    root: str | os.PathLike[str],
    *,
    tests: str | Iterable[Any] | None = None,
    extensions: Sequence[str] = IMAGE_EXTENSIONS,
    min_images: int = 2,
) -> IEATStimuli:
    """List the stimulus images of iEATs under ``root`` (no image is read).

    Parameters
    ----------
    root : str or Path
        The folder of ``<group>/<category>/`` folders (ryansteed/ieat's ``data/experiments``).
    tests : test name(s), IEATTestSpec(s) or mappings, optional
        The tests to prepare; default every shipped test (:func:`ieat_tests`).
    extensions : sequence of str
        Image file extensions to take.
    min_images : int, default 2
        Fewest images a category may have (InsufficientDataError below it).

    Returns
    -------
    IEATStimuli

    Raises
    ------
    InvalidDataError
        When ``root`` or category folders are missing (each named).

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> for cat in ("t/x", "t/y", "a/good", "a/bad"):
    ...     (root / cat).mkdir(parents=True)
    ...     for i in range(2):
    ...         _ = (root / cat / f"{i}.jpg").write_bytes(b"")
    >>> spec = IEATTestSpec("toy", X="t/x", Y="t/y", A="a/good", B="a/bad")
    >>> stimuli = load_ieat_stimuli(root, tests=[spec])
    >>> len(stimuli), stimuli.categories
    (8, ('t/x', 't/y', 'a/good', 'a/bad'))
    """
    root_path = Path(root)
    if not root_path.is_dir():
        raise InvalidDataError(
            f"iEAT stimuli root {str(root)!r} is not a directory; pass the folder that holds "
            "<group>/<category>/ image folders (ryansteed/ieat: data/experiments).")
    check_int("min_images", min_images, low=1)
    if tests is None:
        specs = _shipped()
    elif isinstance(tests, (str, IEATTestSpec, Mapping)):
        specs = ieat_tests(tests) if isinstance(tests, str) else (_spec(tests),)
    else:
        items = list(tests)
        if not items:
            raise FairnessConfigError("tests is empty; pass at least one test or None for all.")
        specs = tuple(ieat_tests(t)[0] if isinstance(t, str) else _spec(t) for t in items)
    categories = list(dict.fromkeys(c for s in specs for c in s.categories))
    missing = [c for c in categories if not (root_path / c).is_dir()]
    if missing:
        raise InvalidDataError(
            f"{len(missing)} iEAT category folder(s) are missing under {str(root)!r}: "
            f"{missing}. Add them, or select tests whose folders exist with tests=[...].")
    paths: list[Path] = []
    labels: list[str] = []
    for category in categories:
        found = category_paths(root_path, category, extensions=extensions)
        if len(found) < min_images:
            raise InsufficientDataError(
                f"iEAT category {category!r} has {len(found)} image(s) with extensions "
                f"{tuple(extensions)} under {str(root)!r}; each set needs at least {min_images}.")
        paths.extend(found)
        labels.extend([category] * len(found))
    return IEATStimuli(root=root_path, tests=specs, paths=tuple(paths), labels=tuple(labels))
