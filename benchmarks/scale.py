"""Evaluating at scale: reading extracted shards, and the gate next to the extraction.

Prints, in one run (goals in brackets):

* reading N × W float32 features from S shards, validated (manifest, every id once,
  sha256 of each shard) and aligned with the dataset, against the floor
  ``pyarrow.dataset.dataset(DIR).to_table()`` converted to one numpy matrix   [<= 1.3]
* the reader's peak RSS (growth over the process before the read) / the matrix's size
                                                                              [<= 1.5]
* two processes reading through one cache (as pytest-xdist ``-n 2`` workers do): their
  peak PSS together (growth) / one process's                                   [<= 1.3]
* the whole gate on the N images (group metrics with 1,000 bootstrap replicates, label
  association over a τ sweep, geodiversity by household, retrieval of 10^4 queries over
  the N items, Fair SA on 9 families × 5 levels of 10^4 images) / the time to extract the
  N images with torchvision's ResNet-50 at 224 px, **estimated** from a sample of
  ``--sample`` images extracted here and scaled linearly                     [<= 0.01]
  and the gate's share against an **assumed** GPU rate of 2,000 images/s.

Shards are written here with pyarrow in the documented format (docs/scale.md), from
random features: what is measured is the reader, not a model. Files are read from the page
cache, for the reader and for the floor alike, in rotation (``--repeat`` each, default 5):
the median is reported, with the fastest and slowest run.

Usage: python benchmarks/scale.py [--n 100000] [--width 1024] [--shards 8] [--sample 512]
(a few minutes on 2 CPU cores; ``--skip-extraction`` / ``--skip-gate`` leave parts out)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ASSUMED_GPU_RATE = 2000.0  # images/s: an assumption, not a measurement


def dataset(n: int) -> Any:
    import numpy as np
    import pandas as pd

    from pytest_fairness.data import FairnessDataset

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"image_id": [f"img{i:07d}" for i in range(n)],
                          "path": [f"{i:07d}.jpg" for i in range(n)],
                          "gender": rng.choice(["female", "male"], n)})
    return FairnessDataset(frame, name="bench")


def write_shards(folder: Path, n: int, width: int, shards: int) -> None:
    """Random features as ``shards`` Parquet files and their manifest (docs/scale.md)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    ds = dataset(n)
    rng = np.random.default_rng(1)
    records = []
    (folder / "clean").mkdir(parents=True, exist_ok=True)
    for rank in range(shards):
        start, stop = rank * n // shards, (rank + 1) * n // shards
        values = rng.standard_normal((stop - start, width), dtype=np.float32)
        table = pa.table({"image_id": pa.array(ds.image_ids[start:stop], pa.string()),
                          "embeddings": pa.FixedSizeListArray.from_arrays(
                              pa.array(values.reshape(-1)), width)})
        name = f"clean/part-{rank:05d}-of-{shards:05d}.parquet"
        pq.write_table(table, folder / name, compression="none", row_group_size=4096)
        digest = hashlib.sha256((folder / name).read_bytes()).hexdigest()
        records.append({"file": name, "rows": stop - start, "sha256": digest})
    manifest = {"format": "pytest-fairness-features", "version": 1,
                "command": "benchmarks/scale.py",
                "model": {"factory": "random", "fingerprint": "random"},
                "dataset": {"name": ds.name, "fingerprint": ds.fingerprint, "rows": n},
                "transform": "none", "normalize": "None", "id_column": "image_id",
                "outputs": {"embeddings": {"dtype": "float32", "width": width}},
                "extractions": [{"perturbation": None, "directory": "clean",
                                 "shards": records}]}
    (folder / "_manifest.json").write_text(json.dumps(manifest, indent=1))


def alternate(calls: dict[str, Any], repeat: int) -> dict[str, list[float]]:
    """Each call ``repeat`` times, in rotation (a busy spell slows both alike); their times."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeat):
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
    return times


def floor_read(folder: Path) -> Any:
    import pyarrow.dataset as pads

    table = pads.dataset(str(folder / "clean"), format="parquet").to_table()
    column = table.column("embeddings").combine_chunks()
    return column.values.to_numpy().reshape(len(table), -1)


# -- memory, in child processes -------------------------------------------------------------

CHILD = """
import os, sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {bench!r})
import numpy as np, pyarrow.dataset, pandas
from scale import dataset
from pytest_fairness.features import load_precomputed
ds = dataset({n})
ds.fingerprint
print("ready", flush=True)
sys.stdin.readline()
before = int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
features = load_precomputed({folder!r}, ds, cache_dir={cache!r})
float(features.embeddings.sum())  # touch every page
# VmHWM is this process's own peak; ru_maxrss also counts the parent it was forked from.
peak = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status")
            if line.startswith("VmHWM:"))
print("done", before, peak, flush=True)
sys.stdin.readline()
"""


def pss(pid: int) -> int:
    """Proportional set size in bytes (shared pages divided among their users)."""
    with open(f"/proc/{pid}/smaps_rollup") as handle:
        for line in handle:
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    return 0


def peak_pss(folder: Path, n: int, processes: int, cache: str | None) -> tuple[int, list[str]]:
    """Peak of the processes' summed PSS over their summed PSS before the read."""
    source = CHILD.format(root=str(ROOT), bench=str(Path(__file__).parent), n=n,
                          folder=str(folder), cache=cache)
    children = [subprocess.Popen([sys.executable, "-c", source], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
                for _ in range(processes)]
    for child in children:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    base = sum(pss(c.pid) for c in children)
    peak = [base]
    running = True

    def sample() -> None:
        while running:
            try:
                peak[0] = max(peak[0], sum(pss(c.pid) for c in children))
            except OSError:
                return
            time.sleep(0.005)

    sampler = threading.Thread(target=sample)
    sampler.start()
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    lines = [c.stdout.readline().strip() for c in children if c.stdout is not None]
    running = False
    sampler.join()
    for child in children:
        assert child.stdin is not None
        child.stdin.write("end\n")
        child.stdin.flush()
        child.wait()
    return peak[0] - base, lines


# -- the gate and the extraction ----------------------------------------------------------------


def gate(embeddings: Any, n: int) -> dict[str, float]:
    """Time each gate step on the N images (seconds)."""
    import numpy as np

    from pytest_fairness import indicators
    from pytest_fairness.perturbations import PERTURBATIONS

    rng = np.random.default_rng(2)
    groups = rng.choice(["a", "b", "c", "d"], n)
    times: dict[str, float] = {}

    y_true = rng.integers(0, 2, n)
    y_pred = np.where(rng.random(n) < 0.8, y_true, 1 - y_true)
    start = time.perf_counter()
    indicators.group_metrics(y_true, y_pred, groups=groups, n_bootstrap=1000, seed=0)
    times["group metrics, 1,000 bootstrap replicates"] = time.perf_counter() - start

    classes = 100
    labels = np.argsort(rng.random((n, classes)), axis=1)[:, :5]
    scores = np.sort(rng.random((n, 5)), axis=1)[:, ::-1]
    taxonomy = {c: ("non_human", "human", "crime", "other")[c % 4] for c in range(classes)}
    start = time.perf_counter()
    indicators.label_association(labels, scores, groups=groups, taxonomy=taxonomy, top_k=5)
    times["label association, τ sweep"] = time.perf_counter() - start

    household = rng.integers(0, n // 50, n)
    income = (np.exp(rng.uniform(3, 9, n // 50)))[household]
    region = np.array(["Africa", "Americas", "Asia", "Europe"])[household % 4]
    start = time.perf_counter()
    indicators.geodiversity(labels, scores, truth=labels[:, 0].tolist(), household=household,
                            region=region, income=income, top_k=5)
    times["geodiversity by household"] = time.perf_counter() - start

    queries = 10_000
    start = time.perf_counter()
    indicators.precision_at_k((embeddings[:queries], {"g": groups[:queries]}),
                              (embeddings, {"g": groups}), k=10, match="g", by="g",
                              exclude_self=False)
    times[f"retrieval, 10^4 queries over {n:,} items"] = time.perf_counter() - start

    m, levels = 10_000, [0.2, 0.4, 0.6, 0.8, 1.0]
    clean = embeddings[:m]
    features: dict[Any, Any] = {None: clean}
    for name in PERTURBATIONS[:9]:
        for level in levels:
            noise = rng.standard_normal(clean.shape, dtype=np.float32)
            features[(name, level)] = clean + level * noise
    start = time.perf_counter()
    indicators.fair_sa(features, attribute=groups[:m], perturbations=list(PERTURBATIONS[:9]),
                       levels=levels)
    times["Fair SA, 9 families × 5 levels of 10^4 images"] = time.perf_counter() - start
    return times


def extraction_rate(sample: int, folder: Path) -> float:
    """ResNet-50 at 224 px over ``sample`` synthetic JPEGs, through extract_features."""
    import numpy as np
    import pandas as pd
    import torch
    import torchvision
    from PIL import Image

    from pytest_fairness.data import FairnessDataset
    from pytest_fairness.features import DefaultTransform, extract_features

    rng = np.random.default_rng(3)
    paths = []
    for i in range(sample):
        path = folder / f"{i:05d}.jpg"
        Image.fromarray(rng.integers(0, 256, (256, 256, 3), dtype=np.uint8)).save(path)
        paths.append(str(path))
    ds = FairnessDataset(pd.DataFrame({"image_id": [str(i) for i in range(sample)],
                                       "path": paths}), name="sample")
    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None).eval()
    extract_features(model, ds.subset(list(range(8))), transform=DefaultTransform(224),
                     batch_size=8, progress=False)  # warm-up
    start = time.perf_counter()
    extract_features(model, ds, transform=DefaultTransform(224), batch_size=32,
                     progress=False)
    return sample / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--sample", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-extraction", action="store_true")
    parser.add_argument("--skip-gate", action="store_true")
    args = parser.parse_args()
    from pytest_fairness.features import load_precomputed
    from pytest_fairness.features.cache import file_sha256

    n, width = args.n, args.width
    matrix_bytes = n * width * 4
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "features"
        write_shards(folder, n, width, args.shards)
        ds = dataset(n)
        ds.fingerprint  # noqa: B018 - computed once, as a session does
        shards = sorted((folder / "clean").glob("*.parquet"))
        times = alternate({"floor": lambda: floor_read(folder),
                           "ours": lambda: load_precomputed(folder, ds),
                           "sha256": lambda: [file_sha256(shard) for shard in shards]},
                          args.repeat)
        floor, ours = (statistics.median(times[name]) for name in ("floor", "ours"))
        print(f"reading {n:,} x {width:,} float32 ({matrix_bytes / 2**20:,.0f} MiB) from "
              f"{args.shards} shards, median of {args.repeat} alternating runs")
        for name, what in (("floor", "floor, pyarrow.dataset(DIR).to_table() -> numpy"),
                           ("ours", "load_precomputed (manifest, ids, sha256, aligned)"),
                           ("sha256", "of which: the shards' sha256s alone, on one core")):
            print(f"  {what}: {statistics.median(times[name]):.3f} s (min "
                  f"{min(times[name]):.3f}, max {max(times[name]):.3f})")
        print(f"  ratio {ours / floor:.2f}  [goal <= 1.3]; against the floor's fastest run "
              f"{ours / min(times['floor']):.2f}")

        growth, lines = peak_pss(folder, n, 1, None)
        _, before, after = lines[0].split()
        print(f"  peak RSS of one reading process: {int(after) / 2**20:,.0f} MiB, "
              f"{(int(after) - int(before)) / 2**20:,.0f} MiB over the process before the "
              f"read = {(int(after) - int(before)) / matrix_bytes:.2f} x the matrix  "
              "[goal <= 1.5]")
        one, _ = peak_pss(folder, n, 1, str(Path(tmp) / "cache1"))
        two, _ = peak_pss(folder, n, 2, str(Path(tmp) / "cache2"))
        print(f"  through the cache (as pytest-xdist workers): peak PSS growth of one process "
              f"{one / 2**20:,.0f} MiB, of two together {two / 2**20:,.0f} MiB: ratio "
              f"{two / one:.2f}  [goal <= 1.3]")

        if args.skip_gate:
            return
        embeddings = load_precomputed(folder, ds).embeddings
        times = gate(embeddings, n)
        total = sum(times.values())
        print(f"the gate on {n:,} images: {total:.1f} s")
        for what, seconds in times.items():
            print(f"  {what}: {seconds:.1f} s")
        if args.skip_extraction:
            return
        images = Path(tmp) / "images"
        images.mkdir()
        rate = extraction_rate(args.sample, images)
        extraction = n / rate
        print(f"ResNet-50 at 224 px here: {rate:.1f} images/s on a {args.sample}-image sample; "
              f"{n:,} images estimated (scaled linearly from the sample) at "
              f"{extraction / 3600:.1f} h")
        print(f"  gate / extraction here: {total / extraction:.4f}  [goal <= 0.01]")
        gpu = n / ASSUMED_GPU_RATE
        print(f"  gate / extraction at an assumed GPU rate of {ASSUMED_GPU_RATE:,.0f} images/s "
              f"({gpu:.0f} s, assumed, not measured): {total / gpu:.2f}")


if __name__ == "__main__":
    main()
