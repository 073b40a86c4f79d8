"""``pytest-fairness extract``: a model over a dataset, written as Parquet shards.

Rank ``r`` of ``W`` (under ``torchrun``) writes one shard per extraction for the images
``[r·n/W, (r+1)·n/W)``, with a receipt; rank 0 writes the manifest when every rank is done.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypedDict, cast, final

from pytest_fairness.errors import (
    FairnessConfigError,
    FairnessError,
    InvalidDataError,
    own_error,
    shown,
)
from pytest_fairness.features import fingerprint as fp
from pytest_fairness.features import shards
from pytest_fairness.features.cache import file_sha256
from pytest_fairness.features.extraction import DefaultTransform, extract_rows
from pytest_fairness.features.shards import Described, Manifest, OutputSpec, PerturbationKey
from pytest_fairness.files import atomic_write, atomic_write_text

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from pytest_fairness.data.dataset import FairnessDataset
    from pytest_fairness.features.progress import ExtractionProgress

__all__ = ["ExtractJob", "ExtractSummary", "load_model", "run_job"]

__tracebackhide__ = own_error

_RECEIPT_SUFFIX: Final = ".json"
#: The version of what a shard's receipt key names; it stays when the feature cache changes,
#: so a job re-run over shards written before keeps them (the cache is at version 3).
RECEIPT_VERSION: Final = 2
#: Bytes of features per Parquet row group (see :func:`_write_shard`).
_ROW_GROUP_BYTES: Final = 16 * 2**20
#: The largest ``--image-size``: 4096² RGB float32 is 200 MB an image.
MAX_IMAGE_SIZE: Final = 4096
#: The lock file a job holds in ``--out`` while it runs: a second job into the folder is refused.
LOCK: Final = "_extract.lock"
#: The names of the files a job writes in an extraction's directory: shards and receipts.
_OWN_NAME: Final = re.compile(r"_?part-\d{5}-of-\d{5}\.(parquet|json)")


class _Written(TypedDict):
    """A shard as its receipt records it: rows, sha256 and outputs."""

    rows: int
    sha256: str
    outputs: dict[str, OutputSpec]


class _RankShard(_Written):
    """A shard as a rank reports it to rank 0."""

    perturbation: PerturbationKey | None
    file: str
    key: str


@final
@dataclass(frozen=True)
class ExtractJob:
    """What ``pytest-fairness extract`` was asked to do (its parsed arguments)."""

    model: str
    dataset: str
    root: str
    out: Path
    perturbations: tuple[tuple[str, float, int], ...] = ()
    checkpoint: str | None = None
    image_size: int = 224
    normalize: str = "imagenet"
    batch_size: int = 64
    num_workers: int = 0
    device: str = "auto"
    command: str = ""


@final
@dataclass(frozen=True)
class ExtractSummary:
    """What one rank did: shards kept (their checksums matched) and extracted."""

    rank: int
    world_size: int
    kept: tuple[str, ...] = ()
    extracted: tuple[str, ...] = ()
    manifest: Path | None = None

    @property
    def prefix(self) -> str:
        """``[rank r/W] `` before this rank's lines under torchrun; empty alone."""
        return f"[rank {self.rank}/{self.world_size}] " if self.world_size > 1 else ""


def load_model(spec: str, checkpoint: str | None = None) -> Any:
    """Call the factory ``package.module:function`` (with ``checkpoint=`` when given).

    The current folder is importable, as with ``python -m``; what the factory raises is a
    :class:`FairnessConfigError` naming ``--model`` and showing the user's frames.
    """
    module_name, sep, name = spec.partition(":")
    if not sep or not module_name or not name:
        raise FairnessConfigError(
            f"--model must be package.module:function (a factory returning the model); got "
            f"{spec!r}.")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        factory = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as error:
        raise FairnessConfigError(
            f"--model {spec}: cannot load it ({type(error).__name__}: {error}); check the "
            "module is importable from here (PYTHONPATH) and defines the function.") from None
    except Exception as error:
        raise FairnessConfigError(
            f"--model {spec}: importing {module_name} raised {_raised(error)}") from None
    if not callable(factory):
        raise FairnessConfigError(
            f"--model {spec}: {name} is a {type(factory).__name__}, not a function.")
    kwargs: dict[str, str] = {}
    if checkpoint is not None:
        parameters = inspect.signature(factory).parameters
        if "checkpoint" not in parameters and not any(
                p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            raise FairnessConfigError(
                f"--checkpoint {checkpoint} given, but the factory {spec} takes no `checkpoint` "
                "argument; add one (def factory(checkpoint=None): ...) or drop --checkpoint.")
        kwargs["checkpoint"] = checkpoint
    try:
        model = factory(**kwargs)
    except Exception as error:
        given = "" if checkpoint is None else f" with --checkpoint {checkpoint}"
        raise FairnessConfigError(
            f"--model {spec}: the factory raised{given} {_raised(error)}") from None
    return model


def _raised(error: BaseException) -> str:
    """``ValueError: ...`` and the frames of the user's code (not this package's, not torch's)."""
    import traceback
    ours = (str(Path(__file__).resolve().parents[1]), f"{os.sep}torch{os.sep}")
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if not any(part in frame.filename for part in ours)]
    where = "".join(traceback.format_list(frames)).rstrip()
    return f"{type(error).__name__}: {error}" + (f"\n{where}" if where else "")


def _guarded(model: Any, spec: str) -> Callable[[Any], Any]:
    """``model`` whose errors name ``--model`` and the user's frames."""
    def call(images: Any) -> Any:
        try:
            return model(images)
        except Exception as error:
            raise FairnessConfigError(
                f"--model {spec}: the forward pass raised {_raised(error)}") from None
    return call


def _receipt(shard: Path) -> Path:
    return shard.with_name("_" + shard.with_suffix(_RECEIPT_SUFFIX).name)


def _kept(shard: Path, key: str) -> _Written | None:
    """The shard's record when its receipt has ``key`` and its bytes its sha256; else None."""
    try:
        receipt = json.loads(_receipt(shard).read_text(encoding="utf-8"))
        if receipt.get("key") == key and file_sha256(shard) == receipt["record"]["sha256"]:
            return cast("_Written", dict(receipt["record"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return None


def _ours(path: Path) -> bool:
    """Whether ``path`` is a job's own file: shard, receipt, manifest, lock or command file."""
    if path.is_symlink() or not path.is_file():
        return False
    if path.name in (LOCK, shards.JOB_FILE):  # an empty lock; the command the job runs
        head = path.read_bytes()[:64] if path.stat().st_size <= 65536 else b"?"
        return head == b"" if path.name == LOCK else head.startswith(b"pytest-fairness extract")
    try:
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq
            return b"pytest_fairness" in (pq.read_schema(path).metadata or {})
        text = json.loads(path.read_text(encoding="utf-8"))
        return isinstance(text, dict) and ("record" in text or text.get("format") == shards.FORMAT)
    except Exception:  # unreadable, not Parquet, not JSON: not ours  # noqa: BLE001
        return False


def _inside(out: Path, relative: str, *, writing: bool = True) -> Path:
    """``out / relative``, refused when it leaves ``out`` or passes a link (or is not ours)."""
    path = out / relative
    parts = Path(relative).parts
    links = [out.joinpath(*parts[:i]) for i in range(1, len(parts) + 1)]
    link = next((p for p in links if p.is_symlink()), None)
    if Path(relative).is_absolute() or ".." in parts or link is not None or (
            path.exists() and not path.resolve().is_relative_to(out.resolve())):
        shown_link = "" if link is None else f" ({link} is a link to {os.readlink(link)})"
        raise FairnessConfigError(
            f"--out {out}: {relative}{shown_link} leads outside --out; the job writes only "
            "inside --out and follows no links: remove the link or choose another --out.")
    if writing and path.exists() and not _ours(path):
        raise FairnessConfigError(
            f"--out {out}: {relative} exists and was not written by pytest-fairness extract; "
            "the job overwrites only its own files: move it away or choose another --out.")
    return path


def _write_shard(shard: Path, ids: Sequence[str], outputs: Mapping[str, NDArray[Any]],
                 metadata: Mapping[str, object]) -> _Written:
    """Write one shard atomically; return its record (file, rows, sha256, outputs)."""
    import numpy as np

    from pytest_fairness.errors import require
    pa = require("pyarrow", purpose="writing features")
    pq = require("pyarrow.parquet", purpose="writing features")
    columns = {shards.ID_COLUMN: pa.array(list(ids), pa.string())}
    specs: dict[str, OutputSpec] = {}
    for name, array in outputs.items():
        array = np.ascontiguousarray(array)
        columns[name] = pa.FixedSizeListArray.from_arrays(pa.array(array.reshape(-1)),
                                                          array.shape[1])
        specs[name] = {"dtype": array.dtype.name, "width": int(array.shape[1])}
    table = pa.table(columns).replace_schema_metadata(
        {"pytest_fairness": json.dumps(metadata, sort_keys=True)})
    # Features barely compress; uncompressed pages are the fastest to read back. Row groups
    # of about 16 MiB let a reader hold one group at a time, not a whole shard.
    row_bytes = sum(array.itemsize * array.shape[1] for array in outputs.values())
    atomic_write(shard, lambda stream: pq.write_table(
        table, stream, compression="none",
        row_group_size=max(1, _ROW_GROUP_BYTES // max(row_bytes, 1))))
    return {"rows": len(ids), "sha256": file_sha256(shard), "outputs": specs}


def _progress(world_size: int, log: Callable[[str], None]) -> Any:
    """Progress as pytest shows it: a live bar on a terminal, else start and end lines."""
    from pytest_fairness.features.progress import progress_line
    if world_size == 1 and sys.stderr.isatty():
        return True

    def lines(event: ExtractionProgress) -> None:
        if event.milestone:
            log(progress_line(event))

    return lines


def _device(device: str) -> Any:
    import torch
    if device == "cuda" and not torch.cuda.is_available():
        raise FairnessConfigError(
            "--device cuda: no CUDA GPU is visible here (torch.cuda.is_available() is False); "
            "use --device cpu, or --device auto (a GPU when there is one).")
    if device != "auto":
        return torch.device(device)
    if not torch.cuda.is_available():
        return torch.device("cpu")
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    return torch.device("cuda", local)


def _lock(out: Path) -> Any:
    """Create ``out`` and hold its lock file; a job already holding it refuses this one."""
    from filelock import FileLock, Timeout
    try:
        out.mkdir(parents=True, exist_ok=True)
        _inside(out, LOCK)  # filelock truncates it: a file of the user's there is refused
        lock = FileLock(out / LOCK, timeout=0)
        lock.acquire()
        return lock
    except Timeout:
        raise FairnessConfigError(
            f"--out {out}: another pytest-fairness extract is writing there (it holds "
            f"{LOCK}); wait for it to finish, or choose another --out.") from None
    except OSError as error:
        raise FairnessConfigError(
            f"--out {out}: cannot write there ({type(error).__name__}: "
            f"{error.strerror or error}); choose a folder you can write.") from None


def _preflight(job: ExtractJob) -> Any:
    """What needs no model, checked before the first forward pass; returns the device."""
    from pytest_fairness.errors import check_int, require
    from pytest_fairness.perturbations import PERTURBATIONS
    unknown = sorted({name for name, _, _ in job.perturbations} - set(PERTURBATIONS))
    if unknown:
        raise FairnessConfigError(
            f"--perturbation: unknown name(s) {unknown}; known: {', '.join(PERTURBATIONS)}.")
    check_int("--image-size", job.image_size, low=1)
    if job.image_size > MAX_IMAGE_SIZE:
        raise FairnessConfigError(
            f"--image-size must be at most {MAX_IMAGE_SIZE} pixels a side; got "
            f"{job.image_size}.")
    require("pyarrow.parquet", purpose="writing features")
    return _device(job.device)


def run_job(job: ExtractJob, *, log: Callable[[str], None] = print) -> ExtractSummary:
    """Run this process's part of ``job``; rank 0 writes the manifest at the end.

    Under torchrun the process group lives here; ``log`` gets lines prefixed with the rank.
    Rank 0 holds ``--out``'s lock file while the job runs.
    """
    from pytest_fairness.errors import require
    dist = require("torch.distributed", purpose="pytest-fairness extract (a model's forward pass)")
    device = _preflight(job)
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed and not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    lock = None
    try:
        rank = dist.get_rank() if distributed else 0
        world_size = dist.get_world_size() if distributed else 1
        refused: list[str | None] = [None]
        if rank == 0:
            try:
                lock = _lock(job.out)
            except FairnessError as error:
                refused[0] = str(error)
        if distributed:
            dist.broadcast_object_list(refused, src=0)
        if refused[0] is not None:
            raise FairnessConfigError(refused[0])
        prefix = ExtractSummary(rank, world_size).prefix
        summary = _run(job, rank, world_size, device, lambda line: log(prefix + line))
        if distributed:
            # Every rank done before any tears the group down: a rank leaving first made
            # gloo abort another one's exit now and then ("terminate called ...").
            dist.barrier()
        return summary
    finally:
        if lock is not None:
            lock.release()
        if distributed and dist.is_initialized():
            dist.destroy_process_group()


def _checked(outputs: Mapping[str, NDArray[Any]], ids: Sequence[str], job: ExtractJob,
             label: str) -> Mapping[str, NDArray[Any]]:
    """The model's outputs, refused when zero-width or not finite (naming the ids)."""
    import numpy as np
    for name, array in outputs.items():  # (rows, width): forward_batches reshapes each
        if array.shape[1] == 0:
            raise InvalidDataError(
                f"--model {job.model}: output {name!r} has shape {array.shape} ({label}); "
                "return at least one value per image.")
        bad = np.flatnonzero(~np.isfinite(array).all(axis=1))
        if bad.size:
            raise InvalidDataError(
                f"--model {job.model}: output {name!r} has NaN or infinite values for "
                f"{bad.size} of {len(ids)} images ({label}), ids "
                f"{[ids[i] for i in bad[:5]]}{' ...' if bad.size > 5 else ''}; check the "
                "model and its checkpoint (features must be finite).")
    return outputs


def _run(job: ExtractJob, rank: int, world_size: int, device: Any,
         log: Callable[[str], None]) -> ExtractSummary:
    import torch.distributed as dist

    from pytest_fairness.data import LOADERS
    out = job.out
    if rank == 0:
        _inside(out, shards.MANIFEST).unlink(missing_ok=True)  # a job stopped part-way leaves none
        atomic_write_text(_inside(out, shards.JOB_FILE), job.command + "\n")
    dataset: FairnessDataset = LOADERS[job.dataset](job.root)
    n = len(dataset)
    if n < world_size:
        raise FairnessConfigError(
            f"dataset {dataset.name!r} has {n} images for {world_size} processes; run fewer.")
    start, stop = rank * n // world_size, (rank + 1) * n // world_size
    model = load_model(job.model, job.checkpoint)
    if not callable(model):
        raise FairnessConfigError(
            f"--model {job.model}: the factory returned {shown(model)} "
            f"({type(model).__name__}); return the model: a torch.nn.Module, or a callable "
            "from an image batch to its outputs.")
    if hasattr(model, "to"):
        model = model.to(device)
    if hasattr(model, "eval"):
        model.eval()
    transform = DefaultTransform(job.image_size)
    normalize = "imagenet" if job.normalize == "imagenet" else None
    checkpoint = None if job.checkpoint is None else (
        f"sha256:{file_sha256(job.checkpoint)}" if Path(job.checkpoint).is_file()
        else f"name:{job.checkpoint}")
    described: Described = {
        "model": {"factory": job.model, "fingerprint": fp.model_fingerprint(model),
                  "checkpoint": job.checkpoint, "checkpoint_fingerprint": checkpoint},
        "dataset": {"name": dataset.name, "fingerprint": dataset.fingerprint, "rows": n},
        "transform": fp.callable_fingerprint(transform),
        "normalize": fp.normalize_spec(normalize),
    }
    progress = _progress(world_size, log)
    kept: list[str] = []
    extracted: list[str] = []
    records: list[_RankShard] = []
    for spec in (None, *job.perturbations):
        key = shards.perturbation_key(spec)
        relative = f"{shards.perturbation_dir(key)}/{shards.shard_name(rank, world_size)}"
        shard = _inside(out, relative)
        receipt = _inside(out, str(_receipt(shard).relative_to(out)))
        shard_key = fp.cache_key(version=RECEIPT_VERSION, **described, perturbation=key,
                                 rows=[start, stop])
        record = _kept(shard, shard_key)
        if record is None:
            label = shards.perturbation_label(key)
            try:
                outputs = extract_rows(
                    _guarded(model, job.model), dataset, range(start, stop),
                    transform=transform, normalize=normalize, perturbation=spec,
                    batch_size=job.batch_size, num_workers=job.num_workers, device=device,
                    progress=progress)
            except InvalidDataError as error:  # what the model returned
                raise InvalidDataError(f"--model {job.model}: {error}") from None
            ids = dataset.image_ids[start:stop]
            record = _write_shard(shard, ids, _checked(outputs, ids, job, label), {
                "key": shard_key, "perturbation": key, "dataset": dataset.fingerprint})
            atomic_write_text(receipt, json.dumps({"key": shard_key, "record": record}) + "\n")
            extracted.append(relative)
        else:
            kept.append(relative)
            log(f"fairness: kept {relative} ({shards.perturbation_label(key)}, "
                f"{record['rows']} images): its checksum matches")
        records.append({"perturbation": key, "file": relative, "key": shard_key, **record})
    gathered = [records]
    if world_size > 1:
        gathered = [[] for _ in range(world_size)]
        dist.all_gather_object(gathered, records)
    if rank != 0:
        return ExtractSummary(rank, world_size, tuple(kept), tuple(extracted))
    manifest = _manifest(job, described, gathered)
    text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    path = atomic_write_text(out / shards.MANIFEST, text)
    _remove_stale(out, manifest)
    _inside(out, shards.JOB_FILE).unlink(missing_ok=True)
    return ExtractSummary(rank, world_size, tuple(kept), tuple(extracted), path)


def _manifest(job: ExtractJob, described: Described,
              gathered: Sequence[Sequence[_RankShard]]) -> Manifest:
    """The manifest from every rank's shard records (rank order, extraction order)."""
    first = gathered[0][0]["outputs"]
    for shard in (ranks[i] for i in range(len(gathered[0])) for ranks in gathered):
        if shard["outputs"] != first:
            raise FairnessConfigError(
                f"shard {shard['file']} has outputs {shard['outputs']}, the first shard "
                f"{first}: the model's outputs changed between ranks or extractions.")
    extractions: list[shards.ExtractionEntry] = [
        {"perturbation": record["perturbation"],
         "directory": shards.perturbation_dir(record["perturbation"]),
         "shards": [{"file": r[i]["file"], "rows": r[i]["rows"], "sha256": r[i]["sha256"],
                     "key": r[i]["key"]} for r in gathered]}
        for i, record in enumerate(gathered[0])]
    return {"format": shards.FORMAT, "version": shards.FORMAT_VERSION, "command": job.command,
            **described, "outputs": first, "id_column": shards.ID_COLUMN,
            "extractions": extractions}


def _remove_stale(out: Path, manifest: Manifest) -> None:
    """Remove shards and receipts of earlier jobs (only files a job wrote, never through a link)."""
    listed = {shard["file"] for e in manifest["extractions"] for shard in e["shards"]}
    for extraction in manifest["extractions"]:
        directory = extraction["directory"]
        for path in _inside(out, directory, writing=False).iterdir():
            name = path.with_suffix(".parquet").name.lstrip("_")
            if (_OWN_NAME.fullmatch(path.name) and f"{directory}/{name}" not in listed
                    and _ours(path)):
                path.unlink(missing_ok=True)
