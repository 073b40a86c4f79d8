"""Fair SA: how dlib's face embedder holds up under perturbations, per lighting.

Fair SA is "Fair SA: Sensitivity Analysis for Fairness in Face Recognition" (Joshi et al.
2022).

Each of the 100 ``lfw_subset`` faces is perturbed (``pytest_fairness.perturbations``:
Gaussian blur and low exposure at full strength) and must still match its clean embedding
(self-matching at the threshold giving 1% false accepts on clean impostor pairs). α(δ) is
the match-rate difference between a lighting group and the rest; the AUC matrix holds its
signed area per group and perturbation, and the L1 norm sums the matrix.
"""

from __future__ import annotations

from pytest_fairness import fairness, indicators


@fairness.threshold(max_l1=0.2, max_auc=0.1)
def test_perturbation_robustness_is_even_across_lighting(face_embedder, face_images, faces):
    """Each |AUC| of α(δ) at most 0.1, and their sum (L1) at most 0.2."""
    return indicators.fair_sa(
        face_embedder, face_images, attribute=faces.frame["lighting"].to_numpy(),
        perturbations=["gaussian_blur", "exposure_low"], levels=[1.0], seed=0,
    )
