"""The run's settings: every ``--fairness-*`` option and ini value, resolved once.

:meth:`Settings.from_config` reads the command line and the ini file when pytest
configures, applies the precedence rules (the command line over the ini file; paths on the
command line relative to the current folder, in the ini file to the rootdir or the ini
file) and refuses contradictory options with :class:`pytest.UsageError`. Everything else
reads the frozen result.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import final

import pytest

from pytest_fairness.errors import did_you_mean
from pytest_fairness.options import (
    CACHE_DIR_INI,
    DATA_INI,
    DEFAULT_CACHE_DIR,
    DEFAULT_CONFIDENCE,
    ENABLE_INI,
    FAMILY_INI,
    HISTORY_INI,
    INCONCLUSIVE_INI,
    INCONCLUSIVE_POLICIES,
    SEED_INI,
    checkpoint_ids,
    parse_data_item,
    parse_family_alpha,
    parse_seed,
)

__all__ = ["Settings"]


def _absolute(path: str | os.PathLike[str], base: Path) -> Path:
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else base / candidate


def _seed(config: pytest.Config) -> int:
    """``--fairness-seed``, else the ini value, else 0 (gates must be reproducible)."""
    seed = config.getoption("fairness_seed", None)
    if seed is not None:
        return int(seed)
    from_ini = str(config.getini(SEED_INI)).strip()
    if not from_ini:
        return 0
    try:
        return parse_seed(from_ini)
    except argparse.ArgumentTypeError as error:
        raise pytest.UsageError(f"ini {SEED_INI} = {from_ini}: {error}") from None


def _inconclusive(config: pytest.Config) -> str | None:
    """``--fairness-inconclusive``, else the ini value, else None (the rule decides)."""
    given = config.getoption("fairness_inconclusive", None)
    if given is not None:
        return str(given)
    from_ini = str(config.getini(INCONCLUSIVE_INI)).strip()
    if from_ini and from_ini not in INCONCLUSIVE_POLICIES:
        raise pytest.UsageError(
            f"ini {INCONCLUSIVE_INI} = {from_ini}: must be one of "
            f"{', '.join(INCONCLUSIVE_POLICIES)} (what an inconclusive verdict does to its "
            f"test); got {INCONCLUSIVE_INI}={from_ini!r}.")
    return from_ini or None


def _family_alpha(config: pytest.Config) -> float | None:
    """``--fairness-family-alpha``, else the ini value, else None (each check alone)."""
    given = config.getoption("fairness_family_alpha", None)
    from_ini = str(config.getini(FAMILY_INI)).strip()
    if given is not None or not from_ini:
        return None if given is None else float(given)
    try:
        return parse_family_alpha(from_ini)
    except argparse.ArgumentTypeError as error:
        raise pytest.UsageError(f"ini {FAMILY_INI} = {from_ini}: {error}; set "
                                f"{FAMILY_INI} = 0.05, or remove it.") from None


def _history_path(config: pytest.Config) -> Path:
    """``--fairness-history``, else the ini value (relative to the ini file), else the default."""
    from_option = config.getoption("fairness_history", None)
    if from_option:
        return Path(config.invocation_params.dir, from_option)
    from_ini = config.getini(HISTORY_INI)
    if from_ini:
        base = config.inipath.parent if config.inipath is not None else config.rootpath
        return Path(base, str(from_ini))
    return config.rootpath / ".fairness" / "history.sqlite"


def _roots(config: pytest.Config) -> dict[str, Path]:
    """Dataset roots: the ini option (relative to rootdir), then the command line (to cwd)."""
    roots: dict[str, Path] = {}
    for line in config.getini(DATA_INI):
        try:
            name, path = parse_data_item(line)
        except argparse.ArgumentTypeError as exc:
            raise pytest.UsageError(f"ini option {DATA_INI}: {exc}") from None
        roots[name] = _absolute(path, config.rootpath)
    for name, path in config.getoption("fairness_data") or ():
        roots[name] = _absolute(path, Path.cwd())  # the command line wins over the ini file
    return roots


def _cache_dir(config: pytest.Config) -> Path | None:
    if config.getoption("fairness_no_cache"):
        return None
    if config.getoption("fairness_cache_dir"):
        return _absolute(config.getoption("fairness_cache_dir"), Path.cwd())
    if config.getini(CACHE_DIR_INI):
        return _absolute(config.getini(CACHE_DIR_INI), config.rootpath)
    return config.rootpath / DEFAULT_CACHE_DIR


def _writable(config: pytest.Config, option: str, thing: str, sample: str, *,
              folder: bool) -> str | None:
    """A folder (``--fairness-report``) or file that can be written, checked now, not at the end.

    ``thing`` is what is written there (``"report"``), ``sample`` a value to suggest.
    """
    given: str | None = config.getoption(option[2:].replace("-", "_"), None)
    if given is None:
        return None
    what = "folder" if folder else "file"
    path = _absolute(given, Path.cwd()) if given.strip() else None
    # The nearest folder that exists: where the folder is made, or the file replaced.
    nearest = path and next(p for p in [path, *path.parents][int(not folder):] if p.exists())
    why = ("names no " + what if path is None or nearest is None else
           f"{path} is a folder" if not folder and path.is_dir() else
           f"{nearest} is not a folder" if not nearest.is_dir() else
           f"the folder {nearest} is not writable" if not os.access(nearest, os.W_OK) else "")
    if why:
        raise pytest.UsageError(f"{option} {given!r}: {why}; give a {what} the {thing} can be "
                                f"written to, e.g. {option} {sample}.")
    return given


def _checkpoints(config: pytest.Config) -> tuple[str, ...]:
    """``--fairness-checkpoint`` values: absolute when the path exists, else as given.

    A path that does not exist, and the same checkpoint given twice (its results would
    have one id), are usage errors.
    """
    seen: dict[str, str] = {}  # resolved → as given
    out = []
    for given in config.getoption("fairness_checkpoint") or ():
        path = _absolute(given, Path.cwd())
        if not path.exists() and (Path(given).suffix or "/" in given or os.sep in given):
            raise pytest.UsageError(
                f"--fairness-checkpoint {given!r}: there is no such file ({path}). Give an "
                "existing checkpoint file, or a bare name (no folder, no suffix) that your "
                "fairness_model fixture knows.")
        same = str(path.resolve()) if path.exists() else given
        if same in seen:
            raise pytest.UsageError(
                f"--fairness-checkpoint {given!r} names the same checkpoint as "
                f"--fairness-checkpoint {seen[same]!r}: give each checkpoint once.")
        seen[same] = given
        out.append(str(path) if path.exists() else given)
    return tuple(out)


def _features_dirs(config: pytest.Config, checkpoints: tuple[str, ...],
                   ids: tuple[str, ...]) -> Mapping[str, str]:
    """``--fairness-features [CHECKPOINT=]DIR``: the folder of each checkpoint ("" for none).

    One plain DIR serves a run with at most one checkpoint; with several, each checkpoint
    needs its own folder (one folder for all would compare a checkpoint with itself).
    """
    names = {n: c for c, i in zip(checkpoints, ids) for n in (c, i, Path(c).name)}
    found: dict[str, tuple[str, str]] = {}  # checkpoint → (folder, as given)
    plain = []
    for value in config.getoption("fairness_features", None) or []:
        name, sep, folder = value.partition("=")
        if not sep or name not in names:
            plain.append(value)
        elif names[name] in found:
            raise pytest.UsageError(f"--fairness-features names checkpoint {name!r} twice; "
                                    "give each checkpoint one features folder.")
        else:
            found[names[name]] = (folder, value)
    if plain and (found or len(plain) > 1 or len(checkpoints) > 1):
        raise pytest.UsageError(
            f"--fairness-features {plain[0]!r}: give one folder, or with several "
            "--fairness-checkpoint one folder per checkpoint, as --fairness-features "
            f"CHECKPOINT=DIR ({', '.join(f'{i}=DIR' for i in ids) or 'no checkpoint given'}),"
            " each written by `pytest-fairness extract --checkpoint ...`."
            + did_you_mean(plain[0].partition("=")[0], ids))
    if plain:
        found = {checkpoints[0] if checkpoints else "": (plain[0], plain[0])}
    missing = [i for c, i in zip(checkpoints, ids) if found and c not in found]
    if missing:
        raise pytest.UsageError(
            f"--fairness-features gives no folder for checkpoint(s) {', '.join(missing)}; "
            "add --fairness-features CHECKPOINT=DIR for each.")
    args = config.invocation_params.args
    spaced = any(a == "--fairness-features" for a in args)
    here = config.invocation_params.dir.resolve()
    out = {}
    for checkpoint, (folder, value) in found.items():
        path = _absolute(folder, Path.cwd())
        if spaced and not path.resolve().is_relative_to(here):
            raise pytest.UsageError(
                f"--fairness-features {value} (with a space) names a folder outside this "
                "project: pytest reads it as a test path as well, before its plugins load, "
                f"and takes {config.rootpath} as the rootdir. Write "
                f"--fairness-features={value}.")
        out[checkpoint] = str(path)
    return out


def _compare_fail(config: pytest.Config) -> Mapping[str, float]:
    """``--fairness-compare-fail``, given once (a repeat used to keep only the last)."""
    given = config.getoption("fairness_compare_fail", None) or []
    if len(given) > 1:
        shown = " and ".join(",".join(f"{k}:{v:g}" for k, v in one.items()) for one in given)
        raise pytest.UsageError(
            f"--fairness-compare-fail is given {len(given)} times ({shown}); give it once, "
            "with comma-separated metric:tolerance pairs, e.g. "
            "--fairness-compare-fail gap:0.01,DEO:0.02.")
    return given[0] if given else {}


def _reference_checkpoint(config: pytest.Config, checkpoints: tuple[str, ...]) -> str | None:
    """The checkpoint the others are compared with: named, or the first (2+ only)."""
    name = config.getoption("fairness_reference_checkpoint", None)
    if len(checkpoints) < 2:
        if name is not None:
            raise pytest.UsageError(
                "--fairness-reference-checkpoint needs two or more --fairness-checkpoint to "
                f"compare; got {len(checkpoints)}."
            )
        return None
    if name is None:
        return checkpoints[0]
    ids = checkpoint_ids(checkpoints)
    found = [c for c, i in zip(checkpoints, ids) if name in (c, i, Path(c).name)]
    if len(found) != 1:
        raise pytest.UsageError(
            f"--fairness-reference-checkpoint={name!r} names "
            f"{'none' if not found else 'more than one'} of the --fairness-checkpoint: "
            f"{', '.join(ids)}. Give one of them (a path or "
            "a file name)."
        )
    return found[0]


@final
@dataclass(frozen=True)
class Settings:
    """What the ``--fairness-*`` options and their ini twins ask of this run.

    Parameters
    ----------
    enabled : bool
        ``--fairness`` or ``fairness = true``: fairness tests run (else they are skipped).
    seed : int
        ``--fairness-seed``, the ini value, or 0 (also what ``seed=None`` means in the run).
    inconclusive : str or None
        ``--fairness-inconclusive`` or its ini value: ``"pass"``, ``"fail"``, or None (by rule).
    family_alpha : float or None
        ``--fairness-family-alpha`` or its ini value: the run's family-wise error rate.
    report_dir, markdown, save_baseline, baseline_ref, label : str or None
        ``--fairness-report``, ``--fairness-markdown``, ``--fairness-save-baseline``,
        ``--fairness-baseline``, ``--fairness-run-label``.
    compare_fail : mapping of str to float
        ``--fairness-compare-fail``: the tolerance per metric (a
        :class:`~pytest_fairness.options.CompareFail`, with any drift budgets).
    compare_confidence : str
        ``--fairness-compare-confidence``: the rule of those comparisons.
    record_history : bool
        False with ``--fairness-no-history``.
    history_path : Path
        The history store.
    roots : mapping of str to Path
        Dataset roots by name (``--fairness-data``, ``fairness_data``).
    strict : bool
        ``--fairness-strict``: an unconfigured dataset fails instead of skipping.
    device : str
        ``--fairness-device``.
    cache_dir : Path or None
        The feature cache (None with ``--fairness-no-cache``).
    batch_size : int
        ``--fairness-batch-size``.
    checkpoints, checkpoint_ids : tuple of str
        ``--fairness-checkpoint`` values (absolute when the file exists), and the unique
        ids that test ids and reports give them.
    reference_checkpoint : str or None
        The checkpoint the others are compared with (two or more checkpoints only).
    features_ahead : mapping of str to str
        ``--fairness-features [CHECKPOINT=]DIR``: the folder of features extracted ahead,
        read instead of running a model, by checkpoint (``""`` without checkpoints).
    paired : bool
        Draw bootstrap replicates image by image, so that this run's results pair with
        other checkpoints and runs: ``--fairness-paired``, or a run that compares with or
        saves a baseline or names checkpoints.
    started : str
        When the run started (local time, ISO 8601).
    """

    enabled: bool = False
    seed: int = 0
    inconclusive: str | None = None
    family_alpha: float | None = None
    report_dir: str | None = None
    markdown: str | None = None
    save_baseline: str | None = None
    baseline_ref: str | None = None
    label: str | None = None
    compare_fail: Mapping[str, float] = field(default_factory=dict)
    compare_confidence: str = DEFAULT_CONFIDENCE
    record_history: bool = True
    history_path: Path = Path(".fairness", "history.sqlite")
    roots: Mapping[str, Path] = field(default_factory=dict)
    strict: bool = False
    device: str = "auto"
    cache_dir: Path | None = None
    batch_size: int = 64
    checkpoints: tuple[str, ...] = ()
    checkpoint_ids: tuple[str, ...] = ()
    reference_checkpoint: str | None = None
    features_ahead: Mapping[str, str] = field(default_factory=dict)
    paired: bool = False
    started: str = ""

    @property
    def gates(self) -> tuple[str, ...]:
        """The options given that need fairness results: a verdict, or a baseline written."""
        return tuple(option for option, given in (
            ("--fairness-baseline", self.baseline_ref), ("--fairness-compare-fail",
                                                         self.compare_fail),
            ("--fairness-save-baseline", self.save_baseline)) if given)

    @classmethod
    def from_config(cls, config: pytest.Config) -> Settings:
        """Resolve every option once; contradictory options are a usage error."""
        checkpoints = _checkpoints(config)
        settings = cls(
            enabled=bool(config.getoption("fairness") or config.getini(ENABLE_INI)),
            seed=_seed(config),
            inconclusive=_inconclusive(config),
            family_alpha=_family_alpha(config),
            report_dir=_writable(config, "--fairness-report", "report", "fairness-report",
                                 folder=True),
            markdown=_writable(config, "--fairness-markdown", "summary", "fairness-summary.md",
                               folder=False),
            save_baseline=config.getoption("fairness_save_baseline", None),
            baseline_ref=config.getoption("fairness_baseline", None),
            label=config.getoption("fairness_run_label", None),
            compare_fail=_compare_fail(config),
            compare_confidence=config.getoption("fairness_compare_confidence",
                                                DEFAULT_CONFIDENCE),
            record_history=not config.getoption("fairness_no_history", False),
            history_path=_history_path(config),
            roots=_roots(config),
            strict=bool(config.getoption("fairness_strict")),
            device=config.getoption("fairness_device"),
            cache_dir=_cache_dir(config),
            batch_size=config.getoption("fairness_batch_size"),
            checkpoints=checkpoints,
            checkpoint_ids=checkpoint_ids(checkpoints),
            features_ahead=_features_dirs(config, checkpoints, checkpoint_ids(checkpoints)),
            paired=bool(config.getoption("fairness_paired", False) or checkpoints
                        or config.getoption("fairness_baseline", None)
                        or config.getoption("fairness_save_baseline", None)),
            started=time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime()),
        )
        if settings.gates and not settings.enabled:
            raise pytest.UsageError(
                f"{' and '.join(settings.gates)} ask{'s' if len(settings.gates) == 1 else ''} "
                "for a fairness verdict, but fairness tests "
                "are skipped without --fairness: add --fairness (or set fairness = true in the "
                "[pytest] ini section).")
        if settings.compare_fail and not settings.baseline_ref and len(checkpoints) < 2:
            raise pytest.UsageError(
                "--fairness-compare-fail needs something to compare with: add "
                "--fairness-baseline FILE.json|RUN_ID|CHECKPOINT, or give two or more "
                "--fairness-checkpoint to compare them with the first."
            )
        return replace(settings,
                       reference_checkpoint=_reference_checkpoint(config, checkpoints))
