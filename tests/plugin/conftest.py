"""Fixtures for the end-to-end plugin tests: every scenario runs without and with xdist."""

from __future__ import annotations

import numpy  # noqa: F401  (pytester forgets what a run imported; numpy loads once a process)
import pytest
import scipy.sparse  # noqa: F401  (the bootstrap's; it loads numpy.fft, also once a process)
import scipy.special  # noqa: F401

from pytest_fairness import indicators

# The indicators load their modules on first use and keep the functions; loaded inside a
# pytester run, the module would be forgotten and loaded again later, and the functions
# the package kept would no longer be its module's. Load them all before any run.
for _name in indicators.__all__:
    getattr(indicators, _name)

MODES = {"no_xdist": ["-p", "no:xdist"], "xdist_zero": ["-n", "0"], "xdist_two": ["-n", "2"]}


@pytest.fixture(params=list(MODES), ids=list(MODES))
def xdist_args(request: pytest.FixtureRequest) -> list[str]:
    """Extra pytest arguments for one of: no xdist, ``-n 0``, ``-n 2``."""
    return MODES[request.param]


#: A small binary problem with a known accuracy gap: group a 0.75, group b 0.5.
DATA = '''
Y = [1, 0, 1, 1, 0, 1, 0, 0] * 5
P = [1, 0, 1, 0, 0, 0, 0, 1] * 5
G = ["a", "a", "a", "a", "b", "b", "b", "b"] * 5
'''


@pytest.fixture
def data_source() -> str:
    """Module source defining Y, P and G (40 rows, accuracy 0.75 for a and 0.5 for b)."""
    return DATA
