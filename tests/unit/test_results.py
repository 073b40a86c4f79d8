"""Unit tests of the frozen result contract in ``pytest_fairness.results``."""

# These tests pass numpy scalars, arrays and lists where the fields are annotated with
# Python types, on purpose: the constructors promise to normalise them.
# mypy: disable-error-code="arg-type, dict-item"

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.results import (
    SCHEMA_VERSION,
    Curve,
    GroupStat,
    IndicatorResult,
    Matrix,
    iter_results,
)

NAN = math.nan
INF = math.inf


def make(*values: float, excluded: tuple[int, ...] = (), higher_is_better: bool = True,
         **kwargs: object) -> IndicatorResult:
    """A result with groups g0, g1, ... of n=100 and the given values."""
    groups = tuple(
        GroupStat(f"g{i}", 100, v, excluded=i in excluded) for i, v in enumerate(values)
    )
    return IndicatorResult("demo", "accuracy", 0.5, groups=groups,
                           higher_is_better=higher_is_better, **kwargs)


def rich_result() -> IndicatorResult:
    """A result that uses every field, with NaN and inf in the float fields."""
    slice_ = IndicatorResult(
        "precision_at_k", "precision", 0.25, at=10,
        groups=(GroupStat(("f", "dark"), 40, 0.25), GroupStat(("m", "light"), 40, 0.5)),
    )
    return IndicatorResult(
        name="precision_at_k",
        metric="precision",
        value=np.float64(0.75),
        groups=(
            GroupStat(("f", "dark"), np.int64(40), np.float32(0.5), interval=(0.25, INF),
                      stats={"tpr": NAN, "fpr": np.float64(0.125)}),
            GroupStat(("m", "light"), 40, -INF, interval=(NAN, 1.0)),
            GroupStat(("m", "dark"), 3, NAN, excluded=True),
        ),
        stats={"p_value": np.float64(0.03125), "effect_size": -INF, "variance": NAN},
        intervals={"value": (0.5, 1.0), "gap": (NAN, INF)},
        curves={"tau": Curve((0.1, 0.2), (NAN, 1.0), x_label="τ", y_label="gap",
                             interval=((0.0, 1.0), (-INF, INF)))},
        matrices={"auc": Matrix(("f", ("m", 1)), ("blur", "noise"), ((0.5, NAN), (-0.25, INF)))},
        tables={"amplification": ({"attrs": "f", "value": 0.5, "n": 3, "ok": True, "x": None},)},
        params={"k": np.int64(5), "alpha": np.float32(0.5), "names": ("a", "b"),
                "nested": {"seed": 7, "flag": np.bool_(True)}},
        higher_is_better=False,
        min_group_size=5,
        at=5,
        slices=(slice_,),
        notes=("dropped 2 rows with NaN labels",),
    )


# -- GroupStat ---------------------------------------------------------------------------


def test_groupstat_numpy_scalars_become_python_scalars() -> None:
    g = GroupStat(np.int64(3), np.int32(7), np.float32(0.5), interval=(np.float64(0.25), 1),
                  excluded=np.bool_(True), stats={"tpr": np.float32(0.75)})
    assert type(g.group) is int and g.group == 3
    assert type(g.n) is int and g.n == 7
    assert type(g.value) is float and g.value == 0.5
    assert g.interval == (0.25, 1.0) and all(type(v) is float for v in g.interval)
    assert g.excluded is True
    assert g.stats == {"tpr": 0.75} and type(g.stats["tpr"]) is float


def test_groupstat_numpy_str_group_becomes_str() -> None:
    g = GroupStat(np.str_("female"), 3, 0.5)
    assert type(g.group) is str
    r = IndicatorResult("x", "m", np.float64(0.5), at=np.float64(0.25),
                        groups=(GroupStat((np.str_("a"), np.float64(1.5)), 1, 0.5),))
    assert type(r.value) is float and type(r.at) is float
    assert [type(k) for k in r.groups[0].group] == [str, float]  # type: ignore[union-attr]


def test_groupstat_intersectional_keys_are_tuples() -> None:
    g = GroupStat(["female", np.int64(2)], 3, 0.5)
    assert g.group == ("female", 2)
    assert type(g.group) is tuple and type(g.group[1]) is int
    assert g.label == "female × 2"
    assert GroupStat("female", 3, 0.5).label == "female"


def test_groupstat_round_trip() -> None:
    g = GroupStat(("a", 1), 3, 0.5, interval=(0.25, 0.75), excluded=True, stats={"x": 1.5})
    assert GroupStat.from_dict(json.loads(json.dumps(g.to_dict()))) == g


def test_groupstat_interval_of_wrong_length_is_a_config_error() -> None:
    with pytest.raises(FairnessConfigError,
                       match=r"\(low, high\) pair; got interval=\(0\.1, 0\.2, 0\.3\)"):
        GroupStat("a", 3, 0.5, interval=(0.1, 0.2, 0.3))


# -- Curve and Matrix --------------------------------------------------------------------


def test_curve_converts_and_round_trips() -> None:
    c = Curve([np.float64(0.1), 1], np.array([0.5, NAN]), x_label="τ",
              interval=[(0, 1), (np.float32(0.25), INF)])
    assert c.x == (0.1, 1.0) and type(c.x[1]) is float
    assert c.interval == ((0.0, 1.0), (0.25, INF))
    back = Curve.from_dict(json.loads(json.dumps(c.to_dict(), allow_nan=False)))
    assert back.x == c.x and back.x_label == "τ" and back.interval == c.interval
    assert back.y[0] == 0.5 and math.isnan(back.y[1])


def test_curve_rejects_mismatched_lengths() -> None:
    with pytest.raises(FairnessConfigError, match=r"len\(x\)=2, len\(y\)=3"):
        Curve((0.1, 0.2), (1.0, 2.0, 3.0))


def test_matrix_converts_and_round_trips() -> None:
    m = Matrix(["a", ["b", 1]], ("blur",), np.array([[0.5], [-0.25]]))
    assert m.rows == ("a", ("b", 1))
    assert m.values == ((0.5,), (-0.25,))
    assert Matrix.from_dict(json.loads(json.dumps(m.to_dict()))) == m


@pytest.mark.parametrize(
    "values",
    [((0.5,),), ((0.5, 0.25), (0.5,)), ((0.5,), (0.5,), (0.5,))],
    ids=["too-few-rows", "ragged", "too-many-rows"],
)
def test_matrix_rejects_wrong_shape(values: tuple[tuple[float, ...], ...]) -> None:
    with pytest.raises(FairnessConfigError, match=r"must have shape \(2, 1\)"):
        Matrix(("a", "b"), ("c",), values)



def test_matrix_intervals_convert_and_round_trip() -> None:
    m = Matrix(("a", "b"), ("blur", "jpeg"), ((0.5, NAN), (-0.25, 0.0)),
               intervals=np.array([[(0.25, 0.75), (NAN, NAN)], [(-0.5, 0.0), (0, 0)]]))
    assert m.intervals is not None and m.intervals[1][0] == (-0.5, 0.0)
    assert type(m.intervals[1][1][0]) is float
    data = json.loads(json.dumps(m.to_dict(), allow_nan=False))
    assert data["intervals"][0] == [[0.25, 0.75], [None, None]]
    back = Matrix.from_dict(data)
    assert back.intervals is not None and back.intervals[0][0] == (0.25, 0.75)
    assert all(math.isnan(v) for v in back.intervals[0][1] or ())
    with_none = Matrix(("a",), ("blur",), ((0.5,),), intervals=((None,),))
    assert Matrix.from_dict(with_none.to_dict()) == with_none


def test_matrix_without_intervals_keeps_its_old_dict() -> None:
    m = Matrix(("a",), ("blur",), ((0.5,),))
    assert m.intervals is None and "intervals" not in m.to_dict()
    old = {"rows": ["a"], "columns": ["blur"], "values": [[0.5]]}
    assert Matrix.from_dict(old) == m


@pytest.mark.parametrize(
    ("intervals", "fragment"),
    [
        ((((0.0, 1.0),),), r"shape of its values \(2, 1\)"),
        ((((0.0, 1.0), (0.0, 1.0)), (None, None)), r"lengths \[2, 2\]"),
        (((5,), (None,)), r"one \(low, high\) pair of numbers or None per cell"),
        ((("ab",), (None,)), r"got intervals=\(\('ab',\)"),
        (3, r"got intervals=3"),
    ],
    ids=["too-few-rows", "too-many-columns", "not-a-pair", "not-numbers", "not-nested"],
)
def test_matrix_rejects_bad_intervals(intervals: Any, fragment: str) -> None:
    with pytest.raises(FairnessConfigError, match=fragment):
        Matrix(("a", "b"), ("c",), ((0.5,), (0.25,)), intervals=intervals)

# -- IndicatorResult construction -------------------------------------------------------


def test_result_numpy_scalars_become_python_scalars() -> None:
    r = IndicatorResult("x", "m", np.float32(0.5), stats={"p_value": np.float32(0.25)},
                        intervals={"gap": np.array([0.1, 0.2])}, at=np.int64(10),
                        min_group_size=np.int64(3), groups=[GroupStat("a", 1, 1.0)])
    assert type(r.value) is float and r.value == 0.5
    assert type(r.stats["p_value"]) is float
    assert r.intervals["gap"] == (0.1, 0.2) and type(r.intervals["gap"][0]) is float
    assert type(r.at) is int and r.at == 10
    assert type(r.min_group_size) is int
    assert type(r.groups) is tuple


def test_result_params_with_numpy_scalars_are_plain() -> None:
    r = IndicatorResult("x", "m", 0.5, params={"k": np.int64(5), "a": np.float32(0.5),
                                               "t": (1, 2), "b": np.bool_(False)})
    assert r.params == {"k": 5, "a": 0.5, "t": [1, 2], "b": False}
    assert type(r.params["k"]) is int and type(r.params["b"]) is bool


def test_result_params_with_numpy_arrays() -> None:
    r = IndicatorResult("x", "m", 0.5, params={"weights": np.array([[1.5, 2.0], [3.0, 4.0]])})
    assert r.params == {"weights": [[1.5, 2.0], [3.0, 4.0]]}
    assert IndicatorResult.from_dict(r.to_dict()) == r


def test_result_params_arrays_stay_lists_and_0d_arrays_become_scalars() -> None:
    r = IndicatorResult("x", "m", 0.5, params={"w": np.array([2.5]), "s": np.array(3),
                                               "f": np.array([np.nan, np.inf])})
    assert r.params == {"w": [2.5], "s": 3, "f": [None, "inf"]}
    assert type(r.params["s"]) is int


@pytest.mark.parametrize(
    "groups, shown",
    [
        ((GroupStat("a", 1, 0.5), GroupStat("a", 2, 0.25)), r"\['a'\]"),
        ((GroupStat(("a", "b"), 1, 0.5), GroupStat(["a", "b"], 2, 0.25)), r"\['a × b'\]"),
        ((GroupStat(1, 1, 0.5), GroupStat(np.int64(1), 2, 0.25), GroupStat(2, 1, 0.5)),
         r"\['1'\]"),
    ],
    ids=["str", "tuple-vs-list", "numpy-int"],
)
def test_result_rejects_duplicate_groups(groups: tuple[GroupStat, ...], shown: str) -> None:
    with pytest.raises(FairnessConfigError, match=r"'demo' lists a group more than once: " + shown):
        IndicatorResult("demo", "m", 0.5, groups=groups)


def test_result_is_frozen() -> None:
    r = make(0.5, 0.25)
    with pytest.raises(AttributeError):
        r.value = 1.0  # type: ignore[misc]


# -- round trip and JSON -----------------------------------------------------------------


def test_to_dict_is_strict_json() -> None:
    text = json.dumps(rich_result().to_dict(), allow_nan=False)
    assert json.loads(text)["schema"] == SCHEMA_VERSION


def test_round_trip_of_a_rich_result() -> None:
    r = rich_result()
    back = IndicatorResult.from_dict(json.loads(json.dumps(r.to_dict(), allow_nan=False)))
    # NaN != NaN, so compare the canonical dictionaries, then spot-check the decoded values.
    assert back.to_dict() == r.to_dict()
    assert back.groups[0].group == ("f", "dark") and type(back.groups[0].group) is tuple
    assert back.groups[0].interval == (0.25, INF)
    assert math.isnan(back.groups[0].stats["tpr"])
    assert back.groups[1].value == -INF and math.isnan(back.groups[1].interval[0])  # type: ignore[index]
    assert math.isnan(back.groups[2].value) and back.groups[2].excluded
    assert back.stats["effect_size"] == -INF and math.isnan(back.stats["variance"])
    assert math.isnan(back.intervals["gap"][0]) and back.intervals["gap"][1] == INF
    assert back.curves["tau"].interval == ((0.0, 1.0), (-INF, INF))
    assert back.matrices["auc"].rows == ("f", ("m", 1))
    assert back.matrices["auc"].values[1] == (-0.25, INF)
    assert back.tables == r.tables
    assert back.params == r.params
    assert back.slices == r.slices and back.slices[0].at == 10
    assert back.at == 5 and type(back.at) is int
    assert back.higher_is_better is False and back.min_group_size == 5
    assert back.notes == r.notes


def test_round_trip_equality_without_nan() -> None:
    r = IndicatorResult(
        "x", "m", 0.5, groups=(GroupStat(("a", 1), 10, 0.5, interval=(0.25, 0.75)),),
        stats={"p_value": 0.5}, intervals={"value": (0.25, 0.75)}, at=0.5,
        slices=(IndicatorResult("x", "m", 0.25, at=0.75),), tables={"t": ({"a": 1},)},
        params={"seed": 3, "names": ["a", "b"]}, notes=("n",),
    )
    assert IndicatorResult.from_dict(json.loads(json.dumps(r.to_dict()))) == r


def test_tables_store_nan_as_missing_and_round_trip() -> None:
    r = IndicatorResult("x", "m", 0.5, tables={"t": (
        {"a": NAN, "b": INF, "c": (1, np.int64(2)), "d": [0.5, NAN], "e": np.float64(0.25)},)})
    row = r.tables["t"][0]
    assert row == {"a": None, "b": INF, "c": (1, 2), "d": (0.5, None), "e": 0.25}
    assert type(row["e"]) is float and type(row["c"][1]) is int
    back = IndicatorResult.from_dict(json.loads(json.dumps(r.to_dict(), allow_nan=False)))
    assert back == r


def test_to_dict_is_strict_json_with_infinite_at() -> None:
    r = IndicatorResult("x", "m", 0.5, at=INF)
    back = IndicatorResult.from_dict(json.loads(json.dumps(r.to_dict(), allow_nan=False)))
    assert back.at == INF and back == r


def test_from_dict_rejects_other_schema_versions() -> None:
    data = make(0.5, 0.25).to_dict()
    data["schema"] = SCHEMA_VERSION + 1
    with pytest.raises(FairnessConfigError, match=rf"schema {SCHEMA_VERSION + 1}.*Upgrade"):
        IndicatorResult.from_dict(data)


def test_from_dict_without_schema_reads_the_current_layout() -> None:
    data = make(0.5, 0.25).to_dict()
    del data["schema"]
    assert IndicatorResult.from_dict(data) == make(0.5, 0.25)


# -- gap, ratio, best, worst ---------------------------------------------------------------


def test_gap_ratio_best_worst_by_hand() -> None:
    r = make(0.75, 0.25, 0.5)
    assert r.gap == 0.5
    assert r.ratio == pytest.approx(1 / 3, abs=1e-12)
    assert r.best_group is not None and r.best_group.group == "g0"
    assert r.worst_group is not None and r.worst_group.group == "g1"


def test_excluded_and_nan_groups_do_not_count() -> None:
    r = make(0.75, 0.0, 0.5, NAN, excluded=(1,))
    assert [g.group for g in r.included_groups] == ["g0", "g2"]
    assert [g.group for g in r.excluded_groups] == ["g1"]
    assert r.gap == 0.25
    assert r.ratio == 0.5 / 0.75
    assert r.worst_group.group == "g2"  # type: ignore[union-attr]


@pytest.mark.parametrize("values, excluded", [((), ()), ((0.5,), ()), ((0.5, 0.25), (1,)),
                                               ((0.5, NAN), ())])
def test_gap_and_ratio_are_nan_with_fewer_than_two_groups(
    values: tuple[float, ...], excluded: tuple[int, ...]
) -> None:
    r = make(*values, excluded=excluded)
    assert math.isnan(r.gap) and math.isnan(r.ratio)


def test_best_and_worst_are_none_without_included_groups() -> None:
    r = make(0.5, excluded=(0,))
    assert r.best_group is None and r.worst_group is None


def test_one_included_group_is_both_best_and_worst() -> None:
    r = make(0.5, 0.25, excluded=(1,))
    assert r.best_group is r.worst_group is r.groups[0]


@pytest.mark.parametrize(
    "values, ratio",
    [((0.0, 0.0), 1.0), ((0.0, 0.5), 0.0), ((0.25, 1.0), 0.25), ((-0.5, 0.5), NAN),
     ((-0.5, -0.25), NAN)],
    ids=["all-zero", "zero-min", "positive", "mixed-sign", "negative"],
)
def test_ratio_with_zeros_and_negatives(values: tuple[float, float], ratio: float) -> None:
    r = make(*values)
    assert r.ratio == ratio or (math.isnan(ratio) and math.isnan(r.ratio))


def test_gap_with_negative_values() -> None:
    assert make(-0.5, 0.25).gap == 0.75


def test_lower_is_better_swaps_best_and_worst_not_gap() -> None:
    up, down = make(0.75, 0.25), make(0.75, 0.25, higher_is_better=False)
    assert down.best_group.group == "g1" and down.worst_group.group == "g0"  # type: ignore[union-attr]
    assert up.gap == down.gap and up.ratio == down.ratio


def test_group_lookup() -> None:
    r = make(0.75, 0.25)
    assert r.group("g1").value == 0.25
    with pytest.raises(KeyError, match=r"'zz' is not a group of 'demo'.*'g0', 'g1'"):
        r.group("zz")


def test_group_lookup_by_list_for_tuple_keys() -> None:
    r = IndicatorResult("x", "m", 0.5, groups=(GroupStat(("a", 1), 3, 0.5),))
    assert r.group(["a", np.int64(1)]).n == 3


# -- slices and select -------------------------------------------------------------------


def sliced() -> IndicatorResult:
    return IndicatorResult(
        "precision_at_k", "precision", 0.5, at=5,
        slices=(IndicatorResult("precision_at_k", "precision", 0.25, at=10,
                                slices=(IndicatorResult("precision_at_k", "p", 0.0, at=99),)),
                IndicatorResult("precision_at_k", "precision", 0.75, at=0.3)),
    )


def test_coordinates_list_own_and_slices() -> None:
    assert sliced().coordinates == (5, 10, 0.3)
    assert IndicatorResult("x", "m", 0.5).coordinates == ()


def test_select_own_coordinate_returns_self() -> None:
    r = sliced()
    assert r.select(5) is r
    assert r.select(5.0) is r


def test_select_a_slice_drops_its_nested_slices() -> None:
    picked = sliced().select(10)
    assert picked.value == 0.25 and picked.at == 10 and picked.slices == ()


def test_select_tolerates_float_rounding() -> None:
    assert sliced().select(0.1 + 0.2).value == 0.75


@pytest.mark.parametrize(
    "result, available",
    [(sliced(), r"available: 5, 10, 0\.3\."), (IndicatorResult("x", "m", 0.5), "available: none")],
)
def test_select_unknown_coordinate_lists_available(result: IndicatorResult, available: str) -> None:
    with pytest.raises(FairnessConfigError, match=r"at=0\.5 is not a coordinate.*" + available):
        result.select(0.5)


# -- frame -------------------------------------------------------------------------------


def test_frame_columns_and_values() -> None:
    r = IndicatorResult("x", "accuracy", 0.5, groups=(
        GroupStat("a", 10, 0.75, interval=(0.5, 1.0), stats={"tpr": 0.5, "fpr": 0.25}),
        GroupStat("b", 2, 0.25, excluded=True, stats={"tpr": 0.125}),
    ))
    df = r.frame()
    assert list(df.columns) == ["group", "n", "value", "delta_to_best", "interval_low",
                                "interval_high", "excluded", "fpr", "tpr"]
    assert df["group"].tolist() == ["a", "b"]
    assert df["delta_to_best"].tolist() == [0.0, -0.5]
    assert df["interval_low"].iloc[0] == 0.5 and math.isnan(df["interval_high"].iloc[1])
    assert df["excluded"].tolist() == [False, True]
    assert math.isnan(df["fpr"].iloc[1])


def test_frame_without_groups_is_empty_with_columns() -> None:
    df = IndicatorResult("x", "m", 0.5).frame()
    assert len(df) == 0 and "delta_to_best" in df.columns


# -- iter_results ------------------------------------------------------------------------


def test_iter_results_shapes() -> None:
    a, b = make(0.5, 0.25), make(0.75, 0.25)
    assert list(iter_results(a)) == [(None, a)]
    assert list(iter_results([a, "x", b])) == [(None, a), (None, b)]
    assert list(iter_results({"k": a, 1: b, "z": 3})) == [("k", a), ("1", b)]
    assert list(iter_results("not a result")) == []
    assert list(iter_results(None)) == []


def test_replicates_pack_and_unpack_keeping_nan() -> None:
    from pytest_fairness.results import pack_replicates, unpack_replicates

    back = unpack_replicates(pack_replicates([0.5, float("nan")]))
    assert back[0] == 0.5 and math.isnan(back[1]) and len(back) == 2


def test_result_id_is_the_key_else_indicator_and_metric() -> None:
    from pytest_fairness.results import result_id

    assert result_id({"key": None, "name": "ieat", "metric": "association", "at": None}) == (
        "ieat (association)")
    assert result_id({"key": "overall", "name": "group_metrics", "metric": "accuracy"}) == (
        "overall")
