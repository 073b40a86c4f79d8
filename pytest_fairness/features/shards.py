"""Features as Parquet shards: the layout ``pytest-fairness extract`` writes, and its reader.

The page "Evaluating at scale" (The shard format) describes the layout.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypedDict, cast

from pytest_fairness.errors import FairnessConfigError, MissingFeaturesError, own_error
from pytest_fairness.features.cache import cached, file_sha256
from pytest_fairness.features.fingerprint import cache_key

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from pytest_fairness.data.dataset import FairnessDataset

__all__ = ["FORMAT", "FORMAT_VERSION", "ID_COLUMN", "JOB_FILE", "MANIFEST", "Manifest",
           "PerturbationKey", "perturbation_dir", "perturbation_key", "perturbation_label",
           "read_manifest", "read_shards", "shard_name"]

__tracebackhide__ = own_error

FORMAT: Final = "pytest-fairness-features"
FORMAT_VERSION: Final = 1
#: Names starting with ``_`` are skipped by ``pyarrow.dataset``, so ``dataset(DIR/clean)``
#: reads only the shards.
MANIFEST: Final = "_manifest.json"
#: Written when an extraction starts, removed with the manifest's arrival: the command.
JOB_FILE: Final = "_extract-command.txt"
ID_COLUMN: Final = "image_id"
CLEAN: Final = "clean"

class PerturbationKey(TypedDict):
    """A perturbation as the manifest names it (None is the clean images)."""

    name: str
    level: float
    seed: int


class OutputSpec(TypedDict):
    """One model output of the shards: its dtype and width."""

    dtype: str
    width: int


class ShardEntry(TypedDict):
    """One shard of an extraction: its file (relative), rows and sha256."""

    file: str
    rows: int
    sha256: str


class ExtractionEntry(TypedDict):
    """One extraction: its perturbation, directory and shards."""

    perturbation: PerturbationKey | None
    directory: str
    shards: list[ShardEntry]


class DatasetEntry(TypedDict):
    """The dataset the features belong to."""

    name: str
    fingerprint: str
    rows: int


class Described(TypedDict):
    """What produced the features: the part of the manifest that keys a shard."""

    model: dict[str, str | None]
    dataset: DatasetEntry
    transform: str
    normalize: str


class Manifest(Described):
    """``_manifest.json``: what produced the features, and every extraction's shards."""

    format: str
    version: int
    command: str
    outputs: dict[str, OutputSpec]
    id_column: str
    extractions: list[ExtractionEntry]


def perturbation_key(perturbation: Any) -> PerturbationKey | None:
    """The manifest's form of None or ``(name, level[, seed])``: None (level 0 too) or a dict.

    Examples
    --------
    >>> perturbation_key(("gaussian_blur", 0.5))
    {'name': 'gaussian_blur', 'level': 0.5, 'seed': 0}
    >>> perturbation_key(None) is None
    True
    """
    if perturbation is None:
        return None
    if (isinstance(perturbation, Mapping) and set(perturbation) == {"name", "level", "seed"}):
        perturbation = (perturbation["name"], perturbation["level"], perturbation["seed"])
    if not (isinstance(perturbation, tuple) and len(perturbation) in (2, 3)
            and isinstance(perturbation[0], str)
            and isinstance(perturbation[1], (int, float))):
        raise FairnessConfigError(
            "features read from an extracted directory take a perturbation None, (name, "
            f"level) or (name, level, seed); got perturbation={perturbation!r}. A callable "
            "perturbation cannot be extracted ahead: run the model for it instead.")
    seed = perturbation[2] if len(perturbation) == 3 else 0
    if float(perturbation[1]) == 0.0:
        return None
    return {"name": perturbation[0], "level": float(perturbation[1]), "seed": int(seed)}


def perturbation_label(key: PerturbationKey | None) -> str:
    """``"clean"`` or ``"gaussian_blur 0.5"`` (``" seed=3"`` when not 0), for messages."""
    return _spelled(key, " ", " seed=")


def perturbation_dir(key: PerturbationKey | None) -> str:
    """The sub-directory of an extraction: ``clean`` or ``gaussian_blur-0.5[-seed3]``."""
    return _spelled(key, "-", "-seed")


def _spelled(key: PerturbationKey | None, sep: str, seed: str) -> str:
    if key is None:
        return CLEAN
    return f"{key['name']}{sep}{key['level']:g}" + (f"{seed}{key['seed']}" if key["seed"] else "")


def shard_name(rank: int, world_size: int) -> str:
    """``part-00001-of-00002.parquet``: the shard a rank writes."""
    return f"part-{rank:05d}-of-{world_size:05d}.parquet"


def _incomplete(directory: Path) -> str:
    """The command of an unfinished extraction, or a template of one."""
    try:
        return (directory / JOB_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return (f"pytest-fairness extract --model PACKAGE.MODULE:FUNCTION --data NAME=PATH "
                f"--out {directory}")


def read_manifest(directory: str | os.PathLike[str]) -> Manifest:
    """The manifest of a features directory, checked for format and version.

    Parameters
    ----------
    directory : str or Path
        A features directory written by ``pytest-fairness extract``.

    Raises
    ------
    MissingFeaturesError
        No manifest (the extraction did not finish), or an unreadable one; the message gives
        the command that writes it.
    """
    folder = Path(directory)
    path = folder / MANIFEST
    if not path.is_file():
        what = ("the extraction started there has not finished (a process stopped, or it is "
                "still running)" if (folder / JOB_FILE).is_file()
                else "no extraction has finished there")
        raise MissingFeaturesError(
            f"features directory {str(folder)!r} has no {MANIFEST}: {what}. Run "
            f"`{_incomplete(folder)}` (shards already written are kept).")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise MissingFeaturesError(
            f"features manifest {str(path)!r} cannot be read ({error}); run "
            f"`{_incomplete(folder)}` again to rewrite it.") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise MissingFeaturesError(
            f"{str(path)!r} is not a pytest-fairness features manifest (no format "
            f"{FORMAT!r}); point at a directory written by `pytest-fairness extract`.")
    if manifest.get("version") != FORMAT_VERSION:
        raise MissingFeaturesError(
            f"features manifest {str(path)!r} has version {manifest.get('version')!r}; this "
            f"pytest-fairness reads version {FORMAT_VERSION}. Run `{manifest.get('command')}` "
            "again with this version.")
    return cast("Manifest", manifest)


def _extraction(manifest: Manifest, key: PerturbationKey | None) -> ExtractionEntry | None:
    for extraction in manifest["extractions"]:
        found = extraction["perturbation"]
        if (found is None) == (key is None) and (found is None or key is None or (
                found["name"] == key["name"] and found["seed"] == key["seed"]
                and math.isclose(found["level"], key["level"], abs_tol=1e-9))):
            return extraction
    return None


def read_shards(directory: str | os.PathLike[str], dataset: FairnessDataset, *,
                perturbation: Any = None, transform: str | None = None,
                normalize: str | None = None, cache_dir: str | os.PathLike[str] | None = None
                ) -> dict[str, NDArray[Any]]:
    """Read one extraction of a features directory, aligned with ``dataset``'s rows.

    Parameters
    ----------
    directory : str or Path
        Written by ``pytest-fairness extract`` (or a tool writing the same format).
    dataset : FairnessDataset
        Its fingerprint must be the manifest's; each of its ids in exactly one shard.
    perturbation : None, (name, level) or (name, level, seed)
        Which extraction: the clean images, or a perturbation at a level.
    transform, normalize : str, optional
        The fingerprints the caller expects; features extracted with others are refused.
    cache_dir : str or Path, optional
        Where to keep the decoded matrices, memory-mapped on every later read (any process).

    Returns
    -------
    dict of str to ndarray
        Each output ``(len(dataset), width)``.

    Raises
    ------
    MissingFeaturesError
        For an unfinished directory, a missing or damaged shard, another dataset's features,
        or a perturbation that was not extracted; the message gives the command to run.
    """
    folder = Path(directory)
    manifest = read_manifest(folder)
    command = str(manifest.get("command") or _incomplete(folder))
    recorded = manifest["dataset"]
    if recorded["fingerprint"] != dataset.fingerprint:
        raise MissingFeaturesError(
            f"features in {str(folder)!r} are of dataset {recorded['name']!r} "
            f"({recorded['rows']} images, fingerprint {recorded['fingerprint'][:12]}), not of "
            f"dataset {dataset.name!r} ({len(dataset)} images, fingerprint "
            f"{dataset.fingerprint[:12]}): the annotations or the file list differ. Extract "
            f"this dataset: `pytest-fairness extract ... --data {dataset.name}=PATH --out DIR`.")
    key = perturbation_key(perturbation)
    extraction = _extraction(manifest, key)
    if extraction is None:
        have = ", ".join(perturbation_label(e["perturbation"]) for e in manifest["extractions"])
        wanted = "" if key is None else (
            f" --perturbation {key['name']}:{key['level']:g}"
            + (f" --seed {key['seed']}" if key["seed"] else ""))
        raise MissingFeaturesError(
            f"features in {str(folder)!r} hold {have}; not {perturbation_label(key)}. "
            f"Extract it: `{command}{wanted}` (the extractions already there are kept).")
    for what, expected, given in (("transform", manifest.get("transform"), transform),
                                  ("normalisation", manifest.get("normalize"), normalize)):
        if given is not None and expected != given:
            raise MissingFeaturesError(
                f"features in {str(folder)!r} were extracted with the {what} {expected}; the "
                f"test asks for {given}. Extract with the same {what} (`pytest-fairness "
                "extract --image-size N --normalize imagenet|none`), or pass the recorded one.")
    for shard in extraction["shards"]:
        if not (folder / shard["file"]).is_file():
            raise MissingFeaturesError(
                f"features in {str(folder)!r}: shard {shard['file']!r} "
                f"({perturbation_label(key)}) is missing. Run `{command}` again: it extracts "
                "the missing shards and keeps the others.")
    outputs = {str(k): v for k, v in manifest["outputs"].items()}

    def decode() -> dict[str, NDArray[Any]]:
        return _checked_decode(folder, extraction["shards"], dataset, outputs, command)

    if cache_dir is None:
        return decode()
    entry = cache_key(format=FORMAT_VERSION, dataset=dataset.fingerprint, outputs=outputs,
                      shards=[s["sha256"] for s in extraction["shards"]])
    return cached(Path(cache_dir) / "shards" / entry, decode, what="decoded features are",
                  mmap=True)[0]


def _checked_decode(folder: Path, shards: Sequence[ShardEntry], dataset: FairnessDataset,
                    outputs: Mapping[str, OutputSpec], command: str) -> dict[str, NDArray[Any]]:
    """Decode while a thread checks the sha256s; a checksum error wins over a decoding one."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=1) as pool:
        sums = pool.submit(_check_sums, folder, shards, command)
        try:
            matrices = _decode([folder / s["file"] for s in shards], dataset, outputs, folder)
        except MissingFeaturesError:
            sums.result()
            raise
        sums.result()
    return matrices


def _check_sums(folder: Path, shards: Sequence[ShardEntry], command: str) -> None:
    for shard in shards:
        if file_sha256(folder / shard["file"]) != shard["sha256"]:
            raise MissingFeaturesError(
                f"features in {str(folder)!r}: shard {shard['file']!r} does not match its "
                "sha256 in the manifest (damaged, or replaced by another extraction's "
                f"shard). Delete it and run `{command}` again: it re-extracts that shard.")


def _decode(files: Sequence[Path], dataset: FairnessDataset, outputs: Mapping[str, OutputSpec],
            folder: Path) -> dict[str, NDArray[Any]]:
    """Scan the shards into one matrix per output, rows placed by id; check every id once."""
    import numpy as np
    import pandas as pd

    from pytest_fairness._optional import require
    pads = require("pyarrow.dataset", package="pytest-fairness[scale]",
                   purpose="reading extracted features")
    pool = sys.modules["pyarrow"].default_memory_pool()
    n = len(dataset)
    matrices = {name: np.empty((n, int(spec["width"])), dtype=np.dtype(spec["dtype"]))
                for name, spec in outputs.items()}
    index = pd.Index(dataset.image_ids)
    seen = np.zeros(n, dtype=bool)
    # One shard and one batch ahead: more readahead only holds more decoded pages in memory.
    scanner = pads.dataset([str(f) for f in files], format="parquet").scanner(
        columns=[ID_COLUMN, *outputs], batch_readahead=1, fragment_readahead=1)
    try:
        for batch in scanner.to_batches():
            ids = batch.column(ID_COLUMN).to_numpy(zero_copy_only=False)
            rows = index.get_indexer(ids)
            if (rows < 0).any():
                raise MissingFeaturesError(
                    f"features in {str(folder)!r} hold id {ids[rows < 0][0]!r}, which is not "
                    f"in dataset {dataset.name!r}: a shard of another dataset. Extract this "
                    "dataset again into a clean directory.")
            if seen[rows].any() or len(np.unique(rows)) != len(rows):
                raise MissingFeaturesError(
                    f"features in {str(folder)!r} hold some ids of dataset {dataset.name!r} "
                    "twice (e.g. shards of two extractions mixed); extract again into a "
                    "clean directory.")
            seen[rows] = True
            for name, matrix in matrices.items():
                column = batch.column(name)
                values = (column.flatten().to_numpy(zero_copy_only=False)
                          if column.null_count == 0 else None)
                if values is None or values.size != len(rows) * matrix.shape[1]:
                    raise MissingFeaturesError(
                        f"features in {str(folder)!r}: output {name!r} is not one list of "
                        f"{matrix.shape[1]} numbers per row; extract again.")
                matrix[rows] = values.reshape(len(rows), matrix.shape[1])
            # Arrow's allocator keeps freed buffers for reuse; handing them back after each
            # batch keeps the peak near the matrix's own size (2.3x it otherwise).
            del batch, column, values
            pool.release_unused()
    except MissingFeaturesError:
        raise
    except Exception as error:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError, ...
        raise MissingFeaturesError(
            f"features in {str(folder)!r} cannot be read ({type(error).__name__}: {error}); "
            "extract them again.") from None
    if not seen.all():
        missing = dataset.image_ids[int(np.flatnonzero(~seen)[0])]
        raise MissingFeaturesError(
            f"features in {str(folder)!r} lack {int((~seen).sum())} of the {n} images of "
            f"dataset {dataset.name!r}, e.g. {missing!r}; extract them again.")
    return matrices
