"""Unit tests of the bias amplification indicators (seed 001, Zhao 2017, Wang 2021)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pytest_fairness import fairness
from pytest_fairness.errors import (
    FairnessConfigError,
    FairnessViolation,
    InsufficientDataError,
    InvalidDataError,
)
from pytest_fairness.indicators import amplification as amp
from pytest_fairness.indicators.amplification import (
    bias_amp,
    directional_bias_amp,
    multi_directional,
    multi_mals,
)
from pytest_fairness.results import IndicatorResult

NAMES = ["unloading", "indoors", "outdoors"]


def imsitu():
    """Seed 001's imSitu example in miniature.

    Men unload outdoors (4), are indoors doing other things (4) and once unload indoors;
    women unload indoors (3). ``unloading`` and ``indoors`` each skew male (5 of 8), the pair
    {unloading, indoors} skews female (3 of 4). The model predicts the labels exactly but
    calls the one man unloading indoors a woman.
    """
    rows = [[1, 0, 1]] * 4 + [[0, 1, 0]] * 4 + [[1, 1, 0]] * 1 + [[1, 1, 0]] * 3
    groups = ["male"] * 9 + ["female"] * 3
    attrs = pd.DataFrame(rows, columns=NAMES)
    pred_groups = ["male"] * 8 + ["female"] * 4
    return attrs, groups, pred_groups


def cell(result: IndicatorResult, group: str, attributes: str) -> dict:
    rows = [r for r in result.tables["cells"] if r["group"] == group
            and r["attributes"] == attributes]
    assert len(rows) == 1, (group, attributes)
    return rows[0]


# -- seed 001's example -----------------------------------------------------------------------


def test_imsitu_single_attributes_skew_male_and_the_pair_skews_female():
    attrs, groups, pred_groups = imsitu()
    r = multi_mals(attrs, groups, attrs, groups, attrs, pred_groups, min_group_size=1)
    assert cell(r, "male", "unloading")["train"] == pytest.approx(5 / 8)
    assert cell(r, "male", "indoors")["train"] == pytest.approx(5 / 8)
    assert cell(r, "female", "indoors+unloading")["train"] == pytest.approx(3 / 4)
    assert cell(r, "male", "indoors+unloading")["train"] == pytest.approx(1 / 4)


def test_imsitu_multi_mals_sees_the_pair_amplified():
    attrs, groups, pred_groups = imsitu()
    r = multi_mals(attrs, groups, attrs, groups, attrs, pred_groups, min_group_size=1)
    # M: unloading, indoors, outdoors, unloading+outdoors, indoors+unloading.
    assert r.stats["n_combinations"] == 5
    top = r.tables["cells"][0]
    assert (top["group"], top["attributes"], top["delta"]) == ("female", "indoors+unloading",
                                                               pytest.approx(0.25))
    assert cell(r, "male", "unloading")["delta"] == pytest.approx(-1 / 8)
    assert r.value == pytest.approx((1 / 8 + 1 / 8 + 1 / 4) / 5)
    # The signed deltas cancel (seed 001's Advantage 2); |Δ| does not.
    assert r.stats["signed_mean"] == pytest.approx(0.0)
    assert r.stats["variance"] == pytest.approx((2 / 64 + 1 / 16) / 10)
    assert "female × indoors+unloading: Δ=+0.2500" in r.notes[0]
    assert r.group("female").value == pytest.approx(0.25 / 5)
    assert r.group("male").value + r.group("female").value == pytest.approx(r.value)


def test_imsitu_single_attribute_metrics_call_it_deamplified():
    attrs, groups, pred_groups = imsitu()
    single = multi_mals(attrs, groups, attrs, groups, attrs, pred_groups, max_size=1,
                        min_group_size=1)
    assert single.value == pytest.approx(2 / 8 / 3)
    assert single.stats["signed_mean"] == pytest.approx(-2 / 8 / 3)
    zhao = bias_amp(attrs, groups, attrs, pred_groups, min_group_size=1)
    assert zhao.value == pytest.approx(-1 / 12)
    assert zhao.stats["amplification"] == zhao.value


def test_imsitu_multi_directional_m_to_g():
    attrs, groups, pred_groups = imsitu()
    r = multi_directional(attrs, groups, attrs, groups, pred_groups=pred_groups,
                          direction="M->G", min_group_size=1)
    assert r.metric == "Multi (M→G)"
    assert r.value == pytest.approx((4 / 8 + 2 / 4) / 10)
    assert cell(r, "female", "indoors+unloading")["delta"] == pytest.approx(0.25)
    assert cell(r, "female", "indoors+unloading")["y"] == 1.0
    assert cell(r, "female", "unloading")["y"] == 1.0  # women here always unload
    assert cell(r, "female", "outdoors")["y"] == 0.0


# -- single-attribute hand computations ---------------------------------------------------------


def test_bias_amp_hand_computed_with_signs():
    # attribute 0: train 3 of 4 in group a; predictions 3 of 3 in a  -> +0.25 (amplified)
    # attribute 1: train 2 of 3 in b; predictions 1 of 2 in b -> 1/2 - 2/3 (reduced)
    train = [[1, 0], [1, 1], [1, 0], [1, 1], [0, 1]]
    train_g = ["a", "a", "a", "b", "b"]
    pred = [[1, 1], [1, 0], [1, 0], [0, 1]]
    pred_g = ["a", "a", "a", "b"]
    r = bias_amp(train, train_g, pred, pred_g, min_group_size=1)
    d0 = 1.0 - 3 / 4
    d1 = 1 / 2 - 2 / 3
    assert r.value == pytest.approx((d0 + d1) / 2)
    assert r.stats["abs_mean"] == pytest.approx((abs(d0) + abs(d1)) / 2)
    assert r.stats["variance"] == pytest.approx(np.var([d0, 0, 0, d1]))
    assert r.group("a").value == pytest.approx(d0 / 2)
    assert r.group("b").value == pytest.approx(d1 / 2)
    assert r.higher_is_better is False


def test_bias_amp_never_predicted_attribute_is_left_out_and_noted():
    train = [[1, 1], [1, 1], [1, 0]]
    r = bias_amp(train, [0, 0, 1], [[1, 0], [1, 0]], [0, 0], min_group_size=1)
    assert r.value == pytest.approx(1.0 - 2 / 3)
    assert "1 combination(s) were never predicted" in r.notes[0]
    ref = bias_amp(train, [0, 0, 1], [[1, 0], [1, 0]], [0, 0], variant="reference",
                   min_group_size=1)
    assert ref.value == pytest.approx((1.0 - 2 / 3) / 2)


def test_directional_g_to_m_hand_computed():
    train = [[1, 0], [1, 1], [0, 1], [0, 0]]
    groups = [0, 0, 1, 1]
    test = [[1, 0], [1, 0], [0, 1], [0, 0]]
    pred = [[1, 0], [0, 0], [1, 1], [0, 0]]
    r = directional_bias_amp(train, groups, test, groups, pred, direction="G->M",
                             min_group_size=1)
    # y: attr0 with g0 (1/2 > 1/2*1/2) -> 1, g1 -> 0; attr1: P(g,a)=1/4 = 1/2*1/2 -> 0.
    # Δ(g0,a0) = 1/2 - 1 ; Δ(g1,a0) = 1/2 - 0 ; Δ(g0,a1) = 0 - 0 ; Δ(g1,a1) = 1/2 - 1/2
    expected = [(-0.5), -(0.5), -(0.0), -(0.0)]
    assert r.value == pytest.approx(np.mean(expected))
    assert r.stats["abs_mean"] == pytest.approx(0.25)
    ref = directional_bias_amp(train, groups, test, groups, pred, direction="G->M",
                               variant="reference", min_group_size=1)
    # Reference: y = sign, 0 at exact independence (attribute 1): those cells add 0.
    assert ref.value == pytest.approx(np.mean([-0.5, -0.5, 0.0, 0.0]))


def test_directional_m_to_g_hand_computed_positive():
    train = [[1], [1], [1], [0]]
    train_g = ["w", "w", "m", "m"]
    test = [[1], [1], [1], [1]]
    test_g = ["w", "w", "m", "m"]
    pred_g = ["w", "w", "w", "m"]
    r = directional_bias_amp(train, train_g, test, test_g, pred_groups=pred_g,
                             direction="M→G", min_group_size=1)
    # P(ŵ|a) - P(w|a) = 3/4 - 1/2 with y(w)=1; m: 1/4 - 1/2 with y(m)=0 -> -(-1/4)
    assert r.value == pytest.approx(0.25)
    assert r.params["direction"] == "M->G"


def test_threshold_binarises_scores():
    attrs, groups, pred_groups = imsitu()
    scores = attrs.to_numpy() * 0.9 + 0.05
    a = multi_mals(attrs, groups, attrs, groups, scores, pred_groups, threshold=0.5,
                   min_group_size=1)
    b = multi_mals(attrs, groups, attrs, groups, attrs, pred_groups, min_group_size=1)
    assert a.value == b.value
    per_attr = multi_mals(attrs, groups, attrs, groups, scores, pred_groups,
                          threshold=[0.5, 0.5, 0.99], min_group_size=1)
    assert per_attr.value != a.value


def test_runs_report_mean_and_spread():
    attrs, groups, pred_groups = imsitu()
    honest = list(groups)
    r1 = multi_mals(attrs, groups, attrs, groups, attrs, pred_groups, min_group_size=1)
    r2 = multi_mals(attrs, groups, attrs, groups, attrs, honest, min_group_size=1)
    both = multi_mals(attrs, groups, attrs, groups, [attrs.to_numpy()] * 2,
                      [pred_groups, honest], min_group_size=1)
    assert r2.value == 0.0
    assert both.value == pytest.approx((r1.value + r2.value) / 2)
    assert both.stats["runs"] == 2
    assert both.stats["amplification_std"] == pytest.approx(r1.value / 2)
    half = 1.96 * (r1.value / 2) / math.sqrt(2)
    assert both.intervals["amplification"] == pytest.approx((both.value - half,
                                                             both.value + half))
    assert [row["amplification"] for row in both.tables["runs"]] == pytest.approx(
        [r1.value, r2.value])
    assert both.group("female").interval is not None


def test_runs_as_3d_array_share_one_group_vector():
    attrs, groups, pred_groups = imsitu()
    stacked = np.stack([attrs.to_numpy()] * 3)
    r = multi_directional(attrs, groups, attrs, groups, stacked, direction="G->M",
                          min_group_size=1)
    assert r.stats["runs"] == 3
    assert r.stats["amplification_std"] == 0.0


def test_min_count_and_sizes_filter_combinations():
    attrs, groups, pred_groups = imsitu()
    pairs = multi_mals(attrs, groups, attrs, groups, attrs, pred_groups, min_size=2,
                       min_group_size=1)
    assert {r["attributes"] for r in pairs.tables["cells"]} == {"indoors+unloading",
                                                                "outdoors+unloading"}
    common = multi_mals(attrs, groups, attrs, groups, attrs, pred_groups, min_count=5,
                        min_group_size=1)
    assert {r["attributes"] for r in common.tables["cells"]} == {"unloading", "indoors"}


def test_reference_m_is_exact_label_sets():
    attrs, groups, pred_groups = imsitu()
    r = multi_mals(attrs, groups, attrs, groups, attrs, pred_groups, variant="reference",
                   min_group_size=1)
    # Exact training label sets: {unloading, outdoors}, {indoors}, {unloading, indoors}.
    assert r.stats["n_combinations"] == 3
    assert r.value == 0.0  # two groups: threshold 1/(|G|-1) = 1
    assert any("every Δ is 0" in note for note in r.notes)


def test_one_hot_groups_match_labels():
    attrs, groups, pred_groups = imsitu()
    one_hot = np.array([[g == "female", g == "male"] for g in groups], dtype=int)
    pred_hot = np.array([[g == "female", g == "male"] for g in pred_groups], dtype=int)
    a = multi_mals(attrs, one_hot, attrs, one_hot, attrs, pred_hot, min_group_size=1)
    b = multi_mals(attrs, groups, attrs, groups, attrs, pred_groups, min_group_size=1)
    assert a.value == b.value and a.stats["variance"] == b.stats["variance"]


def test_result_is_gateable_and_round_trips():
    attrs, groups, pred_groups = imsitu()
    r = multi_mals(attrs, groups, attrs, groups, attrs, pred_groups, min_group_size=1)
    fairness.check(r, max_amplification=0.2, max_variance=0.01)
    with pytest.raises(FairnessViolation):
        fairness.check(r, max_amplification=0.05)
    with pytest.raises(FairnessViolation):
        fairness.check(r, max_variance=0.001)
    assert IndicatorResult.from_dict(r.to_dict()) == r


def test_attribute_names_keyword_and_defaults():
    attrs, groups, pred_groups = imsitu()
    named = multi_mals(attrs.to_numpy(), groups, attrs.to_numpy(), groups, attrs.to_numpy(),
                       pred_groups, attribute_names=["u", "i", "o"], min_group_size=1)
    assert named.tables["cells"][0]["attributes"] == "i+u"
    plain = multi_mals(attrs.to_numpy(), groups, attrs.to_numpy(), groups, attrs.to_numpy(),
                       pred_groups, min_group_size=1)
    assert plain.tables["cells"][0]["attributes"] == "0+1"


def test_small_groups_are_marked_excluded():
    attrs, groups, pred_groups = imsitu()
    r = multi_mals(attrs, groups, attrs, groups, attrs, pred_groups, min_group_size=5)
    assert r.group("female").excluded and not r.group("male").excluded
    assert any("below min_group_size=5" in note for note in r.notes)


def test_bitset_and_enumeration_counts_agree():
    rng = np.random.default_rng(0)
    x = rng.random((300, 9)) < 0.35
    codes = rng.integers(0, 3, 300)
    table = amp._binomials(9, 3)
    combos = amp._Combos({1: np.arange(9)[:, None], 2: np.array([[0, 1], [2, 5], [3, 8]]),
                          3: np.array([[0, 1, 2], [1, 4, 7]])}, 9, table)
    brute = np.array([[(x[codes == g][:, list(m)].all(axis=1)).sum() for g in range(3)]
                      for m in combos.items()])
    bits = amp._Counter(amp._Matrix(x).use(table), "x", combos=combos, bitsets=True)
    assert not bits.sizes and not bits.matrix.subsets  # bitsets only
    np.testing.assert_array_equal(bits.per_group(codes, 3), brute)
    enum = amp._Counter(amp._Matrix(x).use(table), "x")
    enum.matrix.enumerate([1, 2, 3], "x")
    enum.plan(combos)
    assert enum.sizes == {1, 2, 3}
    assert enum.matrix.dense(3, codes, 3) is not None  # C(9, 3) x 3 bins: a dense table
    np.testing.assert_array_equal(enum.per_group(codes, 3), brute)
    # the binary-search path, used when the dense table would be too large
    for s in (1, 2, 3):
        block = amp._searched_counts(combos.keys(s), enum.matrix.subsets[s], codes, 3)
        rows = [i for i, m in enumerate(combos.items()) if len(m) == s]
        np.testing.assert_array_equal(block, brute[rows])


def test_lexicographic_ranks_number_every_combination_densely():
    from itertools import combinations

    for n in (1, 2, 5, 8):
        table = amp._binomials(n, n)
        for s in range(1, n + 1):
            every = np.array(list(combinations(range(n), s)), dtype=np.int64)
            keys = amp._keys(every, table)
            np.testing.assert_array_equal(keys, np.arange(math.comb(n, s)))
            np.testing.assert_array_equal(amp._decode(keys, s, table), every)
    assert amp._binomials(2**40, 3) is None  # C(2^40, 3) needs more than 62 bits


def test_subset_keys_equal_keys_of_the_subsets():
    rng = np.random.default_rng(3)
    x = rng.random((50, 7)) < 0.5
    table = amp._binomials(7, 4)
    from itertools import combinations

    for wide in (False, True):
        subsets = amp._subsets(x, [1, 2, 3, 4], "x", None if wide else table)
        for s, sub in subsets.items():
            want = [(r, m) for r in range(50)
                    for m in combinations(np.flatnonzero(x[r]).tolist(), s)]
            assert sorted(sub.rows.tolist()) == sorted(r for r, _ in want)
            got = sorted(zip(sub.rows.tolist(), map(tuple, amp._decode(
                sub.keys, s, None if wide else table).tolist())))
            assert got == sorted(want)


def test_wide_keys_fall_back_to_bytes():
    combos = np.array([[0, 5, 9], [1, 2, 3], [0, 5, 9]], dtype=np.int64)
    keys = amp._keys(combos, None)
    assert keys.dtype.kind == "V"
    unique = np.unique(keys)
    np.testing.assert_array_equal(amp._decode(unique, 3, None), [[0, 5, 9], [1, 2, 3]])


@pytest.mark.parametrize("path", ["searched", "bytes", "bitsets"])
@pytest.mark.parametrize("variant", ["paper", "reference"])
def test_counting_paths_give_the_same_results(monkeypatch, path, variant):
    """Dense tables (the default here), binary search, byte keys and bitsets agree."""
    rng = np.random.default_rng(11)
    train = (rng.random((120, 7)) < 0.4).astype(int)
    test = (rng.random((100, 7)) < 0.4).astype(int)
    pred = np.where(rng.random(test.shape) < 0.15, 1 - test, test)
    g_train, g_test = rng.integers(0, 3, 120), rng.integers(0, 3, 100)
    pred_g = np.where(rng.random(100) < 0.2, rng.integers(0, 3, 100), g_test)
    args = (train, g_train, test, g_test, pred, pred_g)

    def run():
        return [multi_mals(*args, max_size=4, min_count=2, variant=variant, min_group_size=1),
                multi_directional(*args, direction="G->M", max_size=4, variant=variant,
                                  min_group_size=1),
                multi_directional(*args, direction="M->G", max_size=4, variant=variant,
                                  min_group_size=1)]

    amp.clear_cache()
    dense = run()
    amp.clear_cache()
    if path == "searched":
        monkeypatch.setattr(amp, "DENSE_BINS", 0)
    elif path == "bytes":
        monkeypatch.setattr(amp, "_binomials", lambda n, top: None)
    else:
        def bitsets_only(self, combos, *, bitsets=False):
            self.combos, self.sizes = combos, set()  # count every size with bitsets

        monkeypatch.setattr(amp._Counter, "plan", bitsets_only)
    other = run()
    for a, b in zip(dense, other):
        assert a.stats == pytest.approx(b.stats, abs=1e-12, nan_ok=True)
        assert a.tables == b.tables
        assert [g.value for g in a.groups] == pytest.approx([g.value for g in b.groups],
                                                           nan_ok=True)


# -- matrix cache -----------------------------------------------------------------------------


def _random_split(seed=5, n=80, n_attrs=6):
    rng = np.random.default_rng(seed)
    train = rng.random((n, n_attrs)) < 0.4
    test = rng.random((n, n_attrs)) < 0.4
    pred = test ^ (rng.random(test.shape) < 0.15)
    g_train, g_test = rng.integers(0, 2, n), rng.integers(0, 2, n)
    return train, g_train, test, g_test, pred, np.where(rng.random(n) < 0.2, 1 - g_test,
                                                        g_test)


def _numbers(result):
    return (result.value, dict(result.stats), result.tables, [g.value for g in result.groups])


def test_cache_finds_equal_matrices_by_content():
    amp.clear_cache()
    x = np.random.default_rng(0).random((30, 5)) < 0.5
    first = amp._matrix(x)
    assert amp._matrix(x.copy()) is first  # another object, same cells
    assert amp._matrix(np.asfortranarray(x)) is first  # another layout, same cells
    assert first.x is not x  # a private copy
    changed = x.copy()
    changed[3, 2] ^= True
    assert amp._matrix(changed) is not first


def test_mutating_an_input_between_calls_gives_fresh_numbers():
    amp.clear_cache()
    train, g_train, test, g_test, pred, pred_g = _random_split()
    kwargs = {"max_size": 3, "min_group_size": 1}
    multi_mals(train, g_train, test, g_test, pred, pred_g, **kwargs)
    multi_directional(train, g_train, test, g_test, pred, direction="G->M", **kwargs)
    train[:10] = ~train[:10]  # in place, same array objects
    pred[5:20, 1] = True
    warm = [multi_mals(train, g_train, test, g_test, pred, pred_g, **kwargs),
            multi_directional(train, g_train, test, g_test, pred, direction="G->M", **kwargs)]
    amp.clear_cache()
    cold = [multi_mals(train, g_train, test, g_test, pred, pred_g, **kwargs),
            multi_directional(train, g_train, test, g_test, pred, direction="G->M", **kwargs)]
    for w, c in zip(warm, cold):
        assert _numbers(w) == _numbers(c)


def test_second_call_shares_the_first_calls_tables():
    amp.clear_cache()
    train, g_train, test, g_test, pred, pred_g = _random_split(seed=8)
    multi_mals(train, g_train, test, g_test, pred, pred_g, max_size=2, min_group_size=1)
    entries = [e for _, e in amp._CACHE]
    assert len(entries) == 3  # train, test, pred
    assert entries[0].subsets and entries[1].subsets  # M was found from their subsets
    r = multi_directional(train, g_train, test, g_test, pred, direction="G->M", max_size=2,
                          min_group_size=1)
    assert [e for _, e in amp._CACHE] == entries  # no new matrix
    amp.clear_cache()
    assert _numbers(r) == _numbers(multi_directional(
        train, g_train, test, g_test, pred, direction="G->M", max_size=2, min_group_size=1))


def test_cache_is_bounded(monkeypatch):
    amp.clear_cache()
    rng = np.random.default_rng(1)
    monkeypatch.setattr(amp, "CACHE_ENTRIES", 2)
    for _ in range(4):
        amp._matrix(rng.random((20, 4)) < 0.5)
    assert len(amp._CACHE) == 2
    monkeypatch.setattr(amp, "CACHE_BYTES", 0)
    newest = amp._matrix(rng.random((20, 4)) < 0.5)
    assert [e for _, e in amp._CACHE] == [newest]  # only the latest survives a tiny budget
    amp.clear_cache()
    assert not amp._CACHE


def test_switching_between_ranks_and_bytes_starts_over():
    x = np.random.default_rng(2).random((40, 6)) < 0.5
    matrix = amp._Matrix(x).use(amp._binomials(6, 2))
    matrix.enumerate([1, 2], "x")
    assert matrix.subsets[2].keys.dtype == np.int64
    matrix.use(amp._binomials(6, 3))  # a larger table keeps the ranks
    assert 2 in matrix.subsets and matrix.table.shape[1] == 4
    matrix.use(amp._binomials(6, 1))  # a smaller one never shrinks the table
    assert matrix.table.shape[1] == 4
    matrix.use(None)
    assert not matrix.subsets and matrix.table is None
    matrix.enumerate([2], "x")
    assert matrix.subsets[2].keys.dtype.kind == "V"


# -- table rows -------------------------------------------------------------------------------


def test_default_table_keeps_the_largest_cells_and_says_so():
    train, g_train, test, g_test, pred, pred_g = _random_split(seed=4, n=200, n_attrs=9)
    full = multi_mals(train, g_train, test, g_test, pred, pred_g, max_size=3, min_group_size=1,
                      table_rows=None)
    n_cells = len(full.tables["cells"])
    assert n_cells == full.stats["n_cells"] > amp.TABLE_ROWS
    short = multi_mals(train, g_train, test, g_test, pred, pred_g, max_size=3,
                       min_group_size=1)
    assert short.tables["cells"] == full.tables["cells"][:amp.TABLE_ROWS]
    assert any(f"keeps the {amp.TABLE_ROWS} largest |Δ| of {n_cells:,} cells" in note
               for note in short.notes)
    assert not any("largest |Δ| of" in note for note in full.notes)
    assert _numbers(short)[:2] == _numbers(full)[:2]
    most = [n for n in full.notes if n.startswith("most amplified")]
    assert most and most == [n for n in short.notes if n.startswith("most amplified")]


def test_empty_table_still_names_the_most_amplified_cells():
    attrs, groups, pred_groups = imsitu()
    r = multi_mals(attrs, groups, attrs, groups, attrs, pred_groups, min_group_size=1,
                   table_rows=0)
    assert r.tables["cells"] == ()
    assert "female × indoors+unloading: Δ=+0.2500" in r.notes[0]
    assert "keeps the 0 largest |Δ| of 10 cells" in r.notes[1]


@pytest.mark.parametrize("bad", [-1, 1.5, True, "10"])
def test_table_rows_must_be_a_count(bad):
    attrs, groups, pred_groups = imsitu()
    with pytest.raises(FairnessConfigError, match=rf"table_rows must be None .*got "
                                                  rf"table_rows={bad!r}"):
        multi_mals(attrs, groups, attrs, groups, attrs, pred_groups, table_rows=bad)


# -- validation ------------------------------------------------------------------------------


def _args():
    attrs, groups, pred_groups = imsitu()
    return attrs.to_numpy(), groups, attrs.to_numpy(), groups, attrs.to_numpy(), pred_groups


@pytest.mark.parametrize("value", [2, -1])
def test_non_binary_integer_labels(value):
    train, g, test, tg, pred, pg = _args()
    train = train.astype(np.int64)
    train[3, 2] = value
    with pytest.raises(InvalidDataError, match=rf"train_attrs must be a 0/1 matrix, but row 3, "
                                                rf"column 2 is {value}"):
        multi_mals(train, g, test, tg, pred, pg)


def test_non_binary_ground_truth():
    train, g, test, tg, pred, pg = _args()
    train = train.astype(float)
    train[2, 1] = 0.5
    with pytest.raises(InvalidDataError, match=r"train_attrs must be a 0/1 matrix.*row 2, "
                                               r"column 1 is 0\.5"):
        multi_mals(train, g, test, tg, pred, pg)


def test_non_binary_predictions_suggest_threshold():
    train, g, test, tg, pred, pg = _args()
    with pytest.raises(InvalidDataError, match="pass threshold="):
        multi_mals(train, g, test, tg, pred * 0.7, pg)


def test_nan_values():
    train, g, test, tg, pred, pg = _args()
    test = test.astype(float)
    test[0, 0] = np.nan
    with pytest.raises(InvalidDataError, match=r"test_attrs has a non-finite value nan at row 0"):
        multi_mals(train, g, test, tg, pred, pg)


def test_non_numeric_matrix():
    train, g, test, tg, pred, pg = _args()
    with pytest.raises(InvalidDataError, match="must hold numbers"):
        multi_mals(train.astype(str), g, test, tg, pred, pg)


def test_not_a_matrix():
    train, g, test, tg, pred, pg = _args()
    with pytest.raises(InvalidDataError, match=r"train_attrs must be a 2-D 0/1 matrix"):
        multi_mals(train[:, 0], g, test, tg, pred, pg)


def test_empty_matrix():
    train, g, test, tg, pred, pg = _args()
    with pytest.raises(InsufficientDataError, match=r"test_attrs has shape \(0, 3\)"):
        multi_mals(train, g, test[:0], tg, pred, pg)


def test_mismatched_columns():
    train, g, test, tg, pred, pg = _args()
    with pytest.raises(InvalidDataError, match="pred_attrs has 2 attribute columns but "
                                               "train_attrs has 3"):
        multi_mals(train, g, test, tg, pred[:, :2], pg)


def test_mismatched_dataframe_columns():
    attrs, groups, pred_groups = imsitu()
    with pytest.raises(InvalidDataError, match="test_attrs has columns"):
        multi_mals(attrs, groups, attrs[NAMES[::-1]], groups, attrs, pred_groups)


def test_mismatched_rows():
    train, g, test, tg, pred, pg = _args()
    with pytest.raises(InvalidDataError, match="pred_attrs has 11 rows but test_attrs has 12"):
        multi_mals(train, g, test, tg, pred[1:], pg)


def test_mismatched_group_length():
    train, g, test, tg, pred, pg = _args()
    with pytest.raises(InvalidDataError, match="lengths differ"):
        multi_mals(train, g[1:], test, tg, pred, pg)


def test_single_group():
    train, g, test, tg, pred, pg = _args()
    with pytest.raises(InsufficientDataError, match="needs at least two"):
        multi_mals(train, ["x"] * 12, test, ["x"] * 12, pred, ["x"] * 12)


def test_group_without_test_rows():
    train, g, test, tg, pred, pg = _args()
    with pytest.raises(InsufficientDataError, match=r"group 'female' has no rows in test_groups"):
        multi_mals(train, g, test, ["male"] * 12, pred, pg)


def test_one_hot_group_column_without_rows():
    train, g, test, tg, pred, pg = _args()
    one_hot = np.zeros((12, 3), dtype=int)
    one_hot[:, 0] = [x == "male" for x in g]
    one_hot[:, 1] = [x == "female" for x in g]
    with pytest.raises(InsufficientDataError, match=r"column\(s\) \[2\] have no rows"):
        multi_mals(train, one_hot, test, tg, pred, pg)


def test_unknown_predicted_group():
    train, g, test, tg, pred, pg = _args()
    with pytest.raises(InvalidDataError, match="predicts group 'other'"):
        multi_mals(train, g, test, tg, pred, ["other"] + pg[1:])


def test_missing_inputs_for_direction():
    train, g, test, tg, pred, pg = _args()
    with pytest.raises(FairnessConfigError, match="needs pred_attrs"):
        multi_directional(train, g, test, tg, pred_groups=pg, direction="G->M")
    with pytest.raises(FairnessConfigError, match="needs pred_groups"):
        directional_bias_amp(train, g, test, tg, pred, direction="M->G")


def test_bad_direction():
    train, g, test, tg, pred, pg = _args()
    with pytest.raises(FairnessConfigError, match=r"direction='up'"):
        multi_directional(train, g, test, tg, pred, pg, direction="up")


@pytest.mark.parametrize("kwargs,fragment", [
    ({"min_size": 0}, r"min_size must be an int >= 1; got min_size=0"),
    ({"max_size": 1.5}, r"max_size=1\.5"),
    ({"min_count": True}, r"min_count=True"),
    ({"min_size": 3, "max_size": 2}, r"max_size=2 is below min_size=3"),
    ({"threshold": "high"}, r"threshold='high'"),
    ({"threshold": [0.5, 0.5]}, r"one number per attribute \(3\)"),
    ({"attribute_names": ["a", "b"]}, r"attribute_names has 2 names"),
    ({"attribute_names": ["a", "a", "b"]}, r"\['a'\] appear more than once"),
    ({"variant": "latest"}, r"variant='latest'"),
    ({"min_group_size": 0}, r"min_group_size must be >= 1"),
])
def test_bad_arguments(kwargs, fragment):
    train, g, test, tg, pred, pg = _args()
    with pytest.raises(FairnessConfigError, match=fragment):
        multi_mals(train, g, test, tg, pred, pg, **kwargs)


def test_reference_bias_amp_needs_two_groups():
    train, g, test, tg, pred, pg = _args()
    three = ["a", "b", "c"] * 4
    with pytest.raises(FairnessConfigError, match="exactly two groups; got 3"):
        bias_amp(train, three, pred, three, variant="reference")


def test_reference_directional_has_no_min_count():
    train, g, test, tg, pred, pg = _args()
    with pytest.raises(FairnessConfigError, match="min_count=2 has no counterpart"):
        directional_bias_amp(train, g, test, tg, pred, direction="G->M", min_count=2,
                             variant="reference")


def test_no_combination_left():
    train, g, test, tg, pred, pg = _args()
    with pytest.raises(InsufficientDataError, match="no attribute combination of size >= 3"):
        multi_mals(train, g, test, tg, pred, pg, min_size=3)
    with pytest.raises(InsufficientDataError, match="no attribute occurs in at least "
                                                    "min_count=99 training images"):
        bias_amp(train, g, pred, pg, min_count=99)
    with pytest.raises(InsufficientDataError, match="min_count=99 images of both"):
        directional_bias_amp(train, g, test, tg, pred, direction="G->M", min_count=99)


def test_no_labelled_training_image_in_reference():
    train, g, test, tg, pred, pg = _args()
    with pytest.raises(InsufficientDataError, match="no training image has an attribute"):
        directional_bias_amp(np.zeros_like(train), g, test, tg, pred, direction="G->M",
                             variant="reference")


def test_runs_mismatch():
    train, g, test, tg, pred, pg = _args()
    with pytest.raises(InvalidDataError, match="pred_groups holds 3 runs but pred_attrs holds 2"):
        multi_mals(train, g, test, tg, [pred, pred], [pg, pg, pg])


def test_too_many_subsets(monkeypatch):
    train, g, test, tg, pred, pg = _args()
    monkeypatch.setattr(amp, "MAX_SUBSETS", 10)
    amp.clear_cache()  # enumerated subsets of these matrices may be cached already
    with pytest.raises(FairnessConfigError, match="Pass a smaller max_size"):
        multi_mals(train, g, test, tg, pred, pg)
