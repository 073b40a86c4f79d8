"""Retrieval search against a bare faiss search and VISSL's computation, in one run.

Usage: python benchmarks/retrieval.py [--queries 2000 --database 10000 --dim 2048 --k 10]
                                      [--repeat 5] [--rest 0.5]
       python benchmarks/retrieval.py --large [--queries 100000 --database 1000000 --dim 64]

Default mode times three computations on the same random float32 arrays:

(a) ours: ``nearest_neighbors(q, db, k=k)`` from the raw rows (float64 norms, float32
    normalisation, faiss ``IndexFlatIP``, float64 re-ranking and certification);
(b) faiss: ``IndexFlatIP`` built from the pre-normalised database and searched with the
    pre-normalised queries for the same k (building the index is timed, normalising is not);
(c) VISSL: the computation of facebookresearch/vissl
    ``projects/fairness_indicators/similarity_search/inference_casual_conversations.py``
    (``get_gender_precision_fairness_indicator``), written here from its description: torch
    ``nn.functional.normalize(..., dim=1, p=2)`` of both float32 sets,
    ``test.dot(train.T)``, then ``np.argsort(-similarity, axis=1)`` over every database
    item, whose first k columns are the neighbours. (VISSL then looks up the attribute of
    every ranked item in Python lists; that bookkeeping is not timed.)

Each runs ``--repeat`` times (default 5) in rotation, each run after ``--rest`` seconds of
idling (thread pools of the previous call spin for up to ~0.1 s); the MEDIAN is reported,
with the fastest and slowest run. Goals: ours / faiss <= 1.3 and VISSL / ours >= 10.

``--large`` times ours once at 100,000 queries x 1,000,000 items x 64 dimensions and
reports its memory: the resident set before the search, the peak during it (VmHWM after
resetting the peak counter through ``/proc/self/clear_refs``; Linux) and ``ru_maxrss``
(the peak of the whole process, data generation included).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def vissl_neighbors(q: np.ndarray, db: np.ndarray, k: int) -> np.ndarray:
    """VISSL's similarity search (see the module docstring), first k of the full ranking."""
    import torch
    from torch import nn

    train = nn.functional.normalize(torch.from_numpy(db).float(), dim=1, p=2).numpy()
    test = nn.functional.normalize(torch.from_numpy(q).float(), dim=1, p=2).numpy()
    similarity = test.dot(train.T)
    return np.argsort(-similarity, axis=1)[:, :k]


def faiss_neighbors(q_unit: np.ndarray, db_unit: np.ndarray, k: int) -> np.ndarray:
    """A bare exact faiss search on pre-normalised float32 rows."""
    import faiss

    index = faiss.IndexFlatIP(db_unit.shape[1])
    index.add(db_unit)
    return index.search(q_unit, k)[1]


def rotate(calls: dict[str, Callable[[], Any]], repeat: int,
           rest: float) -> tuple[dict[str, Any], dict[str, list[float]]]:
    """Run every call ``repeat`` times in rotation; their last outputs and their times."""
    out: dict[str, Any] = {}
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeat):
        for name, call in calls.items():
            time.sleep(rest)
            start = time.perf_counter()
            out[name] = call()
            times[name].append(time.perf_counter() - start)
    return out, times


def _status(field: str) -> int:
    """A VmRSS/VmHWM line of /proc/self/status, in KiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def large(nq: int, nd: int, d: int, k: int) -> None:
    from pytest_fairness.indicators.retrieval import nearest_neighbors

    rng = np.random.default_rng(0)
    db = rng.standard_normal((nd, d), dtype=np.float32)
    q = rng.standard_normal((nq, d), dtype=np.float32)
    nearest_neighbors(q[:2], db[:1000], k=k)  # load faiss before measuring
    before = _status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:  # reset VmHWM to the current RSS
        f.write("5")
    start = time.perf_counter()
    out = nearest_neighbors(q, db, k=k)
    seconds = time.perf_counter() - start
    peak = _status("VmHWM")
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"ours {nq:,} x {nd:,} x {d}, k={k}: {seconds:.1f} s; RSS before the search "
          f"{before / 1024:.0f} MiB (inputs {(q.nbytes + db.nbytes) / 2**20:.0f} MiB), peak "
          f"during it {peak / 1024:.0f} MiB (growth {(peak - before) / 1024:.0f} MiB; a "
          f"dense score matrix would be {nq * nd * 4 / 2**30:,.0f} GiB), ru_maxrss "
          f"{maxrss / 1024:.0f} MiB; output {out.nbytes / 2**20:.0f} MiB")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--queries", type=int)
    p.add_argument("--database", type=int)
    p.add_argument("--dim", type=int)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--rest", type=float, default=0.5)
    p.add_argument("--large", action="store_true")
    a = p.parse_args()
    sizes = (100_000, 1_000_000, 64) if a.large else (2_000, 10_000, 2_048)
    nq, nd, d = (given or size for given, size in zip((a.queries, a.database, a.dim), sizes))
    if a.large:
        large(nq, nd, d, a.k)
        return
    from pytest_fairness.indicators.retrieval import nearest_neighbors

    rng = np.random.default_rng(0)
    q = rng.standard_normal((nq, d), dtype=np.float32)
    db = rng.standard_normal((nd, d), dtype=np.float32)
    q_unit = q / np.linalg.norm(q, axis=1, keepdims=True)
    db_unit = db / np.linalg.norm(db, axis=1, keepdims=True)
    out, times = rotate({
        "ours": lambda: nearest_neighbors(q, db, k=a.k),
        "faiss": lambda: faiss_neighbors(q_unit, db_unit, a.k),
        "vissl": lambda: vissl_neighbors(q, db, a.k),
    }, a.repeat, a.rest)
    median = {name: statistics.median(t) for name, t in times.items()}
    print(f"retrieval {nq:,} x {nd:,} x {d}, k={a.k}, median of {a.repeat} runs:")
    for name, t in times.items():
        print(f"  {name:5}  {median[name]:.3f} s (min {min(t):.3f}, max {max(t):.3f})")
    print(f"  ours / faiss {median['ours'] / median['faiss']:.2f}x (goal <= 1.3); "
          f"VISSL / ours {median['vissl'] / median['ours']:.1f}x (goal >= 10)")
    for name in ("faiss", "vissl"):  # float32 rankings may swap cosines within ~1e-4
        same = (out[name] == out["ours"]).all(axis=1).mean()
        print(f"  neighbours identical to {name}'s for {same:.2%} of queries")


if __name__ == "__main__":
    main()
