"""Hypothesis properties of the amplification indicators.

* Perfect predictions on a test set equal to the training set give 0 (every indicator,
  both variants).
* Permuting images (rows), renaming or permuting attributes (columns), and relabelling the
  groups change no number.
* Several identical prediction sets give the single-run numbers with zero spread.
* M is every combination held often enough, counted by brute force (both variants).
* The table holds the largest |Δ| cells in the documented order; calls keep no state.
"""

from __future__ import annotations

import itertools

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
    """The point estimates (n_bootstrap=0) unless ``kwargs`` ask for replicates: these
    properties are about the numbers, which bootstrap intervals leave alone."""
    try:
        return CALLS[name](*data, min_group_size=1, **{"n_bootstrap": 0, **kwargs})
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
    single = _call(name, data, n_bootstrap=0)
    if single is None:
        return
    # without bootstrap replicates, the interval of several runs is their spread's
    runs = _call(name, (train, g_train, test, g_test, [pred, pred, pred], [pred_g] * 3),
                 n_bootstrap=0)
    _close(_stats(single), _stats(runs))
    assert runs.stats["amplification_std"] == pytest.approx(0.0, abs=1e-15)
    assert runs.intervals["amplification"] == pytest.approx((single.value, single.value),
                                                            abs=1e-12)


@pytest.mark.parametrize("variant", ["paper", "reference"])
@SETTINGS
@given(data=datasets(), max_size=st.integers(1, 4), min_count=st.integers(1, 3))
def test_m_is_every_combination_held_often_enough(variant, data, max_size, min_count):
    train, test = data[0], data[2]

    def held(x, m):
        return int(x[:, list(m)].all(axis=1).sum())

    if variant == "paper":  # every subset of the attributes (there are at most 5)
        candidates = [m for s in range(1, max_size + 1)
                      for m in itertools.combinations(range(train.shape[1]), s)
                      if held(train, m) >= min_count]
    else:  # the exact training label sets
        sets = [tuple(np.flatnonzero(row)) for row in train]
        candidates = [m for m in set(sets) if 1 <= len(m) <= max_size
                      and sets.count(m) >= min_count]
    expected = sum(held(test, m) >= min_count for m in candidates)
    if expected == 0:
        with pytest.raises(InsufficientDataError, match="no attribute combination"):
            multi_mals(*data, max_size=max_size, min_count=min_count, variant=variant,
                       n_bootstrap=0)
        return
    r = multi_mals(*data, max_size=max_size, min_count=min_count, variant=variant,
                   min_group_size=1, n_bootstrap=0)
    assert r.stats["n_combinations"] == expected


@pytest.mark.parametrize("name", sorted(CALLS))
@SETTINGS
@given(data=datasets())
def test_the_table_holds_the_largest_cells_in_order(name, data):
    """At most TABLE_ROWS rows, largest |Δ| first, ties by group, then combination."""
    r = _call(name, data)
    if r is None:
        return
    rows = r.tables["cells"]
    assert len(rows) == min(amp.TABLE_ROWS, int(r.stats["n_cells"]))
    order = {g.group: i for i, g in enumerate(r.groups)}

    def key(row):
        columns = tuple(int(c) for c in row["attributes"].split("+"))
        size = -1.0 if row["delta"] is None else abs(row["delta"])
        return -size, order[int(row["group"])], len(columns), columns

    assert [key(row) for row in rows] == sorted(key(row) for row in rows)
    top = [row for row in rows[:amp.N_NOTED] if row["delta"]]
    noted = [n for n in r.notes if n.startswith("most amplified")]
    assert len(noted) == bool(top)
    for row in top:
        assert f"{row['group']} × {row['attributes']}: Δ={row['delta']:+.4f}" in noted[0]


@pytest.mark.parametrize("name", sorted(CALLS))
@SETTINGS
@given(data=datasets())
def test_calls_keep_no_state(name, data):
    """The same call twice gives the same result, and leaves its inputs as they were.

    With the default 1,000 replicates: the bootstrap's cached plans must keep no state either.
    """
    copies = [np.array(x, copy=True) for x in data]
    first = _call(name, data, n_bootstrap=1000)
    for x, y in zip(copies, data):
        np.testing.assert_array_equal(x, y)
    assert first == _call(name, copies, n_bootstrap=1000)
    assert "value" in first.intervals


@SETTINGS
@given(data=datasets(), seed=st.integers(0, 1000))
def test_multi_directional_interval_survives_relabelling(data, seed):
    """Renamed groups and permuted attributes: same draws, the same linearised interval."""
    train, g_train, test, g_test, pred, pred_g = data
    k = int(max(g_train.max(), g_test.max())) + 1
    rng = np.random.default_rng(seed)
    names = np.array([f"group-{chr(ord('z') - int(p))}" for p in rng.permutation(k)])
    perm = rng.permutation(train.shape[1])
    kwargs = {"n_bootstrap": 100, "seed": 5}
    before = _call("multi_mg", data, **kwargs)
    after = _call("multi_mg", (train[:, perm], names[g_train], test[:, perm], names[g_test],
                               pred[:, perm], names[pred_g]), **kwargs)
    assert (before is None) == (after is None)
    if before is None:
        return
    assert before.params["interval_method"] == after.params["interval_method"] == "linearised"
    assert before.intervals.keys() == after.intervals.keys()
    for key, interval in before.intervals.items():
        assert after.intervals[key] == pytest.approx(interval, abs=1e-12), key
