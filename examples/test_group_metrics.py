"""Group metrics (seed 003) of a digit classifier across stroke thickness."""

from __future__ import annotations

from pytest_fairness import fairness, indicators


@fairness.threshold(max_gap=0.05, min_value=0.85)
def test_accuracy_is_even_across_stroke_thickness(digits, digit_predictions):
    _, test = digits
    return indicators.group_metrics(test.labels, digit_predictions, groups=test.stroke,
                                    pos_label=0)


# Fails by design: the limit is stricter than any real classifier meets, to show what a
# failure looks like (the limit, the observed gap, and the per-group table).
@fairness.threshold(max_gap=0.001)
def test_strict_limit_fails_by_design(digits, digit_predictions):
    _, test = digits
    return indicators.group_metrics(test.labels, digit_predictions, groups=test.stroke,
                                    pos_label=0)
