"""confidence="supported" and "strict" work on every indicator, on its headline.

For each indicator a moderate sample is computed with intervals; the limit keyword of its
headline (the gap, iEAT's |effect size|, the amplification, Fair SA's L1) is then set
inside the interval (beyond the estimate): "point" fails, "supported" passes, "strict"
fails, and the default rule (no confidence named: "supported") finds it inconclusive, which
passes; and beyond the whole interval: "supported" fails too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from pytest_fairness import fairness, indicators
from pytest_fairness.errors import FairnessViolation
from pytest_fairness.indicators import INDICATORS, headline

#: The limit keyword that bounds each headline metric from above.
LIMIT_OF = {"gap": "max_gap", "effect_size": "max_effect_size",
            "amplification": "max_amplification", "l1": "max_l1"}
BOOT = {"n_bootstrap": 300, "seed": 0}


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _group_metrics() -> Any:
    rng = _rng(0)
    y = rng.integers(0, 2, 600)
    g = np.repeat([0, 1], 300)
    correct = rng.random(600) < np.where(g == 0, 0.9, 0.8)
    return indicators.group_metrics(y, np.where(correct, y, 1 - y), groups=g, **BOOT)


def _landmark_metrics() -> Any:
    rng = _rng(1)
    g = np.repeat([0, 1], 300)
    truth = np.broadcast_to(np.array([[0.0, 0.0], [10.0, 0.0]]), (600, 2, 2))
    pred = truth + rng.normal(size=(600, 2, 2)) * np.where(g == 0, 0.5, 0.7)[:, None, None]
    return indicators.landmark_metrics(truth, pred, groups=g, normalizer=(0, 1), **BOOT)


def _label_association() -> Any:
    rng = _rng(2)
    g = np.repeat(["a", "b"], 300)
    harmful = rng.random(600) < np.where(g == "a", 0.2, 0.08)
    labels = np.stack([np.where(harmful, 3, 2), np.full(600, 1)], axis=1)
    return indicators.label_association(labels, np.tile([0.9, 0.05], (600, 1)), groups=g,
                                        taxonomy={1: "non_human", 2: "human", 3: "crime"},
                                        top_k=2, **BOOT)


def _geodiversity() -> Any:
    rng = _rng(3)
    household = np.repeat(np.arange(120), 3)
    region = np.where(household < 60, "Africa", "Europe")
    hit = rng.random(360) < np.where(region == "Africa", 0.7, 0.45)
    labels = np.stack([np.where(hit, 1, 2), np.full(360, 3)], axis=1)
    return indicators.geodiversity(labels, np.tile([0.9, 0.1], (360, 1)), truth=np.ones(360),
                                   household=household, region=region,
                                   income=np.full(360, 300.0), top_k=2, by="region", **BOOT)


def _precision_at_k() -> Any:
    rng = _rng(4)
    genders = np.repeat(["f", "m"], [240, 60])
    emb = np.where(genders[:, None] == "f", 1.0, -1.0) * np.eye(8)[0] + rng.normal(size=(300, 8))
    data = (emb, pd.DataFrame({"gender": genders}))
    return indicators.precision_at_k(data, data, k=5, match="gender", by="gender",
                                     exclude_self=True, **BOOT)


def _ieat_sets(seed: int) -> list[Any]:
    rng = _rng(seed)
    shift = np.eye(16)[0] * 0.8
    return [rng.normal(size=(20, 16)) + s for s in (shift, -shift, shift, -shift)]


def _ieat() -> Any:
    return indicators.ieat(*_ieat_sets(5), n_permutations=100, **BOOT)


def _ieat_battery() -> Any:
    return indicators.ieat_battery({"t": _ieat_sets(6)}, n_permutations=100, **BOOT)["t"]


def _fair_sa() -> Any:
    """Self-matching: noise degrades subgroup p more than q."""
    rng = _rng(7)
    clean = rng.normal(size=(200, 16))
    groups = np.repeat(["p", "q"], 100)
    scale = np.where(groups == "p", 1.0, 0.4)[:, None]
    features = {None: clean, **{("noise", level): clean + 1.5 * level * scale * rng.normal(
        size=clean.shape) for level in (0.25, 0.5, 1.0)}}
    return indicators.fair_sa(features, attribute=groups, perturbations="noise",
                              levels=[0.25, 0.5, 1.0], far=0.05, min_group_size=1, **BOOT)


def _amplification_data() -> tuple[Any, ...]:
    """600 test images, 2 attributes, 2 groups; predictions over-assign attribute 0 to "w"."""
    rng = _rng(8)
    groups = np.repeat(["w", "m"], 300)
    p = np.where(groups[:, None] == "w", [0.5, 0.3], [0.3, 0.5])
    truth = (rng.random((600, 2)) < p).astype(int)
    extra = (rng.random(600) < np.where(groups == "w", 0.35, 0.0))
    pred = truth.copy()
    pred[:, 0] |= extra
    return truth, groups, pred


def _amp(name: str) -> Callable[[], Any]:
    def make() -> Any:
        truth, groups, pred = _amplification_data()
        function = getattr(indicators, name)
        if name == "bias_amp":
            return function(truth, groups, pred, groups, min_group_size=1, **BOOT)
        if name == "multi_mals":
            return function(truth, groups, truth, groups, pred, groups, min_group_size=1,
                            **BOOT)
        return function(truth, groups, truth, groups, pred, direction="G->M",
                        min_group_size=1, **BOOT)
    return make


FACTORIES: dict[str, Callable[[], Any]] = {
    **{name: _amp(name) for name in ("bias_amp", "directional_bias_amp", "multi_mals",
                                     "multi_directional")},
    "fair_sa": _fair_sa,
    "group_metrics": _group_metrics, "landmark_metrics": _landmark_metrics,
    "label_association": _label_association, "geodiversity": _geodiversity,
    "precision_at_k": _precision_at_k, "ieat": _ieat, "ieat_battery": _ieat_battery,
}
#: Indicators without intervals of their own: ΔDTO compares two results.
WITHOUT_INTERVALS = {"delta_dto"}


def test_every_indicator_is_covered() -> None:
    assert set(FACTORIES) | WITHOUT_INTERVALS == set(INDICATORS)


def _fails(result: Any, **limits: Any) -> bool:
    try:
        fairness.check(result, **limits)
    except FairnessViolation:
        return True
    return False


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_supported_and_strict_on_the_headline(name: str) -> None:
    result = FACTORIES[name]()
    metric = headline(name).metric
    limit = LIMIT_OF[metric]
    key = metric if metric != "gap" else "gap"
    low, high = result.intervals[key]
    estimate = result.gap if metric == "gap" else abs(result.stats[metric])
    if headline(name).magnitude:
        low, high = (0.0 if low <= 0 <= high else min(abs(low), abs(high)),
                     max(abs(low), abs(high)))
    assert low < estimate < high
    inside = (low + estimate) / 2  # below the estimate, inside the interval
    assert _fails(result, **{limit: inside, "confidence": "point"})
    (default,) = fairness.check(result, **{limit: inside})
    assert (default.confidence, default.verdict, default.passed) == (
        "supported", "inconclusive", True)
    assert not _fails(result, **{limit: inside, "confidence": "supported"})
    assert _fails(result, **{limit: inside, "confidence": "strict"})
    beyond = low - (high - low) * 0.01
    if beyond >= 0:
        assert _fails(result, **{limit: beyond, "confidence": "supported"})
