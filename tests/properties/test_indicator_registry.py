"""The INDICATORS registry, and its declared properties checked on every indicator.

Each indicator has a *case* below: a builder of small valid inputs (a flat dict of arrays),
the call that turns them into a result, and metadata saying which inputs are row-aligned,
which hold group labels, which are embeddings, attribute matrices or image ids. One
hypothesis test per property name then applies that property's transformation generically
to every indicator whose spec declares it, and compares the results (value, gap, every
group's n and value through the relabelling, the stats, the slices).
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pytest_fairness.indicators as indicators
from pytest_fairness.indicators import INDICATORS, PROPERTIES, IndicatorSpec
from pytest_fairness.results import IndicatorResult

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SEEDS = st.integers(0, 2**32 - 1)
Inputs = dict[str, Any]


# -- cases: small valid inputs and the call of each indicator ------------------------------


@dataclasses.dataclass(frozen=True)
class Case:
    """How to build, call and transform the inputs of one indicator."""

    build: Callable[[np.random.Generator], Inputs]
    call: Callable[..., Any]  # call(inputs, **kwargs) -> IndicatorResult or dict of them
    rows: tuple[tuple[str, ...], ...] = ()  # blocks of inputs aligned row by row
    groups: tuple[str, ...] = ()  # inputs holding group labels (one label space)
    embeddings: tuple[str, ...] = ()  # 2-D embedding inputs, one row per item
    attributes: tuple[str, ...] = ()  # 0/1 attribute matrices sharing their columns
    images: str | None = None  # input holding image ids
    exact: frozenset[str] = frozenset()  # properties whose numbers are bit-identical
    directions: Mapping[Any, bool] = dataclasses.field(default_factory=dict)


def _classification(rng: np.random.Generator) -> Inputs:
    """Binary labels for 2-4 groups, each group holding both classes."""
    rows = []
    for g in range(int(rng.integers(2, 5))):
        size = int(rng.integers(2, 13))
        y = np.r_[1, 0, rng.integers(0, 2, size - 2)]
        rows += [(yi, pi, g) for yi, pi in zip(y, rng.integers(0, 2, size))]
    array = np.array(rows)
    return {"y_true": array[:, 0], "y_pred": array[:, 1], "groups": array[:, 2],
            "y_base": rng.integers(0, 2, len(array))}


def _group_metrics(i: Inputs, **kw: Any) -> Any:
    return indicators.group_metrics(i["y_true"], i["y_pred"], groups=i["groups"],
                                    min_group_size=1, **kw)


def _landmarks(rng: np.random.Generator) -> Inputs:
    n = int(rng.integers(6, 25))
    truth = rng.normal(size=(n, 5, 2))
    pred = truth + rng.normal(scale=0.05, size=truth.shape)
    return {"y_true": truth, "y_pred": pred,
            "groups": np.r_[0, 1, rng.integers(0, 3, n - 2)]}


def _delta_dto(i: Inputs, **kw: Any) -> Any:
    base = indicators.group_metrics(i["y_true"], i["y_base"], groups=i["groups"],
                                    min_group_size=1)
    return indicators.delta_dto(_group_metrics(i), base, **kw)


TAXONOMY = {0: "non_human", 1: "human", 2: "crime"}


def _predictions(rng: np.random.Generator) -> Inputs:
    n = int(rng.integers(4, 26))
    labels = rng.integers(0, 5, size=(n, 3))
    hh = np.arange(n) % 5
    return {
        "labels": labels,
        "scores": np.round(rng.random((n, 3)), 2),  # ties with the τ grid on purpose
        "groups": rng.integers(0, 3, n),
        "truth": labels[:, 0] + rng.integers(0, 2, n),
        "household": hh,
        "region": np.array(["Asia", "Africa", "Europe"])[hh % 3],
        "income": np.where(hh < 3, 50.0, 5000.0),
        "image": np.arange(n),
    }


def _geodiversity(i: Inputs, **kw: Any) -> Any:
    return indicators.geodiversity(
        i["labels"], i["scores"], truth=i["truth"], household=i["household"],
        region=i["region"], income=i["income"], image=i["image"], top_k=2, by="region",
        min_group_size=1, **kw)


def _retrieval(rng: np.random.Generator) -> Inputs:
    nq, nd, d = int(rng.integers(2, 16)), int(rng.integers(5, 31)), int(rng.integers(2, 7))
    return {"q": rng.normal(size=(nq, d)), "q_g": rng.integers(0, 3, nq),
            "db": rng.normal(size=(nd, d)), "db_g": rng.integers(0, 3, nd)}


def _ieat_sets(rng: np.random.Generator) -> Inputs:
    d = int(rng.integers(2, 7))
    return {s: rng.normal(size=(int(rng.integers(2, 7)), d)) for s in "XYAB"}


def _amplification(rng: np.random.Generator) -> Inputs:
    n_attrs, g = int(rng.integers(2, 6)), int(rng.integers(2, 4))
    n_train, n_test = int(rng.integers(12, 41)), int(rng.integers(12, 41))
    g_train = np.r_[np.arange(g), rng.integers(0, g, n_train - g)]
    g_test = np.r_[np.arange(g), rng.integers(0, g, n_test - g)]
    density = rng.uniform(0.2, 0.6)
    train = (rng.random((n_train, n_attrs)) < density).astype(int)
    test = (rng.random((n_test, n_attrs)) < density).astype(int)
    train[0] = 1  # at least one label everywhere, and every attribute in both splits
    test[0] = 1
    pred = np.where(rng.random(test.shape) < 0.2, 1 - test, test)
    pred_g = np.where(rng.random(n_test) < 0.2, rng.integers(0, g, n_test), g_test)
    return {"train": train, "g_train": g_train, "test": test, "g_test": g_test,
            "pred": pred, "pred_g": pred_g}


def _split(i: Inputs) -> tuple[Any, ...]:
    return i["train"], i["g_train"], i["test"], i["g_test"], i["pred"], i["pred_g"]


LEVELS = (0.5, 1.0)


def _fair_sa_problem(rng: np.random.Generator) -> Inputs:
    n, d = 2 * int(rng.integers(6, 9)), int(rng.integers(2, 6))
    clean = rng.normal(size=(n, d))
    inputs: Inputs = {"clean": clean}
    for level in LEVELS:
        inputs[f"p@{level}"] = clean + level * rng.normal(size=(n, d)) * rng.uniform(0, 2, (n, 1))
    ids = np.arange(n) // 2  # two images per identity, whole identities per group
    return {**inputs, "identities": ids, "attribute": ids % 3}


def _fair_sa(i: Inputs, **kw: Any) -> Any:
    features = {None: i["clean"], **{("p", level): i[f"p@{level}"] for level in LEVELS}}
    return indicators.fair_sa(features, attribute=i["attribute"], perturbations="p",
                              levels=list(LEVELS), identities=i["identities"], threshold=0.6,
                              min_group_size=1, **kw)


_AMP_ROWS = (("train", "g_train"), ("test", "g_test", "pred", "pred_g"))
_AMP = {"rows": _AMP_ROWS, "groups": ("g_train", "g_test", "pred_g"),
        "attributes": ("train", "test", "pred")}
_IEAT = {"rows": (("X",), ("Y",), ("A",), ("B",)), "embeddings": ("X", "Y", "A", "B")}

CASES: dict[str, Case] = {
    "group_metrics": Case(
        _classification, _group_metrics, rows=(("y_true", "y_pred", "groups", "y_base"),),
        groups=("groups",), exact=frozenset({"row_permutation", "group_relabelling"})),
    "landmark_metrics": Case(
        _landmarks,
        lambda i, **kw: indicators.landmark_metrics(
            i["y_true"], i["y_pred"], groups=i["groups"], normalizer=(0, 1), min_group_size=1,
            **kw),
        rows=(("y_true", "y_pred", "groups"),), groups=("groups",)),
    "delta_dto": Case(_classification, _delta_dto),
    "label_association": Case(
        _predictions,
        lambda i, **kw: indicators.label_association(
            i["labels"], i["scores"], groups=i["groups"], taxonomy=TAXONOMY, top_k=2,
            min_group_size=1, **kw),
        rows=(("labels", "scores", "groups"),), groups=("groups",),
        exact=frozenset({"row_permutation", "group_relabelling"}),
        directions={"harmful": False, "crime": False, "non_human": False, "human": True}),
    "geodiversity": Case(
        _predictions, _geodiversity,
        rows=(("labels", "scores", "truth", "household", "region", "income", "image"),),
        groups=("region",), images="image",
        exact=frozenset({"group_relabelling", "duplicate_counted_once"})),
    "precision_at_k": Case(
        _retrieval,
        lambda i, **kw: indicators.precision_at_k(
            (i["q"], {"g": i["q_g"]}), (i["db"], {"g": i["db_g"]}), k=[3, 1], match="g",
            by="g", min_group_size=1, **kw),
        rows=(("q", "q_g"), ("db", "db_g")), groups=("q_g", "db_g"), embeddings=("q", "db"),
        exact=frozenset({"group_relabelling"})),
    "ieat": Case(
        _ieat_sets, lambda i, **kw: indicators.ieat(i["X"], i["Y"], i["A"], i["B"], seed=0, **kw),
        **_IEAT),
    "ieat_battery": Case(
        _ieat_sets,
        lambda i, **kw: indicators.ieat_battery(
            {"xy": (i["X"], i["Y"], i["A"], i["B"]), "ab": (i["A"], i["B"], i["X"], i["Y"])},
            seed=0, **kw),
        **_IEAT),
    "bias_amp": Case(
        _amplification,
        lambda i, **kw: indicators.bias_amp(i["train"], i["g_train"], i["pred"], i["pred_g"],
                                            min_group_size=1, **kw),
        **_AMP),
    "directional_bias_amp": Case(
        _amplification,
        lambda i, **kw: indicators.directional_bias_amp(*_split(i), direction="G->M",
                                                        min_group_size=1, **kw),
        **_AMP),
    "multi_mals": Case(
        _amplification,
        lambda i, **kw: indicators.multi_mals(*_split(i), max_size=3, min_group_size=1, **kw),
        **_AMP),
    "multi_directional": Case(
        _amplification,
        lambda i, **kw: indicators.multi_directional(*_split(i), direction="M->G", max_size=3,
                                                     min_group_size=1, **kw),
        **_AMP),
    "fair_sa": Case(
        _fair_sa_problem, _fair_sa,
        rows=(("clean", "p@0.5", "p@1.0", "attribute", "identities"),), groups=("attribute",),
        embeddings=("clean", "p@0.5", "p@1.0"),
        exact=frozenset({"row_permutation"})),  # relabelling reorders the rows summed into L1
}

#: The metadata a property's transformation needs; a spec declaring the property without
#: it would pass the generic test vacuously.
NEEDS = {
    "row_permutation": "rows",
    "group_relabelling": "groups",
    "embedding_scale": "embeddings",
    "attribute_permutation": "attributes",
    "duplicate_counted_once": "images",
}


# -- comparison ------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _close(a: float, b: float, exact: bool, what: str) -> None:
    if math.isnan(a) or math.isnan(b):
        assert math.isnan(a) and math.isnan(b), what
    elif exact:
        assert a == b, what
    else:
        assert a == pytest.approx(b, rel=1e-9, abs=1e-9), what


def _assert_same(a: Any, b: Any, *, exact: bool, rename: Mapping[Any, Any] | None = None) -> None:
    """Equal numbers; group keys of ``a`` renamed through ``rename`` first."""
    if isinstance(a, Mapping):  # ieat_battery: one result per test
        assert a.keys() == b.keys()
        for key in a:
            _assert_same(a[key], b[key], exact=exact, rename=rename)
        return
    assert isinstance(a, IndicatorResult) and isinstance(b, IndicatorResult)
    _close(a.value, b.value, exact, "value")
    _close(a.gap, b.gap, exact, "gap")
    before = {(g.group if rename is None else rename[g.group]): g for g in a.groups}
    after = {g.group: g for g in b.groups}
    assert before.keys() == after.keys()
    for key, g in before.items():
        assert (g.n, g.excluded) == (after[key].n, after[key].excluded), key
        _close(g.value, after[key].value, exact, f"group {key!r}")
    if rename is None:  # relabelling may rename stats that name a group
        assert a.stats.keys() == b.stats.keys()
    for key in a.stats.keys() & b.stats.keys():
        _close(a.stats[key], b.stats[key], exact, f"stats[{key!r}]")
    assert len(a.slices) == len(b.slices)
    for sa, sb in zip(a.slices, b.slices):
        _assert_same(sa, sb, exact=exact, rename=rename)


def _declaring(prop: str) -> list[Any]:
    return [pytest.param(name, id=name) for name, spec in INDICATORS.items()
            if prop in spec.properties]


# -- (a) the registry ------------------------------------------------------------------------


def test_registry_covers_exactly_the_public_functions() -> None:
    assert sorted(INDICATORS) == indicators.__all__
    assert dict(indicators._FUNCTIONS) == {n: s.module for n, s in INDICATORS.items()}
    for name, spec in INDICATORS.items():
        assert spec.name == name
        module = importlib.import_module(f"{indicators.__name__}.{spec.module}")
        assert spec.function is getattr(module, name) is getattr(indicators, name)
        assert spec.function.__module__ == module.__name__  # defined there, not re-exported
        assert spec.properties <= PROPERTIES.keys()
        assert spec.needs and all(isinstance(n, str) and n for n in spec.needs)


def test_registry_is_read_only() -> None:
    with pytest.raises(TypeError):
        INDICATORS["x"] = INDICATORS["ieat"]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        INDICATORS["ieat"].module = "x"  # type: ignore[misc]
    with pytest.raises(ValueError, match="unknown properties"):
        IndicatorSpec("f", "m", "s", True, ("x",), frozenset({"row_order"}))
    with pytest.raises(ValueError, match="direction_argument"):
        IndicatorSpec("f", "m", "s", None, ("x",))


def test_module_docstring_table_is_the_registry() -> None:
    lines = (indicators.__doc__ or "").splitlines()
    borders = [i for i, line in enumerate(lines) if re.fullmatch(r"=+( +=+)+", line)]
    assert len(borders) == 3  # above the header, below it, below the table
    body = lines[borders[1] + 1:borders[2]]
    assert [tuple(line.split(None, 2)) for line in body] == [
        (s.name, s.module, s.source) for s in INDICATORS.values()]


def test_every_declared_property_can_be_tested() -> None:
    assert sorted(CASES) == sorted(INDICATORS)
    for name, spec in INDICATORS.items():
        for prop in spec.properties:
            assert getattr(CASES[name], NEEDS[prop]), (name, prop)
    assert set(NEEDS) == set(PROPERTIES)


# -- (b) direction ---------------------------------------------------------------------------


def _results(out: Any) -> list[IndicatorResult]:
    return list(out.values()) if isinstance(out, Mapping) else [out]


@pytest.mark.parametrize("name", list(INDICATORS))
def test_results_declare_the_registered_direction(name: str) -> None:
    spec, case = INDICATORS[name], CASES[name]
    inputs = case.build(np.random.default_rng(0))
    if spec.higher_is_better is not None:
        assert not case.directions
        for result in _results(case.call(inputs)):
            assert result.higher_is_better is spec.higher_is_better
        return
    assert spec.direction_argument is not None and len(set(case.directions.values())) == 2
    for value, higher in case.directions.items():
        out = case.call(inputs, **{spec.direction_argument: value})
        for result in _results(out):
            assert result.higher_is_better is higher, value


# -- (c) one generic test per property -------------------------------------------------------


@pytest.mark.parametrize("name", _declaring("row_permutation"))
@SETTINGS
@given(seed=SEEDS)
def test_row_permutation(name: str, seed: int) -> None:
    case, rng = CASES[name], np.random.default_rng(seed)
    inputs = case.build(rng)
    moved = dict(inputs)
    for block in case.rows:
        order = rng.permutation(len(inputs[block[0]]))
        for key in block:
            moved[key] = inputs[key][order]
    _assert_same(case.call(inputs), case.call(moved), exact="row_permutation" in case.exact)


@pytest.mark.parametrize("name", _declaring("group_relabelling"))
@SETTINGS
@given(seed=SEEDS)
def test_group_relabelling(name: str, seed: int) -> None:
    """Any bijection of the labels, one that reverses their sorted order included."""
    case, rng = CASES[name], np.random.default_rng(seed)
    inputs = case.build(rng)
    labels = sorted({_plain(v) for key in case.groups for v in inputs[key]})
    perm = rng.permutation(len(labels))
    rename = {old: f"group-{chr(ord('z') - int(p))}" for old, p in zip(labels, perm)}
    moved = dict(inputs)
    for key in case.groups:
        moved[key] = np.array([rename[_plain(v)] for v in inputs[key]])
    _assert_same(case.call(inputs), case.call(moved), rename=rename,
                 exact="group_relabelling" in case.exact)


@pytest.mark.parametrize("name", _declaring("embedding_scale"))
@SETTINGS
@given(seed=SEEDS)
def test_embedding_scale(name: str, seed: int) -> None:
    case, rng = CASES[name], np.random.default_rng(seed)
    inputs = case.build(rng)
    moved = dict(inputs)
    for key in case.embeddings:
        moved[key] = inputs[key] * rng.uniform(0.01, 100.0, (len(inputs[key]), 1))
    _assert_same(case.call(inputs), case.call(moved), exact="embedding_scale" in case.exact)


@pytest.mark.parametrize("name", _declaring("attribute_permutation"))
@SETTINGS
@given(seed=SEEDS)
def test_attribute_permutation(name: str, seed: int) -> None:
    case, rng = CASES[name], np.random.default_rng(seed)
    inputs = case.build(rng)
    perm = rng.permutation(inputs[case.attributes[0]].shape[1])
    moved = {**inputs, **{key: inputs[key][:, perm] for key in case.attributes}}
    _assert_same(case.call(inputs), case.call(moved),
                 exact="attribute_permutation" in case.exact)


@pytest.mark.parametrize("name", _declaring("duplicate_counted_once"))
@SETTINGS
@given(seed=SEEDS)
def test_duplicate_counted_once(name: str, seed: int) -> None:
    case, rng = CASES[name], np.random.default_rng(seed)
    inputs = case.build(rng)
    (block,) = [b for b in case.rows if case.images in b]
    n = len(inputs[block[0]])
    rows = np.r_[np.arange(n), rng.integers(0, n, int(rng.integers(1, 4)))]
    moved = {**inputs, **{key: inputs[key][rows] for key in block}}
    _assert_same(case.call(inputs), case.call(moved),
                 exact="duplicate_counted_once" in case.exact)


def test_registry_is_a_leaf_module() -> None:
    import ast
    from pathlib import Path

    from pytest_fairness.indicators import registry

    tree = ast.parse(Path(registry.__file__).read_text(encoding="utf-8"))
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert imported and not [m for m in imported if m.startswith("pytest_fairness")]
    assert registry.INDICATORS is INDICATORS and registry.IndicatorSpec is IndicatorSpec
