"""Bootstrap intervals of the amplification indicators, and their defaults left unchanged."""

from __future__ import annotations

import pytest

from pytest_fairness.indicators.amplification import (
    bias_amp,
    directional_bias_amp,
    multi_directional,
    multi_mals,
)

from .test_amplification import imsitu

ONE = {"min_group_size": 1}


def _hand_cases():
    """The hand-computed cases of test_amplification, by name."""
    attrs, groups, pred_groups = imsitu()
    train, x2 = [[1, 0], [1, 1], [0, 1], [0, 0]], [[1, 1], [1, 1], [1, 0], [0, 1]]
    g, test = [0, 0, 1, 1], [[1, 0], [1, 0], [0, 1], [0, 0]]
    pred = [[1, 0], [0, 0], [1, 1], [0, 0]]
    never = ([[1, 1], [1, 1], [1, 0]], [0, 0, 1], [[1, 0], [1, 0]], [0, 0])
    return {
        "imsitu multi_mals": lambda: multi_mals(
            attrs, groups, attrs, groups, attrs, pred_groups, **ONE),
        "imsitu multi_mals max_size=1": lambda: multi_mals(
            attrs, groups, attrs, groups, attrs, pred_groups, max_size=1, **ONE),
        "imsitu bias_amp": lambda: bias_amp(attrs, groups, attrs, pred_groups, **ONE),
        "imsitu multi_directional M->G": lambda: multi_directional(
            attrs, groups, attrs, groups, pred_groups=pred_groups, direction="M->G", **ONE),
        "imsitu multi_directional G->M reference": lambda: multi_directional(
            attrs, groups, attrs, groups, attrs, direction="G->M", variant="reference", **ONE),
        "imsitu multi_mals runs": lambda: multi_mals(
            attrs, groups, attrs, groups, [attrs.to_numpy()] * 2, [pred_groups, list(groups)],
            **ONE),
        "bias_amp signs": lambda: bias_amp(
            [[1, 0], [1, 1], [1, 0], [1, 1], [0, 1]], ["a", "a", "a", "b", "b"],
            [[1, 1], [1, 0], [1, 0], [0, 1]], ["a", "a", "a", "b"], **ONE),
        "bias_amp never predicted": lambda: bias_amp(*never, **ONE),
        "bias_amp never predicted reference": lambda: bias_amp(
            *never, variant="reference", **ONE),
        "directional G->M": lambda: directional_bias_amp(
            train, g, test, g, pred, direction="G->M", **ONE),
        "directional G->M reference": lambda: directional_bias_amp(
            train, g, test, g, pred, direction="G->M", variant="reference", **ONE),
        "directional M->G": lambda: directional_bias_amp(
            [[1], [1], [1], [0]], ["w", "w", "m", "m"], [[1]] * 4, ["w", "w", "m", "m"],
            pred_groups=["w", "w", "w", "m"], direction="M->G", **ONE),
        "multi_directional G->M": lambda: multi_directional(
            x2, ["w", "w", "m", "m"], x2, ["w", "w", "m", "m"],
            [[1, 1], [1, 0], [1, 0], [0, 1]], direction="G->M", **ONE),
    }


#: value, stats, intervals and group values of each hand-computed case, recorded from the
#: code before bootstrap intervals existed; n_bootstrap=0 must reproduce them to the bit.
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
def test_default_numbers_are_pinned_to_the_bit(name):
    r = _hand_cases()[name]()
    value, stats, intervals, groups = PINNED[name]
    assert r.value == value
    assert dict(r.stats) == stats
    assert dict(r.intervals) == intervals
    assert [g.value for g in r.groups] == groups
