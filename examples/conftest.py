"""A model repository in miniature: a small torch classifier on real images.

The images are scikit-learn's handwritten digits (1,797 real 8×8 scans, shipped with the
package: nothing is downloaded). The protected attribute is an objective image property,
never a model's prediction: ``stroke`` is "thick" when more than the median number of
pixels (25 of 64) are darker than 4 on the 0–16 scale, else "thin".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest


@dataclass(frozen=True)
class Split:
    images: np.ndarray  # (n, 8, 8) floats in [0, 16]
    labels: np.ndarray  # (n,) digit 0-9
    stroke: np.ndarray  # (n,) "thin" | "thick"


def _stroke(images: np.ndarray) -> np.ndarray:
    ink = (images > 4).sum(axis=(1, 2))
    return np.where(ink > 25, "thick", "thin")


@pytest.fixture(scope="session")
def digits() -> tuple[Split, Split]:
    """Train and test splits of scikit-learn's digits, with the stroke attribute."""
    from sklearn.datasets import load_digits

    data = load_digits()
    order = np.random.default_rng(0).permutation(len(data.target))
    train, test = order[:1000], order[1000:]
    return tuple(  # type: ignore[return-value]
        Split(data.images[i], data.target[i], _stroke(data.images[i])) for i in (train, test)
    )


@pytest.fixture(scope="session")
def digits_classifier(digits: tuple[Split, Split]):
    """A small torch MLP trained on the training split (deterministic, about a second)."""
    import torch

    torch.manual_seed(0)
    train, _ = digits
    x = torch.tensor(train.images.reshape(len(train.labels), -1) / 16, dtype=torch.float32)
    y = torch.tensor(train.labels)
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(150):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    return model.eval()


@pytest.fixture(scope="session")
def digit_predictions(digits: tuple[Split, Split], digits_classifier) -> np.ndarray:
    """The classifier's predicted digit for every test image."""
    import torch

    _, test = digits
    with torch.inference_mode():
        x = torch.tensor(test.images.reshape(len(test.labels), -1) / 16, dtype=torch.float32)
        return digits_classifier(x).argmax(dim=1).numpy()
