"""The metadata of a run: time, label, checkpoints, git commit, fingerprints, seed, versions."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from pytest_fairness.history import now
from pytest_fairness.options import checkpoint_ids
from pytest_fairness.records import TestRecord, joined

__all__ = ["collect_metadata", "git_commit"]


def git_commit(root: str | os.PathLike[str]) -> str | None:
    """The commit checked out in ``root``, or None outside a git work tree (or without git)."""
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=str(root), capture_output=True,
                              text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and commit else None


def _versions() -> dict[str, str]:
    """Versions of Python, the platform and the packages already imported (none imported here)."""
    from importlib import metadata

    versions = {"python": platform.python_version(), "platform": platform.platform()}
    for dist, module in (("pytest", "pytest"), ("pytest-fairness", "pytest_fairness"),
                         ("numpy", "numpy"), ("torch", "torch"), ("torchvision", "torchvision"),
                         ("faiss-cpu", "faiss"), ("pandas", "pandas"), ("scipy", "scipy")):
        if module not in sys.modules:
            continue
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            version = getattr(sys.modules[module], "__version__", None)
            if version:
                versions[dist] = str(version)
    return versions


def _file_digest(path: str) -> str | None:
    """A checkpoint's content fingerprint: the sha256 of its file (None if not a file)."""
    if not os.path.isfile(path):
        return None
    from pytest_fairness.features.cache import file_sha256

    return file_sha256(path)


def _distinct(records: Iterable[TestRecord], names: Sequence[str]) -> str | None:
    """The distinct values of ``names`` in the records' extractions and results' params."""
    return joined(source.get(name) or None for record in records for source in (
        *(e.to_dict() for e in record.extractions),
        *(r.result.params for r in record.results)) for name in names)


def collect_metadata(records: Sequence[TestRecord], *, root: str | os.PathLike[str] | None = None,
                     label: str | None = None, checkpoints: Sequence[str] = (),
                     seed: Any = None, started: str | None = None,
                     exitstatus: int | None = None) -> dict[str, Any]:
    """The metadata of a run: time, label, checkpoint(s), git commit, fingerprints, seed, versions.

    A checkpoint is its path as given plus its content (``checkpoint_files``: the id tests
    and reports give it → path and sha256 of the file).

    Fingerprints come from the records' extractions and the results' params, the seed from
    the params when not given; distinct values are comma-joined (one model per checkpoint).
    """
    names = checkpoint_ids(checkpoints)
    return {
        "started": started or now(),
        "finished": now(),
        "label": label,
        "checkpoint": ",".join(names) if names else None,
        "checkpoint_files": {name: {"path": path, "sha256": _file_digest(path)}
                             for name, path in zip(names, checkpoints)},
        "git_commit": git_commit(root) if root is not None else None,
        "model_fingerprint": _distinct(records, ("model_fingerprint", "model_id")),
        "dataset_fingerprint": _distinct(records, ("dataset_fingerprint",)),
        "features": joined(e.features or None for r in records for e in r.extractions),
        "seed": seed if seed is not None else _distinct(records, ("seed",)),
        "versions": _versions(),
        "exitstatus": exitstatus,
    }
