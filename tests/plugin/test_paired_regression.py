"""End to end: regressions judged by a paired bootstrap interval of the change.

Two checkpoints on the same images: one differs from the reference by retraining-like
noise (2 % of predictions flipped), the other by a real gap increase of 0.15. Under
``confidence="supported"`` the noise passes and the real regression fails, showing its
paired interval, both against a saved baseline and between checkpoints of one run.
"""

from __future__ import annotations

import json
import re

import numpy  # noqa: F401  (pytester forgets what a run imported; numpy loads once)
import pytest
import scipy.sparse  # noqa: F401
import scipy.special  # noqa: F401

#: Predictions per model: "base", "noise" (2 % flipped) or "worse" (group b loses 0.15).
MODULE = '''
import os

import numpy as np
import pytest

from pytest_fairness import fairness, indicators as ind

rng = np.random.default_rng(0)
G = np.repeat(["a", "b"], 1000)
Y = rng.integers(0, 2, 2000)
RIGHT = rng.random(2000) < np.where(G == "a", 0.88, 0.83)
NOISE = rng.random(2000) < 0.02
WORSE = np.flatnonzero(RIGHT & (G == "b"))[:150]


def predictions(model):
    right = RIGHT.copy()
    if model in ("noise", "worse"):
        right ^= NOISE
    if model == "worse":
        right[WORSE] = False
    return np.where(right, Y, 1 - Y)


def accuracy(model):
    return ind.group_metrics(Y, predictions(model), groups=G, n_bootstrap=1000, seed=0)
'''

BASELINE_TEST = MODULE + '''

@fairness.no_regression(tolerance=0.0, confidence="supported")
def test_accuracy_gap():
    return accuracy(os.environ["PAIRED_MODEL"])
'''

CHECKPOINT_TEST = MODULE + '''

@pytest.mark.fairness
def test_accuracy_gap(fairness_checkpoint):
    return accuracy(fairness_checkpoint)
'''


def test_noise_passes_and_a_real_regression_fails_against_a_baseline(
        pytester: pytest.Pytester, xdist_args: list[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_gap=BASELINE_TEST)
    monkeypatch.setenv("PAIRED_MODEL", "base")
    pytester.runpytest("--fairness", "--fairness-save-baseline", "base.json",
                       *xdist_args).assert_outcomes(passed=1)
    stored = json.loads((pytester.path / "base.json").read_text())
    summary = next(iter(next(iter(stored["tests"].values()))["results"].values()))
    # value, gap, ratio, every column's gap, every derived stat (DA and DEO share the gap's
    # and the TPR gap's), the worst group's value, each group's headline
    assert set(summary["replicates"]) == {"value", "gap", "ratio", "gap:tpr", "gap:fpr",
                                          "MGA", "mGA", "DA", "DEO", "DEOdds", "DTO", "worst",
                                          "group:0", "group:1"}

    monkeypatch.setenv("PAIRED_MODEL", "noise")
    result = pytester.runpytest("--fairness", "--fairness-baseline=base.json", *xdist_args)
    result.assert_outcomes(passed=1)

    monkeypatch.setenv("PAIRED_MODEL", "worse")
    result = pytester.runpytest("--fairness", "--fairness-baseline=base.json", *xdist_args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*1 fairness regression against the baseline base.json*",
        "*REGRESSED: group_metrics (accuracy): headline (gap*) baseline 0.05 → now 0.19*"
        "worse, interval [[]+0.1*, +0.1*] paired, tolerance 0 supported, lower is better)",
        "*note: 95% interval paired: both resampled the same units (seed 0, 1000 replicates)",
    ])


def test_the_same_images_under_another_seed_are_compared_unpaired(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_gap=BASELINE_TEST.replace("seed=0", "seed=SEED").replace(
        "import os", "import os\nSEED = int(os.environ['PAIRED_SEED'])"))
    monkeypatch.setenv("PAIRED_MODEL", "base")
    monkeypatch.setenv("PAIRED_SEED", "0")
    pytester.runpytest("--fairness", "--fairness-save-baseline", "base.json").assert_outcomes(
        passed=1)
    monkeypatch.setenv("PAIRED_MODEL", "worse")
    monkeypatch.setenv("PAIRED_SEED", "1")
    result = pytester.runpytest("--fairness", "--fairness-baseline=base.json")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*interval [[]+0.*] unpaired*",
                                 "*unpaired: drawn with different seeds (0 and 1)*"])


def test_a_rule_that_needs_replicates_says_how_to_get_them(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    # n_bootstrap=0: no replicates (intervals are drawn by default now)
    pytester.makepyfile(test_gap=BASELINE_TEST.replace(", n_bootstrap=1000, seed=0",
                                                       ", n_bootstrap=0"))
    monkeypatch.setenv("PAIRED_MODEL", "base")
    pytester.runpytest("--fairness", "--fairness-save-baseline", "base.json").assert_outcomes(
        passed=1)
    result = pytester.runpytest("--fairness", "--fairness-baseline=base.json")
    result.assert_outcomes(failed=1)  # unchanged, but "supported" cannot be judged
    result.stdout.fnmatch_lines(["*no bootstrap replicates of headline in the baseline: "
                                 "compute the indicator with intervals (n_bootstrap=1000, "
                                 "the default) and save the baseline again*"
                                 "--fairness-compare-confidence point*"])


def test_checkpoints_of_one_run_are_compared_with_the_first(
        pytester: pytest.Pytester, xdist_args: list[str]) -> None:
    pytester.makepyfile(test_gap=CHECKPOINT_TEST)
    ckpts = [arg for name in ("base", "noise", "worse") for arg in ("--fairness-checkpoint",
                                                                       name)]
    result = pytester.runpytest("--fairness", *ckpts, *xdist_args)
    result.assert_outcomes(passed=3)  # no --fairness-compare-fail: shown, not judged
    result.stdout.fnmatch_lines([
        "fairness checkpoints: each compared with base",
        "  test_gap.py::test_accuracy_gap[[]noise] :: group_metrics (accuracy): headline "
        "(gap*) 0.05 → 0.0* (* worse [[]*] paired)",
        "  test_gap.py::test_accuracy_gap[[]worse] :: group_metrics (accuracy): headline "
        "(gap*) 0.05 → 0.19* (+0.1* worse [[]+0.1*, +0.1*] paired)",
    ])

    result = pytester.runpytest("--fairness", *ckpts, "--fairness-compare-fail", "0",
                                "--fairness-compare-confidence", "supported",
                                "--fairness-report", "out", *xdist_args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1, passed=2)  # the regressed checkpoint's test fails
    out = result.stdout.str()
    assert re.search(r"fairness checkpoints: each compared with base \(1 regression in 1 "
                     r"test \(2 comparisons\), confidence supported\)", out), out
    assert re.search(r"  ok test_gap\.py::test_accuracy_gap\[noise\] ", out), out
    assert re.search(r"  REGRESSED test_gap\.py::test_accuracy_gap\[worse\] ", out), out
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    regressed = [c for c in report["checkpoint_comparisons"] if c["regressed"]]
    assert [c["test"] for c in regressed] == ["test_gap.py::test_accuracy_gap[worse]"]
    assert regressed[0]["verdict"] == "REGRESSED" and report["summary"]["regressions"] == 1
    assert regressed[0]["paired"] is True and regressed[0]["interval"][0] > 0
    page = (pytester.path / "out" / "report.html").read_text()
    assert "Checkpoints compared with the reference" in page
    assert re.search(r"\+0\.145 worse, interval \[\+0\.1\d*, \+0\.1\d*\] paired, "
                     r"tolerance 0 supported", page), page


def test_the_reference_checkpoint_can_be_named(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_gap=CHECKPOINT_TEST)
    ckpts = ["--fairness-checkpoint", "base", "--fairness-checkpoint", "worse"]
    result = pytester.runpytest("--fairness", *ckpts, "--fairness-reference-checkpoint",
                                "worse", "--fairness-compare-fail", "0")
    assert result.ret == pytest.ExitCode.OK  # base is better than worse: no regression
    result.stdout.fnmatch_lines(["fairness checkpoints: each compared with worse (no "
                                 "regression in 1 comparison, confidence supported)"])
    result = pytester.runpytest("--fairness", *ckpts, "--fairness-reference-checkpoint", "x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--fairness-reference-checkpoint='x' names none of the "
                                 "--fairness-checkpoint: base, worse*"])
