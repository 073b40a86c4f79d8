"""Cross-checks of the seed 000 indicators against independent oracles.

The oracles re-implement, loop by loop, the behaviour of the released VISSL scripts
(facebookresearch/vissl ``projects/fairness_indicators``) and a brute-force numpy search.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pytest_fairness.indicators import geodiversity, label_association, precision_at_k
from pytest_fairness.indicators.retrieval import nearest_neighbors

TYPES = {"non_human": [0, 1], "human": [2], "possibly_human": [3], "crime": [4]}


def _vissl_label_assoc(preds, full_scores, attrs, tau, topk):
    """Per attribute value and association: share of images (VISSL filter-then-top-k)."""
    counts: dict = {}
    for i, row in enumerate(preds):
        kept = [p for p in row if full_scores[i][p] >= tau][:topk]
        entry = counts.setdefault(attrs[i], {"total": 0, **{a: 0 for a in TYPES}})
        entry["total"] += 1
        for assoc, labels in TYPES.items():
            if set(labels) & set(kept):
                entry[assoc] += 1
    return {v: {a: e[a] / e["total"] for a in TYPES} for v, e in counts.items()}


@pytest.mark.parametrize("seed", range(5))
def test_label_association_reference_matches_vissl(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, classes = 60, 8
    full = rng.dirichlet(np.ones(classes), size=n)
    preds = rng.permuted(np.tile(np.arange(classes), (n, 1)), axis=1)[:, :6]  # unsorted order
    attrs = rng.choice(["f", "m", "o"], n)
    r = label_association(preds, full, groups=attrs, taxonomy=TYPES, top_k=3,
                          variant="reference", min_group_size=1)
    for tau in (0.0, 0.1, 0.3, 0.8):
        oracle = _vissl_label_assoc(preds, full, attrs, tau, 3)
        res = r.select(tau)
        for g in res.groups:
            assert g.value == pytest.approx(
                _harmful_rate(preds, full, attrs, tau, 3, g.group), abs=1e-12)
            for assoc in TYPES:
                assert g.stats[assoc] == pytest.approx(oracle[g.group][assoc], abs=1e-12)


def _harmful_rate(preds, full, attrs, tau, topk, value):
    rows = [i for i in range(len(preds)) if attrs[i] == value]
    hits = [bool(set(TYPES["non_human"] + TYPES["crime"]) & set(
        [p for p in preds[i] if full[i][p] >= tau][:topk])) for i in rows]
    return sum(hits) / len(rows)


def test_label_association_paper_equals_reference_on_sorted_predictions() -> None:
    rng = np.random.default_rng(7)
    full = rng.dirichlet(np.ones(8), size=50)
    preds = np.argsort(-full, axis=1, kind="stable")[:, :5]
    scores = np.take_along_axis(full, preds, axis=1)
    groups = rng.choice(["a", "b"], 50)
    grid = [0.0, 0.1, 0.3, 0.8]
    a = label_association(preds, scores, groups=groups, taxonomy=TYPES, thresholds=grid,
                          min_group_size=1)
    b = label_association(preds, scores, groups=groups, taxonomy=TYPES, thresholds=grid,
                          variant="reference", min_group_size=1)
    for tau in grid:
        assert a.select(tau).groups == b.select(tau).groups


def test_geodiversity_reference_matches_vissl_pandas_pipeline() -> None:
    rng = np.random.default_rng(3)
    n = 80
    images = rng.integers(0, 50, n)
    img_hh = rng.integers(0, 12, 50)
    hh_income = np.exp(rng.uniform(2, 9, 12))
    hh_region = rng.choice(["Africa", "Asia", "Europe"], 12)
    img_preds = rng.integers(0, 6, size=(50, 5))
    img_scores = np.sort(rng.random((50, 5)), axis=1)[:, ::-1]
    truth = rng.integers(0, 6, n)
    keep = np.unique(np.c_[images, truth], axis=0, return_index=True)[1]  # VISSL keys (label, id)
    images, truth = images[keep], truth[keep]
    hh = img_hh[images]
    tau = 0.3
    r = geodiversity(img_preds[images], img_scores[images], truth=truth, household=hh,
                     region=hh_region[hh], income=hh_income[hh], image=images, threshold=tau,
                     variant="reference", min_group_size=1, by="income")
    # Oracle: one record per (label, image); _is_hit_naive; groupby image; bucket; mean.
    records = []
    for img, t in zip(images, truth):
        hit = 0
        for p, s in zip(img_preds[img], img_scores[img]):
            if p == t:
                hit = int(s > tau)
                break
        records.append((img, hh_income[img_hh[img]], hit))
    df = pd.DataFrame(records, columns=["image", "income", "hit"])
    per_image = df.groupby(["image", "income"])["hit"].mean().reset_index()
    per_image["bucket"] = per_image["income"].apply(
        lambda x: {1.0: "low", 2.0: "medium", 3.0: "high"}[np.clip(np.round(np.log(x) / 3), 1, 3)])
    oracle = per_image.groupby("bucket")["hit"].mean()
    for g in r.groups:
        assert g.value == pytest.approx(oracle[g.group], abs=1e-12)


def _brute_precision(q, db, qa, da, k, exclude_self):
    qn = np.sqrt((q * q).sum(1))
    dn = np.sqrt((db * db).sum(1))
    sim = (q @ db.T) / (qn[:, None] * dn[None, :])
    if exclude_self:
        np.fill_diagonal(sim, -np.inf)
    prec = []
    for i in range(q.shape[0]):
        order = np.lexsort((np.arange(db.shape[0]), -sim[i]))[:k]
        prec.append(np.mean(da[order] == qa[i]))
    return np.array(prec)


@pytest.mark.parametrize("seed", range(6))
def test_retrieval_equals_brute_force_with_ties(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_fairness.indicators import retrieval

    monkeypatch.setattr(retrieval, "_BLOCK", 6)  # several query blocks
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 8))
    db = rng.integers(-2, 3, size=(int(rng.integers(20, 120)), d)).astype(float)
    db[np.abs(db).sum(1) == 0, 0] = 1.0  # integer vectors: many exact ties
    da = rng.integers(0, 2, db.shape[0])
    same = seed % 2 == 1
    q = db if same else rng.integers(-2, 3, size=(25, d)).astype(float)
    q[np.abs(q).sum(1) == 0, 0] = 1.0
    qa = da if same else rng.integers(0, 2, q.shape[0])
    ks = [1, 3, 7]
    qobj = (q, {"a": qa})
    r = precision_at_k(qobj, qobj if same else (db, {"a": da}), k=ks, match="a", by="a",
                       min_group_size=1)
    for kk in ks:
        prec = _brute_precision(q, db, qa, da, kk, same)
        for g in r.select(kk).groups:
            assert g.value == pytest.approx(np.mean(prec[qa == g.group]), abs=1e-12)
    # The neighbours themselves are identical, order included.
    qn, dn = np.sqrt((q * q).sum(1)), np.sqrt((db * db).sum(1))
    sim = (q @ db.T) / (qn[:, None] * dn[None, :])
    if same:
        np.fill_diagonal(sim, -np.inf)
    brute = np.array([np.lexsort((np.arange(db.shape[0]), -row))[:7] for row in sim])
    assert (nearest_neighbors(q, db, k=7, exclude_self=same) == brute).all()


def _brute_neighbors(q: np.ndarray, db: np.ndarray, k: int,
                     exclude_self: bool) -> np.ndarray:
    """Float64 cosines, decreasing, ties by lower index (the documented rule)."""
    qn, dn = np.sqrt((q * q).sum(1)), np.sqrt((db * db).sum(1))
    sim = (q @ db.T) / (qn[:, None] * dn[None, :])
    if exclude_self:
        np.fill_diagonal(sim, -np.inf)
    return np.array([np.lexsort((np.arange(db.shape[0]), -row))[:k] for row in sim])


@pytest.mark.parametrize("seed", range(4))
def test_search_below_float32_resolution_equals_brute_force(seed: int) -> None:
    """Cosines 1e-8 apart, far inside faiss's float32 error bound, still come out exact.

    Integer vectors (exact float64 arithmetic): a few large base directions plus small
    integer offsets, so whole clusters tie in float32 and must be re-ranked, and exact
    duplicates beyond the candidate width force the search to widen.
    """
    rng = np.random.default_rng(seed)
    d, n = 6, 700
    base = rng.integers(-3000, 3001, size=(4, d))
    db = (base[rng.integers(0, 4, n)] + rng.integers(-1, 2, size=(n, d))).astype(np.float64)
    db[rng.integers(0, n, 60)] = db[0]  # sixty duplicates of row 0
    same = seed % 2 == 0
    q = db if same else (base[rng.integers(0, 4, 40)] + rng.integers(-2, 3, (40, d))
                         ).astype(np.float64)
    for k in (1, 5, 40):
        brute = _brute_neighbors(q, db, k, same)
        for data in ((q, db), (q.astype(np.float32), db.astype(np.float32))):
            assert (nearest_neighbors(*data, k=k, exclude_self=same) == brute).all()


@pytest.mark.slow  # imports torch, as the released code normalises with it
def test_retrieval_reference_matches_vissl() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    train = rng.standard_normal((70, 5)).astype(np.float32)
    test = rng.standard_normal((30, 5)).astype(np.float32)
    ta, qa = rng.integers(0, 2, 70), rng.integers(0, 2, 30)
    tr = torch.nn.functional.normalize(torch.from_numpy(train).float(), dim=1, p=2).numpy()
    te = torch.nn.functional.normalize(torch.from_numpy(test).float(), dim=1, p=2).numpy()
    ranks = np.argsort(-te.dot(tr.T), axis=1)
    r = precision_at_k((test, {"a": qa}), (train, {"a": ta}), k=[1, 5, 10, 50], match="a",
                       by="a", variant="reference", min_group_size=1)
    for kk in (1, 5, 10, 50):
        correct = (ta[ranks[:, :kk]] == qa[:, None]).sum(1)
        for g in r.select(kk).groups:
            rows = qa == g.group
            assert g.value == pytest.approx(correct[rows].sum() / (rows.sum() * kk), abs=1e-12)
