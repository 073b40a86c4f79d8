"""``seed=None`` is the run's seed (0 outside pytest): default-seed results pair.

Drawn image by image (a run that compares, :func:`set_paired_draws`), any two results on
the same images pair; drawn per kind (the default), only results of the same kinds do.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from pytest_fairness import indicators as ind
from pytest_fairness.records import Comparison, KeyedResult, ResultSummary
from pytest_fairness.regression import compare_results
from pytest_fairness.results import IndicatorResult
from pytest_fairness.stats import resolve_seed, set_default_seed, set_paired_draws

RNG = np.random.default_rng(0)
G = np.repeat(["a", "b"], 300)
Y = RNG.integers(0, 2, 600)
P1 = np.where(RNG.random(600) < 0.85, Y, 1 - Y)
P2 = np.where(RNG.random(600) < 0.02, 1 - P1, P1)  # a retrained model: a few flips


@pytest.fixture(autouse=True)
def zero() -> Iterator[None]:
    """Each test starts from the default seed 0 and leaves it so."""
    previous = set_default_seed(0)
    yield
    set_default_seed(previous)


def gap(pred: np.ndarray, seed: object = None) -> IndicatorResult:
    return ind.group_metrics(Y, pred, groups=G, n_bootstrap=200, seed=seed)


def compare(before: IndicatorResult, after: IndicatorResult) -> Comparison:
    (c,) = compare_results(*(ResultSummary.of(KeyedResult(None, r)) for r in (before, after)),
                           {"gap": 0.0}, confidence="supported")
    return c


def test_none_is_the_run_seed_and_a_generator_draws_afresh() -> None:
    assert resolve_seed(None)[1] == 0
    set_default_seed(5)
    assert resolve_seed(None)[1] == 5
    assert gap(P1).params["seed"] == 5
    assert gap(P1, np.random.default_rng()).params["seed"] is None


def test_seed_none_is_deterministic() -> None:
    first, second = gap(P1), gap(P1)
    assert first.params["seed"] == second.params["seed"] == 0
    assert first.intervals["gap"] == second.intervals["gap"]


@pytest.mark.usefixtures("paired_draws")
def test_two_default_seed_results_on_the_same_units_pair() -> None:
    c = compare(gap(P1), gap(P2))
    assert c.paired is True and any(n.startswith("95% interval paired") for n in c.notes)


def test_drawn_per_kind_results_pair_only_when_every_image_keeps_its_kind() -> None:
    first, again, other = gap(P1), gap(P1.copy()), gap(P2)
    assert first.params["bootstrap_draw"] == "kinds"
    same = compare(first, again)
    assert same.paired is True and same.interval == pytest.approx((0.0, 0.0))
    c = compare(first, other)
    assert c.paired is False
    note = next(n for n in c.notes if "unpaired" in n)
    assert "per kind of image" in note and "--fairness-paired" in note
    previous = set_paired_draws(True)
    try:  # the same two checkpoints, drawn image by image, pair
        assert "bootstrap_draw" not in gap(P1).params
        assert compare(gap(P1), gap(P2)).paired is True
    finally:
        set_paired_draws(previous)


@pytest.mark.usefixtures("paired_draws")
def test_different_explicit_seeds_compare_unpaired_and_say_how_to_fix_it() -> None:
    c = compare(gap(P1, 1), gap(P2, 2))
    assert c.paired is False
    note = next(n for n in c.notes if "unpaired" in n)
    assert "different seeds (1 and 2)" in note and "pass the same seed=" in note


def test_a_bad_default_seed_names_it() -> None:
    from pytest_fairness.errors import FairnessConfigError

    with pytest.raises(FairnessConfigError, match="seed=-1"):
        set_default_seed(-1)
