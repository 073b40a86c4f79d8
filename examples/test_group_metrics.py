"""Group metrics: a digit classifier's accuracy across stroke thickness.

The metrics are from "Fairness meets Cross-Domain Learning: a new perspective on Models
and Metrics" (Iurada et al. 2023).
"""

from __future__ import annotations

from pytest_fairness import fairness, indicators


@fairness.threshold(max_gap=0.05, min_value=0.85)
def test_accuracy_is_even_across_stroke_thickness(digits, digit_predictions):
    """A small torch MLP on scikit-learn's real digit scans, grouped by stroke thickness."""
    _, test = digits
    return indicators.group_metrics(test.labels, digit_predictions, groups=test.stroke,
                                    pos_label=0)
