"""A checkpoint is its path as given (plus its content), never a test id's file name.

Same-named checkpoint files, non-ASCII names and a checkpoint given twice used to compare
nothing and exit 0: the checkpoint was found again by stripping its file name from the
test id, which matched no id pytest had made.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3

import numpy  # noqa: F401  (pytester forgets what a run imported; numpy loads once)
import pytest
import scipy.sparse  # noqa: F401
import scipy.special  # noqa: F401

from tests.plugin.test_paired_regression import MODULE

#: The model is named by the checkpoint file's folder or stem ("base", "worse", ...).
TEST = MODULE + '''
from pathlib import Path

NAMES = {"bäse": "base", "wörse": "worse"}


@pytest.mark.fairness
def test_accuracy_gap(fairness_checkpoint):
    path = Path(fairness_checkpoint)
    model = path.parent.name if path.stem == "model" else NAMES.get(path.stem, path.stem)
    return accuracy(model)
'''


def _checkpoints(pytester: pytest.Pytester, *paths: str) -> list[str]:
    args = []
    for path in paths:
        file = pytester.path / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(path.encode())  # distinct content per file
        args += ["--fairness-checkpoint", path]
    return args


def test_same_named_checkpoints_are_told_apart_and_compared(
        pytester: pytest.Pytester, xdist_args: list[str]) -> None:
    pytester.makepyfile(test_gap=TEST)
    args = _checkpoints(pytester, "runs/base/model.pt", "runs/noise/model.pt",
                        "runs/worse/model.pt")
    result = pytester.runpytest("--fairness", *args, "--fairness-compare-fail", "0",
                                "--fairness-compare-confidence", "supported", *xdist_args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines([
        "fairness checkpoints: each compared with base/model.pt (1 regression in 1 test "
        "(2 comparisons), confidence supported)",
        "  ok test_gap.py::test_accuracy_gap[[]noise/model.pt] :: *",
        "  REGRESSED test_gap.py::test_accuracy_gap[[]worse/model.pt] :: *",
    ])


def test_non_ascii_checkpoint_names_are_compared(
        pytester: pytest.Pytester, xdist_args: list[str]) -> None:
    pytester.makepyfile(test_gap=TEST)
    args = _checkpoints(pytester, "bäse.pt", "wörse.pt")
    result = pytester.runpytest("--fairness", *args, "--fairness-compare-fail", "0",
                                *xdist_args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines([
        "fairness checkpoints: each compared with bäse.pt (1 regression in 1 test*",
        "  REGRESSED test_gap.py::test_accuracy_gap[[]w\\xf6rse.pt] :: *",
    ])


def test_a_checkpoint_given_twice_is_a_usage_error(pytester: pytest.Pytester,
                                                    xdist_args: list[str]) -> None:
    pytester.makepyfile(test_gap=TEST)
    args = _checkpoints(pytester, "runs/base/model.pt")
    result = pytester.runpytest("--fairness", *args, "--fairness-checkpoint",
                                "runs/../runs/base/model.pt", *xdist_args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "*--fairness-checkpoint 'runs/../runs/base/model.pt' names the same checkpoint as "
        "--fairness-checkpoint 'runs/base/model.pt': give each checkpoint once.*"])


def test_the_history_keeps_each_checkpoints_content_fingerprint(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_gap=TEST)
    args = _checkpoints(pytester, "runs/base/model.pt", "runs/noise/model.pt")
    pytester.runpytest("--fairness", *args).assert_outcomes(passed=2)
    with sqlite3.connect(pytester.path / ".fairness" / "history.sqlite") as conn:
        checkpoint, extra = conn.execute("SELECT checkpoint, metadata FROM runs").fetchone()
    assert checkpoint == "base/model.pt,noise/model.pt"
    files = json.loads(extra)["checkpoint_files"]
    for name in ("base", "noise"):
        path = pytester.path / "runs" / name / "model.pt"
        assert files[f"{name}/model.pt"] == {
            "path": f"runs/{name}/model.pt",  # as given
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


@pytest.mark.parametrize("given", ["runs/missing/model.pt", "missing.pt"])
def test_a_checkpoint_file_that_does_not_exist_is_a_usage_error(
        pytester: pytest.Pytester, given: str, xdist_args: list[str]) -> None:
    pytester.makepyfile(test_gap=TEST)
    args = _checkpoints(pytester, "runs/base/model.pt")
    result = pytester.runpytest("--fairness", *args, "--fairness-checkpoint", given,
                                *xdist_args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--fairness-checkpoint {given!r}: there is no such file "
                                 "(*). Give an existing checkpoint file, or a bare name*"])


def test_a_bare_checkpoint_name_is_for_the_fixture_to_interpret(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_gap=TEST)
    result = pytester.runpytest("--fairness", "--fairness-checkpoint", "base",
                                "--fairness-checkpoint", "worse")
    result.assert_outcomes(passed=2)
