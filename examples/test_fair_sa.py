"""Fair SA: how dlib's face embedder holds up under perturbations, per lighting.

Fair SA is "Fair SA: Sensitivity Analysis for Fairness in Face Recognition" (Joshi et al.
2022).

The sweep of the paper's sensitivity analysis: every perturbation family of
``pytest_fairness.perturbations`` (Gaussian blur, gamma contrast, rotation, speckle noise,
exposure low and high, saturation low and high, motion blur, JPEG compression, vignette:
nine families, eleven perturbations) at five levels δ = 0.2 … 1.0, plus the clean point
δ = 0. Each perturbed face must still match its clean embedding (self-matching at the
threshold giving 1% false accepts on clean impostor pairs). α(δ) is the match-rate
difference between a lighting group and the rest; the AUC matrix holds its signed area per
group and perturbation, and the L1 norm sums the matrix. The report draws one panel of
α(δ) curves per perturbation.

dlib's embedder costs about 0.1 s of one CPU core per face, so to keep the whole demo
within 3 minutes on 2 cores the sweep runs on 20 of the 100 faces (the first 10 darker and
10 brighter faces of the ``test`` split): 56 passes of 20 faces. With 10 faces per group, α
moves in steps of 0.1, so the limits are loose. The ``lfw_subset`` crops are grayscale: the
two saturation perturbations leave them unchanged and their curves stay at α = 0.

Each pass goes through :func:`pytest_fairness.features.extract_features`, so the plugin
shows its progress (a live line per pass on a terminal, a start and an end line in logs).
"""

from __future__ import annotations

from typing import Any

from pytest_fairness import fairness, indicators
from pytest_fairness.features import extract_features
from pytest_fairness.perturbations import PERTURBATIONS

#: Perturbation levels δ of the sweep (δ = 0, the clean images, is always on the curve).
LEVELS = (0.2, 0.4, 0.6, 0.8, 1.0)


def to_tensor(image: Any) -> Any:
    """A PIL face crop → float tensor (3, 25, 25) in [0, 1], at its own size."""
    from torchvision.transforms.functional import pil_to_tensor

    return pil_to_tensor(image).float() / 255.0


#: Faces per lighting group in the sweep.
PER_GROUP = 10


@fairness.threshold(max_l1=1.0, max_auc=0.25)
def test_perturbation_robustness_is_even_across_lighting(face_embedder, faces):
    """Each |AUC| of α(δ) at most 0.25, and their sum (L1) over the matrix at most 1."""
    frame = faces.frame[faces.frame["split"] == "test"]
    sample = faces.subset(frame.groupby("lighting").head(PER_GROUP)["image_id"])

    def features(dataset: Any, *, perturbation: Any = None) -> Any:
        return extract_features(face_embedder, dataset, transform=to_tensor, normalize=None,
                                perturbation=perturbation, batch_size=50)

    return indicators.fair_sa(
        features, sample, attribute=sample.frame["lighting"].to_numpy(),
        perturbations=list(PERTURBATIONS), levels=list(LEVELS), seed=0,
        min_group_size=PER_GROUP,
    )
