"""Features extracted ahead, per checkpoint: each checkpoint reads its own folder, or the
run stops saying which folder is missing or whose features a folder holds.

``--fairness-features DIR`` with several checkpoints used to read one folder for all of
them, so every comparison came out ``+0 worse [+0, +0]`` and passed.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("pyarrow.dataset")
import numpy  # noqa: E402, F401  (pytester forgets what a run imported)
import pandas  # noqa: E402, F401
import torch  # noqa: E402

from pytest_fairness.cli import main  # noqa: E402
from tests.plugin.test_extract_shards import DATA, MODEL  # noqa: E402

SUITE = '''
import numpy as np
import pytest

from pytest_fairness import indicators
from pytest_fairness.features import DefaultTransform


@pytest.mark.fairness
def test_gap(fairness_checkpoint, fairness_features, fairness_manifest):
    features = fairness_features(fairness_manifest, transform=DefaultTransform(32))
    truth = np.arange(len(fairness_manifest)) // 2 % 2 == 0
    predicted = features.logits.argmax(axis=1) % 2 == 1
    return indicators.group_metrics(truth, predicted, groups=fairness_manifest.frame["gender"],
                                    min_group_size=1)
'''


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two checkpoints of one tiny model and the features folder extracted from each."""
    root = tmp_path_factory.mktemp("ahead")
    (root / "scale_model.py").write_text(MODEL)
    import sys

    sys.path.insert(0, str(root))
    try:
        import scale_model

        out = {"model": root}
        for seed in (1, 2):
            model = scale_model.Tiny()  # seeds torch with 0
            torch.manual_seed(seed)
            for parameter in model.parameters():
                torch.nn.init.normal_(parameter)
            torch.save(model.state_dict(), root / f"ckpt{seed}.pt")
            folder = root / f"features{seed}"
            assert main(["extract", "--model", "scale_model:build", "--data",
                         f"manifest={DATA}", "--out", str(folder), "--image-size", "32",
                         "--checkpoint", str(root / f"ckpt{seed}.pt")]) == 0
            out[f"ckpt{seed}"], out[f"features{seed}"] = root / f"ckpt{seed}.pt", folder
    finally:
        sys.path.remove(str(root))
        sys.modules.pop("scale_model", None)
    return out


@pytest.fixture
def project(pytester: pytest.Pytester, shards: dict[str, Path],
            monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makepyfile(test_gate=SUITE)
    for name in ("ckpt1", "ckpt2"):  # the checkpoints live in the project
        (pytester.path / f"{name}.pt").write_bytes(shards[name].read_bytes())
    repo = Path(__file__).resolve().parents[2]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(shards["model"]), str(repo)]))
    return pytester


def _common(shards: dict[str, Path]) -> list[str]:
    return ["--fairness", f"--fairness-data=manifest={DATA}", "--fairness-checkpoint",
            "ckpt1.pt", "--fairness-checkpoint", "ckpt2.pt"]


def test_one_folder_for_several_checkpoints_is_a_usage_error(
        project: pytest.Pytester, shards: dict[str, Path], xdist_args: list[str]) -> None:
    result = project.runpytest(*_common(shards), f"--fairness-features={shards['features1']}",
                               *xdist_args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*give one folder, or with several --fairness-checkpoint one "
                                 "folder per checkpoint, as --fairness-features CHECKPOINT=DIR "
                                 "(ckpt1.pt=DIR, ckpt2.pt=DIR)*"])


def test_a_folder_for_no_checkpoint_or_a_checkpoint_without_one_is_a_usage_error(
        project: pytest.Pytester, shards: dict[str, Path]) -> None:
    """A CHECKPOINT= naming none of the checkpoints matches nothing: refused, with the names."""
    mapped = f"--fairness-features=ckpt1.pt={shards['features1']}"
    result = project.runpytest(*_common(shards), mapped,
                               f"--fairness-features=ckpt3.pt={shards['features2']}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--fairness-features 'ckpt3.pt=*': give one folder, or with "
                                 "several --fairness-checkpoint one folder per checkpoint*"
                                 "(ckpt1.pt=DIR, ckpt2.pt=DIR)*Did you mean 'ckpt[12].pt'*"])
    result = project.runpytest(*_common(shards), mapped)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--fairness-features gives no folder for checkpoint(s) "
                                 "ckpt2.pt; add --fairness-features CHECKPOINT=DIR for each.*"])


def test_each_checkpoint_reads_its_own_folder_and_the_history_says_which(
        project: pytest.Pytester, shards: dict[str, Path], xdist_args: list[str]) -> None:
    result = project.runpytest(
        *_common(shards), f"--fairness-features=ckpt1.pt={shards['features1']}",
        f"--fairness-features=ckpt2.pt={shards['features2']}", *xdist_args)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["fairness checkpoints: each compared with ckpt1.pt*"])
    with sqlite3.connect(project.path / ".fairness" / "history.sqlite") as conn:
        model, extra = conn.execute("SELECT model_fingerprint, metadata FROM runs").fetchone()
    assert sorted(json.loads(extra)["features"].split(",")) == sorted(
        [str(shards["features1"]), str(shards["features2"])])
    manifests = [json.loads((shards[f"features{i}"] / "_manifest.json").read_text())
                 for i in (1, 2)]
    assert sorted(model.split(",")) == sorted(m["model"]["fingerprint"] for m in manifests)


def test_a_folder_of_another_checkpoint_is_refused(
        project: pytest.Pytester, shards: dict[str, Path], xdist_args: list[str]) -> None:
    result = project.runpytest(
        *_common(shards), f"--fairness-features=ckpt1.pt={shards['features2']}",
        f"--fairness-features=ckpt2.pt={shards['features2']}", *xdist_args)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([f"E * --fairness-features folder '{shards['features2']}' "
                                 "holds features of checkpoint * not of '*ckpt1.pt' *"])


def test_a_spaced_folder_outside_the_project_is_a_usage_error(
        project: pytest.Pytester, shards: dict[str, Path], xdist_args: list[str]) -> None:
    result = project.runpytest("--fairness", f"--fairness-data=manifest={DATA}",
                               "--fairness-features", str(shards["features1"]), *xdist_args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--fairness-features * (with a space) names a folder outside "
                                 "this project*Write --fairness-features=*"])
