"""End to end: dataset fixtures, options, checkpoints, the feature cache across processes."""

from __future__ import annotations

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

COUNTING_CONFTEST = f"""
import os
import pytest
import torch

from pytest_fairness.data import load_manifest
from pytest_fairness.features import DefaultTransform

class Counting(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = torch.nn.Linear(3 * 8 * 8, 4)

    def forward(self, x):
        with open(os.environ["FORWARD_LOG"], "a") as log:
            log.write(f"{{os.getpid()}}\\n")
        return self.fc(x.flatten(1))

@pytest.fixture(scope="session")
def fairness_model():
    return Counting()

@pytest.fixture(scope="session")
def small():
    return load_manifest({str(FIXTURES / "manifest" / "manifest.csv")!r})

TRANSFORM = DefaultTransform(8)
"""

FEATURE_TESTS = """
from conftest import TRANSFORM

def test_a(fairness_features, small):
    f = fairness_features(small, transform=TRANSFORM, batch_size=4)
    assert f.embeddings.shape == (16, 4)

def test_b(fairness_features, small):
    f = fairness_features(small, transform=TRANSFORM, batch_size=4)
    assert f.embeddings.shape == (16, 4)
"""


def forward_calls(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def test_dataset_fixture_skips_when_not_configured(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x(utkface):\n    pass\n")
    result = pytester.runpytest("-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*dataset 'utkface' is not configured: pass --fairness-data "
                                 "utkface=PATH*"])


def test_strict_turns_the_skip_into_an_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x(miap):\n    pass\n")
    result = pytester.runpytest("--fairness-strict")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*dataset 'miap' is not configured*--fairness-strict*"])


def test_roots_from_command_line_and_ini(pytester: pytest.Pytester) -> None:
    pytester.makeini(f"""
        [pytest]
        fairness_data =
            celeba={FIXTURES / 'celeba'}
            manifest={FIXTURES / 'manifest' / 'manifest.csv'}
    """)
    pytester.makepyfile("""
        def test_all(utkface, celeba, fairness_manifest, fairface):
            assert (len(utkface), len(celeba), len(fairness_manifest)) == (24, 20, 16)
            assert len(fairface) == 21
    """)
    result = pytester.runpytest(f"--fairness-data=utkface={FIXTURES / 'utkface'}",
                                "--fairness-data", f"fairface={FIXTURES / 'fairface'}")
    result.assert_outcomes(passed=1)


def test_bad_data_option_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest("--fairness-data=imagenet=/x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown dataset 'imagenet'*known names*"])
    pytester.makeini("[pytest]\nfairness_data =\n    utkface\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*fairness_data: expected NAME=PATH*"])


def test_default_model_skips_with_how_to_override(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x(fairness_features):\n    pass\n")
    result = pytester.runpytest("-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*override the `fairness_model` fixture in conftest.py*"])


def test_one_run_per_checkpoint(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        import pytest

        @pytest.fixture(scope="session")
        def fairness_model(fairness_checkpoint):
            return fairness_checkpoint
    """)
    pytester.makepyfile("""
        def test_model(fairness_model, fairness_checkpoint):
            assert fairness_model == fairness_checkpoint

        def test_plain():
            pass
    """)
    for name in ("ep1.pt", "ep2.pt"):  # a checkpoint file that does not exist is refused
        (pytester.path / name).write_bytes(name.encode())
    result = pytester.runpytest("-v", "--fairness-checkpoint=ep1.pt",
                                "--fairness-checkpoint=ep2.pt")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*test_model?ep1.pt? PASSED*", "*test_model?ep2.pt? PASSED*"])
    assert result.stdout.str().count(str(pytester.path / "ep1.pt")) == 0  # ids, not paths
    assert pytester.runpytest().parseoutcomes() == {"passed": 2}


def test_second_run_reads_the_cache_and_no_cache_recomputes(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    log = pytester.path / "forward.log"
    monkeypatch.setenv("FORWARD_LOG", str(log))
    pytester.makeconftest(COUNTING_CONFTEST)
    pytester.makepyfile(test_feats=FEATURE_TESTS)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)
    assert len(forward_calls(log)) == 4  # 16 images / batch 4, once for both tests
    assert list((pytester.path / ".fairness" / "cache").rglob("*.sha256"))
    pytester.runpytest().assert_outcomes(passed=2)
    assert len(forward_calls(log)) == 4  # second session: no forward pass at all
    pytester.runpytest("--fairness-no-cache").assert_outcomes(passed=2)
    assert len(forward_calls(log)) == 12  # no cache, no memo: each test extracts


def test_cache_dir_option(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORWARD_LOG", str(pytester.path / "forward.log"))
    pytester.makeconftest(COUNTING_CONFTEST)
    pytester.makepyfile(test_feats=FEATURE_TESTS)
    pytester.makeini("[pytest]\nfairness_cache_dir = from_ini\n")
    pytester.runpytest("--fairness-batch-size=8").assert_outcomes(passed=2)
    assert list((pytester.path / "from_ini").rglob("*.sha256"))
    pytester.runpytest("--fairness-cache-dir", "from_cli").assert_outcomes(passed=2)
    assert list((pytester.path / "from_cli").rglob("*.sha256"))


@pytest.mark.slow  # three fresh interpreters importing torch: ~10 s idle, minutes when loaded
def test_two_xdist_workers_extract_once(pytester: pytest.Pytester,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("xdist")
    log = pytester.path / "forward.log"
    monkeypatch.setenv("FORWARD_LOG", str(log))
    pytester.makeconftest(COUNTING_CONFTEST)
    pytester.makepyfile(test_feats=FEATURE_TESTS)
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    calls = forward_calls(log)
    assert len(calls) == 4, calls  # one extraction (4 batches), not one per worker
    assert len(set(calls)) == 1  # by a single process
