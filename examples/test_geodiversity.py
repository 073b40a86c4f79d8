"""Geographical diversity: EfficientNet-Lite0's top-5 hits per "household".

The indicator is §3.2 of "Fairness Indicators for Systematic Assessments of Visual Feature
Extractors" (Goyal et al., FAccT 2022).

No offline image carries Dollar Street's households, regions or incomes, so the
``households`` fixture builds **stand-ins that are not geography**: each household is one
of four real object photos (cat, coffee, rocket, camera: scikit-image's, with their
ImageNet-1k ground truth) under one capture condition, its images three views of it. The
"income" is the capture resolution (224, 64 or 32 pixels per side → 5000, 500, 50, the
paper's high, medium and low buckets) and the "region" the lighting (as shipped or
gamma-darkened). What is real is the mechanics: a view is a hit when one of the model's
top-5 classes is in its ground truth, a household's hit rate is the mean over its views,
a bucket's value the mean over its households, and the intervals resample households.
"""

from __future__ import annotations

import numpy as np

from pytest_fairness import fairness, indicators


def top5(logits):
    """Top-5 class indices and their softmax confidences, per row."""
    probabilities = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    labels = np.argsort(-probabilities, axis=1, kind="stable")[:, :5]
    return labels, np.take_along_axis(probabilities, labels, axis=1)


@fairness.threshold(min_value=0.5, max_gap=0.4)
def test_recognition_holds_up_in_every_income_bucket(fairness_features, households):
    """Every income bucket's mean household hit rate is at least 0.5, within 0.4 of the best."""
    labels, scores = top5(fairness_features(households, normalize=None).logits)
    frame = households.frame
    return indicators.geodiversity(
        labels, scores, truth=frame["labels"].tolist(), household=frame["household"],
        region=frame["region"], income=frame["income"], by="income",
        min_group_size=8, n_bootstrap=1_000, seed=0,
    )
