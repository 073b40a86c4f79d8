"""Unit tests of precision_at_k and nearest_neighbors."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from pytest_fairness.errors import FairnessConfigError, InvalidDataError
from pytest_fairness.indicators import precision_at_k, retrieval
from pytest_fairness.indicators.retrieval import nearest_neighbors


def _brute(q: np.ndarray, db: np.ndarray, k: int, exclude_self: bool = False) -> np.ndarray:
    """Float64 brute force: decreasing cosine, ties by the lower index.

    Each pair is multiplied and summed on its own (no BLAS), so identical rows get
    identical cosines wherever they sit.
    """
    q64, db64 = np.asarray(q, dtype=np.float64), np.asarray(db, dtype=np.float64)
    dots = (q64[:, None, :] * db64[None, :, :]).sum(axis=2)
    qn, dn = np.sqrt((q64 * q64).sum(1)), np.sqrt((db64 * db64).sum(1))
    sim = dots / (qn[:, None] * dn[None, :])
    if exclude_self:
        np.fill_diagonal(sim, -np.inf)
    return np.array([np.lexsort((np.arange(db64.shape[0]), -row))[:k] for row in sim])


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


def test_blocks_do_not_change_result(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    q = rng.standard_normal((37, 8))
    db = rng.standard_normal((50, 8))
    want = nearest_neighbors(q, db, k=5)
    assert (want == _brute(q, db, 5)).all()
    monkeypatch.setattr(retrieval, "_BLOCK", 4)
    monkeypatch.setattr(retrieval, "_ENTRIES", 64)  # re-ranked a query or two at a time
    assert (nearest_neighbors(q, db, k=5) == want).all()


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
        (dict(queries=(np.array([[1.0, np.inf]] * 3), Q[1])), InvalidDataError,
         r"queries has NaN or infinite values in row 0"),
        (dict(variant="reference", exclude_self=True), FairnessConfigError, r"never excludes"),
        (dict(exclude_self=True), FairnessConfigError, r"same rows"),
        (dict(queries="x"), FairnessConfigError, r"pair \(features, frame\)"),
        (dict(queries=(np.zeros((3, 2)), Q[1])), InvalidDataError,
         r"queries has a zero vector in row 0"),
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


def test_chunks_blocks_and_duplicates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small blocks and re-ranking chunks, duplicates of one row: the brute-force answer."""
    rng = np.random.default_rng(7)
    db = rng.standard_normal((3003, 16)).astype(np.float32)
    db[1500:1540] = db[17]  # forty duplicates: wider than the first candidates
    q = np.concatenate([rng.standard_normal((30, 16)).astype(np.float32), db[[17, 1499]]])
    want = _brute(q, db, 12)
    assert want[30].tolist() == [17, *range(1500, 1511)]  # duplicates tie: lower index first
    for block, entries in ((5, 200), (16, 2**22), (4096, 2**22)):
        monkeypatch.setattr(retrieval, "_BLOCK", block)
        monkeypatch.setattr(retrieval, "_ENTRIES", entries)
        assert (nearest_neighbors(q, db, k=12) == want).all()


def test_uncertified_queries_are_searched_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cluster of duplicates wider than the candidates: the width doubles until it fits."""
    faiss = pytest.importorskip("faiss")
    rng = np.random.default_rng(11)
    db = rng.standard_normal((2000, 8))
    db[::20] = db[5]  # a hundred copies of one row
    q = np.concatenate([db[[5]], rng.standard_normal((3, 8))])
    searches = []

    class Spy(faiss.IndexFlatIP):  # type: ignore[misc]
        def search(self, x: np.ndarray, k: int) -> Any:
            searches.append((len(x), k))
            return super().search(x, k)

    monkeypatch.setattr(faiss, "IndexFlatIP", Spy)
    got = nearest_neighbors(q, db, k=3)
    # All four at 3 + 16 candidates, then only the first query, until past the copies.
    assert searches == [(4, 19), (1, 38), (1, 76), (1, 152)]
    assert got[0].tolist() == [0, 5, 20]
    assert (got == _brute(q, db, 3)).all()


def test_every_item_re_ranked_when_the_bound_is_useless(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(12)
    db = rng.integers(-2, 3, size=(300, 4)).astype(float)
    db[np.abs(db).sum(1) == 0, 0] = 1.0
    monkeypatch.setattr(retrieval, "_error_bound", lambda d, smallest: np.inf)
    assert (nearest_neighbors(db, db, k=9, exclude_self=True) == _brute(db, db, 9, True)).all()


@pytest.mark.parametrize("d", [3, 64, 2048])
def test_faiss_scores_stay_within_the_error_bound(d: int) -> None:
    """Every faiss score lies within ``_error_bound`` of the float64 cosine (and the bound
    is not vacuous). Besides Gaussian rows: a row spanning 2^±60 and near-duplicates."""
    faiss = pytest.importorskip("faiss")
    rng = np.random.default_rng(d)
    db = rng.standard_normal((500, d)).astype(np.float32)
    q = rng.standard_normal((60, d)).astype(np.float32)
    db[0, :] = 2.0**-60
    db[0, 0] = 2.0**60
    db[1:40] = db[40] + (rng.standard_normal((39, d)) * 1e-4).astype(np.float32)
    q[:5] = db[40]
    db_norm, q_norm = retrieval._norms(db, "database"), retrieval._norms(q, "queries")
    index = faiss.IndexFlatIP(d)
    index.add(retrieval._unit32(db, db_norm))
    score, found = index.search(retrieval._unit32(q, q_norm), 500)
    exact = np.take_along_axis(_brute_cosines(q, db), found, axis=1)
    eps = retrieval._error_bound(d, float(min(db_norm.min(), q_norm.min())))
    assert np.abs(score - exact).max() <= eps < 1e-3
    assert np.abs(score - exact).max() > 0  # float32 did round


def _brute_cosines(q: np.ndarray, db: np.ndarray) -> np.ndarray:
    q64, db64 = q.astype(np.float64), db.astype(np.float64)
    return (q64 @ db64.T) / np.outer(np.linalg.norm(q64, axis=1), np.linalg.norm(db64, axis=1))


def test_database_layouts_and_scales_agree() -> None:
    """float32 and float64, strided, Fortran-ordered and extreme-norm copies: same neighbours."""
    rng = np.random.default_rng(8)
    db32 = rng.standard_normal((900, 12)).astype(np.float32)
    q32 = rng.standard_normal((40, 12)).astype(np.float32)
    ref = nearest_neighbors(q32, db32, k=6)
    assert (ref == _brute(q32, db32, 6)).all()
    wide = np.zeros((900, 24), dtype=np.float32)
    wide[:, ::2] = db32
    variants = [
        (q32.astype(np.float64), db32.astype(np.float64)),
        (q32, wide[:, ::2]),  # not contiguous
        (q32, np.asfortranarray(db32)),
        (q32 * np.float32(2.0**-70), db32 * np.float32(2.0**-70)),
        (q32, db32 * np.float32(2.0**70)),
        (q32.astype(np.float16), db32.astype(np.float16)),
    ]
    for q, db in variants[:-1]:
        assert (nearest_neighbors(q, db, k=6) == ref).all()
    assert (nearest_neighbors(*variants[-1], k=6) == _brute(*variants[-1], 6)).all()


def test_integer_and_torch_inputs() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    db = rng.integers(-5, 6, size=(700, 5))
    db[np.abs(db).sum(1) == 0, 0] = 1
    q = rng.integers(-5, 6, size=(20, 5))
    q[np.abs(q).sum(1) == 0, 0] = 1
    ref = _brute(q, db, 4)
    assert (nearest_neighbors(q, db, k=4) == ref).all()
    assert (nearest_neighbors(torch.from_numpy(q), torch.from_numpy(db), k=4) == ref).all()


@pytest.mark.parametrize(
    ("q", "db", "kw", "err", "fragment"),
    [
        (np.ones((2, 2)), np.ones((4, 2)), dict(k=0), FairnessConfigError, r"k=0"),
        (np.ones((2, 2)), np.ones((4, 2)), dict(k=True), FairnessConfigError, r"k=True"),
        (np.ones((2, 2)), np.ones((4, 2)), dict(k=5), FairnessConfigError, r"k=5 exceeds"),
        (np.ones((2, 2)), np.full((4, 2), 1e200), {}, InvalidDataError,
         r"database row 0 has a norm beyond float64 range"),
        (np.ones((2, 2)), np.full((4, 2), 1e-200), {}, InvalidDataError,
         r"norm beyond float64 range .*rescale"),
        (np.ones((1200, 2)), np.ones((4, 2)), dict(q_nan=1100),
         InvalidDataError, r"queries has NaN or infinite values in row 1100"),
        (np.ones((1200, 2)), np.ones((4, 2)), dict(q_inf=7),
         InvalidDataError, r"queries has NaN or infinite values in row 7"),
        (np.ones((1200, 2)), np.ones((4, 2)), dict(q_zero=1050),
         InvalidDataError, r"queries has a zero vector in row 1050 \(1 in all\)"),
        (np.ones((2, 2)), np.ones((4, 3)), {}, InvalidDataError, r"same dimension"),
        (np.ones((2, 2)), np.ones((4, 2)), dict(exclude_self=True), FairnessConfigError,
         r"same rows"),
    ],
)
def test_nearest_neighbors_validation(q: np.ndarray, db: np.ndarray, kw: dict[str, Any],
                                      err: type[Exception], fragment: str) -> None:
    q, kw = q.copy(), dict(kw)  # parameters are shared: do not mutate them
    for key, value in (("q_nan", np.nan), ("q_inf", -np.inf), ("q_zero", 0.0)):
        if key in kw:
            q[kw.pop(key)] = value
    with pytest.raises(err, match=fragment):
        nearest_neighbors(q, db, **{"k": 1, **kw})


@pytest.mark.filterwarnings("error")
def test_read_only_arrays_are_searched_without_warnings() -> None:
    """Memory-mapped or frozen embeddings."""
    rng = np.random.default_rng(4)
    db = rng.standard_normal((3000, 16)).astype(np.float32)
    q = rng.standard_normal((50, 16)).astype(np.float32)
    want = _brute(q, db, 5)
    db.flags.writeable = False
    q.flags.writeable = False
    assert (nearest_neighbors(q, db, k=5) == want).all()


def test_exact_under_reduced_float32_matmul_precision() -> None:
    """torch may multiply float32 in bfloat16 when asked; the search must not care."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    db = rng.standard_normal((4000, 64)).astype(np.float32)
    db[100:140] = db[7] + rng.integers(-1, 2, (40, 64)).astype(np.float32) * 2**-12
    q = np.concatenate([rng.standard_normal((30, 64)).astype(np.float32), db[[7]]])
    want = _brute(q, db, 20)
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("medium")
    try:
        got = nearest_neighbors(q, db, k=20)
    finally:
        torch.set_float32_matmul_precision(before)
    assert (got == want).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d", [64, 9000])
def test_identical_rows_tie_by_index_whatever_the_batch(d: int, dtype: type) -> None:
    """Forty identical rows scattered in the database: the lowest indices come first.

    The re-ranking meets the same row in batches of different shapes; sums that depended
    on where a row sits (float64 rows over 8,192 columns in numpy) broke these ties.
    """
    rng = np.random.default_rng(0)
    db = rng.standard_normal((3000 if d < 1000 else 300, d))
    v = rng.standard_normal(d)
    dup = np.sort(rng.choice(db.shape[0], 40, replace=False))
    db[dup] = v
    q = v + 0.05 * rng.standard_normal((50, d))
    got = nearest_neighbors(q.astype(dtype), db.astype(dtype), k=5)
    assert (got == dup[:5]).all()
    one = nearest_neighbors(q[:1].astype(dtype), db[dup[-3:]].astype(dtype), k=3)
    assert one.tolist() == [[0, 1, 2]]


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("scale", [2.0**-135, 2.0**-110, 2.0**110])
def test_float32_norms_beyond_float32_inverses(scale: float) -> None:
    """Norms whose float32 inverse overflows or is subnormal: divided in float64 instead."""
    rng = np.random.default_rng(2)
    q = (rng.standard_normal((20, 16)) * scale).astype(np.float32)
    db = (rng.standard_normal((3000, 16)) * scale).astype(np.float32)
    want = _brute(q, db, 5)
    assert (nearest_neighbors(q, db, k=5) == want).all()
    assert (nearest_neighbors(q.astype(np.float64), db.astype(np.float64), k=5) == want).all()


def test_columns_summed_in_chunks_give_the_same_neighbours(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(13)
    db = rng.integers(-3, 4, size=(400, 10)).astype(np.float64)
    db[np.abs(db).sum(1) == 0, 0] = 1.0
    want = _brute(db, db, 7, True)
    monkeypatch.setattr(retrieval, "_COLUMNS", 3)
    assert (nearest_neighbors(db, db, k=7, exclude_self=True) == want).all()


# -- the review's findings (precision_at_k on Features, self excluded) ----------------------------


def _face_features():
    """Four images, two per gender, as the data layer's Features object."""
    import pandas as pd

    from pytest_fairness.data import FairnessDataset
    from pytest_fairness.features import Features

    frame = pd.DataFrame({"image_id": list("abcd"), "path": list("abcd"),
                          "gender": ["f", "f", "m", "m"]})
    emb = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    return Features(FairnessDataset(frame), {"embeddings": emb}), emb, frame


def test_precision_at_k_accepts_what_fairness_features_returns() -> None:
    features, emb, frame = _face_features()
    r = precision_at_k(features, features, k=1, match="gender", by="gender", min_group_size=1)
    expected = precision_at_k((emb, frame), (emb, frame), k=1, match="gender", by="gender",
                              min_group_size=1)
    assert r.value == expected.value == 1.0
    assert r.params["exclude_self"] is True


def test_self_excluded_when_the_queries_equal_the_database() -> None:
    _, emb, frame = _face_features()
    db = (emb, frame)
    same_object = precision_at_k(db, db, k=1, match="gender", by="gender", min_group_size=1)
    copy = precision_at_k((emb.copy(), frame.copy()), db, k=1, match="gender", by="gender",
                          min_group_size=1)
    # The nearest *other* image of every query has the same gender, itself trivially so.
    assert same_object.params["exclude_self"] is True
    assert copy.params["exclude_self"] is True
    assert copy == same_object


def test_nearest_neighbors_example() -> None:  # once its docstring example
    db = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    assert nearest_neighbors(np.array([[1.0, 0.1]]), db, k=2).tolist() == [[0, 3]]
