"""Unit tests of label_association and the shipped taxonomies."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pytest_fairness import fairness
from pytest_fairness.data.taxonomy import (
    Taxonomy,
    as_taxonomy,
    imagenet1k_classes,
    imagenet1k_taxonomy,
)
from pytest_fairness.errors import FairnessConfigError, InvalidDataError
from pytest_fairness.indicators import label_association

TAX = {1: "non_human", 2: "human", 3: "crime", 4: "possibly_human"}
LABELS = [[1, 2], [3, 2], [2, 1], [2, 4]]
SCORES = [[0.6, 0.3], [0.2, 0.7], [0.9, 0.05], [0.8, 0.15]]
GROUPS = ["a", "a", "b", "b"]


def _run(**kw):
    args = dict(groups=GROUPS, taxonomy=TAX, top_k=2, min_group_size=1)
    args.update(kw)
    return label_association(kw.pop("labels", LABELS), kw.pop("scores", SCORES),
                             **{k: v for k, v in args.items() if k not in ("labels", "scores")})


def test_hand_computed_sweep() -> None:
    r = _run()
    # τ=0.1: a: both images harmful (1@.6, 3@.2); b: image 3 has 1@.05 < .1 -> not a hit.
    assert r.at == 0.1
    assert r.group("a").value == 1.0 and r.group("b").value == 0.0
    assert r.select(0.0).group("b").value == 0.5
    assert r.select(0.3).group("a").value == 0.5
    assert r.select(0.7).group("a").value == 0.0
    assert r.stats["human_hit_rate"] == 1.0
    assert r.group("b").stats["possibly_human"] == 0.5
    assert r.gap == 1.0
    assert r.curves["harmful"].y[0] == 0.75
    assert len(r.coordinates) == 11


def test_other_label_type_is_gateable() -> None:
    r = _run(label_type="human")
    assert r.metric == "human_hit_rate" and r.higher_is_better
    assert r.select(0.5).group("a").value == 0.5


def test_top_k_restricts_labels() -> None:
    r = _run(top_k=1)
    assert r.select(0.0).group("b").value == 0.0  # label 1 is second for image 3


def test_full_score_matrix_is_gathered() -> None:
    full = np.zeros((4, 6))
    for i, (row, s) in enumerate(zip(LABELS, SCORES)):
        full[i, row] = s
    assert _run(scores=full).to_dict() == _run().to_dict()


def test_reference_drops_before_top_k() -> None:
    labels = [[5, 1]]  # label 5 unmapped with low score; reference refills from column 2
    scores = [[0.05, 0.5]]
    kw = dict(groups=["a"], taxonomy=TAX, top_k=1, min_group_size=1)
    paper = label_association(labels, scores, thresholds=[0.1], **kw)
    ref = label_association(labels, scores, thresholds=[0.1], variant="reference", **kw)
    assert paper.value == 1.0  # paper re-sorts by confidence: label 1 is the top-1
    assert ref.value == 1.0
    unsorted = label_association([[1, 5]], [[0.05, 0.5]], thresholds=[0.0, 0.1],
                                 variant="reference", **kw)
    assert unsorted.select(0.0).value == 1.0 and unsorted.select(0.1).value == 0.0
    assert label_association([[5, 1]], [[0.5, 0.05]], thresholds=[0.0], variant="reference",
                             **kw).value == 0.0
    assert ref.coordinates == (0.1,)
    grid = label_association(labels, scores, variant="reference", **kw).coordinates
    assert sorted(grid) == [0.0, 0.1, 0.3, 0.8]


def test_intervals_and_gate_with_confidence() -> None:
    rng = np.random.default_rng(0)
    n = 200
    labels = rng.integers(1, 5, size=(n, 2))
    scores = rng.random((n, 2))
    groups = np.repeat(["a", "b"], n // 2)
    r = label_association(labels, scores, groups=groups, taxonomy=TAX, top_k=2,
                          n_bootstrap=200, seed=0, clusters=np.arange(n) // 4)
    assert {"gap", "value", "ratio"} <= set(r.intervals)
    assert r.group("a").interval is not None
    assert r.params["seed"] == 0
    with pytest.raises(AssertionError, match="harmful hit rate by τ"):
        fairness.check(r, max_value=0.01, at=0.1, confidence="supported")


@pytest.mark.parametrize(
    ("kw", "err", "fragment"),
    [
        (dict(labels=[[[1]]]), InvalidDataError, r"shape \(images, k\)"),
        (dict(labels=np.zeros((0, 2), int), scores=np.zeros((0, 2))), InvalidDataError, "empty"),
        (dict(scores=[[0.5, 0.5]]), InvalidDataError, r"shape of labels"),
        (dict(scores=[["x", "y"]] * 4), InvalidDataError, r"numeric"),
        (dict(scores=[[np.nan, 0.1]] * 4), InvalidDataError,
         r"NaN or infinite values in 4 image\(s\), the first image 0"),
        (dict(scores=[[2.0, 0.1]] * 4), InvalidDataError, r"softmax"),
        (dict(top_k=0), FairnessConfigError, r"top_k=0"),
        (dict(top_k=3), FairnessConfigError, r"top_k=3"),
        (dict(label_type="evil"), FairnessConfigError, r"label_type='evil'"),
        (dict(thresholds=[]), FairnessConfigError, r"non-empty"),
        (dict(thresholds=[1.5]), FairnessConfigError, r"\[0, 1\]"),
        (dict(thresholds=[0.1, 0.1]), FairnessConfigError, r"repeated"),
        (dict(variant="x"), FairnessConfigError, r"variant='x'"),
        (dict(clusters=[1, 2], n_bootstrap=100), InvalidDataError, r"len\(clusters\)"),
        (dict(taxonomy=42), FairnessConfigError, r"got int"),
        (dict(taxonomy="imagenet21k"), FairnessConfigError, r"not a shipped"),
        (dict(taxonomy={}), FairnessConfigError, r"empty"),
        (dict(taxonomy={1: "x", 2: ["y"]}), FairnessConfigError, r"not a mix"),
    ],
)
def test_validation(kw: dict, err: type, fragment: str) -> None:
    labels = kw.pop("labels", LABELS)
    scores = kw.pop("scores", SCORES)
    args = dict(groups=GROUPS, taxonomy=TAX, top_k=2, min_group_size=1)
    args.update(kw)
    with pytest.raises(err, match=fragment):
        label_association(labels, scores, **args)


def test_full_scores_bad_index() -> None:
    with pytest.raises(InvalidDataError, match=r"labels index classes"):
        label_association([[9]], np.full((1, 3), 0.3), groups=["a"], taxonomy=TAX, top_k=1)


def test_unmapped_labels_noted() -> None:
    r = label_association([["x"]], [[0.9]], groups=["a"], taxonomy=TAX, top_k=1,
                          min_group_size=1)
    assert any("none of the predicted labels" in n for n in r.notes)


def test_imagenet_variants_differ_on_dogs_and_cats() -> None:
    cc, miap = imagenet1k_taxonomy("cc"), imagenet1k_taxonomy("miap")
    assert cc.type_of(151) == "non_human" and miap.type_of(151) == "possibly_non_human"
    assert cc.type_of(281) is None and miap.type_of(281) == "possibly_non_human"
    for index, kind in [(365, "non_human"), (743, "crime"), (983, "human"),
                        (629, "possibly_human")]:
        assert cc.type_of(index) == kind == miap.type_of(index)
    assert imagenet1k_taxonomy("miap", by="name").type_of("prison") == "crime"
    rows = imagenet1k_classes("cc")
    assert all(row["reason"] and row["seed_label"] for row in rows)
    assert len({row["index"] for row in rows}) == len(rows)


@pytest.mark.slow  # importing torchvision takes seconds
def test_imagenet_names_match_torchvision() -> None:
    meta = pytest.importorskip("torchvision.models._meta")
    for row in imagenet1k_classes("miap"):
        assert meta._IMAGENET_CATEGORIES[row["index"]] == row["name"]


def test_taxonomy_validation() -> None:
    with pytest.raises(FairnessConfigError, match="listed under both"):
        Taxonomy.from_types({"crime": ["a"], "human": ["a"]})
    with pytest.raises(FairnessConfigError, match="must list its labels"):
        Taxonomy.from_types({"crime": "prison"})
    with pytest.raises(FairnessConfigError, match="non-empty string"):
        Taxonomy({1: 3})
    with pytest.raises(FairnessConfigError, match="not in types"):
        Taxonomy({1: "odd"}, types=("human",))
    with pytest.raises(FairnessConfigError, match="variant='coco'"):
        imagenet1k_taxonomy("coco")
    with pytest.raises(FairnessConfigError, match="by='wnid'"):
        imagenet1k_taxonomy(by="wnid")
    assert as_taxonomy({"crime": ["prison"]}).type_of("prison") == "crime"
    assert Taxonomy({1: "sexism"}).types[-1] == "sexism"


def _paper_oracle(labels: Any, scores: Any, groups: Any, tax: dict[int, str],
                  grid: list[float], top_k: int, kind: str) -> dict[float, dict[Any, float]]:
    """Per image and τ, straight from the definition: any top-k label of ``kind`` with s ≥ τ."""
    harmful = {"non_human", "crime"}
    out: dict[float, dict[Any, float]] = {}
    for tau in grid:
        counts: dict[Any, list[int]] = {}
        for row, srow, g in zip(labels, scores, groups):
            order = sorted(range(len(row)), key=lambda c: -srow[c])[:top_k]  # stable sort
            kinds = {tax.get(int(row[c])) for c in order if srow[c] >= tau}
            hit = bool(kinds & harmful) if kind == "harmful" else kind in kinds
            entry = counts.setdefault(g, [0, 0])
            entry[0] += 1
            entry[1] += hit
        out[tau] = {g: h / n for g, (n, h) in counts.items()}
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", ["harmful", "human", "crime"])
def test_sweep_equals_definition_with_scores_on_the_grid(seed: int, kind: str) -> None:
    """Scores equal to a τ count as hits (≥), duplicated scores keep the column order."""
    rng = np.random.default_rng(seed)
    n, cols = 80, 4
    labels = rng.integers(0, 7, size=(n, cols))  # 0, 5 and 6 are unmapped
    scores = rng.choice([0.0, 0.1, 0.2, 0.3, 0.35, 0.5, 0.7, 1.0], size=(n, cols))
    groups = rng.choice(["a", "b", "c"], n)
    grid = [0.0, 0.1, 0.3, 0.35, 0.5, 1.0]
    for top_k in (2, cols):  # a sort, and every column
        r = label_association(labels, scores, groups=groups, taxonomy=TAX, top_k=top_k,
                              thresholds=grid, label_type=kind, min_group_size=1)
        oracle = _paper_oracle(labels, scores, groups, TAX, grid, top_k, kind)
        for tau, rows in oracle.items():
            got = {g.group: g.value for g in r.select(tau).groups}
            assert got == pytest.approx(rows, abs=0)


def test_label_spaces_agree() -> None:
    """Class indices (lookup table), names, and out-of-range indices give one answer."""
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 6, size=(50, 3))
    scores = rng.random((50, 3))
    groups = rng.choice(["a", "b"], 50)
    kw = dict(groups=groups, top_k=2, min_group_size=1)
    by_index = label_association(labels, scores, taxonomy=TAX, **kw)
    names = np.array([f"c{i}" for i in range(6)])
    by_name = label_association(names[labels], scores,
                                taxonomy={f"c{k}": v for k, v in TAX.items()}, **kw)
    negative = label_association(labels - 10, scores,
                                 taxonomy={k - 10: v for k, v in TAX.items()}, **kw)
    huge = label_association(labels + 2**40, scores,
                             taxonomy={k + 2**40: v for k, v in TAX.items()}, **kw)
    for other in (by_name, negative, huge):
        for tau in by_index.coordinates:
            assert by_index.select(tau).groups == other.select(tau).groups


def test_bootstrap_columns_follow_the_label_type() -> None:
    """Intervals resample the gated type's hits (human here), for both variants."""
    rng = np.random.default_rng(4)
    n = 60
    # Group a: always a human label, never a harmful one; group b: human at τ=0 only
    # when drawn, harmful labels mixed in.
    labels = np.concatenate([np.tile([2, 4, 7], (n, 1)), rng.integers(1, 5, size=(n, 3))])
    scores = np.concatenate([np.tile([0.9, 0.05, 0.05], (n, 1)), rng.random((n, 3)) * 0.4])
    groups = np.repeat(["a", "b"], n)
    for variant in ("paper", "reference"):
        r = label_association(labels, scores, groups=groups, taxonomy=TAX, top_k=2,
                              label_type="human", variant=variant, n_bootstrap=100, seed=1,
                              thresholds=[0.0, 0.5])
        assert r.select(0.5).group("a").interval == (1.0, 1.0)
        assert r.select(0.5).group("b").interval == (0.0, 0.0)
        for g in r.select(0.0).groups:
            lo, hi = g.interval
            assert lo <= g.value <= hi


# -- malformed inputs (#17) ---------------------------------------------------------------------
@pytest.mark.parametrize("labels, fragment", [
    ([[1.0, np.nan], [3.0, 2.0], [2.0, 1.0], [2.0, 4.0]], r"labels\[0, 1\] is NaN"),
    ([[1, 2], [3, None], [2, 1], [2, 4]], r"labels\[1, 1\] is None"),
    ([[1, 2], [3, 2], ["cat", float("nan")], [2, 4]], r"labels\[2, 1\] is NaN"),
    ([[1, 2], [3, 2], [2, 1], [{"a": 1}, 4]], r"labels\[3, 0\] is a dict"),
])
def test_missing_predicted_labels_name_the_row(labels: Any, fragment: str) -> None:
    with pytest.raises(InvalidDataError, match=fragment + r".*fix or drop those images"):
        _run(labels=labels)


def test_names_and_indices_mixed_in_labels_are_kept_apart() -> None:
    r = _run(labels=[[1, "cat"], [3, 2], ["cat", 1], [2, 4]],
             taxonomy={1: "non_human", 2: "human", 3: "crime", "cat": "possibly_non_human"})
    assert r.group("a").value == 1.0 and r.group("b").value == 0.0


@pytest.mark.parametrize("groups, fragment", [
    (np.array([1, "1", 2, 2], dtype=object), r"groups mixes value types: 1 \(int, row 0\) and "
                                             r"'1' \(str, row 1\) print the same"),
    ([1, "1", 2, 2], r"1 \(int, row 0\) and '1' \(str, row 1\)"),
    ([True, 1, 0, 0], r"True \(bool, row 0\) and 1 \(int, row 1\) are equal in Python"),
    ([{"g": 1}, {"g": 1}, {"g": 2}, {"g": 2}], r"groups row 0: the value \{'g': 1\} is a dict"),
    ([("a", 1), ("a", 1), ("b", 2), ("b", 2)], r"groups holds sequences .*pandas Series of "
                                               r"tuples"),
    ([("a", 1), ("a",), ("b", 2), "b"], r"groups holds sequences"),
    ([None, "a", "b", "b"], r"groups contains NaN/None at row 0"),
    ([float("nan"), "a", "b", "b"], r"groups contains NaN/None at row 0"),
])
def test_bad_group_values_are_named(groups: Any, fragment: str) -> None:
    with pytest.raises(InvalidDataError, match=fragment):
        _run(groups=groups)


def test_tuple_groups_from_a_series_and_frames_still_work() -> None:
    import pandas as pd

    series = pd.Series([("a", 1), ("a", 1), ("b", 2), ("b", 2)])
    assert [g.group for g in _run(groups=series).groups] == [("a", 1), ("b", 2)]
    frame = pd.DataFrame({"g": GROUPS, "s": [1, 1, 2, 2]})
    assert [g.group for g in _run(groups=frame).groups] == [("a", 1), ("b", 2)]
    with pytest.raises(InvalidDataError, match=r"groups row 1: the value None in \('a', None\)"):
        _run(groups=pd.Series([("a", 1), ("a", None), ("b", 2), ("b", 2)]))
    with pytest.raises(InvalidDataError, match=r"groups\['s'\] mixes value types"):
        _run(groups=pd.DataFrame({"g": GROUPS, "s": [1, "1", 2, 2]}))
    onehot = np.array([[1, 0], [1, 0], [0, 1], [0, 1]])
    assert [g.group for g in _run(groups=onehot).groups] == [0, 1]


# -- the review's findings (the threshold is inclusive) -------------------------------------------


def test_label_association_threshold_is_inclusive_in_both_variants() -> None:
    """§2: a hit needs confidence >= τ (VISSL drops only scores < τ): equality counts."""
    labels, scores = [[1, 2]], [[0.3, 0.2]]
    for variant in ("paper", "reference"):
        r = label_association(labels, scores, groups=["g"], taxonomy={1: "crime"},
                              thresholds=[0.3, 0.31], top_k=2, min_group_size=1,
                              variant=variant)
        assert r.select(0.3).value == 1.0
        assert r.select(0.31).value == 0.0
