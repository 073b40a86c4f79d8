"""Feature extraction: plugin vs a bare torch loop, cached re-run, peak memory vs dataset size.

Prints three ratios (goals in brackets):

* plugin extraction / bare torch loop on the same model and images      [<= 1.05]
* first run (extract + write cache) / cached re-run                     [>= 50]
  (the re-run rehashes the weights and the dataset: nothing is memoised in memory)
* peak RSS at 10x the images / peak RSS at 1x                            [~ 1, flat]

Usage: python benchmarks/extraction.py [--n 200] [--size 64] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")


def make_images(folder: Path, n: int, size: int) -> Path:
    """n synthetic JPEGs and a manifest (reused if already there)."""
    import numpy as np
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    manifest = folder / f"manifest_{n}.csv"
    if manifest.exists():
        return manifest
    rng = np.random.default_rng(0)
    rows = ["image_id,path,group"]
    for i in range(n):
        path = folder / f"{i:06d}.jpg"
        if not path.exists():
            pixels = rng.integers(0, 256, size=(size + 16, size + 16, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(path, quality=85)
        rows.append(f"{i},{path},{i % 2}")
    manifest.write_text("\n".join(rows) + "\n")
    return manifest


def make_model():
    import torch
    import torchvision

    torch.manual_seed(0)
    return torchvision.models.resnet18(weights=None, num_classes=10).eval()


class BareRows:
    """The hand-written baseline dataset: open, RGB, resize, to tensor."""

    def __init__(self, paths: list[str], size: int) -> None:
        self.paths, self.size = paths, size

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, i: int):
        from PIL import Image
        from torchvision.transforms import functional as TF

        with Image.open(self.paths[i]) as handle:
            picture = handle.convert("RGB").resize((self.size, self.size), 2)
        return TF.pil_to_tensor(picture).float().div_(255.0)


def bare_loop(model, paths: list[str], size: int, batch_size: int):
    import torch

    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
    loader = torch.utils.data.DataLoader(BareRows(paths, size), batch_size=batch_size)
    out = []
    with torch.inference_mode():
        for images in loader:
            out.append(model((images - mean) / std))
    return torch.cat(out).numpy()


def memory_child(n: int, size: int, batch_size: int, folder: str) -> None:
    """Run one extraction and print the peak RSS (KiB) as JSON."""
    from pytest_fairness.data import load_manifest
    from pytest_fairness.features import DefaultTransform, extract_features

    manifest = make_images(Path(folder), n, size)
    ds = load_manifest(manifest)
    model = make_model()
    extract_features(model, ds, transform=DefaultTransform(size), batch_size=batch_size)
    print(json.dumps({"n": n, "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--memory-child", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--folder", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child, args.size, args.batch_size, args.folder)
        return

    import numpy as np
    import torch

    torch.set_num_threads(1)
    from pytest_fairness.data import load_manifest
    from pytest_fairness.features import DefaultTransform, extract_features

    work = Path(tempfile.mkdtemp(prefix="fairness-bench-"))
    ds = load_manifest(make_images(work / "images", args.n, args.size))
    model = make_model()
    transform = DefaultTransform(args.size)
    paths = ds.frame["path"].tolist()

    bare_loop(model, paths[:8], args.size, 8)  # warm-up
    bare_times, plugin_times = [], []
    for _ in range(args.repeat):  # interleaved, best of repeat: robust to a loaded machine
        start = time.perf_counter()
        reference = bare_loop(model, paths, args.size, args.batch_size)
        bare_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        features = extract_features(model, ds, transform=transform, batch_size=args.batch_size)
        plugin_times.append(time.perf_counter() - start)
    assert np.allclose(features.embeddings, reference, atol=1e-4), "outputs differ"
    bare, plugin = min(bare_times), min(plugin_times)
    print(f"extraction   n={args.n} size={args.size}: bare torch loop {bare:.3f}s, plugin "
          f"{plugin:.3f}s -> ratio {plugin / bare:.3f} (goal <= 1.05)")

    cache = work / "cache"
    start = time.perf_counter()
    extract_features(model, ds, transform=transform, batch_size=args.batch_size, cache_dir=cache)
    first = time.perf_counter() - start
    cached_times = []
    from pytest_fairness.features import fingerprint

    for _ in range(args.repeat):
        fingerprint._MODEL_MEMO.clear()
        fresh = load_manifest(make_images(work / "images", args.n, args.size))
        start = time.perf_counter()
        again = extract_features(model, fresh, transform=transform, batch_size=args.batch_size,
                                 cache_dir=cache)
        cached_times.append(time.perf_counter() - start)
        assert again.from_cache
    cached = min(cached_times)
    print(f"cache        first run {first:.3f}s, cached re-run {cached * 1000:.1f}ms -> "
          f"{first / cached:.0f}x faster (goal >= 50x)")

    peaks = {}
    for n in (args.n, 10 * args.n):
        out = subprocess.run(
            [sys.executable, __file__, "--memory-child", str(n), "--size", str(args.size),
             "--batch-size", str(args.batch_size), "--folder", str(work / "images")],
            check=True, capture_output=True, text=True)
        peaks[n] = json.loads(out.stdout.strip().splitlines()[-1])["peak_kib"]
    small, large = peaks[args.n], peaks[10 * args.n]
    print(f"memory       peak RSS n={args.n}: {small / 1024:.0f} MiB, n={10 * args.n}: "
          f"{large / 1024:.0f} MiB -> ratio {large / small:.3f} (goal: flat, ~1)")


if __name__ == "__main__":
    main()
