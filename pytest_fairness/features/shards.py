"""Parquet shards: the layout ``pytest-fairness extract`` writes (docs/scale.md), and a reader."""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Mapping
from concurrent.futures import wait
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any, Final, TypedDict, cast

from pytest_fairness.draws import workers
from pytest_fairness.errors import (
    FairnessConfigError,
    InvalidDataError,
    MissingFeaturesError,
    own_error,
    shown,
)
from pytest_fairness.features.cache import cached, file_sha256
from pytest_fairness.features.fingerprint import cache_key
from pytest_fairness.files import FieldError, Fields

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
#: The dtypes a shard's outputs may have (read from its Parquet schema, never cast).
_DTYPES: Final = ("float16", "float32", "float64", "int8", "int16", "int32", "int64",
                  "uint8", "uint16", "uint32", "uint64")
_SHA256: Final = re.compile(r"[0-9a-f]{64}")
#: Bytes of features decoded at a time by each thread (about the row groups the job writes).
_BATCH_BYTES: Final = 16 * 2**20

class PerturbationKey(TypedDict):
    """A perturbation as the manifest names it (None is the clean images)."""

    name: str
    level: float
    seed: int


class OutputSpec(TypedDict):
    """One model output of the shards: its dtype and width."""

    dtype: str
    width: int


class _ShardKey(TypedDict, total=False):
    key: str


class ShardEntry(_ShardKey):
    """A shard: its file, rows, sha256 and the job's key (older manifests lack the key)."""

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


def _incomplete(directory: Path, manifest: Mapping[str, Any] | None = None) -> str:
    """The manifest's command, an unfinished extraction's (in the folder), or a template."""
    command = (manifest or {}).get("command")
    if isinstance(command, str) and command.strip():
        return command
    job = directory / JOB_FILE
    try:
        if job.is_file() and _outside(directory, job) is None:
            with open(job, encoding="utf-8", errors="replace") as handle:
                if command := handle.read(4096).strip():
                    return command
    except OSError:
        pass
    return (f"pytest-fairness extract --model PACKAGE.MODULE:FUNCTION --data NAME=PATH "
            f"--out {directory}")


def _outside(folder: Path, path: Path) -> Path | None:
    """Where ``path`` really is when that is outside ``folder`` (links resolved), else None."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # a loop of links
        return path
    return None if real.is_relative_to(folder.resolve()) else real


class _Wrong(Exception):
    """One key of the manifest that the reader cannot use; the text names it and its value."""


def _need(ok: bool, where: str, value: Any, expected: str) -> None:
    if not ok:
        raise _Wrong(f"{where} is {shown(value)}, not {expected}")


def _relative(where: str, value: str) -> PurePosixPath:
    """``value`` as a relative path that stays inside the features folder, lexically."""
    path = PurePosixPath(value)
    _need(bool(value) and "\x00" not in value and not path.is_absolute() and ".." not in path.parts
          and not PureWindowsPath(value).drive and path != PurePosixPath("."), where, value,
          "a relative path inside the features folder (no '..', not absolute)")
    return path


def _items(where: str, value: object) -> list[Any]:
    _need(isinstance(value, list) and bool(value), where, value, "a non-empty list")
    return cast("list[Any]", value)


def _check_manifest(manifest: dict[str, Any]) -> None:
    """Every key the reader relies on, of its kind and in its range (_Wrong or FieldError)."""
    Fields(manifest, "").check({"command": "str!", "transform": "str!", "normalize": "str!",
                                "id_column": "str!", "model": "object!", "dataset": "object!",
                                "outputs": "object!"})
    model = Fields(manifest["model"], "model")
    for name in [*model.data, "fingerprint"]:
        model.get(name, "str?" if name != "fingerprint" else "str", required=True)
    Fields(manifest["dataset"], "dataset").check({"name": "str!", "fingerprint": "str!",
                                                   "rows": "int!"})
    rows = manifest["dataset"]["rows"]
    _need(rows >= 1, "dataset.rows", rows, "a number of images >= 1")
    _need(bool(manifest["outputs"]), "outputs", {}, "at least one model output")
    for name, spec in manifest["outputs"].items():
        _need(name != manifest["id_column"], "an output", name, "the id column")
        Fields(spec, f"outputs.{name}").check({"dtype": "str!", "width": "int!"})
        _need(spec["dtype"] in _DTYPES, f"outputs.{name}.dtype", spec["dtype"],
              f"one of {', '.join(_DTYPES)}")
        _need(1 <= spec["width"] < 2**31, f"outputs.{name}.width", spec["width"],
              "a width in [1, 2**31)")
    directories = set()
    for i, extraction in enumerate(_items("extractions", manifest.get("extractions"))):
        where = f"extractions[{i}]"
        Fields(extraction, where).check({"directory": "str!", "perturbation": "object?!"})
        if extraction["perturbation"] is not None:
            Fields(extraction["perturbation"], f"{where}.perturbation").check(
                {"name": "str!", "level": "num!", "seed": "int!"})
        directory = _relative(f"{where}.directory", extraction["directory"])
        _need(directory not in directories, f"{where}.directory", str(directory),
              "a directory of one extraction (listed twice)")
        directories.add(directory)
        total = 0
        for j, shard in enumerate(_items(f"{where}.shards", extraction.get("shards"))):
            at = f"{where}.shards[{j}]"
            Fields(shard, at).check({"file": "str!", "rows": "int!", "sha256": "str!",
                                     "key": "str?"})
            _need(_relative(f"{at}.file", shard["file"]).parent == directory, f"{at}.file",
                  shard["file"], f"a file in the extraction's directory {str(directory)!r}")
            _need(0 <= shard["rows"] <= rows, f"{at}.rows", shard["rows"],
                  f"a count in [0, {rows}]")
            _need(bool(_SHA256.fullmatch(shard["sha256"])), f"{at}.sha256", shard["sha256"],
                  "64 hex digits")
            total += shard["rows"]
        _need(total == rows, f"the sum of {where}.shards[*].rows", total,
              f"dataset.rows ({rows})")


def read_manifest(directory: str | os.PathLike[str]) -> Manifest:
    """The manifest of a features directory, checked against its schema.

    Parameters
    ----------
    directory : str or Path
        A features directory written by ``pytest-fairness extract``.

    Raises
    ------
    MissingFeaturesError
        No manifest (the extraction did not finish), an unreadable one, or a key of the wrong
        kind or out of range (named by its path, e.g. ``extractions[0].shards[1].rows``); the
        message gives the command that writes it.
    """
    from pytest_fairness.data.jsonfile import read_json
    folder = Path(directory)
    path = folder / MANIFEST
    if not path.is_file():
        what = ("the extraction started there has not finished (a process stopped, or it is "
                "still running)" if (folder / JOB_FILE).is_file()
                else "no extraction has finished there")
        raise MissingFeaturesError(
            f"features directory {str(folder)!r} has no {MANIFEST}: {what}. Run "
            f"`{_incomplete(folder)}` (shards already written are kept).")
    outside = _outside(folder, path)
    if outside is not None:
        raise MissingFeaturesError(
            f"features manifest {str(path)!r} links to {str(outside)!r}, outside the features "
            f"folder; the reader opens nothing outside it. Copy the file in, or run "
            f"`{_incomplete(folder)}` again to rewrite it.")
    try:
        manifest = read_json(path, what="features manifest")
    except InvalidDataError as error:
        raise MissingFeaturesError(f"{error} Or run `{_incomplete(folder)}` again.") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise MissingFeaturesError(
            f"{str(path)!r} is not a pytest-fairness features manifest (no format "
            f"{FORMAT!r}); point at a directory written by `pytest-fairness extract`.")
    if manifest.get("version") != FORMAT_VERSION:
        raise MissingFeaturesError(
            f"features manifest {str(path)!r} has version {shown(manifest.get('version'))}; "
            f"this pytest-fairness reads version {FORMAT_VERSION}. Run "
            f"`{_incomplete(folder, manifest)}` again with this version.")
    rewrite = f"run `{_incomplete(folder, manifest)}` again to rewrite it"
    try:
        _check_manifest(manifest)
    except (FieldError, _Wrong) as error:
        where = ".".join(getattr(error, n, None) or "" for n in ("path", "name")).strip(".")
        problem = (str(error) if isinstance(error, _Wrong) else f"has no {where}" if error.missing
                   else f"{where or 'the top level'} is {shown(error.found)}, not {error.expected}")
        raise MissingFeaturesError(f"features manifest {str(path)!r}: {problem}; {rewrite} "
                                   "(the page 'Evaluating at scale' lists its keys).") from None
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
    command = _incomplete(folder, manifest)
    recorded = manifest["dataset"]
    if recorded["fingerprint"] != dataset.fingerprint or recorded["rows"] != len(dataset):
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
    outputs = {str(k): v for k, v in manifest["outputs"].items()}
    shards = _Shards(folder, extraction, outputs, manifest, command)
    shards.check_files()

    if cache_dir is None:
        return _checked_decode(shards, dataset)
    entry = cache_key(format=FORMAT_VERSION, dataset=dataset.fingerprint, outputs=outputs,
                      shards=[s["sha256"] for s in extraction["shards"]])
    return cached(Path(cache_dir) / "shards" / entry, lambda: _checked_decode(shards, dataset),
                  what="decoded features are", mmap=True)[0]


class _Shards:
    """One extraction's shards as the manifest lists them, to check and decode."""

    def __init__(self, folder: Path, extraction: ExtractionEntry,
                 outputs: Mapping[str, OutputSpec], manifest: Manifest, command: str) -> None:
        self.folder, self.extraction, self.outputs = folder, extraction, outputs
        self.id_column, self.command = manifest["id_column"], command
        self.dataset = manifest["dataset"]["fingerprint"]

    def error(self, shard: str, problem: str) -> MissingFeaturesError:
        """The error for ``shard``: what is wrong with it, and the command that rewrites it."""
        return MissingFeaturesError(
            f"features in {str(self.folder)!r}: shard {shard!r} {problem}. Delete it and run "
            f"`{self.command}` again: it re-extracts that shard.")

    def check_files(self) -> None:
        """Each shard there, inside the folder once links are resolved, as large as claimed.

        Shards are written uncompressed, so a shard holds at least the bytes of its features:
        a manifest claiming more (a width of 10**12) is refused before anything is allocated.
        """
        import numpy as np
        row_bytes = sum(spec["width"] * np.dtype(spec["dtype"]).itemsize
                        for spec in self.outputs.values())
        for shard in self.extraction["shards"]:
            path, name = self.folder / shard["file"], shard["file"]
            if (outside := _outside(self.folder, path)) is not None:
                raise self.error(name, f"leads to {str(outside)!r}, outside the features "
                                       "folder (a link); the reader opens nothing outside it")
            if not path.is_file():
                raise MissingFeaturesError(
                    f"features in {str(self.folder)!r}: shard {name!r} is missing. Run "
                    f"`{self.command}` again: it extracts the missing shards, keeps the others.")
            if shard["rows"] * row_bytes > (size := path.stat().st_size):
                raise self.error(name, f"has {size} bytes, fewer than the {shard['rows']} rows "
                                       f"x {row_bytes} bytes of features the manifest claims "
                                       "(shards are uncompressed): it or the manifest is damaged")

    def problem(self, schema: Any, rows: int, shard: ShardEntry) -> str | None:
        """What in a shard's footer disagrees with the manifest (None: nothing)."""
        import numpy as np
        import pyarrow as pa
        if rows != shard["rows"]:
            return f"holds {rows} rows; the manifest says {shard['rows']}"
        index = schema.get_field_index(self.id_column)
        if index < 0 or not (pa.types.is_string(schema.field(index).type)
                             or pa.types.is_large_string(schema.field(index).type)):
            return f"has no single string column {self.id_column!r} (the image ids)"
        for name, spec in self.outputs.items():
            index = schema.get_field_index(name)
            kind: Any = None if index < 0 else schema.field(index).type
            if kind is None or not (pa.types.is_list(kind) or pa.types.is_large_list(kind)
                    or pa.types.is_fixed_size_list(kind)):
                return f"has no single column {name!r} of one list of numbers per row"
            try:
                dtype = np.dtype(kind.value_type.to_pandas_dtype()).name
            except (NotImplementedError, TypeError):
                dtype = str(kind.value_type)
            if dtype != spec["dtype"]:
                return (f"stores {name!r} as {dtype}, the manifest says {spec['dtype']} "
                        "(the reader never casts features)")
            if pa.types.is_fixed_size_list(kind) and kind.list_size != spec["width"]:
                return (f"stores {name!r} {kind.list_size} wide, the manifest says "
                        f"{spec['width']}")
        return self.other_extraction((schema.metadata or {}).get(b"pytest_fairness"),
                                     shard.get("key"))

    def other_extraction(self, raw: bytes | None, key: str | None = None) -> str | None:
        """Which other extraction the shard's metadata names (None: this one, or none named)."""
        from pytest_fairness.data.jsonfile import parse_json
        if raw is None:  # written by another tool: the manifest's sha256 binds it
            return None
        try:
            recorded = parse_json(raw, source="its pytest_fairness metadata")
            found = perturbation_key(recorded["perturbation"])
        except (InvalidDataError, FairnessConfigError, TypeError, KeyError) as error:
            return f"has damaged pytest_fairness metadata ({error})"
        if recorded.get("dataset") != self.dataset:
            return "was extracted from another dataset (its metadata says so)"
        if key is not None and recorded.get("key") != key:
            return ("was written by another extraction (its key is not the manifest's: another "
                    "model, transform or row range)")
        if _extraction({"extractions": [self.extraction]}, found) is None:  # type: ignore[typeddict-item]
            return (f"belongs to the extraction {perturbation_label(found)}, not to "
                    f"{perturbation_label(self.extraction['perturbation'])}")
        return None

    def files(self) -> list[tuple[str, Any, Any]]:
        """Each shard's name, open ``ParquetFile`` (its footer checked) and image ids."""
        from pytest_fairness.errors import require
        pq = require("pyarrow.parquet", purpose="reading extracted features")
        opened = []
        for shard in self.extraction["shards"]:
            try:
                file = pq.ParquetFile(self.folder / shard["file"], pre_buffer=False)
                problem = self.problem(file.schema_arrow, file.metadata.num_rows, shard)
                ids = problem or file.read(columns=[self.id_column])[0].cast("large_string")
            except Exception as error:  # noqa: BLE001 - ArrowInvalid, OSError, ...
                raise self.error(shard["file"], _unreadable(error)) from None
            if problem is not None:
                raise self.error(shard["file"], problem)
            opened.append((shard["file"], file, ids))
        return opened


def _unreadable(error: Exception) -> str:
    return (f"cannot be read as Parquet ({type(error).__name__}: "
            f"{str(error)[:200]}): truncated, empty or not a shard")


def _checked_decode(shards: _Shards, dataset: FairnessDataset) -> dict[str, NDArray[Any]]:
    """Decode and checksum the shards, a task a shard on the worker threads; a checksum wins."""
    import numpy as np

    sums = [workers().submit(_check_sum, shards, entry) for entry in shards.extraction["shards"]]
    try:
        files = shards.files()  # every footer and id checked before anything is allocated
        placed = _rows(str(shards.folder), files, dataset)
        matrices = {name: np.empty((len(dataset), int(out["width"])), np.dtype(out["dtype"]))
                    for name, out in shards.outputs.items()}
        decoded = [workers().submit(_decode, shards, file, rows, matrices, dataset)
                   for file, rows in zip(files, placed)]
        wait(decoded)  # every shard closed before any error is raised
        for task in decoded:
            task.result()
    finally:
        for task in sums:
            task.result()
    return matrices


def _check_sum(shards: _Shards, shard: ShardEntry) -> None:
    if file_sha256(shards.folder / shard["file"]) != shard["sha256"]:
        raise shards.error(shard["file"], "does not match its sha256 in the manifest (damaged, "
                                          "or replaced by another extraction's shard)")


def _decode(shards: _Shards, file: tuple[str, Any, Any], rows: NDArray[Any],
            matrices: dict[str, NDArray[Any]], dataset: FairnessDataset) -> None:
    """One shard's outputs into their rows of ``matrices`` (a batch at a time, in this thread)."""
    shard, parquet, _ = file
    pool = sys.modules["pyarrow"].default_memory_pool()
    row_bytes = sum(m.shape[1] * m.itemsize for m in matrices.values())
    try:
        for batch in parquet.iter_batches(batch_size=max(1, _BATCH_BYTES // row_bytes),
                                          columns=[*matrices], use_threads=False):
            part, rows = rows[:batch.num_rows], rows[batch.num_rows:]
            for name, matrix in matrices.items():
                _place(batch.column(name), matrix, part, dataset, shards.error, shard, name)
            del batch
            pool.release_unused()  # freed buffers handed back: a peak of 1.3x the matrix, not 1.6x
    except MissingFeaturesError:
        raise
    except Exception as error:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError, ...
        raise shards.error(shard, _unreadable(error)) from None
    finally:
        parquet.close()


def _rows(folder: str, files: list[tuple[str, Any, Any]],
          dataset: FairnessDataset) -> list[NDArray[Any]]:
    """Each shard's dataset rows, matched from all ids at once: known, once each, none missing."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    n, ends = len(dataset), np.cumsum([0] + [len(ids) for _, _, ids in files])
    ids = pa.chunked_array([c for _, _, i in files for c in i.chunks], pa.large_string())
    known = pa.array(dataset.frame["image_id"]).cast(pa.large_string())
    rows = pc.index_in(ids, value_set=known).fill_null(-1).to_numpy().astype(np.intp)
    again = np.isin(np.arange(rows.size), np.unique(rows, return_index=True)[1], invert=True)
    if (wrong := np.flatnonzero((rows < 0) | again)).size:  # an unknown id, or one seen before
        at, shard = int(wrong[0]), files[int(np.searchsorted(ends, wrong[0], "right")) - 1][0]
        raise MissingFeaturesError(
            f"features in {folder!r} hold id {ids[at].as_py()!r} (shard {shard!r}), which is "
            f"not in dataset {dataset.name!r}: a shard of another dataset. Extract this dataset "
            "again into a clean directory." if rows[at] < 0 else
            f"features in {folder!r} hold some ids of dataset {dataset.name!r} twice (shard "
            f"{shard!r}; e.g. shards of two extractions mixed); extract again into a clean "
            "directory.")
    if rows.size != n:
        missing = np.setdiff1d(np.arange(n), rows)
        raise MissingFeaturesError(
            f"features in {folder!r} lack {missing.size} of the {n} images of dataset "
            f"{dataset.name!r}, e.g. {dataset.image_ids[int(missing[0])]!r}; extract them again.")
    return np.split(rows, ends[1:-1])


def _place(column: Any, matrix: NDArray[Any], rows: NDArray[Any], dataset: FairnessDataset,
           error: Any, shard: str, name: str) -> None:
    """One batch of output ``name`` into its rows, refusing nulls, ragged lists, NaN and inf."""
    import numpy as np
    width, flat = matrix.shape[1], column.flatten()
    values = flat.to_numpy(zero_copy_only=False)
    if column.null_count or flat.null_count or values.size != len(rows) * width:
        raise error(shard, f"does not hold one list of {width} numbers per row in {name!r} "
                           "(a null, or a list of another length)")
    values = values.reshape(len(rows), width)
    if values.dtype.kind == "f":
        bad = ~np.isfinite(values).all(axis=1)
        if bad.any():
            ids = dataset.frame["image_id"].to_numpy()[rows[bad][:3]].tolist()
            raise error(shard, f"holds NaN or infinite {name!r} values for {int(bad.sum())} "
                               f"image(s), e.g. ids {ids} (fix the model or its inputs first)")
    matrix[rows] = values
