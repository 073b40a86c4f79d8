"""Repo-root test configuration.

The plugin loads through its ``pytest11`` entry point; it is deliberately not listed in
``pytest_plugins`` (pluggy would refuse to register it twice). ``pytester`` is enabled in
``pyproject.toml`` (``-p pytester``).
"""

from __future__ import annotations

import os

import pytest

# Tiny tensors in tests: one thread each is faster on 2 cores and avoids oversubscription
# under pytest-xdist. Set before torch is imported anywhere.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

try:  # the test extras have hypothesis; the demo (examples/) does not need it
    from hypothesis import settings
except ImportError:  # pragma: no cover
    pass
else:
    # The same examples every run, so CI fails on a change, never on a lucky draw; a new
    # draw is one `--hypothesis-profile=explore` (or `--hypothesis-seed=N`) away.
    settings.register_profile("suite", derandomize=True, database=None)
    settings.register_profile("explore", derandomize=False)
    settings.load_profile("suite")


@pytest.fixture(autouse=True)
def _single_thread_torch() -> None:
    """Run torch on one thread when a test uses it (without importing torch otherwise)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def pytest_itemcollected(item: pytest.Item) -> None:
    """Keep the suite's tests ordinary: they exercise fairness.check as a library function.

    Without the marker, a test calling ``fairness.check`` would count as a fairness test and
    be skipped (the suite runs without ``--fairness``). Pytester runs are not affected.
    """
    if "tests" in item.path.relative_to(item.config.rootpath).parts[:1]:
        item.add_marker("fairness_unit")
