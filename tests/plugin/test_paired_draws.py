"""How a run draws its replicates: per kind of image unless it will compare them.

A plain run draws each kind's total at once (cheap, paired only with results of the same
kinds); a run that compares with or saves a baseline, names checkpoints or passes
``--fairness-paired`` draws image by image, so its results pair with any other run's on the
same images. Every worker of an xdist run draws alike.
"""

from __future__ import annotations

import pytest

INNER = '''
import os

import numpy as np

from pytest_fairness import indicators as ind


def test_draw():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 800)
    r = ind.group_metrics(y, np.where(rng.random(800) < 0.8, y, 1 - y),
                          groups=np.repeat(["a", "b"], 400), n_bootstrap=200)
    with open("draw-" + os.environ.get("PYTEST_XDIST_WORKER", "main"), "w") as out:
        out.write(r.params.get("bootstrap_draw", "rows"))
'''


def _draws(pytester: pytest.Pytester, *args: str) -> set[str]:
    pytester.makepyfile(test_draw=INNER)
    pytester.runpytest("--fairness", "--fairness-no-history", *args).assert_outcomes(passed=1)
    return {p.read_text() for p in pytester.path.glob("draw-*")}


def test_a_plain_run_draws_per_kind(pytester: pytest.Pytester, xdist_args: list[str]) -> None:
    assert _draws(pytester, *xdist_args) == {"kinds"}


@pytest.mark.parametrize("flags", [["--fairness-paired"],
                                   ["--fairness-save-baseline", "base.json"]],
                         ids=["paired", "save-baseline"])
def test_a_run_that_pairs_draws_image_by_image(pytester: pytest.Pytester,
                                               xdist_args: list[str], flags: list[str]) -> None:
    assert _draws(pytester, *flags, *xdist_args) == {"rows"}


def test_the_run_leaves_the_draw_as_it_found_it(pytester: pytest.Pytester) -> None:
    from pytest_fairness import stats

    before = stats._paired_draws
    _draws(pytester, "--fairness-paired", "-p", "no:xdist")
    assert stats._paired_draws is before
