"""End to end: an interval straddling a limit is reported inconclusive, and the run's policy
decides what it does to the test; ``seed=None`` is the run's seed on every worker."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy.fft  # noqa: F401  (pytester forgets what a run imported; these load once)
import pytest
import scipy.sparse  # noqa: F401
import scipy.special  # noqa: F401

#: A gap of 0.06 with interval [0.03, 0.09] against max_gap=0.05: the estimate beyond the
#: limit, the interval straddling it.
STRADDLING = '''
from pytest_fairness import GroupStat, IndicatorResult, fairness


@fairness.threshold(max_gap=0.05, confidence="{confidence}")
def test_gap():
    return IndicatorResult("demo", "accuracy", 0.9, min_group_size=1,
                           groups=(GroupStat("a", 200, 0.92), GroupStat("b", 100, 0.86)),
                           intervals={{"gap": (0.03, 0.09)}})
'''


def test_supported_passes_loudly(pytester: pytest.Pytester, xdist_args: list[str]) -> None:
    """The test passes, the summary lists it with what would decide it, the counts say so."""
    pytester.makepyfile(test_gap=STRADDLING.format(confidence="supported"))
    result = pytester.runpytest("--fairness", "--junitxml=junit.xml", "--fairness-report=out",
                                *xdist_args)
    assert result.ret == 0
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "*fairness: 1 inconclusive*",
        "test_gap.py::test_gap: demo (accuracy): max_gap=0.05, confidence=supported: gap 0.06 "
        "[[]0.03, 0.09[]], the interval straddles the limit (counted as passed); undecided: "
        "*about 900 images per group (now 100 in the smallest)*",
        "*1 passed, 1 inconclusive*",
    ])
    props = {p.get("name"): p.get("value") for p in ET.parse(pytester.path / "junit.xml").iter(
        "property")}
    assert props["fairness.limit"].startswith("max_gap=0.05 observed=0.06")
    assert props["fairness.limit"].endswith(" passed inconclusive")
    assert "about 900 images per group" in props["fairness.inconclusive"]
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    (check,) = report["tests"][0]["checks"]
    assert check["verdict"] == "inconclusive" and "900 images" in check["decide"]
    assert report["summary"]["inconclusive"] == 1


def test_policy_fail_fails_supported(pytester: pytest.Pytester, xdist_args: list[str]) -> None:
    pytester.makepyfile(test_gap=STRADDLING.format(confidence="supported"))
    result = pytester.runpytest("--fairness", "--fairness-inconclusive=fail", *xdist_args)
    assert result.ret == 1
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*counted as failed*", "*1 failed, 1 inconclusive*"])


def test_ini_policy_pass_passes_strict(pytester: pytest.Pytester, xdist_args: list[str]) -> None:
    pytester.makepyfile(test_gap=STRADDLING.format(confidence="strict"))
    pytester.makeini("[pytest]\nfairness_inconclusive = pass\n")
    assert pytester.runpytest("--fairness", *xdist_args).ret == 0
    # strict without a policy fails an inconclusive verdict (strict: proved within)
    result = pytester.runpytest("--fairness", "--fairness-inconclusive=fail", *xdist_args)
    assert result.ret == 1


def test_a_bad_policy_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_gap=STRADDLING.format(confidence="supported"))
    result = pytester.runpytest("--fairness", "--fairness-inconclusive=maybe")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--fairness-inconclusive*invalid choice: 'maybe'*pass*fail*"])
    pytester.makeini("[pytest]\nfairness_inconclusive = maybe\n")
    result = pytester.runpytest("--fairness")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*fairness_inconclusive = maybe: must be one of pass, fail*"])


SEEDED = '''
import numpy as np
from pytest_fairness import fairness, indicators as ind

Y = np.tile([1, 0, 1, 1, 0, 1, 0, 0], 25)
P = np.tile([1, 0, 1, 0, 0, 0, 0, 1], 25)
G = np.repeat(["a", "b"], 100)


@fairness.threshold(max_gap=1.0)
def test_one():
    return ind.group_metrics(Y, P, groups=G, n_bootstrap=100)


@fairness.threshold(max_gap=1.0)
def test_two():
    return ind.group_metrics(Y, P, groups=G, n_bootstrap=100)
'''


def test_seed_none_is_the_run_seed(pytester: pytest.Pytester, xdist_args: list[str]) -> None:
    """On every worker: both tests record --fairness-seed, and draw alike."""
    pytester.makepyfile(test_seeded=SEEDED)
    result = pytester.runpytest("--fairness", "--fairness-seed=7", "--fairness-report=out",
                                *xdist_args)
    assert result.ret == 0
    tests = json.loads((pytester.path / "out" / "report.json").read_text())["tests"]
    results = [t["results"][0] for t in tests]
    assert [r["params"]["seed"] for r in results] == [7, 7]
    assert results[0]["intervals"] == results[1]["intervals"]
