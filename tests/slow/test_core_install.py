"""The core install (``pip install pytest-fairness``, no extras) gates a suite without torch.

A fresh venv gets this checkout without extras; torch, faiss and matplotlib must then be
absent, and a small suite run there gates on arrays of predictions, on shards written here
(the full install) by ``pytest-fairness extract``, and meets the retrieval indicator's missing
extra as one message naming it. pip may reach the package registry (its cache is reused);
without a registry the test is skipped, saying so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "fixtures" / "manifest"

SUITE = '''
import numpy as np
import pytest

from pytest_fairness import fairness, indicators
from pytest_fairness.features import DefaultTransform

TRUTH = np.array([1, 0] * 40)
GROUPS = np.array(["a"] * 40 + ["b"] * 40)


@fairness.threshold(max_gap=0.05)
def test_arrays_even():
    return indicators.group_metrics(TRUTH, TRUTH, groups=GROUPS, pos_label=1)


@fairness.threshold(max_gap=0.05)
def test_arrays_uneven():
    predicted = TRUTH.copy()
    predicted[40:60] = 1 - predicted[40:60]  # group b: 20 of 40 wrong
    return indicators.group_metrics(TRUTH, predicted, groups=GROUPS, pos_label=1)


@fairness.threshold(max_gap=1.0)
def test_shards(fairness_features, fairness_manifest):
    features = fairness_features(fairness_manifest, transform=DefaultTransform(32))
    assert features.logits.shape == (16, 6) and np.isfinite(features.logits).all()
    truth = np.arange(len(fairness_manifest)) // 2 % 2 == 0
    predicted = features.logits.argmax(axis=1) % 2 == 1
    return indicators.group_metrics(truth, predicted, groups=fairness_manifest.frame["gender"],
                                    min_group_size=1)


def test_retrieval_needs_its_extra():
    rows = (np.eye(2), {"gender": ["f", "m"]})
    indicators.precision_at_k(rows, rows, k=1, match="gender", by="gender", min_group_size=1)
'''


def _run(*args: str | Path, cwd: Path | None = None,
         timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=timeout)


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a fresh venv holding this checkout without extras."""
    root = tmp_path_factory.mktemp("core")
    probe = _run(sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d",
                 root / "probe", "pytest", timeout=120)
    if probe.returncode != 0:
        pytest.skip(f"the package registry cannot be reached (pip download pytest: "
                    f"{probe.stderr.strip()[-300:]})")
    source = root / "source"  # a copy: pip builds in the source tree
    shutil.copytree(REPO / "pytest_fairness", source / "pytest_fairness",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    venv = root / "venv"
    assert _run(sys.executable, "-m", "venv", venv).returncode == 0
    python = venv / "bin" / "python"
    start = time.monotonic()
    installed = _run(python, "-m", "pip", "install", "--quiet", source, timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    print(f"core install: {time.monotonic() - start:.0f} s")
    return python


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Features of the fixture manifest written by ``pytest-fairness extract`` here."""
    pytest.importorskip("torch")
    from pytest_fairness.cli import main
    from tests.plugin.test_extract_shards import MODEL

    root = tmp_path_factory.mktemp("extract")
    (root / "scale_model.py").write_text(MODEL)
    sys.path.insert(0, str(root))
    try:
        out = root / "features"
        assert main(["extract", "--model", "scale_model:build", "--data", f"manifest={DATA}",
                     "--out", str(out), "--image-size", "32"]) == 0
    finally:
        sys.path.remove(str(root))
        sys.modules.pop("scale_model", None)
    return out


@pytest.mark.parametrize("module", ["torch", "torchvision", "PIL", "faiss", "matplotlib"])
def test_the_core_install_has_no_heavy_extra(core: Path, module: str) -> None:
    assert _run(core, "-c", f"import {module}").returncode != 0


def test_the_core_install_gates_on_arrays_and_shards(core: Path, shards: Path,
                                                     tmp_path: Path) -> None:
    (tmp_path / "test_gate.py").write_text(SUITE)
    done = _run(core, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "--fairness",
                f"--fairness-data=manifest={DATA}", f"--fairness-features={shards}",
                "--fairness-report", "report", cwd=tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "2 failed, 2 passed" in output, output
    assert "PASSED test_gate.py::test_arrays_even" in output, output
    assert "PASSED test_gate.py::test_shards" in output, output
    assert "FAILED test_gate.py::test_arrays_uneven - " in output, output
    assert ("needs 'faiss', which is not installed; install it with pip install "
            "'pytest-fairness[retrieval]'") in output, output
    assert "pytest-fairness[plots]" in (tmp_path / "report" / "report.html").read_text()
