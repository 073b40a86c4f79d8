"""Bootstrap intervals of the amplification indicators, and their defaults left unchanged."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pytest_fairness import fairness
from pytest_fairness.errors import FairnessConfigError, FairnessViolation
from pytest_fairness.indicators.amplification import (
    bias_amp,
    directional_bias_amp,
    multi_directional,
    multi_mals,
)
from tests.unit.pin_cases import differences

from .test_amplification import imsitu

ONE = {"min_group_size": 1}


def _hand_cases(**kwargs):
    """The hand-computed cases of test_amplification, by name (``kwargs`` go to every call)."""
    one = {**ONE, **kwargs}
    attrs, groups, pred_groups = imsitu()
    train, x2 = [[1, 0], [1, 1], [0, 1], [0, 0]], [[1, 1], [1, 1], [1, 0], [0, 1]]
    g, test = [0, 0, 1, 1], [[1, 0], [1, 0], [0, 1], [0, 0]]
    pred = [[1, 0], [0, 0], [1, 1], [0, 0]]
    never = ([[1, 1], [1, 1], [1, 0]], [0, 0, 1], [[1, 0], [1, 0]], [0, 0])
    return {
        "imsitu multi_mals": lambda: multi_mals(
            attrs, groups, attrs, groups, attrs, pred_groups, **one),
        "imsitu multi_mals max_size=1": lambda: multi_mals(
            attrs, groups, attrs, groups, attrs, pred_groups, max_size=1, **one),
        "imsitu bias_amp": lambda: bias_amp(attrs, groups, attrs, pred_groups, **one),
        "imsitu multi_directional M->G": lambda: multi_directional(
            attrs, groups, attrs, groups, pred_groups=pred_groups, direction="M->G", **one),
        "imsitu multi_directional G->M reference": lambda: multi_directional(
            attrs, groups, attrs, groups, attrs, direction="G->M", variant="reference", **one),
        "imsitu multi_mals runs": lambda: multi_mals(
            attrs, groups, attrs, groups, [attrs.to_numpy()] * 2, [pred_groups, list(groups)],
            **one),
        "bias_amp signs": lambda: bias_amp(
            [[1, 0], [1, 1], [1, 0], [1, 1], [0, 1]], ["a", "a", "a", "b", "b"],
            [[1, 1], [1, 0], [1, 0], [0, 1]], ["a", "a", "a", "b"], **one),
        "bias_amp never predicted": lambda: bias_amp(*never, **one),
        "bias_amp never predicted reference": lambda: bias_amp(
            *never, variant="reference", **one),
        "directional G->M": lambda: directional_bias_amp(
            train, g, test, g, pred, direction="G->M", **one),
        "directional G->M reference": lambda: directional_bias_amp(
            train, g, test, g, pred, direction="G->M", variant="reference", **one),
        "directional M->G": lambda: directional_bias_amp(
            [[1], [1], [1], [0]], ["w", "w", "m", "m"], [[1]] * 4, ["w", "w", "m", "m"],
            pred_groups=["w", "w", "w", "m"], direction="M->G", **one),
        "multi_directional G->M": lambda: multi_directional(
            x2, ["w", "w", "m", "m"], x2, ["w", "w", "m", "m"],
            [[1, 1], [1, 0], [1, 0], [0, 1]], direction="G->M", **one),
    }


#: value, stats, intervals and group values of each hand-computed case, recorded from the
#: code before bootstrap intervals existed; n_bootstrap=0 must reproduce them (floats within
#: rel 1e-9: their last bits differ between CPUs).
PINNED = {
    "imsitu multi_mals": (0.1, {
        "amplification": 0.1, "signed_mean": 0.0, "abs_mean": 0.1, "variance": 0.009375,
        "n_combinations": 5.0, "n_cells": 10.0, "runs": 1.0}, {}, [0.05, 0.05]),
    "imsitu multi_mals max_size=1": (0.08333333333333333, {
        "amplification": 0.08333333333333333, "signed_mean": -0.08333333333333333,
        "abs_mean": 0.08333333333333333, "variance": 0.0034722222222222225,
        "n_combinations": 3.0, "n_cells": 6.0, "runs": 1.0}, {}, [0.0, 0.08333333333333333]),
    "imsitu bias_amp": (-0.08333333333333333, {
        "amplification": -0.08333333333333333, "signed_mean": -0.08333333333333333,
        "abs_mean": 0.08333333333333333, "variance": 0.0034722222222222225,
        "n_combinations": 3.0, "n_cells": 6.0, "runs": 1.0}, {}, [0.0, -0.08333333333333333]),
    "imsitu multi_directional M->G": (0.1, {
        "amplification": 0.1, "signed_mean": 0.1, "abs_mean": 0.1, "variance": 0.01875,
        "n_combinations": 5.0, "n_cells": 10.0, "runs": 1.0, "n_train_kept": 12.0}, {},
        [0.1, 0.1]),
    "imsitu multi_directional G->M reference": (0.0, {
        "amplification": 0.0, "signed_mean": 0.0, "abs_mean": 0.0, "variance": 0.0,
        "n_combinations": 3.0, "n_cells": 6.0, "runs": 1.0, "n_train_kept": 12.0}, {},
        [0.0, 0.0]),
    "imsitu multi_mals runs": (0.05, {
        "amplification": 0.05, "amplification_std": 0.05, "signed_mean": 0.0,
        "signed_mean_std": 0.0, "abs_mean": 0.05, "abs_mean_std": 0.05,
        "variance": 0.0046875, "variance_std": 0.0046875, "n_combinations": 5.0,
        "n_cells": 10.0, "runs": 2.0}, {
        "amplification": (-0.01929646455628166, 0.11929646455628166),
        "signed_mean": (0.0, 0.0),
        "abs_mean": (-0.01929646455628166, 0.11929646455628166),
        "variance": (-0.001809043552151405, 0.011184043552151406),
        "value": (-0.01929646455628166, 0.11929646455628166)}, [0.025, 0.025]),
    "bias_amp signs": (0.041666666666666685, {
        "amplification": 0.041666666666666685, "signed_mean": 0.041666666666666685,
        "abs_mean": 0.20833333333333331, "variance": 0.022135416666666664,
        "n_combinations": 2.0, "n_cells": 4.0, "runs": 1.0}, {},
        [0.125, -0.08333333333333331]),
    "bias_amp never predicted": (0.33333333333333337, {
        "amplification": 0.33333333333333337, "signed_mean": 0.33333333333333337,
        "abs_mean": 0.33333333333333337, "variance": 0.027777777777777783,
        "n_combinations": 2.0, "n_cells": 2.0, "runs": 1.0}, {}, [0.33333333333333337, 0.0]),
    "bias_amp never predicted reference": (0.16666666666666669, {
        "amplification": 0.16666666666666669, "signed_mean": 0.16666666666666669,
        "abs_mean": 0.16666666666666669, "variance": 0.024691358024691367,
        "n_combinations": 2.0, "n_cells": 4.0, "runs": 1.0}, {}, [0.16666666666666669, 0.0]),
    "directional G->M": (-0.25, {
        "amplification": -0.25, "signed_mean": -0.25, "abs_mean": 0.25, "variance": 0.125,
        "n_combinations": 2.0, "n_cells": 4.0, "runs": 1.0, "n_train_kept": 4.0}, {},
        [-0.25, -0.25]),
    "directional G->M reference": (-0.25, {
        "amplification": -0.25, "signed_mean": -0.25, "abs_mean": 0.25, "variance": 0.125,
        "n_combinations": 2.0, "n_cells": 4.0, "runs": 1.0, "n_train_kept": 3.0}, {},
        [-0.25, -0.25]),
    "directional M->G": (0.25, {
        "amplification": 0.25, "signed_mean": 0.25, "abs_mean": 0.25, "variance": 0.0625,
        "n_combinations": 1.0, "n_cells": 2.0, "runs": 1.0, "n_train_kept": 4.0}, {},
        [0.25, 0.25]),
    "multi_directional G->M": (0.16666666666666666, {
        "amplification": 0.16666666666666666, "signed_mean": -0.16666666666666666,
        "abs_mean": 0.16666666666666666, "variance": 0.05555555555555556,
        "n_combinations": 3.0, "n_cells": 6.0, "runs": 1.0, "n_train_kept": 4.0}, {},
        [0.0, 0.3333333333333333]),
}


@pytest.mark.parametrize("name", PINNED)
def test_default_numbers_are_pinned(name):
    r = _hand_cases(n_bootstrap=0)[name]()
    got = (r.value, dict(r.stats), dict(r.intervals), [g.value for g in r.groups])
    assert differences(json.loads(json.dumps(got)), json.loads(json.dumps(PINNED[name]))) == []
    # the default draws bootstrap intervals, and they leave every number alone
    default = _hand_cases()[name]()
    value, stats, _, groups = PINNED[name]
    numbers = (default.value, dict(default.stats), [g.value for g in default.groups])
    assert differences(json.loads(json.dumps(numbers)),
                       json.loads(json.dumps((value, stats, groups)))) == []
    assert default.params["n_bootstrap"] == 1000 and "value" in default.intervals


# -- bootstrap intervals ----------------------------------------------------------------------


def _moderate(seed=3, n=300):
    """Two groups, five attributes tied to them; a model that amplifies the ties."""
    rng = np.random.default_rng(seed)
    p = np.array([[0.3, 0.5, 0.2, 0.4, 0.25], [0.5, 0.3, 0.35, 0.2, 0.25]])

    def draw(size):
        g = rng.integers(0, 2, size)
        x = (rng.random((size, 5)) < p[g]).astype(int)
        pred = np.where(x == 1, rng.random(x.shape) < 0.85, rng.random(x.shape) < 0.1 + 0.1 * (
            p[g] > p[1 - g])).astype(int)
        return x, g, pred, np.where(rng.random(size) < 0.1, 1 - g, g)

    train, g_train, _, _ = draw(2 * n)
    return (train, g_train, *draw(n))


CALLS = {
    "bias_amp": lambda tr, gtr, x, g, p, pg, **kw: bias_amp(tr, gtr, p, pg, **ONE, **kw),
    "directional_bias_amp": lambda tr, gtr, x, g, p, pg, **kw: directional_bias_amp(
        tr, gtr, x, g, p, direction="G->M", **ONE, **kw),
    "multi_mals": lambda tr, gtr, x, g, p, pg, **kw: multi_mals(
        tr, gtr, x, g, p, pg, max_size=2, **ONE, **kw),
    "multi_directional": lambda tr, gtr, x, g, p, pg, **kw: multi_directional(
        tr, gtr, x, g, pred_groups=pg, direction="M->G", max_size=2, **ONE, **kw),
}


@pytest.mark.parametrize("name", CALLS)
def test_intervals_hold_the_estimate_and_leave_the_numbers_alone(name):
    data = _moderate()
    plain = CALLS[name](*data, n_bootstrap=0)
    r = CALLS[name](*data, n_bootstrap=300, seed=0)
    assert (r.value, dict(r.stats), [g.value for g in r.groups]) == (
        plain.value, dict(plain.stats), [g.value for g in plain.groups])
    assert r.intervals["value"] == r.intervals["amplification"]
    for key, estimate in (("value", r.value), ("variance", r.stats["variance"])):
        low, high = r.intervals[key]
        assert low < estimate < high, key
    assert r.params | {"n_bootstrap": 0} == plain.params | {
        "seed": 0, "confidence_level": 0.95, "bootstrap_plan": r.params["bootstrap_plan"],
        "interval_method": "linearised" if name == "multi_directional" else "percentile"}


@pytest.mark.parametrize("name", CALLS)
def test_seed_fixes_the_intervals(name):
    data = _moderate(seed=4, n=120)
    a, b, c = (CALLS[name](*data, n_bootstrap=100, seed=s) for s in (1, 1, 2))
    assert a.intervals == b.intervals
    assert a.intervals["value"] != c.intervals["value"]
    assert CALLS[name](*data, n_bootstrap=100).params["seed"] is not None  # drawn, reported
    generator = CALLS[name](*data, n_bootstrap=100, seed=np.random.default_rng(0))
    assert generator.params["seed"] is None and "value" in generator.intervals


@pytest.mark.parametrize("kwargs", [{"n_bootstrap": 5}, {"n_bootstrap": -1},
                                    {"n_bootstrap": 100, "confidence_level": 2},
                                    {"n_bootstrap": 100, "interval_method": "x"},
                                    {"n_bootstrap": 100, "seed": "x"}])
@pytest.mark.parametrize("name", CALLS)
def test_bad_interval_keywords(name, kwargs):
    with pytest.raises(FairnessConfigError, match=next(iter(kwargs.keys() - {"n_bootstrap"}),
                                                       "n_bootstrap")):
        CALLS[name](*_moderate(n=40), **kwargs)


def test_runs_share_one_draw_of_test_images():
    """Identical runs: every replicate's runs agree, so the intervals are one run's."""
    tr, gtr, x, g, p, pg = _moderate(n=150)
    for call in (lambda **kw: multi_mals(tr, gtr, x, g, **kw, **ONE),
                 lambda **kw: directional_bias_amp(tr, gtr, x, g, direction="G->M", **kw, **ONE)):
        one = call(pred_attrs=p, pred_groups=pg, n_bootstrap=100, seed=5)
        two = call(pred_attrs=[p, p], pred_groups=[pg, pg], n_bootstrap=100, seed=5)
        assert two.stats["amplification_std"] == two.stats["variance_std"] == 0.0
        assert {k: two.intervals[k] for k in one.intervals} == one.intervals
        assert two.intervals["signed_mean"] == (two.stats["signed_mean"],) * 2  # the runs' spread
    runs = multi_mals(tr, gtr, x, g, [p, 1 - p], [pg, pg], n_bootstrap=0, **ONE)
    boot = multi_mals(tr, gtr, x, g, [p, 1 - p], [pg, pg], n_bootstrap=100, seed=5, **ONE)
    assert boot.intervals["abs_mean"] == runs.intervals["abs_mean"]
    assert boot.intervals["value"] != runs.intervals["value"]


@pytest.mark.parametrize("name", CALLS)
def test_reference_variant_and_bca(name):
    data = _moderate(n=80)
    for kw in ({"variant": "reference"}, {"interval_method": "bca"}):
        r = CALLS[name](*data, n_bootstrap=100, seed=0, **kw)
        assert r.value == CALLS[name](*data, n_bootstrap=0, **kw).value
        assert r.intervals["value"][0] <= r.intervals["value"][1], kw


def test_undefined_replicates_are_left_out_and_noted():
    # one test image holds the attribute: a replicate without it has no defined cell
    r = directional_bias_amp([[1], [1], [0], [0]], [0, 1, 0, 1], [[1]] + [[0]] * 5,
                             [0, 0, 0, 1, 1, 1], pred_groups=[0, 0, 1, 0, 1, 1],
                             direction="M->G", n_bootstrap=200, seed=0, **ONE)
    note = next(n for n in r.notes if "bootstrap replicates" in n)
    lost = int(note.split()[0])
    assert 30 < lost < 120 and note.startswith(f"{lost} of 200 bootstrap replicates")
    assert r.intervals["value"] == (r.value, r.value)


def test_confidence_gates_on_the_bootstrap_interval():
    r = CALLS["multi_mals"](*_moderate(), n_bootstrap=200, seed=0)
    (low, high), v_low = r.intervals["amplification"], r.intervals["variance"][0]
    fairness.check(r, max_amplification=(low + r.value) / 2, confidence="supported")
    fairness.check(r, max_variance=(v_low + r.stats["variance"]) / 2, confidence="supported")
    with pytest.raises(FairnessViolation):
        fairness.check(r, max_amplification=(r.value + high) / 2, confidence="strict")
    with pytest.raises(FairnessConfigError, match="needs an interval"):
        fairness.check(CALLS["multi_mals"](*_moderate(), n_bootstrap=0), max_amplification=1.0,
                       confidence="supported")


def test_a_value_outside_its_interval_is_noted():
    """Mean |Δ| over many rare combinations: resampling inflates every |Δ|."""
    rng = np.random.default_rng(0)
    x, g = (rng.random((200, 10)) < 0.3).astype(int), rng.integers(0, 2, 200)
    train, g_train = (rng.random((200, 10)) < 0.3).astype(int), rng.integers(0, 2, 200)
    r = multi_directional(train, g_train, x, g, x, direction="G->M", max_size=3,
                          n_bootstrap=200, seed=0, interval_method="percentile", **ONE)
    low, high = r.intervals["value"]
    assert r.value < low < high
    assert any(n.startswith("the value lies outside its bootstrap interval") for n in r.notes)
    # the default linearised interval adds no |Δ| bias, and holds the value
    default = multi_directional(train, g_train, x, g, x, direction="G->M", max_size=3,
                                n_bootstrap=200, seed=0, **ONE)
    assert default.intervals["value"][0] < default.value < default.intervals["value"][1]


def test_multi_directional_linearised_interval_by_hand(monkeypatch):
    """Default: the percentile interval of mean sign(Δ̂)·Δ*, each Δ* from the rows drawn."""
    from pytest_fairness import stats

    data = _moderate(n=120)
    drawn: list[np.ndarray] = []
    real = stats.bootstrap

    def spy(statistic, units, **kwargs):
        def wrapped(w):
            drawn.extend(w.copy())
            return statistic(w)

        return real(wrapped, units, **kwargs)

    monkeypatch.setattr(stats, "bootstrap", spy)
    r = CALLS["multi_directional"](*data, n_bootstrap=100, seed=0)
    monkeypatch.undo()
    old = CALLS["multi_directional"](*data, n_bootstrap=100, seed=0, interval_method="percentile")
    assert (r.params["interval_method"], old.params["interval_method"]) == (
        "linearised", "percentile")
    assert (r.value, r.stats, r.replicates) == (old.value, old.stats, old.replicates)
    assert r.value == CALLS["multi_directional"](*data, n_bootstrap=0).value  # the paper's
    assert r.intervals["variance"] == old.intervals["variance"]

    def deltas(result):
        return {(c["group"], c["attributes"]): c["delta"] for c in result.tables["cells"]}

    estimate = deltas(r)
    train, g_train, *test = data
    by_hand = []
    for w in drawn[1:]:  # drawn[0] is the estimate's all-ones weights
        rows = np.repeat(np.arange(len(w)), w.astype(int))
        again = deltas(CALLS["multi_directional"](train, g_train, *(t[rows] for t in test),
                                                  n_bootstrap=0))
        by_hand.append(np.mean([np.sign(estimate[k]) * again[k] for k in estimate]))
    assert r.intervals["value"] == pytest.approx(tuple(np.quantile(by_hand, [0.025, 0.975])))
    assert r.intervals["amplification"] == r.intervals["value"]


def test_unknown_interval_method_names_the_choices():
    with pytest.raises(FairnessConfigError, match=r"interval_method must be one of .*'linearised'"
                       r".*got interval_method='studentized'"):
        CALLS["multi_directional"](*_moderate(), n_bootstrap=300, interval_method="studentized")
