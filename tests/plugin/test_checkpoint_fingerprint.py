"""End to end: each checkpoint's features come from that checkpoint's model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

# Import the heavy modules once, before pytester: an in-process run restores sys.modules
# afterwards, and numpy/torch cannot be imported a second time in one process.
torch = pytest.importorskip("torch")
pytest.importorskip("torchvision")
import filelock  # noqa: E402, F401
import numpy  # noqa: E402, F401
import pandas  # noqa: E402, F401
import PIL.Image  # noqa: E402, F401

import pytest_fairness.features  # noqa: E402, F401
from pytest_fairness.history import HistoryStore  # noqa: E402

MANIFEST = Path(__file__).resolve().parents[2] / "fixtures" / "manifest" / "manifest.csv"

CONFTEST = f"""
import pytest
import torch

from pytest_fairness.data import load_manifest
from pytest_fairness.features import DefaultTransform

torch.set_num_threads(1)
TRANSFORM = DefaultTransform(8)

def tiny():
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 8 * 8, 2))

@pytest.fixture(scope="session")
def small():
    return load_manifest({str(MANIFEST)!r})
"""

FOLLOWS = """
@pytest.fixture(scope="session")
def fairness_model(fairness_checkpoint):
    model = tiny()
    model.load_state_dict(torch.load(fairness_checkpoint, weights_only=True))
    return model.eval()
"""

IGNORES = """
@pytest.fixture(scope="session")
def fairness_model():
    torch.manual_seed(0)
    return tiny().eval()
"""

TEST = """
from conftest import TRANSFORM
from pytest_fairness import fairness, indicators

@fairness.threshold(max_gap=1.0)
def test_gap(fairness_features, small):
    features = fairness_features(small, transform=TRANSFORM, batch_size=8{extra})
    truth = (small.frame["skin_tone"] == "darker").astype(int).to_numpy()
    return indicators.group_metrics(truth, features.embeddings.argmax(axis=1),
                                    groups=features.groups("gender"), min_group_size=1)
"""


@pytest.fixture
def checkpoints(pytester: pytest.Pytester) -> list[str]:
    """Two checkpoints of the tiny model, with different weights."""
    paths = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 8 * 8, 2))
        path = pytester.path / f"ep{seed}.pt"
        torch.save(model.state_dict(), path)
        paths.append(str(path))
    return ["--fairness-checkpoint", paths[0], "--fairness-checkpoint", paths[1]]


@pytest.mark.parametrize("xdist_args", [  # two workers: two fresh interpreters import torch
    "no_xdist", "xdist_zero", pytest.param("xdist_two", marks=pytest.mark.slow)],
    indirect=True)
def test_a_model_that_ignores_its_checkpoint_fails(
        pytester: pytest.Pytester, checkpoints: list[str], xdist_args: list[str]) -> None:
    """The later checkpoint fails in the test; the summary names both and the run fails."""
    pytester.makeconftest(CONFTEST + IGNORES)
    pytester.makepyfile(test_ckpt=TEST.format(extra=""))
    result = pytester.runpytest("--fairness", "--fairness-no-history", *checkpoints,
                                *xdist_args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "fairness checkpoint ERROR in test_ckpt.py::test_gap?ep1.pt?, "
        "test_ckpt.py::test_gap?ep2.pt?: checkpoints ep1.pt and ep2.pt gave identical "
        "features in test_ckpt.py::test_gap*",
        "*def fairness_model(fairness_checkpoint):",
        "*return load_my_model(fairness_checkpoint).eval()",
    ])
    if xdist_args != ["-n", "2"]:  # with two workers both tests may run at once
        result.assert_outcomes(passed=1, failed=1)
        result.stdout.fnmatch_lines(["*CheckpointIgnoredError: checkpoints ep1.pt and "
                                     "ep2.pt gave identical features*"])


def test_one_model_id_for_every_checkpoint_fails(
        pytester: pytest.Pytester, checkpoints: list[str]) -> None:
    """A constant model_id makes the cache serve one checkpoint's features for both."""
    pytester.makeconftest(CONFTEST + FOLLOWS)
    pytester.makepyfile(test_ckpt=TEST.format(extra=', model_id="tiny"'))
    result = pytester.runpytest("--fairness", "--fairness-no-history", "-p", "no:xdist",
                                *checkpoints)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*The model is also named 'tiny' at every checkpoint*"])


def test_a_model_that_follows_its_checkpoint_records_fingerprints(
        pytester: pytest.Pytester, checkpoints: list[str]) -> None:
    """Different weights pass; report.json and the history carry both fingerprints."""
    pytester.makeconftest(CONFTEST + FOLLOWS)
    pytester.makepyfile(test_ckpt=TEST.format(extra=""))
    result = pytester.runpytest("--fairness", "-p", "no:xdist", "--fairness-report", "out",
                                *checkpoints)
    result.assert_outcomes(passed=2)
    document = json.loads((pytester.path / "out" / "report.json").read_text())
    tests = {t["checkpoint"].rsplit("/", 1)[-1]: t for t in document["tests"]}
    models = [tests[name]["model_fingerprint"] for name in ("ep1.pt", "ep2.pt")]
    datasets = {t["dataset_fingerprint"] for t in tests.values()}
    assert all(m.startswith("state:") for m in models) and models[0] != models[1]
    assert len(datasets) == 1 and None not in datasets
    digests = {e["features_digest"] for t in tests.values() for e in t["extractions"]}
    assert len(digests) == 2
    assert document["run"]["model_fingerprint"] == ",".join(models)
    assert document["run"]["dataset_fingerprint"] == datasets.pop()
    with HistoryStore(pytester.path / ".fairness" / "history.sqlite") as store:
        (run,) = store.runs()
        records = store.records(run["id"])
    assert run["model_fingerprint"] == ",".join(models)
    assert [r.model_fingerprint for r in records] == models
    assert records[0].dataset_fingerprint == run["dataset_fingerprint"]


MODEL_TEST = """
import pytest
import torch

from pytest_fairness import indicators

@pytest.mark.fairness
def test_direct(fairness_model, small{extra}):
    images = torch.zeros(len(small), 3, 8, 8)
    predicted = fairness_model(images).argmax(axis=1).numpy()
    truth = (small.frame["skin_tone"] == "darker").astype(int).to_numpy()
    return indicators.group_metrics(truth, predicted, groups=small.frame["gender"],
                                    min_group_size=1)
"""


@pytest.mark.parametrize("xdist_args", [
    "no_xdist", "xdist_zero", pytest.param("xdist_two", marks=pytest.mark.slow)],
    indirect=True)
def test_a_test_using_fairness_model_directly_is_guarded_too(
        pytester: pytest.Pytester, checkpoints: list[str], xdist_args: list[str]) -> None:
    """No fairness_features call: the model requested is checked per checkpoint."""
    pytester.makeconftest(CONFTEST + IGNORES)
    pytester.makepyfile(test_direct=MODEL_TEST.format(extra=""))
    args = ["--fairness", "--fairness-no-history", *checkpoints, *xdist_args]
    result = pytester.runpytest(*args)  # one test, not one per checkpoint
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["CheckpointIgnoredError: test_direct.py::test_direct requests "
                                 "fairness_model but does not run per checkpoint*"])
    assert "traceback entries are hidden" not in result.stdout.str()

    pytester.makepyfile(test_direct=MODEL_TEST.format(extra=", fairness_checkpoint"))
    result = pytester.runpytest(*args)  # one per checkpoint, the same model
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["CheckpointIgnoredError: checkpoints ep1.pt and ep2.pt got the "
                                 "same fairness_model in test_direct.py::test_direct:*"])
    if xdist_args != ["-n", "2"]:  # with two workers both tests may run at once
        result.assert_outcomes(passed=1, failed=1)

    pytester.makeconftest(CONFTEST + FOLLOWS)
    pytester.runpytest(*args).assert_outcomes(passed=2)
