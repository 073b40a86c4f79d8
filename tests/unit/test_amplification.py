"""Unit tests of the bias amplification indicators (Zhao 2017, Wang 2021, Multi-Attribute 2023)."""

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
    """The imSitu example of "Men Also Do Laundry" (multi-attribute paper) in miniature.

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


# -- the multi-attribute paper's example -----------------------------------------------------


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
    # The signed deltas cancel (the paper's Advantage 2); |Δ| does not.
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
    # without bootstrap replicates, the interval of several runs is their spread's
    kw = {"min_group_size": 1, "n_bootstrap": 0}
    r1 = multi_mals(attrs, groups, attrs, groups, attrs, pred_groups, **kw)
    r2 = multi_mals(attrs, groups, attrs, groups, attrs, honest, **kw)
    both = multi_mals(attrs, groups, attrs, groups, [attrs.to_numpy()] * 2,
                      [pred_groups, honest], **kw)
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


# -- counting, the table, group layouts ---------------------------------------------------------


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


def test_counting_never_enumerates_every_subset_of_a_long_label_set():
    """Three images hold 40 labels (2^40 subsets); only subsets that stay frequent grow."""
    train = np.zeros((23, 40), dtype=int)
    train[:3] = 1
    train[3:13, [0, 1]] = 1
    train[13:, 2] = 1
    groups = [0, 1] * 11 + [0]
    r = multi_mals(train, groups, train, groups, train, groups, min_count=4, min_group_size=1)
    # held by >= 4 images: {0}, {1}, {2} and {0, 1}; every other set only by the three
    assert r.stats["n_combinations"] == 4
    assert {row["attributes"] for row in r.tables["cells"]} == {"0", "1", "2", "0+1"}
    pairs = multi_mals(train, groups, train, groups, train, groups, max_size=2,
                       min_group_size=1)
    assert pairs.stats["n_combinations"] == 40 + 40 * 39 // 2


def test_mutating_an_input_between_calls_gives_fresh_numbers():
    train, g_train, test, g_test, pred, pred_g = _random_split()
    kwargs = {"max_size": 3, "min_group_size": 1}
    multi_mals(train, g_train, test, g_test, pred, pred_g, **kwargs)
    multi_directional(train, g_train, test, g_test, pred, direction="G->M", **kwargs)
    train[:10] = ~train[:10]  # in place, same array objects
    pred[5:20, 1] = True
    again = [multi_mals(train, g_train, test, g_test, pred, pred_g, **kwargs),
             multi_directional(train, g_train, test, g_test, pred, direction="G->M", **kwargs)]
    copies = [x.copy() for x in (train, g_train, test, g_test, pred, pred_g)]
    fresh = [multi_mals(*copies, **kwargs),
             multi_directional(*copies[:5], direction="G->M", **kwargs)]
    for a, b in zip(again, fresh):
        assert _numbers(a) == _numbers(b)
    for x, y in zip(copies, (train, g_train, test, g_test, pred, pred_g)):
        np.testing.assert_array_equal(x, y)  # the calls left their inputs alone


def _every_mals_cell(train, g_train, test, pred, pred_g, max_size):
    """Multi_MALS cells by brute force: (|Δ|, group, size, columns, Δ) for every defined cell."""
    from itertools import combinations

    def has(x, m):
        return x[:, list(m)].all(axis=1)

    cells = []
    for size in range(1, max_size + 1):
        for m in combinations(range(train.shape[1]), size):
            if not has(train, m).any() or not has(test, m).any() or not has(pred, m).any():
                continue
            for g in (0, 1):
                b_train = (g_train[has(train, m)] == g).mean()
                b_pred = (pred_g[has(pred, m)] == g).mean()
                delta = b_pred - b_train if b_train > 1 / 2 else 0.0
                cells.append((abs(delta), g, size, m, delta))
    return cells


def test_table_holds_the_largest_cells_by_a_fixed_rule():
    train, g_train, test, g_test, pred, pred_g = _random_split(seed=4, n=200, n_attrs=9)
    r = multi_mals(train, g_train, test, g_test, pred, pred_g, max_size=3, min_group_size=1)
    cells = _every_mals_cell(train, g_train, test, pred, pred_g, 3)
    assert r.stats["n_cells"] == len(cells) > amp.TABLE_ROWS
    rows = r.tables["cells"]
    assert len(rows) == amp.TABLE_ROWS
    assert f"keeps the {amp.TABLE_ROWS} largest |Δ| of {len(cells):,} cells" in r.notes[-1]
    by_cell = {(str(g), "+".join(map(str, m))): d for _, g, _, m, d in cells}
    for row in rows:
        assert row["delta"] == pytest.approx(by_cell[(row["group"], row["attributes"])],
                                             abs=1e-12)
    largest = sorted((c[0] for c in cells), reverse=True)[:amp.TABLE_ROWS]
    assert [abs(row["delta"]) for row in rows] == pytest.approx(largest, abs=1e-12)

    def key(row):  # ties: group, then combination (size, then columns)
        columns = tuple(int(c) for c in row["attributes"].split("+"))
        return -abs(row["delta"]), int(row["group"]), len(columns), columns

    assert [key(row) for row in rows] == sorted(key(row) for row in rows)
    assert any(n.startswith("most amplified") for n in r.notes)


def test_table_rows_is_not_a_keyword():
    attrs, groups, pred_groups = imsitu()
    with pytest.raises(TypeError, match="table_rows"):
        multi_mals(attrs, groups, attrs, groups, attrs, pred_groups, table_rows=None)


def _three_groups(seed=7, n=150):
    rng = np.random.default_rng(seed)
    g_train, g_test = rng.integers(0, 3, n), rng.integers(0, 3, n)
    train = (rng.random((n, 5)) < 0.3 + 0.1 * g_train[:, None]).astype(int)
    test = (rng.random((n, 5)) < 0.3 + 0.1 * g_test[:, None]).astype(int)
    pred = np.where(rng.random(test.shape) < 0.15, 1 - test, test)
    pred_g = np.where(rng.random(n) < 0.2, rng.integers(0, 3, n), g_test)
    return train, g_train, test, g_test, pred, pred_g


@pytest.mark.parametrize("call", [
    lambda *a, **kw: multi_mals(*a, **kw),
    lambda *a, **kw: multi_directional(*a, direction="G->M", **kw),
    lambda *a, **kw: multi_directional(*a, direction="M->G", **kw),
])
def test_reference_group_layouts(call):
    """Labels and one-hot N × |G| columns (the MBA class's input) evaluate every group; the
    released evaluate script's |G| − 1 columns are read as that script reads them."""
    train, g_train, test, g_test, pred, pred_g = _three_groups()
    eye = np.eye(3, dtype=int)
    kw = {"variant": "reference", "min_group_size": 1}
    labels = call(train, g_train, test, g_test, pred, pred_g, **kw)
    one_hot = call(train, eye[g_train], test, eye[g_test], pred, eye[pred_g], **kw)
    assert _numbers(labels) == _numbers(one_hot)
    assert [g.group for g in labels.groups] == [0, 1, 2]
    released = call(train, eye[g_train][:, 1:], test, eye[g_test][:, 1:], pred,
                    eye[pred_g][:, 1:], **kw)
    assert [g.group for g in released.groups] == [1, 2]
    assert released.stats["n_combinations"] == labels.stats["n_combinations"]
    with pytest.raises(InvalidDataError, match="released evaluate script's layout"):
        call(train, eye[g_train][:, 1:], test, g_test, pred, eye[pred_g][:, 1:], **kw)


def test_a_single_group_column_is_the_released_layout_for_two_groups():
    attrs, groups, pred_groups = imsitu()
    column = np.array([[g == "male"] for g in groups], dtype=int)
    pred_column = np.array([[g == "male"] for g in pred_groups], dtype=int)
    kw = {"variant": "reference", "min_group_size": 1}
    released = multi_directional(attrs, column, attrs, column, pred_groups=pred_column,
                                 direction="M->G", **kw)
    assert [g.group for g in released.groups] == [1]  # the second group only
    labels = multi_directional(attrs, groups, attrs, groups, pred_groups=pred_groups,
                               direction="M->G", **kw)
    assert [g.group for g in labels.groups] == ["female", "male"]
    # M→G with two groups: P(ĝ = 0 | m) = 1 − P(ĝ = 1 | m), so |Δ| is the same in both
    assert released.value == pytest.approx(labels.value, abs=1e-12)
    mals = multi_mals(attrs, column, attrs, column, attrs, pred_column, **kw)
    assert [g.group for g in mals.groups] == [0] and mals.value == 0.0


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
    ({"min_group_size": 0}, r"min_group_size must be an int >= 1; got min_group_size=0"),
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
    from pytest_fairness.indicators import _combos

    monkeypatch.setattr(_combos, "MAX_SUBSETS", 10)
    with pytest.raises(FairnessConfigError, match="Pass a smaller max_size"):
        multi_mals(train, g, test, tg, pred, pg)


# -- the review's findings (min_count, BiasAmp as Multi_MALS) -------------------------------------


def test_min_count_counts_images_of_all_groups_together() -> None:
    """Open question (reported): DESIGN says M holds combinations that 'co-occur with a group
    at least min_count times'; the code counts images with m over all groups together.

    {0, 1} occurs once with each group in train and in test: kept at min_count=2 (total 2),
    although it co-occurs with no single group twice.
    """
    train = np.array([[1, 1], [1, 1], [1, 0], [1, 0], [0, 1], [0, 1]])
    groups = ["a", "b", "a", "a", "b", "b"]
    r = multi_mals(train, groups, train, groups, train, groups, min_size=2, min_count=2,
                   attribute_names=["x", "y"], min_group_size=1)
    assert r.stats["n_combinations"] == 1
    assert {row["attributes"] for row in r.tables["cells"]} == {"x+y"}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bias_amp_is_multi_mals_with_single_attributes(seed: int) -> None:
    """DESIGN §2: single-attribute BiasAmp is the max_size=1 case, signed.

    With every attribute present in the test ground truth, M = O, so Zhao's signed BiasAmp
    equals Multi_MALS's signed mean, and its |Δ| mean equals Multi_MALS's X.
    """
    rng = np.random.default_rng(seed)
    train, train_g = rng.integers(0, 2, (60, 4)), rng.integers(0, 3, 60)
    test, test_g = np.ones((30, 4), int), rng.integers(0, 3, 30)
    pred, pred_g = rng.integers(0, 2, (30, 4)), rng.integers(0, 3, 30)
    zhao = bias_amp(train, train_g, pred, pred_g, min_group_size=1)
    mals = multi_mals(train, train_g, test, test_g, pred, pred_g, max_size=1, min_group_size=1)
    assert zhao.value == pytest.approx(mals.stats["signed_mean"], abs=1e-12)
    assert zhao.stats["abs_mean"] == pytest.approx(mals.value, abs=1e-12)
    assert zhao.stats["variance"] == pytest.approx(mals.stats["variance"], abs=1e-12)
