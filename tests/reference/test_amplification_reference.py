"""Cross-checks of the amplification indicators against independent oracles.

The oracles re-implement, with plain loops over attribute combinations, the behaviour of
the authors' released code (read, not copied):

* SonyResearch/multi_bias_amp ``metrics/mba.py``, the ``MBA`` class called with one-hot
  N × |G| group columns (``MBAOracle``): M = exact training label sets, every group
  evaluated, Multi_MALS threshold 1/(|G| − 1), directional Δ against the test ground truth,
  y = sign, ``nanmean``/``nanvar``.
* The same code in the layout of its released evaluate script (``sony_*``): |G| − 1 group
  columns, one per group after the first.
* princetonvisualai/directional-bias-amp ``directional_biasamp.py``: every attribute column,
  unlabelled training images dropped before y, y = sign, ``nanmean(y·Δ)``.
* uclanlp/reducingbias ``coco_get_bias_score``: two groups, ratio m/(m+f), attributes never
  predicted skipped in the sum but counted.

Plus a brute-force oracle of the paper definitions (every subset of every row).
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

from pytest_fairness.indicators.amplification import (
    bias_amp,
    directional_bias_amp,
    multi_directional,
    multi_mals,
)

TOL = 1e-9


def _data(seed: int, n_train: int = 160, n_test: int = 140, n_attrs: int = 6, n_groups: int = 2,
          density: float = 0.3, noise: float = 0.15):
    rng = np.random.default_rng(seed)
    g_train = rng.integers(0, n_groups, n_train)
    g_test = rng.integers(0, n_groups, n_test)
    bias = rng.uniform(-0.2, 0.2, (n_groups, n_attrs))
    train = (rng.random((n_train, n_attrs)) < density + bias[g_train]).astype(int)
    test = (rng.random((n_test, n_attrs)) < density + bias[g_test]).astype(int)
    flip = rng.random(test.shape) < noise
    pred = np.where(flip, 1 - test, test)
    pred_g = np.where(rng.random(n_test) < noise, rng.integers(0, n_groups, n_test), g_test)
    return train, g_train, test, g_test, pred, pred_g


def _has(x: np.ndarray, m: tuple[int, ...]) -> np.ndarray:
    return x[:, list(m)].sum(axis=1) == len(m)


def _columns(codes: np.ndarray, n_groups: int) -> np.ndarray:
    """The SonyResearch layout: one indicator column per group after the first."""
    return np.stack([(codes == g).astype(int) for g in range(1, n_groups)], axis=1)


# -- SonyResearch oracle ---------------------------------------------------------------------


def sony_multiatts(train, test, k, thresh):
    counts: dict[tuple[int, ...], int] = {}
    for row in train:
        atts = tuple(int(a) for a in np.flatnonzero(row == 1))
        if len(atts) >= k:
            counts[atts] = counts.get(atts, 0) + 1
    kept = [m for m, c in counts.items() if c > thresh]
    return [m for m in kept if _has(test, m).sum() > thresh]


def sony_bog(atts, group_cols, multi_atts, num_groups):
    codes = group_cols[:, 0] if group_cols.shape[1] == 1 else np.argmax(group_cols, axis=1)
    bog = np.zeros((len(multi_atts), num_groups - 1))
    for i, m in enumerate(multi_atts):
        rows = _has(atts, m)
        total = rows.sum()
        for g in range(num_groups - 1):
            bog[i, g] = np.nan if total == 0 else (codes[rows] == g).sum() / total
    return bog


def sony_keep(train, train_cols):
    return (train.sum(axis=1) > 0) | (train_cols.sum(axis=1) > 0)


def sony_mals(train, g_train, test, pred, pred_g, n_groups, k=1, thresh=0, is_abs=True):
    tr_cols, pr_cols = _columns(g_train, n_groups), _columns(pred_g, n_groups)
    keep = sony_keep(train, tr_cols)
    train, tr_cols = train[keep], tr_cols[keep]
    multi = sony_multiatts(train, test, k, thresh)
    data_bog = sony_bog(train, tr_cols, multi, n_groups)
    pred_bog = sony_bog(pred, pr_cols, multi, n_groups)
    diff = np.zeros_like(data_bog)
    for i in range(diff.shape[0]):
        for j in range(diff.shape[1]):
            if data_bog[i, j] > 1.0 / (n_groups - 1):
                diff[i, j] = pred_bog[i, j] - data_bog[i, j]
    value = np.nansum(np.abs(diff) if is_abs else diff) / data_bog.shape[0]
    return value, np.nanvar(diff), len(multi)


def sony_directional(train, g_train, test, g_test, pred, pred_g, n_groups, direction, k=1,
                     thresh=0, is_abs=True):
    tr_cols = _columns(g_train, n_groups)
    te_cols = _columns(g_test, n_groups)
    pr_cols = _columns(pred_g, n_groups)
    keep = sony_keep(train, tr_cols)
    train, tr_cols = train[keep], tr_cols[keep]
    multi = sony_multiatts(train, test, k, thresh)
    n = len(train)
    y = np.zeros((n_groups - 1, len(multi)))
    delta = np.zeros_like(y)
    for a in range(n_groups - 1):
        for i, m in enumerate(multi):
            t_rows = _has(train, m)
            a_rows = tr_cols[:, a] == 1
            y[a, i] = np.sign((t_rows & a_rows).sum() / n - (t_rows.sum() / n) * (a_rows.sum() / n))
            if direction == "G->M":
                members = te_cols[:, a] == 1
                truth = _has(test[members], m).sum() / members.sum()
                guess = _has(pred[members], m).sum() / members.sum()
            else:
                has_m = _has(test, m)
                truth = (te_cols[has_m, a] == 1).sum() / has_m.sum()
                guess = (pr_cols[has_m, a] == 1).sum() / has_m.sum()
            delta[a, i] = guess - truth
    values = np.abs(delta) if is_abs else y * delta
    return np.nanmean(values), np.nanvar(delta)


# -- SonyResearch MBA class oracle (one-hot N × |G| groups) ----------------------------------


class MBAOracle:
    """Our transcription, as loops, of the algorithm of the ``MBA`` class (SonyResearch/
    multi_bias_amp ``metrics/mba.py``) called with one-hot N × |G| group columns.

    It mirrors: the training rows kept (a label or a 1 in a group column), ``get_multiatts``
    (exact training label sets of size >= k seen more than ``thresh`` times, kept when more
    than ``thresh`` test ground-truth rows hold them), ``create_bog`` (per combination, the
    share of each group among the rows holding it; NaN when none), ``calculate_mba_mals``
    (Δ only where the train bias > 1/(|G| − 1); sum / |M| and ``nanvar``), and
    ``calculate_mba_gm`` / ``calculate_mba_mg`` (Δ against the test ground truth for every
    group column, y = sign(P(a, t) − P(a)·P(t)) on the kept training rows, ``nanmean`` and
    ``nanvar``). The test ground truth is the class's ``preds["labels"]``.
    """

    def __init__(self, train, train_group, test, test_group, pred, pred_group, k=1, thresh=0):
        keep = (train.sum(axis=1) > 0) | (train_group.sum(axis=1) > 0)
        self.train, self.train_group = train[keep], train_group[keep]
        self.test, self.test_group = test, test_group
        self.pred, self.pred_group = pred, pred_group
        self.groups = train_group.shape[1]
        counts: dict[tuple[int, ...], int] = {}
        for row in self.train:
            atts = tuple(int(a) for a in np.flatnonzero(row == 1))
            if len(atts) >= k:
                counts[atts] = counts.get(atts, 0) + 1
        self.multi_atts = [m for m, c in counts.items()
                           if c > thresh and _has(test, m).sum() > thresh]

    def bog(self, atts, group_cols):
        codes = np.argmax(group_cols, axis=1)
        out = np.zeros((len(self.multi_atts), self.groups))
        for i, m in enumerate(self.multi_atts):
            rows = _has(atts, m)
            for g in range(self.groups):
                out[i, g] = np.nan if rows.sum() == 0 else (codes[rows] == g).sum() / rows.sum()
        return out

    def mals(self, is_abs):
        data, pred = self.bog(self.train, self.train_group), self.bog(self.pred, self.pred_group)
        diff = np.zeros_like(data)
        for i in range(diff.shape[0]):
            for j in range(diff.shape[1]):
                if data[i, j] > 1.0 / (self.groups - 1):
                    diff[i, j] = pred[i, j] - data[i, j]
        return np.nansum(np.abs(diff) if is_abs else diff) / data.shape[0], np.nanvar(diff)

    def _y(self, a, m):
        n = len(self.train)
        t_rows, a_rows = _has(self.train, m), self.train_group[:, a] == 1
        return np.sign((t_rows & a_rows).sum() / n - (t_rows.sum() / n) * (a_rows.sum() / n))

    def _finish(self, y, delta, is_abs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmean(np.abs(delta) if is_abs else y * delta), np.nanvar(delta)

    def gm(self, is_abs):
        y = np.zeros((self.groups, len(self.multi_atts)))
        delta = np.zeros_like(y)
        for a in range(self.groups):
            members = self.test_group[:, a] == 1
            for i, m in enumerate(self.multi_atts):
                y[a, i] = self._y(a, m)
                delta[a, i] = (_has(self.pred[members], m).sum() / members.sum()
                               - _has(self.test[members], m).sum() / members.sum())
        return self._finish(y, delta, is_abs)

    def mg(self, is_abs):
        y = np.zeros((self.groups, len(self.multi_atts)))
        delta = np.zeros_like(y)
        for i, m in enumerate(self.multi_atts):
            rows = _has(self.test, m)
            for a in range(self.groups):
                y[a, i] = self._y(a, m)
                delta[a, i] = ((self.pred_group[rows, a] == 1).sum() / rows.sum()
                               - (self.test_group[rows, a] == 1).sum() / rows.sum())
        return self._finish(y, delta, is_abs)


# -- Princeton oracle ------------------------------------------------------------------------


def princeton(train, g_train, test, g_test, pred, pred_g, n_groups, direction):
    tr_a = np.eye(n_groups, dtype=int)[g_train]
    te_a = np.eye(n_groups, dtype=int)[g_test]
    pr_a = np.eye(n_groups, dtype=int)[pred_g]
    keep = train.sum(axis=1) > 0
    t_train, a_train = train[keep], tr_a[keep]
    n = len(t_train)
    n_t = train.shape[1]
    y = np.zeros((n_groups, n_t))
    delta = np.zeros_like(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for a in range(n_groups):
            for t in range(n_t):
                t_idx = t_train[:, t] == 1
                a_idx = a_train[:, a] == 1
                y[a, t] = np.sign((t_idx & a_idx).sum() / n - (t_idx.sum() / n) * (a_idx.sum() / n))
                if direction == "M->G":
                    rows = test[:, t] == 1
                    delta[a, t] = np.mean(pr_a[rows, a]) - np.mean(te_a[rows, a])
                else:
                    rows = te_a[:, a] == 1
                    delta[a, t] = np.mean(pred[rows, t]) - np.mean(test[rows, t])
        return np.nanmean(y * delta)


# -- uclanlp oracle ----------------------------------------------------------------------------


def zhao_reference(train, g_train, pred, pred_g):
    total = 0.0
    n_objects = train.shape[1]
    used = 0
    for o in range(n_objects):
        man = ((train[:, o] == 1) & (g_train == 0)).sum()
        woman = ((train[:, o] == 1) & (g_train == 1)).sum()
        if man + woman == 0:
            continue
        used += 1
        ratio = man / (man + woman)
        p_man = ((pred[:, o] == 1) & (pred_g == 0)).sum()
        p_woman = ((pred[:, o] == 1) & (pred_g == 1)).sum()
        p_ratio = math.nan if p_man + p_woman == 0 else p_man / (p_man + p_woman)
        if ratio < 0.5:
            term = ratio - p_ratio
        elif ratio > 0.5:
            term = p_ratio - ratio
        else:
            term = 0.0
        if not math.isnan(term):
            total += term
    return total / used


# -- paper oracle (brute force) -----------------------------------------------------------------


def paper_combos(train, test, min_size, max_size, min_count):
    found: set[tuple[int, ...]] = set()
    for row in np.vstack([train, test]):
        labels = tuple(int(a) for a in np.flatnonzero(row))
        for s in range(min_size, min(len(labels), max_size) + 1):
            found.update(itertools.combinations(labels, s))
    return sorted(m for m in found
                  if _has(train, m).sum() >= min_count and _has(test, m).sum() >= min_count)


def paper_mals(train, g_train, test, pred, pred_g, n_groups, min_size, max_size, min_count):
    combos = paper_combos(train, test, min_size, max_size, min_count)
    deltas = []
    for m in combos:
        rows_tr = _has(train, m)
        rows_pr = _has(pred, m)
        if rows_pr.sum() == 0:
            continue
        for g in range(n_groups):
            b_tr = (g_train[rows_tr] == g).mean()
            b_pr = (pred_g[rows_pr] == g).mean()
            deltas.append(b_pr - b_tr if b_tr > 1 / n_groups else 0.0)
    deltas = np.array(deltas)
    n_m = len(deltas) / n_groups
    return np.abs(deltas).sum() / n_m, deltas.var(), deltas.sum() / n_m


def paper_directional(train, g_train, test, g_test, pred, pred_g, n_groups, direction,
                      min_size, max_size, min_count):
    combos = paper_combos(train, test, min_size, max_size, min_count)
    n = len(train)
    deltas, signed = [], []
    for m in combos:
        for g in range(n_groups):
            in_g_tr, has_tr = g_train == g, _has(train, m)
            y = (in_g_tr & has_tr).sum() / n > in_g_tr.mean() * has_tr.mean()
            if direction == "G->M":
                d = _has(pred[g_test == g], m).mean() - has_tr[in_g_tr].mean()
            else:
                d = (pred_g[_has(test, m)] == g).mean() - (g_train[has_tr] == g).mean()
            deltas.append(d)
            signed.append(d if y else -d)
    deltas = np.array(deltas)
    return np.abs(deltas).mean(), deltas.var(), np.mean(signed)


# -- tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_groups", [2, 3, 4])
@pytest.mark.parametrize("k,thresh", [(1, 0), (2, 1)])
def test_multi_mals_reference_matches_sony(seed, n_groups, k, thresh):
    train, g_train, test, g_test, pred, pred_g = _data(seed, n_groups=n_groups)
    value, var, n_multi = sony_mals(train, g_train, test, pred, pred_g, n_groups, k, thresh)
    r = multi_mals(train, _columns(g_train, n_groups), test, _columns(g_test, n_groups), pred,
                   _columns(pred_g, n_groups), min_size=k, min_count=thresh + 1,
                   variant="reference", min_group_size=1)
    assert r.stats["n_combinations"] == n_multi
    assert r.value == pytest.approx(value, abs=TOL)
    assert r.stats["variance"] == pytest.approx(var, abs=TOL)
    signed, _, _ = sony_mals(train, g_train, test, pred, pred_g, n_groups, k, thresh,
                             is_abs=False)
    assert r.stats["signed_mean"] == pytest.approx(signed, abs=TOL)
    if n_groups == 2:
        assert r.value == 0.0


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_groups", [2, 3])
@pytest.mark.parametrize("direction", ["G->M", "M->G"])
def test_multi_directional_reference_matches_sony(seed, n_groups, direction):
    train, g_train, test, g_test, pred, pred_g = _data(seed + 10, n_groups=n_groups)
    value, var = sony_directional(train, g_train, test, g_test, pred, pred_g, n_groups,
                                  direction)
    signed, _ = sony_directional(train, g_train, test, g_test, pred, pred_g, n_groups,
                                 direction, is_abs=False)
    r = multi_directional(train, _columns(g_train, n_groups), test, _columns(g_test, n_groups),
                          pred, _columns(pred_g, n_groups), direction=direction,
                          variant="reference", min_group_size=1)
    assert r.value == pytest.approx(value, abs=TOL)
    assert r.stats["variance"] == pytest.approx(var, abs=TOL)
    assert r.stats["signed_mean"] == pytest.approx(signed, abs=TOL)
    assert [g.group for g in r.groups] == list(range(1, n_groups))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_groups", [2, 3, 4])
@pytest.mark.parametrize("k,thresh", [(1, 0), (2, 1)])
def test_reference_matches_the_mba_class_on_one_hot_groups(seed, n_groups, k, thresh):
    """Groups as one-hot N × |G| columns, as the MBA class takes them: every group counts."""
    train, g_train, test, g_test, pred, pred_g = _data(seed + 70, n_groups=n_groups)
    eye = np.eye(n_groups, dtype=int)
    args = (train, eye[g_train], test, eye[g_test], pred, eye[pred_g])
    oracle = MBAOracle(*args, k=k, thresh=thresh)
    kw = {"min_size": k, "min_count": thresh + 1, "variant": "reference", "min_group_size": 1}
    r = multi_mals(*args, **kw)
    assert r.stats["n_combinations"] == len(oracle.multi_atts)
    value, var = oracle.mals(is_abs=True)
    assert r.value == pytest.approx(value, abs=TOL)
    assert r.stats["variance"] == pytest.approx(var, abs=TOL)
    assert r.stats["signed_mean"] == pytest.approx(oracle.mals(is_abs=False)[0], abs=TOL)
    assert [g.group for g in r.groups] == list(range(n_groups))
    for direction, method in (("G->M", oracle.gm), ("M->G", oracle.mg)):
        r = multi_directional(*args, direction=direction, **kw)
        value, var = method(is_abs=True)
        assert r.value == pytest.approx(value, abs=TOL)
        assert r.stats["variance"] == pytest.approx(var, abs=TOL)
        assert r.stats["signed_mean"] == pytest.approx(method(is_abs=False)[0], abs=TOL)
        assert [g.group for g in r.groups] == list(range(n_groups))
        labels = multi_directional(train, g_train, test, g_test, pred, pred_g,
                                   direction=direction, **kw)
        assert labels.value == r.value and labels.stats == r.stats  # labels read the same


def test_reference_handles_long_exact_label_sets():
    """Exact label sets longer than the int-key range (80 attributes, 12 labels) still work."""
    rng = np.random.default_rng(3)
    train = (rng.random((60, 80)) < 0.15).astype(int)
    train[:5, :12] = 1
    test = train.copy()
    pred = np.where(rng.random(test.shape) < 0.05, 1 - test, test)
    g = rng.integers(0, 3, 60)
    value, var, n_multi = sony_mals(train, g, test, pred, g, 3)
    r = multi_mals(train, _columns(g, 3), test, _columns(g, 3), pred, _columns(g, 3),
                   variant="reference", min_group_size=1)
    assert r.stats["n_combinations"] == n_multi
    assert r.value == pytest.approx(value, abs=TOL)
    assert r.stats["variance"] == pytest.approx(var, abs=TOL)
    one_hot = np.eye(3, dtype=int)[g]
    oracle = MBAOracle(train, one_hot, test, one_hot, pred, one_hot)
    r = multi_mals(train, one_hot, test, one_hot, pred, one_hot, variant="reference",
                   min_group_size=1)
    assert r.stats["n_combinations"] == len(oracle.multi_atts)
    assert (r.value, r.stats["variance"]) == pytest.approx(oracle.mals(is_abs=True), abs=TOL)
    for direction, method in (("G->M", oracle.gm), ("M->G", oracle.mg)):
        r = multi_directional(train, one_hot, test, one_hot, pred, one_hot,
                              direction=direction, variant="reference", min_group_size=1)
        assert (r.value, r.stats["variance"]) == pytest.approx(method(is_abs=True), abs=TOL)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n_groups", [2, 3])
@pytest.mark.parametrize("direction", ["G->M", "M->G"])
def test_directional_bias_amp_reference_matches_princeton(seed, n_groups, direction):
    train, g_train, test, g_test, pred, pred_g = _data(seed + 20, n_groups=n_groups,
                                                       density=0.12)
    test[:, 0] = 0  # an attribute absent from test: NaN cells for M->G
    train[:7] = 0  # unlabelled training images, dropped before y
    expected = princeton(train, g_train, test, g_test, pred, pred_g, n_groups, direction)
    r = directional_bias_amp(train, g_train, test, g_test, pred, pred_g, direction=direction,
                             variant="reference", min_group_size=1)
    assert r.value == pytest.approx(expected, abs=TOL)
    assert r.stats["n_train_kept"] == (train.sum(axis=1) > 0).sum()


@pytest.mark.parametrize("seed", range(5))
def test_bias_amp_reference_matches_zhao(seed):
    train, g_train, _, _, pred, pred_g = _data(seed + 30, n_attrs=8)
    pred[:, 3] = 0  # never predicted: skipped in the sum, counted in |O|
    train[:, 5] = 0
    train[:10, 5] = 1
    g_train[:10] = [0, 1] * 5  # train ratio exactly 0.5
    expected = zhao_reference(train, g_train, pred, pred_g)
    r = bias_amp(train, g_train, pred, pred_g, variant="reference", min_group_size=1)
    assert r.value == pytest.approx(expected, abs=TOL)
    paper = bias_amp(train, g_train, pred, pred_g, min_group_size=1)
    # The paper variant leaves the never-predicted attribute out of |O|.
    assert paper.value == pytest.approx(expected * 8 / 7, abs=TOL)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_groups", [2, 3])
@pytest.mark.parametrize("sizes", [(1, 1), (1, 3), (2, 2)])
@pytest.mark.parametrize("min_count", [1, 3])
def test_multi_mals_paper_matches_brute_force(seed, n_groups, sizes, min_count):
    train, g_train, test, g_test, pred, pred_g = _data(seed + 40, n_groups=n_groups)
    value, var, signed = paper_mals(train, g_train, test, pred, pred_g, n_groups, *sizes,
                                    min_count)
    r = multi_mals(train, g_train, test, g_test, pred, pred_g, min_size=sizes[0],
                   max_size=sizes[1], min_count=min_count, min_group_size=1)
    assert r.value == pytest.approx(value, abs=TOL)
    assert r.stats["variance"] == pytest.approx(var, abs=TOL)
    assert r.stats["signed_mean"] == pytest.approx(signed, abs=TOL)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_groups", [2, 3])
@pytest.mark.parametrize("direction", ["G->M", "M->G"])
@pytest.mark.parametrize("sizes", [(1, 2), (1, 4)])
def test_multi_directional_paper_matches_brute_force(seed, n_groups, direction, sizes):
    train, g_train, test, g_test, pred, pred_g = _data(seed + 50, n_groups=n_groups)
    value, var, signed = paper_directional(train, g_train, test, g_test, pred, pred_g,
                                           n_groups, direction, *sizes, 2)
    r = multi_directional(train, g_train, test, g_test, pred, pred_g, direction=direction,
                          min_size=sizes[0], max_size=sizes[1], min_count=2, min_group_size=1)
    assert r.value == pytest.approx(value, abs=TOL)
    assert r.stats["variance"] == pytest.approx(var, abs=TOL)
    assert r.stats["signed_mean"] == pytest.approx(signed, abs=TOL)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("direction", ["G->M", "M->G"])
def test_directional_bias_amp_paper_is_wang_with_test_baseline(seed, direction):
    """Wang & Russakovsky's Δ uses the test ground truth and y = 1[·] over all images."""
    train, g_train, test, g_test, pred, pred_g = _data(seed + 60, n_groups=3)
    n = len(train)
    expected = []
    for t in range(train.shape[1]):
        for a in range(3):
            y = ((g_train == a) & (train[:, t] == 1)).sum() / n > (g_train == a).mean() * (
                train[:, t] == 1).mean()
            if direction == "G->M":
                d = pred[g_test == a, t].mean() - test[g_test == a, t].mean()
            else:
                rows = test[:, t] == 1
                d = (pred_g[rows] == a).mean() - (g_test[rows] == a).mean()
            expected.append(d if y else -d)
    r = directional_bias_amp(train, g_train, test, g_test, pred, pred_g, direction=direction,
                             min_group_size=1)
    assert r.value == pytest.approx(np.mean(expected), abs=TOL)
