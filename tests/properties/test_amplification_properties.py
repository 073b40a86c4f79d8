"""Hypothesis properties of the amplification indicators.

* Perfect predictions on a test set equal to the training set give 0 (every indicator,
  both variants).
* Permuting images (rows), renaming or permuting attributes (columns), and relabelling the
  groups change no number.
* Several identical prediction sets give the single-run numbers with zero spread.
* Bitset and itemset counting (dense tables, binary search, byte keys) agree with a
  brute-force count.
* A short table is the head of the full table; cached and cold calls agree.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_fairness.errors import InsufficientDataError
from pytest_fairness.indicators import amplification as amp
from pytest_fairness.indicators.amplification import (
    bias_amp,
    directional_bias_amp,
    multi_directional,
    multi_mals,
)

SETTINGS = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
KEYS = ("amplification", "signed_mean", "variance", "n_combinations")


@st.composite
def datasets(draw, n_groups=None):
    n_attrs = draw(st.integers(2, 5))
    g = draw(st.integers(2, 3)) if n_groups is None else n_groups
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    n_train, n_test = draw(st.integers(12, 40)), draw(st.integers(12, 40))
    g_train = np.concatenate([np.arange(g), rng.integers(0, g, n_train - g)])
    g_test = np.concatenate([np.arange(g), rng.integers(0, g, n_test - g)])
    density = draw(st.floats(0.2, 0.6))
    train = (rng.random((n_train, n_attrs)) < density).astype(int)
    test = (rng.random((n_test, n_attrs)) < density).astype(int)
    train[0] = 1  # at least one label everywhere, and every attribute in both splits
    test[0] = 1
    pred = np.where(rng.random(test.shape) < 0.2, 1 - test, test)
    pred_g = np.where(rng.random(n_test) < 0.2, rng.integers(0, g, n_test), g_test)
    return train, g_train, test, g_test, pred, pred_g


CALLS = {
    "bias_amp": lambda tr, gtr, te, gte, p, pg, **kw: bias_amp(tr, gtr, p, pg, **kw),
    "directional_gm": lambda *a, **kw: directional_bias_amp(*a, direction="G->M", **kw),
    "directional_mg": lambda *a, **kw: directional_bias_amp(*a, direction="M->G", **kw),
    "multi_mals": lambda *a, **kw: multi_mals(*a, max_size=3, **kw),
    "multi_gm": lambda *a, **kw: multi_directional(*a, direction="G->M", max_size=3, **kw),
    "multi_mg": lambda *a, **kw: multi_directional(*a, direction="M->G", max_size=3, **kw),
}


def _stats(result):
    return {k: result.stats[k] for k in KEYS}


def _close(a, b):
    assert a.keys() == b.keys()
    for k in a:
        assert a[k] == pytest.approx(b[k], abs=1e-12, nan_ok=True), k


def _call(name, data, **kwargs):
    try:
        return CALLS[name](*data, min_group_size=1, **kwargs)
    except InsufficientDataError:
        return None


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("variant", ["paper", "reference"])
@SETTINGS
@given(data=datasets())
def test_perfect_predictions_on_the_training_distribution_give_zero(name, variant, data):
    train, g_train, _, _, _, _ = data
    if variant == "reference" and name == "bias_amp" and len(set(g_train)) != 2:
        return
    r = _call(name, (train, g_train, train, g_train, train, g_train), variant=variant)
    assert r is not None
    assert r.value == 0.0
    assert r.stats["variance"] == 0.0
    assert r.stats["signed_mean"] == 0.0


@pytest.mark.parametrize("name", sorted(CALLS))
@SETTINGS
@given(data=datasets(), seed=st.integers(0, 1000))
def test_row_permutation_changes_nothing(name, data, seed):
    train, g_train, test, g_test, pred, pred_g = data
    rng = np.random.default_rng(seed)
    a, b = rng.permutation(len(train)), rng.permutation(len(test))
    before = _call(name, data)
    after = _call(name, (train[a], g_train[a], test[b], g_test[b], pred[b], pred_g[b]))
    assert (before is None) == (after is None)
    if before is not None:
        _close(_stats(before), _stats(after))


@pytest.mark.parametrize("name", sorted(CALLS))
@SETTINGS
@given(data=datasets(), seed=st.integers(0, 1000))
def test_renaming_and_permuting_attributes_changes_nothing(name, data, seed):
    train, g_train, test, g_test, pred, pred_g = data
    n_attrs = train.shape[1]
    perm = np.random.default_rng(seed).permutation(n_attrs)
    names = [f"attr{i}" for i in range(n_attrs)]
    before = _call(name, data, attribute_names=names)
    after = _call(name, (train[:, perm], g_train, test[:, perm], g_test, pred[:, perm], pred_g),
                  attribute_names=[names[i] for i in perm])
    if before is None:
        assert after is None
        return
    _close(_stats(before), _stats(after))

    def cells(r):
        return sorted((c["group"], c["attributes"], round(c["delta"], 12))
                      for c in r.tables["cells"] if c["delta"] is not None)

    assert cells(before) == cells(after)


@pytest.mark.parametrize("name", sorted(CALLS))
@SETTINGS
@given(data=datasets(), seed=st.integers(0, 1000))
def test_relabelling_groups_changes_nothing(name, data, seed):
    """Any bijection of group labels, including one that changes their sorted order."""
    train, g_train, test, g_test, pred, pred_g = data
    k = int(max(g_train.max(), g_test.max())) + 1
    perm = np.random.default_rng(seed).permutation(k)
    names = np.array([f"group-{chr(ord('z') - int(p))}" for p in perm])
    before = _call(name, data)
    after = _call(name, (train, names[g_train], test, names[g_test], pred, names[pred_g]))
    assert (before is None) == (after is None)
    if before is not None:
        _close(_stats(before), _stats(after))
        by_group = {names[g]: before.group(g).value for g in range(k)}
        for g in after.groups:
            assert g.value == pytest.approx(by_group[g.group], abs=1e-12, nan_ok=True)


@pytest.mark.parametrize("name", sorted(CALLS))
@settings(max_examples=6, deadline=None)
@given(data=datasets())
def test_identical_runs_have_no_spread(name, data):
    train, g_train, test, g_test, pred, pred_g = data
    single = _call(name, data)
    if single is None:
        return
    runs = _call(name, (train, g_train, test, g_test, [pred, pred, pred], [pred_g] * 3))
    _close(_stats(single), _stats(runs))
    assert runs.stats["amplification_std"] == pytest.approx(0.0, abs=1e-15)
    assert runs.intervals["amplification"] == pytest.approx((single.value, single.value),
                                                            abs=1e-12)


@SETTINGS
@given(data=datasets(), max_size=st.integers(1, 4), n_groups=st.integers(1, 4))
def test_counting_strategies_agree_with_brute_force(data, max_size, n_groups):
    x = data[0].astype(bool)
    codes = np.arange(len(x)) % n_groups
    sizes = list(range(1, max_size + 1))
    table = amp._binomials(x.shape[1], max_size)
    subsets = amp._subsets(x, sizes, "x", table)
    wide = amp._subsets(x, sizes, "x", None)  # byte keys
    combos = amp._Combos({s: amp._decode(np.unique(subsets[s].keys), s, table)
                          for s in sizes if len(subsets[s].keys)}, x.shape[1], table)
    brute = np.array([[x[codes == g][:, list(m)].all(axis=1).sum() for g in range(n_groups)]
                      for m in combos.items()]).reshape(len(combos), n_groups)
    bits = amp._Counter(amp._Matrix(x).use(table), "x", combos=combos, bitsets=True).per_group(
        codes, n_groups)
    enum = amp._Counter(amp._Matrix(x).use(table), "x", combos=combos).per_group(
        codes, n_groups)
    searched = np.concatenate([
        amp._searched_counts(combos.keys(s), subsets[s], codes, n_groups) for s in combos.sizes])
    by_bytes = np.concatenate([
        amp._searched_counts(amp._keys(combos.by_size[s], None), wide[s], codes, n_groups)
        for s in combos.sizes])
    for counts in (bits, enum, searched, by_bytes):
        np.testing.assert_array_equal(counts, brute)


@pytest.mark.parametrize("name", sorted(CALLS))
@SETTINGS
@given(data=datasets(), rows=st.integers(0, 12))
def test_a_short_table_is_the_head_of_the_full_table(name, data, rows):
    """Partition-selected rows equal the full sort's first rows, ties included."""
    full = _call(name, data, table_rows=None)
    if full is None:
        return
    short = _call(name, data, table_rows=rows)
    assert short.tables["cells"] == full.tables["cells"][:rows]
    _close(_stats(short), _stats(full))
    noted = [n for n in full.notes if n.startswith("most amplified")]
    assert noted == [n for n in short.notes if n.startswith("most amplified")]


@pytest.mark.parametrize("name", sorted(CALLS))
@SETTINGS
@given(data=datasets())
def test_cached_and_cold_calls_agree(name, data):
    warm_up = _call(name, data)
    warm = _call(name, data)
    amp.clear_cache()
    cold = _call(name, data)
    if cold is None:
        assert warm_up is None and warm is None
        return
    _close(_stats(warm), _stats(cold))
    assert warm.tables == cold.tables and warm.notes == cold.notes
