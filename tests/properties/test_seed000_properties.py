"""Hypothesis properties of the seed 000 indicators."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_fairness.indicators import geodiversity, label_association, precision_at_k
from pytest_fairness.indicators.retrieval import nearest_neighbors

TAX = {0: "non_human", 1: "human", 2: "crime"}
SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def predictions(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    n = draw(st.integers(2, 25))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 5, size=(n, 3))
    scores = np.round(rng.random((n, 3)), 2)
    groups = rng.integers(0, 3, n)
    perm = rng.permutation(n)
    return labels, scores, groups, perm


def _la(labels, scores, groups):
    return label_association(labels, scores, groups=groups, taxonomy=TAX, top_k=2,
                             min_group_size=1)


@SETTINGS
@given(predictions())
def test_label_association_row_order(data) -> None:
    labels, scores, groups, perm = data
    a, b = _la(labels, scores, groups), _la(labels[perm], scores[perm], groups[perm])
    for tau in a.coordinates:
        assert [g.value for g in a.select(tau).groups] == [g.value for g in b.select(tau).groups]


@SETTINGS
@given(predictions())
def test_label_association_group_renaming(data) -> None:
    labels, scores, groups, _ = data
    names = np.array(["x", "y", "z"])
    a, b = _la(labels, scores, groups), _la(labels, scores, names[groups])
    assert {names[g.group]: g.value for g in a.groups} == {g.group: g.value for g in b.groups}
    assert a.gap == b.gap or (np.isnan(a.gap) and np.isnan(b.gap))


@SETTINGS
@given(predictions())
def test_label_association_monotone_in_tau(data) -> None:
    labels, scores, groups, _ = data
    curve = _la(labels, scores, groups).curves["harmful"].y
    assert all(x >= y for x, y in zip(curve, curve[1:]))


def _geo(labels, scores, truth, hh, image=None):
    return geodiversity(labels, scores, truth=truth, household=hh,
                        region=np.where(hh % 2 == 0, "Asia", "Africa"),
                        income=np.where(hh < 3, 50.0, 5000.0), top_k=2, image=image,
                        min_group_size=1)


@SETTINGS
@given(predictions())
def test_geodiversity_row_order(data) -> None:
    labels, scores, groups, perm = data
    truth = labels[:, 0] + (groups % 2)
    hh = np.arange(labels.shape[0]) % 5
    a = _geo(labels, scores, truth, hh)
    b = _geo(labels[perm], scores[perm], truth[perm], hh[perm])
    assert [(g.group, g.value) for g in a.groups] == [(g.group, g.value) for g in b.groups]


@SETTINGS
@given(predictions(), st.integers(0, 24))
def test_geodiversity_duplicated_image_counted_once(data, which) -> None:
    labels, scores, groups, _ = data
    n = labels.shape[0]
    which %= n
    truth = labels[:, 1]
    hh = np.arange(n) % 5
    ids = np.arange(n)
    base = _geo(labels, scores, truth, hh, image=ids)
    # The same image listed again with another (wrong) label: still one image, same hit.
    rows = np.r_[np.arange(n), which]
    dup_truth = np.r_[truth, 99]
    dup = _geo(labels[rows], scores[rows], dup_truth, hh[rows], image=ids[rows])
    assert [(g.group, g.value, g.stats) for g in base.groups] == [
        (g.group, g.value, g.stats) for g in dup.groups]


@st.composite
def embeddings(draw: st.DrawFn):
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    nq, nd, d = draw(st.integers(2, 15)), draw(st.integers(5, 30)), draw(st.integers(2, 6))
    q = rng.integers(-3, 4, size=(nq, d)).astype(np.float64)
    db = rng.integers(-3, 4, size=(nd, d)).astype(np.float64)
    q[np.abs(q).sum(1) == 0, 0] = 1
    db[np.abs(db).sum(1) == 0, 0] = 1
    scale = draw(st.floats(0.01, 100))
    return q, db, rng.integers(0, 2, nq), rng.integers(0, 2, nd), scale, rng.permutation(nq)


@SETTINGS
@given(embeddings())
def test_retrieval_invariant_to_scaling(data) -> None:
    q, db, qg, dg, scale, _ = data
    k = min(3, db.shape[0])
    a = precision_at_k((q, {"g": qg}), (db, {"g": dg}), k=k, match="g", by="g", min_group_size=1)
    # Scaling by powers of two keeps every cosine bit-identical, so even ties resolve alike.
    b = precision_at_k((q * 4.0, {"g": qg}), (db * 0.5, {"g": dg}), k=k, match="g", by="g",
                       min_group_size=1)
    assert a.groups == b.groups
    per_row = q * np.linspace(1.0, 8.0, q.shape[0])[:, None] * 2.0 ** np.round(np.log2(scale))
    c = precision_at_k((per_row, {"g": qg}), (db, {"g": dg}), k=k, match="g", by="g",
                       min_group_size=1)
    assert [g.n for g in a.groups] == [g.n for g in c.groups]


@SETTINGS
@given(embeddings())
def test_retrieval_query_order(data) -> None:
    q, db, qg, dg, _, perm = data
    k = min(3, db.shape[0])
    a = precision_at_k((q, {"g": qg}), (db, {"g": dg}), k=k, match="g", by="g", min_group_size=1)
    b = precision_at_k((q[perm], {"g": qg[perm]}), (db, {"g": dg}), k=k, match="g", by="g",
                       min_group_size=1)
    assert [(g.group, g.n) for g in a.groups] == [(g.group, g.n) for g in b.groups]
    assert np.allclose([g.value for g in a.groups], [g.value for g in b.groups], atol=1e-12)


@st.composite
def tied_embeddings(draw: st.DrawFn) -> tuple[np.ndarray, int, bool, int]:
    """Small integer vectors (many exact ties), a database large enough to be screened."""
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    nd, d = draw(st.integers(40, 400)), draw(st.integers(2, 6))
    db = rng.integers(-2, 3, size=(nd, d)).astype(np.float64)
    db[np.abs(db).sum(1) == 0, 0] = 1
    k = draw(st.integers(1, 30))
    return db, k, draw(st.booleans()), draw(st.sampled_from([1, 7, 64, 1024]))


@SETTINGS
@given(tied_embeddings())
def test_search_equals_brute_force(data: tuple[np.ndarray, int, bool, int]) -> None:
    from unittest import mock

    from pytest_fairness.indicators import retrieval

    db, k, exclude_self, block = data
    q = db if exclude_self else db[::3] + 1.0
    q[np.abs(q).sum(1) == 0, 0] = 1
    # Integer rows: the float64 cosines are the same whatever the summation order.
    sim = (q @ db.T) / np.outer(np.sqrt((q * q).sum(1)), np.sqrt((db * db).sum(1)))
    if exclude_self:
        np.fill_diagonal(sim, -np.inf)
    brute = np.array([np.lexsort((np.arange(db.shape[0]), -row))[:k] for row in sim])
    with mock.patch.object(retrieval, "_BLOCK", block):
        assert (nearest_neighbors(q, db, k=k, exclude_self=exclude_self) == brute).all()
    # Scaling rows by powers of two keeps every cosine bit-identical.
    scaled = nearest_neighbors(q * 8.0, db * 0.25, k=k, exclude_self=exclude_self)
    assert (scaled == brute).all()
