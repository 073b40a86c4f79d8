"""Per-group accuracy, TPR and FPR equal fairlearn's MetricFrame on random data."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_fairness import indicators as ind

fairlearn_metrics = pytest.importorskip("fairlearn.metrics")
sklearn_metrics = pytest.importorskip("sklearn.metrics")


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n_groups", [2, 3, 5])
def test_matches_metricframe(seed: int, n_groups: int) -> None:
    rng = np.random.default_rng(seed)
    n = 600
    groups = rng.choice([f"g{i}" for i in range(n_groups)], size=n)
    y_true = rng.integers(0, 2, size=n)
    y_pred = np.where(rng.random(n) < 0.7, y_true, 1 - y_true)
    frame = fairlearn_metrics.MetricFrame(
        metrics={
            "accuracy": sklearn_metrics.accuracy_score,
            "tpr": fairlearn_metrics.true_positive_rate,
            "fpr": fairlearn_metrics.false_positive_rate,
        },
        y_true=y_true,
        y_pred=y_pred,
        sensitive_features=groups,
    )
    ours = ind.group_metrics(y_true, y_pred, groups=groups, min_group_size=1)
    by_group = frame.by_group
    for g in ours.groups:
        assert g.value == pytest.approx(by_group.loc[g.group, "accuracy"], abs=1e-12)
        assert g.stats["tpr"] == pytest.approx(by_group.loc[g.group, "tpr"], abs=1e-12)
        assert g.stats["fpr"] == pytest.approx(by_group.loc[g.group, "fpr"], abs=1e-12)
    diff = frame.difference(method="between_groups")
    assert ours.stats["DA"] == pytest.approx(diff["accuracy"], abs=1e-12)
    assert ours.stats["DEO"] == pytest.approx(diff["tpr"], abs=1e-12)
    assert ours.stats["DEOdds"] == pytest.approx(diff["tpr"] + diff["fpr"], abs=1e-12)
    assert ours.stats["DEO"] == pytest.approx(
        fairlearn_metrics.equal_opportunity_difference(y_true, y_pred, sensitive_features=groups),
        abs=1e-12,
    )
