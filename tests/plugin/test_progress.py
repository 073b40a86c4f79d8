"""End to end: extraction progress reaches pytest's terminal writer, without ``-s``.

On a terminal: one live line per extraction, rewritten in place. In a log (stdout not a
terminal): one line when an extraction starts and one when it ends. With ``-q``: nothing.
Under pytest-xdist: the controller prints each worker's end lines.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

# Import the heavy modules once, before pytester: an in-process run restores sys.modules
# afterwards, and numpy/torch cannot be imported a second time in one process.
pytest.importorskip("torch")
pytest.importorskip("torchvision")
import numpy  # noqa: E402, F401
import pandas  # noqa: E402, F401
import PIL.Image  # noqa: E402, F401

import pytest_fairness.features  # noqa: E402, F401

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

CONFTEST = f"""
import os
import time

import pytest
import torch

from pytest_fairness.data import load_manifest
from pytest_fairness.features import DefaultTransform

class Slow(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = torch.nn.Linear(3 * 8 * 8, 4)

    def forward(self, x):
        time.sleep(float(os.environ.get("BATCH_SECONDS", "0")))
        return self.fc(x.flatten(1))

@pytest.fixture(scope="session")
def fairness_model():
    return Slow()

@pytest.fixture(scope="session")
def small():
    return load_manifest({str(FIXTURES / "manifest" / "manifest.csv")!r})

TRANSFORM = DefaultTransform(8)

@pytest.hookimpl(trylast=True)  # after the terminal reporter is registered
def pytest_configure(config):
    if os.environ.get("FAKE_TTY"):  # what pytest sees on a real terminal
        from _pytest.compat import CallableBool

        config.pluginmanager.get_plugin("terminalreporter").isatty = CallableBool(True)
"""

#: Two extractions (clean, then blurred) of the 16 manifest images in 4 batches of 4.
TESTS = """
import pytest
from conftest import TRANSFORM

@pytest.mark.fairness
def test_two_extractions(fairness_features, small):
    print("the test's own output")
    fairness_features(small, transform=TRANSFORM, batch_size=4)
    fairness_features(small, transform=TRANSFORM, batch_size=4,
                      perturbation=("gaussian_blur", 0.5))
"""

START = "fairness: extracting manifest*: 16 images"
END = "fairness: extracted manifest*: 16 images in * s (* images/s)"


def progress_lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if "fairness: extract" in line]


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv("FAKE_TTY", raising=False)
    monkeypatch.delenv("BATCH_SECONDS", raising=False)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_progress_suite=TESTS)
    return pytester


def test_log_gets_a_start_and_an_end_line_per_extraction_without_s(suite: pytest.Pytester
                                                                   ) -> None:
    result = suite.runpytest("--fairness", "--fairness-no-cache", "-p", "no:xdist")
    result.assert_outcomes(passed=1)
    lines = progress_lines(result.stdout.str())
    assert len(lines) == 4, lines  # 2 extractions x (start, end): never one per batch
    result.stdout.fnmatch_lines([
        START.replace("manifest*", "manifest"),
        END.replace("manifest*", "manifest"),
        START.replace("manifest*", "manifest (gaussian_blur 0.5)"),
        END.replace("manifest*", "manifest (gaussian_blur 0.5)"),
    ])
    assert not any(re.search(r"\d+/16 images", line) for line in lines)  # no batch counts
    assert "the test's own output" not in result.stdout.str()  # capture itself still works


def test_quiet_prints_no_progress(suite: pytest.Pytester) -> None:
    result = suite.runpytest("--fairness", "--fairness-no-cache", "-q", "-p", "no:xdist")
    result.assert_outcomes(passed=1)
    assert progress_lines(result.stdout.str()) == []


def test_cached_features_print_nothing(suite: pytest.Pytester) -> None:
    suite.runpytest("--fairness", "-p", "no:xdist").assert_outcomes(passed=1)
    result = suite.runpytest("--fairness", "-p", "no:xdist")
    result.assert_outcomes(passed=1)
    assert progress_lines(result.stdout.str()) == []  # no forward pass, nothing to show


def test_terminal_gets_one_live_line_per_extraction(suite: pytest.Pytester,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # A subprocess, to read the raw bytes: pytester's own output splits lines at \r.
    monkeypatch.setenv("FAKE_TTY", "1")
    monkeypatch.setenv("BATCH_SECONDS", "0.12")  # slower than the 0.1 s between rewrites
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(sys.path))
    monkeypatch.setenv("COLUMNS", "150")  # wide enough for the whole line (else it is cut)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--fairness", "--fairness-no-cache", "-p", "no:xdist",
         "-p", "no:cacheprovider"],
        cwd=suite.path, capture_output=True, timeout=300, check=False)  # bytes: \r kept
    out = done.stdout.decode()
    assert done.returncode == 0, out[-3000:] + done.stderr.decode()[-3000:]
    lines = progress_lines(out)
    assert len(lines) == 2, lines  # one line per extraction, rewritten in place with \r
    clean, blurred = lines
    assert "(gaussian_blur 0.5)" in blurred and "gaussian_blur" not in clean
    for line in lines:
        states = [s.strip() for s in line.split("\r") if s.strip()]
        assert states[0].endswith(": 16 images")  # the start
        assert any(re.search(r": (4|8|12)/16 images, [\d.]+ images/s, ETA [\d.]+ s$", s)
                   for s in states), states  # live: rate and ETA while it runs
        assert re.search(r"extracted .*: 16 images in [\d.]+ s", states[-1]), states


@pytest.mark.slow  # two fresh workers importing torch: ~40 s on 2 busy cores
def test_xdist_controller_prints_the_workers_end_lines(suite: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    result = suite.runpytest("--fairness", "--fairness-no-cache", "-n", "2")
    result.assert_outcomes(passed=1)
    lines = progress_lines(result.stdout.str())
    assert len(lines) == 2, lines  # the end line of each extraction, from the controller
    result.stdout.fnmatch_lines(["[[]gw?[]] " + END.replace("manifest*", "manifest"),
                                 "[[]gw?[]] " + END.replace("manifest*",
                                                            "manifest (gaussian_blur 0.5)")])
