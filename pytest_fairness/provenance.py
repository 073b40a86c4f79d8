"""What produced a test's features, and the check that each checkpoint produced its own.

With ``--fairness-checkpoint A --fairness-checkpoint B`` a test that uses
``fairness_features`` runs once per checkpoint. Every extraction leaves an entry in the
test's record (:func:`extraction`): the dataset, its fingerprint, the fingerprint of the
model and a sha256 of the features. Two checkpoints of one test whose entries have the
same model fingerprint and the same features measured one model twice: the
``fairness_model`` override ignores ``fairness_checkpoint``, or names every checkpoint
with one ``model_id`` (so the feature cache returns one checkpoint's features for all).
A model whose checkpoints share only a backbone (``module="backbone"``) is not flagged:
the whole model's fingerprint differs.

Two places notice it:

* in the test: :func:`publish` writes the entry to a folder the run shares with its
  pytest-xdist workers, and raises :class:`~pytest_fairness.errors.CheckpointIgnoredError`
  when another checkpoint of the test wrote the same one, so the later test of a pair fails;
* at the end of the run: :func:`same_features` over every record, so the summary names
  each affected test, an earlier one that passed included, and the run fails.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, final

import pytest

from pytest_fairness.errors import CheckpointIgnoredError, MissingFeaturesError, own_error
from pytest_fairness.options import checkpoint_ids, pytest_id, strip_param

if TYPE_CHECKING:
    from pytest_fairness.features import Features
    from pytest_fairness.records import Extraction, TestRecord
    from pytest_fairness.settings import Settings

__all__ = [
    "EXTRACTIONS_KEY",
    "WORKER_INPUT",
    "SameFeatures",
    "extraction",
    "features_function",
    "fingerprints_dir",
    "identity_of",
    "note_features",
    "note_model",
    "publish",
    "publish_reference",
    "read_reference",
    "same_features",
    "same_features_lines",
    "same_features_message",
]

__tracebackhide__ = own_error

#: The ``workerinput`` key that gives pytest-xdist workers the run's shared folder.
WORKER_INPUT: Final = "fairness_fingerprints_dir"
#: How long a pytest-xdist worker waits for a test's record at the reference checkpoint.
REFERENCE_WAIT_S: Final = 300.0

FIX: Final = """\
The `fairness_model` override in conftest.py must request `fairness_checkpoint` and load it:

    @pytest.fixture(scope="session")
    def fairness_model(fairness_checkpoint):
        return load_my_model(fairness_checkpoint).eval()"""


#: What produced each of a test's features (:func:`extraction`).
EXTRACTIONS_KEY: Final = pytest.StashKey["list[Extraction]"]()


def identity_of(item: pytest.Item, settings: Settings) -> tuple[str, str | None]:
    """The test id without its checkpoint parameter, and the checkpoint (if any).

    The parameter is removed by the id the run gave the checkpoint, never guessed from its
    file name, so same-named checkpoints and escaped (non-ASCII) ids are found again.
    """
    callspec = getattr(item, "callspec", None)
    checkpoint = None if callspec is None else callspec.params.get("fairness_checkpoint")
    if checkpoint is None:
        return item.nodeid, None
    ident = settings.checkpoint_ids[settings.checkpoints.index(checkpoint)]
    return strip_param(item.nodeid, pytest_id(ident, item.config)), checkpoint


def fingerprints_dir(config: pytest.Config, checkpoints: Sequence[str]) -> Path | None:
    """The folder where the run's extractions meet (see :func:`publish`).

    The controller makes one when there are several checkpoints and hands it to the
    pytest-xdist workers in their ``workerinput``.
    """
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        folder = workerinput.get(WORKER_INPUT)
        return None if folder is None else Path(folder)
    return Path(tempfile.mkdtemp(prefix="pytest-fairness-")) if len(checkpoints) > 1 else None


def extraction(features: Features, *, model_fingerprint: str) -> Extraction:
    """The record entry of one extraction: dataset, fingerprints and the features' digest."""
    from pytest_fairness.records import Extraction

    return Extraction(features.dataset.name, features.dataset.fingerprint, model_fingerprint,
                      features.digest)


def features_function(settings: Settings, model: Any, item: pytest.Item, *,
                      memory: dict[str, Features], fingerprints_dir: Path | None
                      ) -> Callable[..., Features]:
    """The ``fairness_features`` function of ``item`` for ``model``, with the run's settings.

    Each extraction is noted on the item (:func:`note_features`); with
    ``--fairness-features [CHECKPOINT=]DIR`` every call reads what ``pytest-fairness
    extract`` wrote for the item's checkpoint (:func:`note_shards`).
    """

    def features(dataset: Any, *, transform: Any = None, perturbation: Any = None,
                 batch_size: int | None = None, normalize: Any = "imagenet",
                 layers: Any = (), amp: bool = False, num_workers: int = 0,
                 precomputed: str | os.PathLike[str] | None = None,
                 model_id: str | None = None, module: str | None = None) -> Features:
        __tracebackhide__ = True
        from pytest_fairness.features import (
            DefaultTransform,
            extract_features,
            load_precomputed,
        )

        if precomputed is not None:
            return load_precomputed(precomputed, dataset)
        if settings.features_ahead:
            checkpoint = identity_of(item, settings)[1]
            folder = _features_folder(item, checkpoint, settings)
            read = load_precomputed(
                folder, dataset, perturbation=perturbation,
                normalize=normalize, cache_dir=settings.cache_dir,
                transform=DefaultTransform() if transform is None else transform)
            note_shards(item, read, folder, checkpoint)
            return read
        extracted = extract_features(
            model, dataset, transform=transform, perturbation=perturbation,
            normalize=normalize, layers=layers,
            batch_size=settings.batch_size if batch_size is None else batch_size,
            num_workers=num_workers, device=settings.device, amp=amp,
            cache_dir=settings.cache_dir, model_id=model_id, module=module,
            memory=memory if settings.cache_dir is not None else None,
        )
        note_features(item, extracted, model, settings=settings, model_id=model_id,
                      fingerprints_dir=fingerprints_dir)
        return extracted

    return features


def _features_folder(item: pytest.Item, checkpoint: str | None, settings: Settings) -> str:
    """The ``--fairness-features`` folder of ``item``'s ``checkpoint``."""
    folders = settings.features_ahead
    if checkpoint is None and len(folders) > 1:
        raise MissingFeaturesError(
            f"{item.nodeid} does not run per checkpoint, so it cannot tell which of the "
            f"{len(folders)} --fairness-features folders to read: request the "
            "fairness_checkpoint fixture in the test or in its fairness_features fixture.")
    return folders[checkpoint] if checkpoint is not None else next(iter(folders.values()))


@functools.cache
def _checkpoint_fingerprint(checkpoint: str) -> str:
    """As ``pytest-fairness extract`` records it: the file's sha256, or the name given."""
    from pytest_fairness.features.cache import file_sha256

    is_file = os.path.isfile(checkpoint)
    return f"sha256:{file_sha256(checkpoint)}" if is_file else f"name:{checkpoint}"


def note_shards(item: pytest.Item, features: Features, folder: str,
                checkpoint: str | None) -> None:
    """Record the folder of features read for ``item``, checked against its checkpoint.

    Raises
    ------
    MissingFeaturesError
        When the folder was extracted from another checkpoint than ``item``'s.
    """
    from pytest_fairness.features import read_manifest
    from pytest_fairness.records import Extraction

    model = read_manifest(folder)["model"]
    recorded = model.get("checkpoint_fingerprint")
    if checkpoint is not None and recorded != _checkpoint_fingerprint(checkpoint):
        raise MissingFeaturesError(
            f"--fairness-features folder {folder!r} holds features of checkpoint "
            f"{model.get('checkpoint')!r} ({recorded}), not of {checkpoint!r} "
            f"({_checkpoint_fingerprint(checkpoint)}): extract them with `pytest-fairness "
            f"extract --checkpoint {checkpoint} --out DIR` and give CHECKPOINT=DIR.")
    item.stash.setdefault(EXTRACTIONS_KEY, []).append(Extraction(
        features.dataset.name, features.dataset.fingerprint, str(model["fingerprint"]),
        features.digest, folder))


def note_model(item: pytest.Item, settings: Settings, fingerprints_dir: Path | None) -> None:
    """Record the ``fairness_model`` a checkpoint's test requested, as for features.

    Fails the test when it does not run per checkpoint, or another checkpoint's test got
    the same model: the override ignores ``fairness_checkpoint``.
    """
    __tracebackhide__ = True
    model = getattr(item, "funcargs", {}).get("fairness_model")
    test, checkpoint = identity_of(item, settings)
    if model is None or len(settings.checkpoints) < 2:
        return
    if checkpoint is None:  # fairness_model does not depend on fairness_checkpoint
        raise CheckpointIgnoredError(
            f"{test} requests fairness_model but does not run per checkpoint: the "
            f"override ignores fairness_checkpoint, so one model stands for all "
            f"{len(settings.checkpoints)} --fairness-checkpoint.\n{FIX}")
    from pytest_fairness.features import model_fingerprint
    from pytest_fairness.records import Extraction

    entry = Extraction("", "", model_fingerprint(model), "")  # a model, no features
    item.stash.setdefault(EXTRACTIONS_KEY, []).append(entry)
    if fingerprints_dir is not None:
        publish(fingerprints_dir, test=test, checkpoint=checkpoint, entry=entry)


def note_features(item: pytest.Item, features: Features, model: Any, *, settings: Settings,
                  model_id: str | None, fingerprints_dir: Path | None) -> None:
    """Record what produced ``features`` on ``item``; fail if another checkpoint matches.

    Raises
    ------
    CheckpointIgnoredError
        When another checkpoint of the same test gave the same features from a model
        with the same fingerprint (:func:`publish`).
    """
    __tracebackhide__ = True
    from pytest_fairness.features import model_fingerprint

    # The whole model, also under module=: checkpoints may share only a backbone.
    entry = extraction(features, model_fingerprint=model_fingerprint(model, model_id=model_id))
    item.stash.setdefault(EXTRACTIONS_KEY, []).append(entry)
    test, checkpoint = identity_of(item, settings)
    if fingerprints_dir is not None and checkpoint is not None:
        publish(fingerprints_dir, test=test, checkpoint=checkpoint, entry=entry)


def same_features_message(test: str, checkpoints: Sequence[str], model_fingerprint: str, *,
                          model_only: bool = False) -> str:
    """Why checkpoints of ``test`` that gave the same features (or model) fail, and the fix.

    Examples
    --------
    >>> print(same_features_message("t.py::test_gap", ["a.pt", "b.pt"], "state:1f3a")
    ...       .splitlines()[0])
    checkpoints a.pt and b.pt gave identical features in t.py::test_gap: ...
    """
    names = checkpoint_ids(checkpoints)
    listed = ", ".join(names[:-1]) + f" and {names[-1]}"
    shown = model_fingerprint if len(model_fingerprint) <= 40 else model_fingerprint[:40] + "..."
    what = "got the same fairness_model" if model_only else "gave identical features"
    message = (f"checkpoints {listed} {what} in {test}: the model under "
               f"test was the same for each (fingerprint {shown}).\n{FIX}")
    if model_fingerprint.startswith("id:"):
        message += (
            f"\nThe model is also named {model_fingerprint[3:]!r} at every checkpoint "
            "(model_id= or a fairness_fingerprint attribute), so the feature cache returns "
            "one checkpoint's features for all: put the checkpoint in the name, e.g. "
            'model_id=f"my-model@{fairness_checkpoint}".'
        )
    return message


def publish(directory: Path, *, test: str, checkpoint: str, entry: Extraction) -> None:
    """Write ``entry`` of ``test`` at ``checkpoint`` to the run's shared ``directory``.

    Raises
    ------
    CheckpointIgnoredError
        When another checkpoint of ``test`` already wrote the same model fingerprint and
        features digest (in this process or another pytest-xdist worker).
    """
    __tracebackhide__ = True
    from pytest_fairness.files import atomic_write_text

    same = "\0".join((test, entry.model_fingerprint, entry.features_digest))
    key = hashlib.sha256(same.encode()).hexdigest()[:32]
    mine = f"{key}-{hashlib.sha256(checkpoint.encode()).hexdigest()[:16]}"
    atomic_write_text(directory / mine, checkpoint)  # whole or absent for other readers
    others = sorted(path.read_text(encoding="utf-8") for path in directory.glob(f"{key}-*")
                    if path.name != mine)
    if others:
        raise CheckpointIgnoredError(
            same_features_message(test, sorted([*others, checkpoint]),
                                  entry.model_fingerprint,
                                  model_only=not entry.features_digest))


def _reference_path(directory: Path, test: str) -> Path:
    return directory / f"reference-{hashlib.sha256(test.encode()).hexdigest()[:32]}.json"


def publish_reference(directory: Path, *, test: str, kept: TestRecord | str) -> None:
    """Write ``test``'s record at the reference checkpoint (or why it has none) to ``directory``.

    The other checkpoints' tests read it (:func:`read_reference`), in any pytest-xdist worker.
    """
    import json

    from pytest_fairness.files import atomic_write_text

    document = {"missing": kept} if isinstance(kept, str) else {"record": kept.to_dict()}
    atomic_write_text(_reference_path(directory, test), json.dumps(document))


def read_reference(directory: Path, *, test: str, wait: float = REFERENCE_WAIT_S
                   ) -> TestRecord | str:
    """What :func:`publish_reference` wrote of ``test``: its record, or why there is none.

    Waits for it up to ``wait`` seconds.
    """
    import json
    import time

    from pytest_fairness.records import TestRecord

    path = _reference_path(directory, test)
    deadline = time.monotonic() + wait
    while not path.exists():
        if time.monotonic() >= deadline:
            return f"no result within {wait:g} s"
        time.sleep(0.05)
    found = json.loads(path.read_text(encoding="utf-8"))
    return TestRecord.from_dict(found["record"]) if "record" in found else str(found["missing"])


@final
@dataclass(frozen=True)
class SameFeatures:
    """Checkpoints of one test that gave the same features (see :func:`same_features`).

    Parameters
    ----------
    test : str
        The test id without the checkpoint parameter.
    nodeids : tuple of str
        The affected test ids, one per checkpoint.
    message : str
        What happened and how to fix it (:func:`same_features_message`).
    """

    test: str
    nodeids: tuple[str, ...]
    message: str


def same_features(records: Iterable[TestRecord]) -> list[SameFeatures]:
    """The tests of a run whose checkpoints gave the same features, one entry per test.

    Examples
    --------
    >>> from pytest_fairness.records import Extraction, TestRecord
    >>> entry = Extraction("d", "data:1", "state:1f3a", "9c0d")
    >>> records = [TestRecord(f"t.py::g[{c}]", "t.py::g", c, extractions=(entry,))
    ...            for c in ("a.pt", "b.pt")]
    >>> [found.nodeids for found in same_features(records)]
    [('t.py::g[a.pt]', 't.py::g[b.pt]')]
    """
    by_key: dict[tuple[str, str, str], dict[str, str]] = {}  # → checkpoint → nodeid
    for record in records:
        if record.checkpoint is None:
            continue
        for entry in record.extractions:
            key = (record.test, entry.model_fingerprint, entry.features_digest)
            by_key.setdefault(key, {}).setdefault(record.checkpoint, record.nodeid)
    found: dict[str, tuple[dict[str, str], str, bool]] = {}  # test → (… → nodeid, model, …)
    for (test, model, digest), nodeids in by_key.items():
        if len(nodeids) > 1:
            found.setdefault(test, ({}, model, not digest))[0].update(nodeids)
    return [SameFeatures(test, tuple(nodeids[c] for c in sorted(nodeids)),
                         same_features_message(test, sorted(nodeids), model, model_only=only))
            for test, (nodeids, model, only) in found.items()]


def same_features_lines(records: Iterable[TestRecord]) -> list[str]:
    """One summary line per test whose checkpoints gave the same features (it fails the run).

    The earlier test of a pair may have passed, and under pytest-xdist both may have run
    at once, so the end of the run names every affected test.
    """
    return [f"fairness checkpoint ERROR in {', '.join(same.nodeids)}: {same.message}"
            for same in same_features(records)]
