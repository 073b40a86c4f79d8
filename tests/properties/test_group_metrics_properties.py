"""Invariances of the seed 003 group metrics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_fairness import indicators as ind


@st.composite
def classification(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Binary labels for 2-4 groups, each group holding both classes."""
    n_groups = draw(st.integers(2, 4))
    rows = []
    for g in range(n_groups):
        size = draw(st.integers(2, 12))
        y = [1, 0] + draw(st.lists(st.integers(0, 1), min_size=size - 2, max_size=size - 2))
        p = draw(st.lists(st.integers(0, 1), min_size=size, max_size=size))
        rows += [(yi, pi, g) for yi, pi in zip(y, p)]
    array = np.array(rows)
    return array[:, 0], array[:, 1], array[:, 2]


COMPARED = ("accuracy", "MGA", "mGA", "DA", "DEO", "DEOdds", "DTO")


@settings(max_examples=60, deadline=None)
@given(classification(), st.randoms(use_true_random=False))
def test_row_order_does_not_matter(data: tuple, random: object) -> None:
    y, p, g = data
    order = np.arange(len(y))
    random.shuffle(order)  # type: ignore[attr-defined]
    a = ind.group_metrics(y, p, groups=g, min_group_size=1)
    b = ind.group_metrics(y[order], p[order], groups=g[order], min_group_size=1)
    for key in COMPARED:
        assert a.stats[key] == pytest.approx(b.stats[key], abs=1e-12)
    assert [(s.group, s.n) for s in a.groups] == [(s.group, s.n) for s in b.groups]


@settings(max_examples=60, deadline=None)
@given(classification(), st.permutations(["w", "x", "y", "z"]))
def test_renaming_groups_does_not_matter(data: tuple, names: list[str]) -> None:
    y, p, g = data
    renamed = np.array([names[int(v)] for v in g])
    a = ind.group_metrics(y, p, groups=g, min_group_size=1)
    b = ind.group_metrics(y, p, groups=renamed, min_group_size=1)
    for key in COMPARED:
        assert a.stats[key] == pytest.approx(b.stats[key], abs=1e-12)
    assert sorted(s.value for s in a.groups) == sorted(s.value for s in b.groups)


@settings(max_examples=60, deadline=None)
@given(classification())
def test_gap_and_ratio_bounds(data: tuple) -> None:
    y, p, g = data
    r = ind.group_metrics(y, p, groups=g, min_group_size=1)
    assert r.gap >= 0 and r.gap == pytest.approx(r.stats["DA"])
    assert 0 <= r.ratio <= 1
    assert 0 <= r.stats["DEO"] <= 1 and 0 <= r.stats["DEOdds"] <= 2
    assert r.stats["mGA"] <= r.stats["accuracy"] <= r.stats["MGA"]


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 4), st.floats(0.5, 50), st.integers(0, 2**31))
def test_landmark_metrics_are_scale_invariant(n_groups: int, scale: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 8 * n_groups
    truth = rng.normal(size=(n, 5, 2))
    pred = truth + rng.normal(scale=0.1, size=truth.shape)
    groups = np.repeat(np.arange(n_groups), 8)
    a = ind.landmark_metrics(truth, pred, groups=groups, normalizer=(0, 1), min_group_size=1)
    b = ind.landmark_metrics(truth * scale, pred * scale, groups=groups, normalizer=(0, 1),
                             min_group_size=1)
    assert a.stats["NME"] == pytest.approx(b.stats["NME"], rel=1e-9)
    # SDR is a step function of NME: compare away from the threshold's rounding edge.
    assert a.stats["SDR"] == pytest.approx(b.stats["SDR"], abs=1.5 / n)


@settings(max_examples=60, deadline=None)
@given(classification(), st.floats(0.0, 0.49), st.floats(-5, 5))
def test_scores_give_the_numbers_of_the_labels_they_predict(
        data: tuple, margin: float, shift: float) -> None:
    """Logits (argmax), probabilities (n, 2) and P(class 1) (cut at 0.5) act as their labels."""
    y, p, g = data
    labels = ind.group_metrics(y, p, groups=g, min_group_size=1).stats
    logits = np.where(np.eye(2, dtype=bool)[p], shift + 1.0, shift)
    probability = np.where(p == 1, 0.5 + margin + 0.01, 0.5 - margin)
    for scores in (logits, np.column_stack([1 - probability, probability]), probability):
        assert ind.group_metrics(y, scores, groups=g, min_group_size=1).stats == labels
