"""Replicates drawn on the same units: what makes a regression check paired.

The rows a replicate resamples depend only on the seed and the units (rows, clusters,
strata), never on the predictions, so two checkpoints evaluated on the same images with
the same seed are resampled alike, whether or not their rows pool into kinds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_fairness import indicators as ind
from pytest_fairness.results import IndicatorResult, pack_replicates, unpack_replicates

N, B = 60, 200


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, N)
    pred = np.where(rng.random(N) < 0.7, y, 1 - y)
    groups = np.repeat(["a", "b", "c"], N // 3)
    return y, pred, groups


def _poisson_weights(seed: int, n: int, b: int) -> np.ndarray:
    """The documented draw: Poisson(1) by a 16-bit inverse CDF, blocks of 16 replicates."""
    from scipy.stats import poisson

    edges = np.round(poisson.cdf(np.arange(12), 1.0) * 65536)
    table = np.searchsorted(edges, np.arange(65536), side="right")
    key = np.random.default_rng(seed).bit_generator.random_raw(2).tolist()
    blocks = [np.random.PCG64(np.random.SeedSequence([*key, 0, q])).random_raw(
        -(-n * 16 // 4)).view(np.uint16)[:n * 16].reshape(16, n) for q in range(-(-b // 16))]
    return table[np.concatenate(blocks)[:b]]  # (b, n)


def test_one_flipped_prediction_moves_each_replicate_by_its_weight() -> None:
    y, pred, groups = _data()
    j = int(np.flatnonzero(pred != y)[0])
    fixed = pred.copy()
    fixed[j] = y[j]
    kw = {"groups": groups, "min_group_size": 1, "n_bootstrap": B, "seed": 7}
    before = ind.group_metrics(y, pred, **kw)
    after = ind.group_metrics(y, fixed, **kw)
    assert before.params["bootstrap_plan"] == after.params["bootstrap_plan"]
    # Row j weighs w_j in replicate b: accuracy rises by exactly w_j / sum(w).
    w = _poisson_weights(7, N, B)
    change = np.subtract(after.replicates["value"], before.replicates["value"])
    np.testing.assert_allclose(change, w[:, j] / w.sum(axis=1), atol=1e-6)
    assert (w[:, j] == 0).any() and (w[:, j] >= 2).any()  # Poisson(1): 0, 1, 2, ...


def test_replicate_b_draws_alike_whatever_the_number_of_replicates() -> None:
    y, pred, groups = _data()
    kw = {"groups": groups, "min_group_size": 1, "seed": 5}
    few = ind.group_metrics(y, pred, n_bootstrap=100, **kw)
    many = ind.group_metrics(y, pred, n_bootstrap=B, **kw)
    np.testing.assert_array_equal(few.replicates["value"], many.replicates["value"][:100])


def test_pooled_kinds_draw_the_rows_that_rows_drawn_alone_draw() -> None:
    y, pred, groups = _data(1)
    kw = {"groups": groups, "min_group_size": 1, "n_bootstrap": B, "seed": 3}
    pooled = ind.group_metrics(y, pred, **kw)  # 12 kinds for 60 rows: pooled
    alone = ind.group_metrics(y, pred, clusters=np.arange(N), **kw)  # each row a cluster
    assert pooled.params["bootstrap_plan"] == alone.params["bootstrap_plan"]
    for name in ("value", "gap", "ratio"):
        np.testing.assert_allclose(pooled.replicates[name], alone.replicates[name],
                                   atol=1e-6)
    assert pooled.intervals["gap"] == pytest.approx(alone.intervals["gap"], abs=1e-6)


def test_clusters_change_the_plan_and_no_bootstrap_keeps_no_replicates() -> None:
    y, pred, groups = _data()
    kw = {"groups": groups, "min_group_size": 1, "n_bootstrap": B, "seed": 3}
    rows = ind.group_metrics(y, pred, **kw)
    households = ind.group_metrics(y, pred, clusters=np.arange(N) // 2, **kw)
    assert rows.params["bootstrap_plan"] != households.params["bootstrap_plan"]
    plain = ind.group_metrics(y, pred, groups=groups, min_group_size=1, n_bootstrap=0)
    assert plain.replicates == {} and "bootstrap_plan" not in plain.params
    assert "replicates" not in plain.to_dict()


def test_replicates_round_trip_and_stay_out_of_equality() -> None:
    y, pred, groups = _data()
    r = ind.group_metrics(y, pred, groups=groups, min_group_size=1, n_bootstrap=B, seed=1)
    back = IndicatorResult.from_dict(r.to_dict())
    assert back == r and back.replicates == r.replicates
    # value, gap, ratio, each column's gap, every derived stat (DA and DEO share the gap's
    # and the TPR gap's: what comparisons on them read), the worst group's value, and each
    # included group's headline (what re-levels simultaneous intervals under
    # --fairness-family-alpha)
    assert set(r.replicates) == {"value", "gap", "ratio", "gap:tpr", "gap:fpr", "MGA", "mGA",
                                 "DA", "DEO", "DEOdds", "DTO", "worst",
                                 *(f"group:{i}" for i in range(len(r.groups)))}
    np.testing.assert_array_equal(r.replicates["DA"], r.replicates["gap"])
    np.testing.assert_array_equal(r.replicates["DEO"], r.replicates["gap:tpr"])
    assert all(len(v) == B for v in r.replicates.values())


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), max_size=50))
def test_packing_keeps_float32_values(values: list[float]) -> None:
    back = unpack_replicates(pack_replicates(values))
    np.testing.assert_array_equal(np.array(back, dtype=np.float32),
                                  np.array(values, dtype=np.float32))


@pytest.mark.parametrize("text", ["not base64!", "QUJD", 5, None])
def test_damaged_replicates_are_named(text: object) -> None:
    from pytest_fairness.errors import FairnessConfigError

    with pytest.raises(FairnessConfigError, match=r"replicates\['gap'\] is .*regenerate"):
        unpack_replicates(text, where="replicates['gap']")


def test_a_plan_drawn_before_poisson_weights_does_not_pair() -> None:
    """Replicates of an older baseline (multinomial draws, same rows) compare unpaired."""
    import hashlib

    rows = np.arange(N, dtype=np.int64).tobytes()  # the former plan: units, then the stratum
    old_plan = hashlib.sha256(rows + b"|" + rows).hexdigest()[:16]
    y, pred, groups = _data()
    now = ind.group_metrics(y, pred, groups=groups, min_group_size=1, n_bootstrap=B, seed=1)
    assert now.params["bootstrap_plan"] != old_plan


@pytest.mark.usefixtures("paired_draws")
def test_drawn_image_by_image_pooled_kinds_still_draw_their_rows() -> None:
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 600)
    pred = np.where(rng.random(600) < 0.8, y, 1 - y)
    kw = {"groups": np.repeat(["a", "b", "c"], 200), "n_bootstrap": B, "seed": 3}
    pooled = ind.group_metrics(y, pred, **kw)  # 12 kinds for 600 rows: pooled
    alone = ind.group_metrics(y, pred, clusters=np.arange(600), **kw)
    assert "bootstrap_draw" not in pooled.params
    assert pooled.params["bootstrap_plan"] == alone.params["bootstrap_plan"]
    np.testing.assert_allclose(pooled.replicates["gap"], alone.replicates["gap"], atol=1e-6)


def test_per_kind_draws_are_poisson_totals_of_the_kinds() -> None:
    """Each kind's replicate weight is Poisson(size) / size, drawn from (seed, 2)."""
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 600)
    pred = np.where(rng.random(600) < 0.8, y, 1 - y)
    r = ind.group_metrics(y, pred, groups=np.repeat(["a", "b"], 300), n_bootstrap=B, seed=9)
    assert r.params["bootstrap_draw"] == "kinds"
    # Kinds in the order of their rows' contributions: group, right, TP, positive, FP, negative.
    group, right = np.repeat([0, 1], 300), (y == pred).astype(int)
    contributions = np.column_stack([group, right, pred * y, y, pred * (1 - y), 1 - y])
    kind = np.unique(contributions, axis=0, return_inverse=True)[1].reshape(-1)
    sizes = np.bincount(kind)
    key = np.random.default_rng(9).bit_generator.random_raw(2).tolist()
    counts = np.random.Generator(np.random.PCG64(np.random.SeedSequence([*key, 2]))).poisson(
        sizes, size=(B, sizes.size))
    right = np.bincount(kind, weights=right) / sizes
    accuracy = (counts * right).sum(axis=1) / counts.sum(axis=1)
    np.testing.assert_allclose(r.replicates["value"], accuracy, rtol=1e-6)


def test_per_kind_and_per_image_draws_give_the_same_intervals() -> None:
    """The same resampling: interval widths agree to Monte Carlo error (1,000 replicates)."""
    from pytest_fairness.stats import set_paired_draws

    rng = np.random.default_rng(6)
    y = rng.integers(0, 2, 3000)
    pred = np.where(rng.random(3000) < 0.8, y, 1 - y)
    kw = {"groups": np.repeat(["a", "b", "c"], 1000), "n_bootstrap": 1000, "seed": 2}
    by_kind = ind.group_metrics(y, pred, **kw)
    previous = set_paired_draws(True)
    try:
        by_row = ind.group_metrics(y, pred, **kw)
    finally:
        set_paired_draws(previous)
    for name in ("value", "gap"):
        widths = [np.subtract(*r.intervals[name][::-1]) for r in (by_kind, by_row)]
        assert widths[0] == pytest.approx(widths[1], rel=0.12), name


@pytest.mark.usefixtures("paired_draws")
def test_image_by_image_draws_before_this_layout_do_not_pair() -> None:
    """Row draws of an older baseline (blocks of units by replicates) compare unpaired."""
    import hashlib

    rows = np.arange(N, dtype=np.int64).tobytes()
    old_plan = hashlib.sha256(rows + b"|" + rows + b"|poisson(1)").hexdigest()[:16]
    y, pred, groups = _data()
    now = ind.group_metrics(y, pred, groups=groups, min_group_size=1, n_bootstrap=B, seed=1)
    assert now.params["bootstrap_plan"] != old_plan


def _draw_in_child(queue: Any) -> None:
    from pytest_fairness import draws, stats

    units = stats.Units.of(1 << 17)
    queue.put(draws.draw(units, np.array([1, 2], dtype=np.uint64), 0, 16).sum())


def test_a_forked_child_draws_on_its_own_threads() -> None:
    """The draws' threads start once a process; a child forked after a draw starts its own
    (the parent's pool, copied without its threads, would wait forever)."""
    import multiprocessing

    from pytest_fairness import draws, stats

    units = stats.Units.of(1 << 17)  # 2^21 weights: drawn on the pool's threads
    here = draws.draw(units, np.array([1, 2], dtype=np.uint64), 0, 16).sum()
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_draw_in_child, args=(queue,))
    child.start()
    try:
        assert queue.get(timeout=60) == here
    finally:
        child.join(timeout=10)
        if child.is_alive():
            child.kill()
    assert child.exitcode == 0
