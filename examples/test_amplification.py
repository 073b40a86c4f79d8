"""Multi-attribute bias amplification of linear probes on EfficientNet-Lite0.

The metrics are from "Men Also Do Laundry: Multi-Attribute Bias Amplification" (Zhao,
Andrews & Xiang, ICML 2023).

Attributes are objective properties of each ``lfw_subset`` face crop (``high_contrast``
and ``sharp``: above the median standard deviation / mean absolute Laplacian; ``top_lit``
and ``left_lit``: that half is brighter). The group is the face's lighting. A logistic
probe per attribute is trained on EfficientNet-Lite0 features of the training rows and
predicts the test rows (each split: 25 darker and 25 brighter faces). Multi→ (G→M)
measures how far the probes' attribute rates within each lighting group drift from the
training rates, over attribute pairs as well as single attributes.
"""

from __future__ import annotations

import numpy as np

from pytest_fairness import fairness, indicators

ATTRIBUTES = ("high_contrast", "sharp", "top_lit", "left_lit")


def face_attributes(frame):
    """The 0/1 attribute matrix (faces × ATTRIBUTES) from the measured properties."""
    return np.column_stack([
        frame["contrast"] > frame["contrast"].median(),
        frame["sharpness"] > frame["sharpness"].median(),
        frame["top_lit"].astype(bool),
        frame["left_lit"].astype(bool),
    ]).astype(int)


@fairness.threshold(max_amplification=0.5)
def test_probe_amplification_across_lighting(fairness_features, faces):
    """Multi→ (G→M) of the probes stays at most 0.5 (mean |Δ| over groups × combinations)."""
    from sklearn.linear_model import LogisticRegression

    embeddings = fairness_features(faces, normalize=None).embeddings
    x = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    attributes = face_attributes(faces.frame)
    lighting = faces.frame["lighting"].to_numpy()
    train = (faces.frame["split"] == "train").to_numpy()
    test = ~train
    predicted = np.column_stack([
        LogisticRegression(max_iter=2_000).fit(x[train], attributes[train, j]).predict(x[test])
        for j in range(len(ATTRIBUTES))
    ])
    return indicators.multi_directional(
        attributes[train], lighting[train], attributes[test], lighting[test], predicted,
        direction="G->M", max_size=2, attribute_names=ATTRIBUTES, min_group_size=20,
    )
