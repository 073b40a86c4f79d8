"""Group metrics for landmarks: how steady dlib's 68 landmarks are, per lighting.

The metrics are from "Fairness meets Cross-Domain Learning: a new perspective on Models
and Metrics" (Iurada et al. 2023).

``lfw_subset`` ships no landmark annotations, so this measures **consistency under a
controlled edit, not accuracy** against annotated landmarks. The reference landmarks are
dlib's 68-point predictions on each of the 100 face crops as shipped; the predictions are
its landmarks on the same crop after a gamma darkening (``gamma_contrast`` at level 0.6 of
``pytest_fairness.perturbations``: every value x in [0, 1] becomes x ** 2.2, the edit of
the ``photos``). NME divides the mean landmark displacement by the reference interocular
distance (outer eye corners 36 and 45, as Iurada et al. 2023's code does); a face succeeds when its
NME is below 0.08 (SDR@0.08). The groups are the faces' measured lighting (the darker and
brighter halves by mean luminance): darkening an already dark face leaves the predictor
less contrast to work with, so the darker group moves more.
"""

from __future__ import annotations

from pytest_fairness import fairness, indicators
from pytest_fairness.perturbations import parameter, perturb

#: Level of ``gamma_contrast``: γ = 1 + 2 · 0.6 = 2.2.
DARKENING = 0.6


@fairness.threshold(min_value=0.9, max_gap=0.1)
def test_landmarks_hold_steady_when_darkened(landmark_detector, face_images, faces):
    """In both lighting groups at least 90% of the faces keep NME < 0.08; DS at most 0.1."""
    assert parameter("gamma_contrast", DARKENING) == 2.2
    reference = landmark_detector(face_images)
    darkened = landmark_detector(perturb(face_images, "gamma_contrast", DARKENING))
    return indicators.landmark_metrics(
        reference, darkened, groups=faces.frame["lighting"].to_numpy(),
        normalizer="interocular", sdr_threshold=0.08,
    )
