"""Image embedding association (iEAT) in EfficientNet-Lite0's feature space.

iEAT is from "Image Representations Learned With Unsupervised Pre-Training Contain
Human-like Biases" (Steed & Caliskan, FAccT 2021).

Targets: the 50 brighter (X) and 50 darker (Y) ``lfw_subset`` faces. Attributes: the 27
photo crops as shipped (A) and their gamma-darkened copies (B). A positive effect size d
means brighter faces sit closer to the undarkened photos than darker faces do: the
embedding ties a face's lighting to a scene's exposure. The test allows a medium effect
(|d| ≤ 1.0) and fails on a large one.
"""

from __future__ import annotations

from pytest_fairness import fairness, indicators


@fairness.threshold(max_effect_size=1.0)
def test_face_lighting_association_is_at_most_medium(fairness_features, faces, photos):
    """|d| <= 1.0 for brighter/darker faces against original/darkened photos."""
    face_features = fairness_features(faces, normalize=None).embeddings
    photo_features = fairness_features(photos, normalize=None).embeddings
    lighting = faces.frame["lighting"].to_numpy()
    edit = photos.frame["edit"].to_numpy()
    return indicators.ieat(
        face_features[lighting == "brighter"], face_features[lighting == "darker"],
        photo_features[edit == "original"], photo_features[edit == "darkened"],
        n_permutations=2_000, seed=0,
        names=("brighter faces", "darker faces", "photos", "darkened photos"),
    )
