"""The pytest side of data and features: options, per-checkpoint parametrisation, fixtures.

Loaded by ``pytest_fairness.plugin`` through ``pytest_plugins``. Importing it costs nothing
measurable: torch, numpy, pandas and PIL load inside the fixtures, when a test asks.

Fixtures
--------
``fairness_model``
    Override it in ``conftest.py`` (an ``nn.Module`` or a callable on image batches);
    the default skips.
``fairness_features``
    ``fairness_features(dataset, *, transform=None, perturbation=None, batch_size=None,
    layers=(), precomputed=None, ...)`` → :class:`pytest_fairness.extract.Features`, cached on
    disk under ``--fairness-cache-dir`` and in memory for the session.
``fairness_checkpoint``
    One of ``--fairness-checkpoint`` (repeatable; tests that use it run once per checkpoint)
    or ``None``.
``utkface``, ``celeba``, ``casual_conversations``, ``miap``, ``dollar_street``, ``fairface``,
``fitzpatrick17k``, ``fairness_manifest``
    The dataset whose root is given by ``--fairness-data NAME=PATH`` or the
    ``fairness_data`` ini option (``manifest=PATH`` for ``fairness_manifest``); skipped when
    absent, an error under ``--fairness-strict``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import pytest

from pytest_fairness.options import (
    DATASET_NAMES,
    parse_batch_size,
    parse_data_item,
    parse_device,
)

DEFAULT_CACHE_DIR: Final = ".fairness/cache"
DEFAULT_BATCH_SIZE: Final = 64


class DataState:
    """Per-run settings for data and extraction, and the in-memory feature memo."""

    def __init__(self, *, roots: dict[str, Path], strict: bool, device: str,
                 cache_dir: Path | None, batch_size: int, checkpoints: list[str]) -> None:
        self.roots = roots
        self.strict = strict
        self.device = device
        self.cache_dir = cache_dir
        self.batch_size = batch_size
        self.checkpoints = checkpoints
        self.memory: dict[str, Any] = {}
        self.datasets: dict[str, Any] = {}


STATE_KEY: Final = pytest.StashKey[DataState]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Data, cache and checkpoint options, in the ``fairness`` group."""
    group = parser.getgroup("fairness")
    group.addoption("--fairness-data", action="append", default=[], metavar="NAME=PATH",
                    type=parse_data_item,
                    help=f"root of a dataset (repeatable); NAME in {', '.join(DATASET_NAMES)}.")
    group.addoption("--fairness-strict", action="store_true", default=False,
                    help="error (not skip) when a requested dataset is not configured.")
    group.addoption("--fairness-device", default="auto", type=parse_device,
                    help="device for feature extraction: auto (default), cpu, cuda[:N], mps.")
    group.addoption("--fairness-cache-dir", default=None, metavar="DIR",
                    help=f"feature cache directory (default {DEFAULT_CACHE_DIR} under rootdir).")
    group.addoption("--fairness-no-cache", action="store_true", default=False,
                    help="neither read nor write the feature cache.")
    group.addoption("--fairness-checkpoint", action="append", default=[], metavar="PATH",
                    help="model checkpoint (repeatable): tests using it run once per checkpoint.")
    group.addoption("--fairness-batch-size", default=DEFAULT_BATCH_SIZE, type=parse_batch_size,
                    help=f"batch size for feature extraction (default {DEFAULT_BATCH_SIZE}).")
    parser.addini("fairness_data", type="linelist", default=[],
                  help="dataset roots, one NAME=PATH per line (relative to rootdir).")
    parser.addini("fairness_cache_dir", default="",
                  help=f"feature cache directory (default {DEFAULT_CACHE_DIR}).")


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """Resolve roots and the cache directory once and stash them."""
    base = config.rootpath
    roots: dict[str, Path] = {}
    for line in config.getini("fairness_data"):
        try:
            name, path = parse_data_item(line)
        except argparse.ArgumentTypeError as exc:
            raise pytest.UsageError(f"ini option fairness_data: {exc}") from None
        roots[name] = _absolute(path, base)
    for name, path in config.getoption("fairness_data") or ():
        roots[name] = _absolute(path, Path.cwd())  # the command line wins over the ini file
    cache: Path | None
    if config.getoption("fairness_no_cache"):
        cache = None
    elif config.getoption("fairness_cache_dir"):
        cache = _absolute(config.getoption("fairness_cache_dir"), Path.cwd())
    elif config.getini("fairness_cache_dir"):
        cache = _absolute(config.getini("fairness_cache_dir"), base)
    else:
        cache = base / DEFAULT_CACHE_DIR
    checkpoints = [str(_absolute(c, Path.cwd())) if _absolute(c, Path.cwd()).exists() else c
                   for c in config.getoption("fairness_checkpoint") or ()]
    config.stash[STATE_KEY] = DataState(
        roots=roots,
        strict=bool(config.getoption("fairness_strict")),
        device=config.getoption("fairness_device"),
        cache_dir=cache,
        batch_size=config.getoption("fairness_batch_size"),
        checkpoints=checkpoints,
    )


def _absolute(path: str | os.PathLike[str], base: Path) -> Path:
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else base / candidate


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run tests that use ``fairness_checkpoint`` once per ``--fairness-checkpoint``."""
    if "fairness_checkpoint" not in metafunc.fixturenames:
        return
    state = metafunc.config.stash.get(STATE_KEY, None)
    if state is None or not state.checkpoints:
        return
    ids = [Path(c).name or c for c in state.checkpoints]
    if len(set(ids)) != len(ids):
        ids = [f"{i}-{name}" for i, name in enumerate(ids)]
    metafunc.parametrize("fairness_checkpoint", state.checkpoints, ids=ids, indirect=True,
                         scope="session")


def _state(config: pytest.Config) -> DataState:
    return config.stash[STATE_KEY]


# -- fixtures ------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def fairness_checkpoint(request: pytest.FixtureRequest) -> str | None:
    """The checkpoint this test runs for (``--fairness-checkpoint``), or ``None``."""
    return getattr(request, "param", None)


@pytest.fixture(scope="session")
def fairness_seed(request: pytest.FixtureRequest) -> int:
    """The run's seed (``--fairness-seed``, the ``fairness_seed`` ini value, or 0).

    Pass it to stochastic indicators so a run can be reproduced; it is recorded in the
    history with the run::

        def test_association(fairness_seed, X, Y, A, B):
            return indicators.ieat(X, Y, A, B, seed=fairness_seed)
    """
    from pytest_fairness.plugin import SESSION_KEY

    return request.config.stash[SESSION_KEY].seed


@pytest.fixture(scope="session")
def fairness_model() -> Any:
    """The model under test. Override this fixture in your ``conftest.py``."""
    pytest.skip(
        "no model to test: override the `fairness_model` fixture in conftest.py, e.g.\n"
        "    @pytest.fixture(scope='session')\n"
        "    def fairness_model(fairness_checkpoint):\n"
        "        return load_my_model(fairness_checkpoint).eval()"
    )


@pytest.fixture
def fairness_features(request: pytest.FixtureRequest, fairness_model: Any,
                      fairness_checkpoint: str | None) -> Callable[..., Any]:
    """``fairness_features(dataset, *, transform=None, perturbation=None, ...)`` → Features.

    Extracts the model's outputs for every row of ``dataset`` in batches, on
    ``--fairness-device``, cached on disk (``--fairness-cache-dir``, off with
    ``--fairness-no-cache``) and in memory for the session. ``precomputed=PATH`` reads
    ``.npy``/``.npz``/``.parquet`` features instead of running the model.
    """
    state = _state(request.config)

    def features(dataset: Any, *, transform: Any = None, perturbation: Any = None,
                 batch_size: int | None = None, normalize: Any = "imagenet",
                 layers: Any = (), amp: bool = False, num_workers: int = 0,
                 precomputed: str | os.PathLike[str] | None = None,
                 model_id: str | None = None) -> Any:
        __tracebackhide__ = True
        from pytest_fairness.extract import extract_features, load_precomputed

        if precomputed is not None:
            return load_precomputed(precomputed, dataset)
        return extract_features(
            fairness_model, dataset, transform=transform, perturbation=perturbation,
            normalize=normalize, layers=layers,
            batch_size=state.batch_size if batch_size is None else batch_size,
            num_workers=num_workers, device=state.device, amp=amp,
            cache_dir=state.cache_dir, model_id=model_id,
            memory=state.memory if state.cache_dir is not None else None,
        )

    return features


def _dataset(request: pytest.FixtureRequest, name: str) -> Any:
    state = _state(request.config)
    if name in state.datasets:
        return state.datasets[name]
    root = state.roots.get(name)
    if root is None:
        message = (
            f"dataset {name!r} is not configured: pass --fairness-data {name}=PATH or add "
            f"'{name}=PATH' to the fairness_data ini option"
        )
        if state.strict:
            pytest.fail(message + " (--fairness-strict turns this skip into an error)",
                        pytrace=False)
        pytest.skip(message)
    from pytest_fairness.data import LOADERS

    dataset = LOADERS[name](root)
    state.datasets[name] = dataset
    return dataset


@pytest.fixture(scope="session")
def utkface(request: pytest.FixtureRequest) -> Any:
    """UTKFace (``--fairness-data utkface=PATH``)."""
    return _dataset(request, "utkface")


@pytest.fixture(scope="session")
def celeba(request: pytest.FixtureRequest) -> Any:
    """CelebA (``--fairness-data celeba=PATH``)."""
    return _dataset(request, "celeba")


@pytest.fixture(scope="session")
def casual_conversations(request: pytest.FixtureRequest) -> Any:
    """Casual Conversations v1 (``--fairness-data casual_conversations=PATH``)."""
    return _dataset(request, "casual_conversations")


@pytest.fixture(scope="session")
def miap(request: pytest.FixtureRequest) -> Any:
    """Open Images MIAP test boxes (``--fairness-data miap=PATH``)."""
    return _dataset(request, "miap")


@pytest.fixture(scope="session")
def dollar_street(request: pytest.FixtureRequest) -> Any:
    """Dollar Street (``--fairness-data dollar_street=PATH``)."""
    return _dataset(request, "dollar_street")


@pytest.fixture(scope="session")
def fairface(request: pytest.FixtureRequest) -> Any:
    """FairFace validation split (``--fairness-data fairface=PATH``)."""
    return _dataset(request, "fairface")


@pytest.fixture(scope="session")
def fitzpatrick17k(request: pytest.FixtureRequest) -> Any:
    """Fitzpatrick17k (``--fairness-data fitzpatrick17k=PATH``)."""
    return _dataset(request, "fitzpatrick17k")


@pytest.fixture(scope="session")
def fairness_manifest(request: pytest.FixtureRequest) -> Any:
    """Your own manifest (``--fairness-data manifest=PATH`` to a CSV/Parquet file)."""
    return _dataset(request, "manifest")
