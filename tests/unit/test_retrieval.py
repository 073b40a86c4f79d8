"""Unit tests of precision_at_k and nearest_neighbors."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from pytest_fairness.errors import FairnessConfigError, InvalidDataError
from pytest_fairness.indicators import precision_at_k
from pytest_fairness.indicators.retrieval import nearest_neighbors

DB = (np.array([[1.0, 0], [0.9, 0.1], [0, 1.0], [0.1, 0.9]]),
      pd.DataFrame({"gender": ["f", "f", "m", "m"]}))
Q = (np.array([[1.0, 0.05], [0.05, 1.0], [1.0, 0.2]]),
     pd.DataFrame({"gender": ["f", "m", "m"], "age": ["y", "o", "o"], "pid": [1, 2, 2]}))


def test_hand_computed() -> None:
    r = precision_at_k(Q, DB, k=[1, 2, 3], match="gender", by="gender", min_group_size=1)
    assert r.at == 1 and r.group("f").value == 1.0 and r.group("m").value == 0.5
    three = r.select(3)
    # query m2 [1, .2]: neighbours f0, f1, then m3 -> 1/3; query m1: m2, m3, f1 -> 2/3.
    assert three.group("m").value == pytest.approx(0.5)
    assert three.group("f").value == pytest.approx(2 / 3)
    assert r.curves["precision"].x == (1.0, 2.0, 3.0)
    assert r.gap == 0.5


def test_object_with_features_and_frame() -> None:
    q = SimpleNamespace(features=Q[0], frame={"gender": ["f", "m", "m"]})
    r = precision_at_k(q, DB, k=1, match="gender", by="gender", min_group_size=1)
    assert r.group("m").value == 0.5


def test_several_groupings_and_intersection() -> None:
    r = precision_at_k(Q, DB, k=1, match="gender", by=["gender", "age", ("gender", "age")],
                       min_group_size=1)
    assert {g.group for g in r.groups} == {"f", "m", "o", "y", ("f", "y"), ("m", "o")}
    assert len(r.tables["groupings"]) == 6


def test_self_excluded_when_queries_are_database() -> None:
    r = precision_at_k(DB, DB, k=1, match="gender", by="gender", min_group_size=1)
    assert r.params["exclude_self"] is True
    assert r.value == 1.0  # nearest other item shares gender
    kept = precision_at_k(DB, DB, k=1, match="gender", by="gender", min_group_size=1,
                          exclude_self=False)
    assert kept.value == 1.0 and kept.params["exclude_self"] is False


def test_ties_broken_by_lower_index() -> None:
    db = np.array([[1.0, 0.0], [2.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    assert nearest_neighbors(np.array([[3.0, 0.0]]), db, k=3).tolist() == [[0, 1, 2]]
    assert nearest_neighbors(db, db, k=2, exclude_self=True).tolist()[:3] == [
        [1, 2], [0, 2], [0, 1]]


def test_blocks_do_not_change_result() -> None:
    rng = np.random.default_rng(0)
    q = rng.standard_normal((37, 8))
    db = rng.standard_normal((50, 8))
    assert (nearest_neighbors(q, db, k=5, block_size=4)
            == nearest_neighbors(q, db, k=5, block_size=1024)).all()


def test_intervals_with_clusters() -> None:
    rng = np.random.default_rng(1)
    db = (rng.standard_normal((80, 4)), {"g": rng.integers(0, 2, 80)})
    q = (rng.standard_normal((120, 4)), {"g": rng.integers(0, 2, 120), "pid": np.arange(120) // 3})
    r = precision_at_k(q, db, k=[5, 10], match="g", by="g", n_bootstrap=200, seed=0,
                       clusters="pid", interval_method="bca", min_group_size=10)
    assert "gap" in r.intervals and "gap" in r.select(10).intervals
    assert r.params["seed"] == 0


@pytest.mark.slow  # imports torch (the reference normalises with it)
def test_reference_matches_paper_without_ties() -> None:
    rng = np.random.default_rng(2)
    db = (rng.standard_normal((60, 6)).astype(np.float32), {"g": rng.integers(0, 2, 60)})
    q = (rng.standard_normal((30, 6)).astype(np.float32), {"g": rng.integers(0, 2, 30)})
    a = precision_at_k(q, db, k=[1, 5], match="g", by="g", min_group_size=1)
    b = precision_at_k(q, db, k=[1, 5], match="g", by="g", min_group_size=1, variant="reference")
    assert a.select(5).groups == b.select(5).groups


@pytest.mark.parametrize(
    ("kw", "err", "fragment"),
    [
        (dict(k=0), FairnessConfigError, r"k=0"),
        (dict(k="5"), FairnessConfigError, r"k='5'"),
        (dict(k=[5, 5]), FairnessConfigError, r"repeated"),
        (dict(k=9), FairnessConfigError, r"k=9 exceeds"),
        (dict(match=3), FairnessConfigError, r"match=3"),
        (dict(match="race"), FairnessConfigError, r"no column 'race'"),
        (dict(by=[]), FairnessConfigError, r"by must be"),
        (dict(by=[3]), FairnessConfigError, r"by entries"),
        (dict(by=["gender", ("gender",)]), FairnessConfigError, r"more than one grouping"),
        (dict(block_size=0), FairnessConfigError, r"block_size=0"),
        (dict(variant="reference", exclude_self=True), FairnessConfigError, r"never excludes"),
        (dict(exclude_self=True), FairnessConfigError, r"same rows"),
        (dict(queries="x"), FairnessConfigError, r"pair \(features, frame\)"),
        (dict(queries=(np.zeros((3, 2)), Q[1])), InvalidDataError, r"zero vector at row 0"),
        (dict(queries=(np.full((3, 2), np.nan), Q[1])), InvalidDataError, r"NaN"),
        (dict(queries=(np.ones((3, 3)), Q[1])), InvalidDataError, r"same dimension"),
        (dict(queries=(np.ones(3), Q[1])), InvalidDataError, r"2-D array"),
        (dict(queries=(np.array([["a", "b"]] * 3), Q[1])), InvalidDataError, r"numeric"),
        (dict(queries=(np.ones((2, 2)), Q[1])), InvalidDataError, r"lengths differ"),
        (dict(n_bootstrap=100, clusters=[1]), InvalidDataError, r"lengths differ"),
    ],
)
def test_validation(kw: dict, err: type, fragment: str) -> None:
    queries = kw.pop("queries", Q)
    args = dict(k=1, match="gender", by="gender", min_group_size=1)
    args.update(kw)
    with pytest.raises(err, match=fragment):
        precision_at_k(queries, DB, **args)


@pytest.mark.parametrize("screen", ["faiss", "float32"])
def test_screen_chunks_blocks_and_leftover_columns(monkeypatch: pytest.MonkeyPatch,
                                                   screen: str) -> None:
    """Small tiles: several database chunks merged per query, rows not a multiple of 16."""
    from pytest_fairness.indicators import retrieval

    rng = np.random.default_rng(7)
    db = rng.standard_normal((10003, 16)).astype(np.float32)
    db[5000:5040] = db[17]  # duplicates spread over two chunks
    q = np.concatenate([rng.standard_normal((30, 16)).astype(np.float32), db[[17, 4999]]])
    exact = nearest_neighbors(q, db, k=12, screen="exact")
    monkeypatch.setattr(retrieval, "_TILE", 2**16)  # 4,096 columns per chunk at 16 queries
    for block in (16, 5, 1024):
        assert (nearest_neighbors(q, db, k=12, block_size=block, screen=screen)
                == exact).all()
    assert exact[30].tolist() == [17, *range(5000, 5011)]  # duplicates tie: lower index first


@pytest.mark.parametrize("screen", ["faiss", "float32"])
def test_database_layouts_and_scales_agree(screen: str) -> None:
    """float32 read in place, float64, strided and extreme-norm copies: same neighbours."""
    rng = np.random.default_rng(8)
    db32 = rng.standard_normal((900, 12)).astype(np.float32)
    q32 = rng.standard_normal((40, 12)).astype(np.float32)
    ref = nearest_neighbors(q32, db32, k=6, screen=screen)
    assert (ref == nearest_neighbors(q32, db32, k=6, screen="exact")).all()
    wide = np.zeros((900, 24), dtype=np.float32)
    wide[:, ::2] = db32
    variants = [
        (q32.astype(np.float64), db32.astype(np.float64)),  # normalised float32 copy
        (q32, wide[:, ::2]),  # not contiguous
        (q32, np.asfortranarray(db32)),
        (q32 * np.float32(2.0**-70), db32 * np.float32(2.0**-70)),  # norms below 2^-60
        (q32, db32 * np.float32(2.0**70)),  # norms above 2^60
    ]
    for q, db in variants:
        assert (nearest_neighbors(q, db, k=6, screen=screen) == ref).all()


@pytest.mark.parametrize("screen", ["faiss", "float32"])
def test_integer_and_torch_inputs(screen: str) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    db = rng.integers(-5, 6, size=(700, 5))
    db[np.abs(db).sum(1) == 0, 0] = 1
    q = rng.integers(-5, 6, size=(20, 5))
    q[np.abs(q).sum(1) == 0, 0] = 1
    ref = nearest_neighbors(q.astype(float), db.astype(float), k=4, screen="exact")
    assert (nearest_neighbors(q, db, k=4, screen=screen) == ref).all()
    assert (nearest_neighbors(torch.from_numpy(q), torch.from_numpy(db), k=4) == ref).all()


@pytest.mark.parametrize("screen", ["faiss", "float32"])
@pytest.mark.parametrize(
    ("q", "db", "kw", "err", "fragment"),
    [
        (np.ones((2, 2)), np.ones((4, 2)), dict(screen="bfloat8"), FairnessConfigError,
         r"screen='bfloat8'"),
        (np.ones((2, 2)), np.ones((4, 2)), dict(k=0), FairnessConfigError, r"k=0"),
        (np.ones((2, 2)), np.ones((4, 2)), dict(k=True), FairnessConfigError, r"k=True"),
        (np.ones((2, 2)), np.ones((4, 2)), dict(block_size=0), FairnessConfigError,
         r"block_size=0"),
        (np.ones((2, 2)), np.full((4, 2), 1e200), {}, InvalidDataError,
         r"row 0 have a norm beyond float64 range"),
        (np.ones((2, 2)), np.full((4, 2), 1e-200), {}, InvalidDataError,
         r"norm beyond float64 range .*rescale"),
        (np.ones((1200, 2)), np.ones((4, 2)), dict(block_size=1000, q_nan=1100),
         InvalidDataError, r"queries features have NaN or infinite values at row 1100"),
        (np.ones((1200, 2)), np.ones((4, 2)), dict(block_size=1000, q_zero=1050),
         InvalidDataError, r"queries features have a zero vector at row 1050"),
        (np.ones((2, 2)), np.ones((4, 3)), {}, InvalidDataError, r"same dimension"),
        (np.ones((2, 2)), np.ones((4, 2)), dict(exclude_self=True), FairnessConfigError,
         r"same rows"),
    ],
)
def test_nearest_neighbors_validation(q: np.ndarray, db: np.ndarray, kw: dict[str, Any],
                                      err: type[Exception], fragment: str, screen: str) -> None:
    q, kw = q.copy(), dict(kw)  # parameters are shared by both screens: do not mutate them
    if "q_nan" in kw:
        q[kw.pop("q_nan"), 1] = np.nan
    if "q_zero" in kw:
        q[kw.pop("q_zero")] = 0.0
    args: dict[str, Any] = dict(k=1, screen=screen)
    args.update(kw)
    with pytest.raises(err, match=fragment):
        nearest_neighbors(q, db, **args)
