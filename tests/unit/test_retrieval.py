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


@pytest.mark.parametrize("screen", ["faiss", "float32", "bfloat16"])
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


@pytest.mark.parametrize("screen", ["faiss", "float32", "bfloat16"])
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


@pytest.mark.parametrize("screen", ["faiss", "float32", "bfloat16"])
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


@pytest.mark.parametrize("screen", ["faiss", "float32", "bfloat16"])
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


def _exact_cosines(q: np.ndarray, db: np.ndarray) -> np.ndarray:
    q64, db64 = q.astype(np.float64), db.astype(np.float64)
    return (q64 @ db64.T) / np.outer(np.linalg.norm(q64, axis=1), np.linalg.norm(db64, axis=1))


@pytest.mark.parametrize("d", [3, 64, 2048])
def test_bfloat16_screen_error_stays_within_its_bound(d: int) -> None:
    """Every screened cosine lies within slack + rel·|s| of the float64 cosine.

    Besides Gaussian rows: rows of values half-way between bfloat16 numbers before
    normalisation, a row spanning 2^±60, and a query of one large entry and many small
    ones (whose sum a bfloat16 accumulator would lose) against a row of ones.
    """
    from pytest_fairness.indicators import retrieval

    rng = np.random.default_rng(d)
    db = rng.standard_normal((600, d)).astype(np.float32)
    q = rng.standard_normal((70, d)).astype(np.float32)
    halfway = ((1 + 2.0**-8 + rng.integers(0, 2**7, (20, d)) * 2.0**-7)
               * rng.choice([-1, 1], (20, d)))
    db[:20] = halfway.astype(np.float32)
    q[:5] = halfway[:5].astype(np.float32)
    db[20, :] = 2.0**-60
    db[20, 0] = 2.0**60
    q[5, :] = 2.0**-9
    q[5, 0] = 1.0
    db[21, :] = 1.0
    db_norm = np.linalg.norm(db.astype(np.float64), axis=1)
    q_norm = np.linalg.norm(q.astype(np.float64), axis=1)
    screen = retrieval._Bf16Screen(db, db_norm, 256)  # three chunks of the database
    block = screen.queries(retrieval._unit32(q, q_norm))
    buffer = np.empty(q.shape[0] * 256, dtype=screen.score_dtype)
    score, cand, slack = screen.search(block, np.arange(q.shape[0]), 600, 256, buffer)
    exact = np.take_along_axis(_exact_cosines(q, db), cand, axis=1)
    error = np.abs(score - exact)
    bound = np.asarray(slack)[:, None] + screen.rel * np.abs(score)
    assert (error <= bound).all()
    assert np.asarray(slack).max() < 0.01  # and the bound is not vacuous
    assert error.max() > 1e-4  # bfloat16 was used (a float32 product errs far less)


def test_bfloat16_products_accumulate_in_float32() -> None:
    """The bound assumes float32 sums: 1 + 2047 × 2⁻⁹ must not stall at 1."""
    torch = pytest.importorskip("torch")
    q = torch.full((64, 2048), 2.0**-9, dtype=torch.bfloat16)
    q[:, 0] = 1.0
    db = torch.ones((4096, 2048), dtype=torch.bfloat16)
    out = torch.empty((64, 4096), dtype=torch.bfloat16)
    torch.matmul(q, db.T, out=out)
    assert (out.float() == 5.0).all()  # 4.998 rounded to bfloat16


def test_settle_orders_uncertain_candidates_by_float64() -> None:
    """Approximations off by up to ``err`` never change the order of the exact top k."""
    from pytest_fairness.indicators import retrieval

    rng = np.random.default_rng(3)
    base = rng.standard_normal(8)
    db = base + rng.integers(0, 3, (300, 8)) * 1e-4  # many near-ties and exact ties
    q = rng.standard_normal((25, 8)) * 0.01 + base
    q_norm, db_norm = np.linalg.norm(q, axis=1), np.linalg.norm(db, axis=1)
    cand = np.tile(np.arange(300), (25, 1))
    exact, zero = retrieval._cosines(q, q_norm, db, db_norm, cand)
    assert zero == 0
    err = 1e-5
    noisy = exact + rng.uniform(-err, err, exact.shape)
    rows = np.arange(25)
    for k in (1, 7, 40):
        want = retrieval._settle(q, q_norm, db, db_norm, rows, cand, exact, 0.0, k, False)
        got = retrieval._settle(q, q_norm, db, db_norm, rows, cand, noisy, err, k, False)
        assert (got == want).all()
        assert (want == nearest_neighbors(q, db, k=k, screen="exact")).all()


def test_auto_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_fairness.indicators import retrieval

    monkeypatch.setattr(retrieval, "_bf16_matmul_is_native", lambda: True)
    assert retrieval._resolve_screen("auto", 100, 100) == "exact"
    assert retrieval._resolve_screen("auto", 10_000, 64) == "bfloat16"
    assert retrieval._resolve_screen("float32", 10_000, 64) == "float32"
    monkeypatch.setattr(retrieval, "_bf16_matmul_is_native", lambda: False)
    assert retrieval._resolve_screen("auto", 10_000, 64) == "faiss"


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("screen", ["auto", "faiss", "float32", "bfloat16"])
def test_read_only_arrays_are_searched_without_warnings(screen: str) -> None:
    """Memory-mapped or frozen embeddings: torch must not wrap them (it would warn)."""
    rng = np.random.default_rng(4)
    db = rng.standard_normal((3000, 16)).astype(np.float32)
    q = rng.standard_normal((50, 16)).astype(np.float32)
    want = nearest_neighbors(q, db, k=5, screen="exact")
    db.flags.writeable = False
    q.flags.writeable = False
    assert (nearest_neighbors(q, db, k=5, screen=screen) == want).all()


@pytest.mark.parametrize("screen", ["faiss", "float32", "bfloat16"])
def test_exact_under_reduced_float32_matmul_precision(screen: str) -> None:
    """torch may multiply float32 in bfloat16 when asked; the float32 bounds must not."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    db = rng.standard_normal((4000, 64)).astype(np.float32)
    db[100:140] = db[7] + rng.integers(-1, 2, (40, 64)).astype(np.float32) * 2**-12
    q = np.concatenate([rng.standard_normal((30, 64)).astype(np.float32), db[[7]]])
    want = nearest_neighbors(q, db, k=20, screen="exact")
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("medium")
    try:
        got = nearest_neighbors(q, db, k=20, screen=screen)
    finally:
        torch.set_float32_matmul_precision(before)
    assert (got == want).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("screen", ["exact", "faiss", "float32", "bfloat16"])
def test_identical_rows_tie_by_index_whatever_the_batch(screen: str, dtype: type) -> None:
    """Forty identical rows scattered in the database: the lowest indices come first.

    The re-scoring meets the same pair in batches of different shapes; a batched product
    that rounded a pair differently by batch broke these ties (review finding).
    """
    rng = np.random.default_rng(0)
    db = rng.standard_normal((3000, 64))
    v = rng.standard_normal(64)
    dup = np.sort(rng.choice(3000, 40, replace=False))
    db[dup] = v
    q = v + 0.05 * rng.standard_normal((50, 64))
    got = nearest_neighbors(q.astype(dtype), db.astype(dtype), k=5, screen=screen)
    assert (got == dup[:5]).all()


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("scale", [2.0**-135, 2.0**-110, 2.0**110])
@pytest.mark.parametrize("screen", ["auto", "faiss", "float32", "bfloat16"])
def test_float32_norms_beyond_float32_inverses(screen: str, scale: float) -> None:
    """Norms whose float32 inverse overflows or is subnormal: divided in float64 instead.

    (They made inf/NaN unit rows: an error for two screens, silently wrong neighbours for
    the bfloat16 one - review finding.)
    """
    rng = np.random.default_rng(2)
    q = (rng.standard_normal((20, 16)) * scale).astype(np.float32)
    db = (rng.standard_normal((3000, 16)) * scale).astype(np.float32)
    want = nearest_neighbors(q, db, k=5, screen="exact")
    assert (nearest_neighbors(q, db, k=5, screen=screen) == want).all()
    assert (nearest_neighbors(q.astype(np.float64), db.astype(np.float64), k=5,
                              screen=screen) == want).all()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize(("rows", "cols", "width"),
                         [(40, 10_000, 58), (40, 1_000, 31), (40, 1_000, 32), (7, 4_007, 20),
                          (5, 50, 10), (3, 16 * 64 + 15, 1)])
def test_top_entries_are_the_largest(dtype: str, rows: int, cols: int, width: int) -> None:
    """The group-maximum selection returns the ``width`` largest entries of each row.

    Ties included (values on a coarse grid), with leftover columns past the last full
    group, and at widths where groups of 16 columns stop being used (< 2 × width groups).
    """
    torch = pytest.importorskip("torch")
    from pytest_fairness.indicators.retrieval import _top_entries

    gen = torch.Generator().manual_seed(cols + width)
    for tile in (torch.randn(rows, cols, generator=gen),
                 torch.randint(-20, 20, (rows, cols), generator=gen).float() / 8):
        tile = tile.to(getattr(torch, dtype))
        values, columns = _top_entries(tile, width)
        assert values.shape == columns.shape == (rows, width)
        assert torch.equal(tile.gather(1, columns), values)
        assert all(len(set(r)) == width for r in columns.tolist())  # distinct columns
        want = torch.topk(tile, width, dim=1).values
        assert torch.equal(torch.sort(values, dim=1, descending=True).values, want)


def test_sampled_dots_are_float32_sums_of_each_pair() -> None:
    """The sampled product gives each listed pair's dot product within float32's bound,
    the same number for identical rows wherever they sit, and only the first ``need``."""
    pytest.importorskip("torch")
    from pytest_fairness.indicators.retrieval import _gamma32, _sampled_dots

    rng = np.random.default_rng(3)
    d = 300
    db = rng.standard_normal((500, d)).astype(np.float32)
    db[[10, 250, 499]] = db[3]
    q = rng.standard_normal((40, d)).astype(np.float32)
    cand = rng.integers(0, 500, (40, 9))
    cand[:, :4] = [3, 10, 250, 499]
    need = rng.integers(4, 10, 40)
    need[0] = 9
    hit = np.arange(9) < need[:, None]
    dots = _sampled_dots(q, db, cand, need, hit)
    assert dots.shape == (need.sum(),)
    exact = np.einsum("nkd,nd->nk", db[cand].astype(np.float64), q.astype(np.float64))[hit]
    bound = _gamma32(d) * np.einsum("nkd,nd->nk", np.abs(db[cand].astype(np.float64)),
                                    np.abs(q.astype(np.float64)))[hit]
    assert (np.abs(dots - exact) <= bound).all()
    out = np.full(cand.shape, np.nan)
    out[hit] = dots
    assert (out[:, :4] == out[:, [0]]).all()  # identical rows, identical sums


def test_threaded_sums_of_squares_equal_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Norms split over two threads are the same numbers, and each row's norm does not
    depend on where the row sits (the float64 re-scoring relies on both)."""
    from pytest_fairness.indicators import retrieval

    rng = np.random.default_rng(5)
    for d in (3, 2048, 3001):
        rows = (rng.standard_normal((41, d)) * 1e3).astype(np.float32)
        one_pass = retrieval._sums_of_squares(rows)
        monkeypatch.setattr(retrieval, "_THREADED", 1)
        assert np.array_equal(retrieval._sums_of_squares(rows), one_pass)
        assert np.array_equal(retrieval._sums_of_squares(rows[17:18]), one_pass[17:18])
        monkeypatch.undo()
