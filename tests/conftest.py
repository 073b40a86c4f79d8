"""Configuration of the test suite (``tests/``).

Pytester runs pytest inside the test process and, after each run, forgets the modules the
run imported. matplotlib cannot be imported a second time in one process (its docstring
registry keeps the first copy's entries: ``KeyError: 'PolyCollection:kwdoc'``), so the
parts the HTML report draws with are imported here, before any run, and stay. Which tests
share a pytest-xdist worker changes with every new test: without this, a report test that
drew figures inside a pytester run broke every later figure in its worker.
"""

from __future__ import annotations

from collections.abc import Iterator

import matplotlib  # noqa: F401
import matplotlib.backends.backend_agg  # noqa: F401
import matplotlib.backends.backend_svg  # noqa: F401
import matplotlib.figure  # noqa: F401
import pytest


@pytest.fixture
def paired_draws() -> Iterator[None]:
    """Draw replicates image by image, as a run that compares does, so that results pair."""
    from pytest_fairness.stats import set_paired_draws

    previous = set_paired_draws(True)
    yield
    set_paired_draws(previous)
