"""Cost of loading pytest-fairness when no fairness test runs.

Generates 1,000 plain tests and times ``pytest --co -q`` over them with the plugin and with
``-p no:fairness``, alternating runs to share any drift, and prints the ratio of medians.
Goal: ratio <= 1.05.

Run: ``python benchmarks/plugin_load.py [--tests 1000] [--repeat 9]``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def make_suite(root: Path, n_tests: int) -> None:
    per_file = 50
    for f in range(n_tests // per_file):
        body = "\n".join(f"def test_{f}_{i}():\n    assert {i} == {i}\n" for i in range(per_file))
        (root / f"test_gen_{f:03d}.py").write_text(body)


def run(root: Path, extra: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", *extra],
        cwd=root, check=True, stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "pytest.ini").write_text("[pytest]\n")
        make_suite(root, args.tests)
        run(root, []), run(root, ["-p", "no:fairness"])  # warm the file system cache
        with_plugin, without = [], []
        for _ in range(args.repeat):
            with_plugin.append(run(root, []))
            without.append(run(root, ["-p", "no:fairness"]))
    a, b = statistics.median(with_plugin), statistics.median(without)
    print(f"pytest --co over {args.tests} plain tests, median of {args.repeat} runs")
    print(f"  with pytest-fairness : {a:.3f} s")
    print(f"  -p no:fairness       : {b:.3f} s")
    print(f"  ratio                : {a / b:.3f}  (goal <= 1.05)")


if __name__ == "__main__":
    main()
