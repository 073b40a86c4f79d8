"""End to end: a supported limit on ten equal groups passes (simultaneous intervals)."""

from __future__ import annotations

import numpy  # noqa: F401  (pytester forgets what a run imported; numpy loads once)
import pytest
import scipy.sparse  # noqa: F401
import scipy.special  # noqa: F401

TEN_EQUAL_GROUPS = '''
import numpy as np

from pytest_fairness import fairness, indicators as ind

rng = np.random.default_rng(7)
G = np.repeat([f"g{i}" for i in range(10)], 120)
Y = rng.integers(0, 2, G.size)
P = np.where(rng.random(G.size) < 0.9, Y, 1 - Y)


@fairness.threshold(max_gap=0.05, min_value=0.8, confidence="supported")
def test_ten_equal_groups():
    return ind.group_metrics(Y, P, groups=G, n_bootstrap=1000, seed=0)
'''


def test_supported_limits_on_ten_equal_groups_pass(
        pytester: pytest.Pytester, xdist_args: list[str]) -> None:
    """Ten groups all at 0.9: neither max_gap=0.05 nor min_value=0.8 is a supported violation."""
    pytester.makepyfile(test_groups=TEN_EQUAL_GROUPS)
    pytester.runpytest("--fairness", *xdist_args).assert_outcomes(passed=1)
