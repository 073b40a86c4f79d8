"""Hypothesis properties of Fair SA: permutation, relabelling, scaling, symmetry, bounds."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_fairness.indicators import fair_sa

LEVELS = [0.5, 1.0]


@st.composite
def problems(draw: Any) -> tuple[dict[Any, np.ndarray], np.ndarray, np.ndarray]:
    n = 2 * draw(st.integers(6, 8))
    d = draw(st.integers(2, 5))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    clean = rng.normal(size=(n, d))
    features = {None: clean}
    for level in LEVELS:
        features[("p", level)] = clean + level * rng.normal(size=(n, d)) * rng.uniform(0, 2, (n, 1))
    ids = np.array([i // 2 for i in range(n)])  # two images per identity
    groups = ids % 3  # whole identities per group: each has genuine and impostor pairs
    return features, groups, ids


def run(features: Any, groups: Any, ids: Any = None, **kwargs: Any) -> Any:
    return fair_sa(features, attribute=groups, perturbations="p", levels=LEVELS,
                   identities=ids, min_group_size=1, **kwargs)


def auc(r: Any) -> np.ndarray:
    return np.array(r.matrices["auc"].values)


SETTINGS = settings(max_examples=25, deadline=None)


@given(problem=problems(), data=st.data())
@SETTINGS
def test_row_permutation_invariance(problem: Any, data: Any) -> None:
    features, groups, ids = problem
    n = groups.size
    order = np.array(data.draw(st.permutations(range(n))))
    permuted = {k: v[order] for k, v in features.items()}
    a = run(features, groups, ids, far=0.1)
    b = run(permuted, groups[order], ids[order], far=0.1)
    np.testing.assert_allclose(auc(a), auc(b), atol=1e-12)
    # the same pairs, multiplied in another order: equal up to float rounding
    assert math.isclose(a.stats["threshold"], b.stats["threshold"], rel_tol=1e-12)


@given(problem=problems())
@SETTINGS
def test_group_relabelling_moves_rows_only(problem: Any) -> None:
    features, groups, _ = problem
    names = np.array(["x", "y", "z"])[groups]
    a = run(features, groups, threshold=0.6)
    b = run(features, names, threshold=0.6)
    np.testing.assert_array_equal(auc(a), auc(b))
    assert b.matrices["auc"].rows == ("x", "y", "z")


@given(problem=problems(), scale=st.floats(0.01, 100))
@SETTINGS
def test_positive_rescaling_of_embeddings_changes_nothing(problem: Any, scale: float) -> None:
    features, groups, ids = problem
    rng = np.random.default_rng(0)
    scaled = {k: v * scale * rng.uniform(0.5, 2, (v.shape[0], 1)) for k, v in features.items()}
    a = run(features, groups, ids, task="verification", far=0.2)
    b = run(scaled, groups, ids, task="verification", far=0.2)
    np.testing.assert_allclose(auc(a), auc(b), atol=1e-9)


@given(problem=problems())
@SETTINGS
def test_two_groups_are_antisymmetric_and_bounded(problem: Any) -> None:
    features, groups, _ = problem
    r = run(features, groups % 2, threshold=0.7)
    values = auc(r)
    np.testing.assert_allclose(values[0], -values[1], atol=1e-12)
    assert np.all(np.abs(values) <= 1) and 0 <= r.stats["irc_auc[p]"] <= 1
    assert r.value == np.abs(values).sum()
    for key, curve in r.curves.items():
        if key.startswith("fair_sa/"):
            assert curve.y[0] == 0.0  # level 0 is the identity: every image matches itself


@given(problem=problems())
@SETTINGS
def test_duplicated_data_in_both_groups_gives_zero(problem: Any) -> None:
    features, groups, _ = problem
    n = groups.size
    doubled = {k: np.concatenate([v, v]) for k, v in features.items()}
    labels = np.array(["p"] * n + ["q"] * n)
    r = run(doubled, labels, threshold=0.5)
    assert r.value == 0.0
