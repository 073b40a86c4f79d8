"""End to end: ``--fairness-family-alpha`` judges every interval-judged check of the run at its
test's share of alpha, the same on every xdist worker, and says so in the summary and reports."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy.fft  # noqa: F401  (pytester forgets what a run imported; these load once)
import pytest
import scipy.sparse  # noqa: F401
import scipy.special  # noqa: F401

from pytest_fairness import indicators
from pytest_fairness.family import family_level, interval_at

#: Two groups of 200: accuracy 0.80 and 0.70 (a gap of 0.10), the same rows every run.
DATA = '''
Y = [1, 0] * 200
P = Y[:160] + [1 - y for y in Y[160:200]] + Y[200:340] + [1 - y for y in Y[340:]]
G = ["a"] * 200 + ["b"] * 200
'''

SUITE = DATA + '''
import pytest
from pytest_fairness import fairness, indicators


def gap_result():
    return indicators.group_metrics(Y, P, groups=G, n_bootstrap=1000, seed=0)


@fairness.threshold(max_gap={limit}, confidence="supported")
def test_borderline():
    return gap_result()


def test_inline():
    fairness.check(gap_result(), max_gap={limit}, confidence="supported")


@pytest.mark.parametrize("k", range(8))
@fairness.threshold(max_gap=0.5, confidence="supported")
def test_comfortable(k):
    return gap_result()


@fairness.threshold(max_gap=0.5, confidence="point")
def test_point():
    return gap_result()
'''

TESTS = 10  # gated: borderline, inline, 8 comfortable; test_point is outside the family


def _limit() -> tuple[float, float]:
    """A limit below the gap's lower bound at 95 % and above it at the family's level."""
    ns: dict[str, list[object]] = {}
    exec(DATA, ns)
    r = indicators.group_metrics(ns["Y"], ns["P"], groups=ns["G"], n_bootstrap=1000, seed=0)
    level = family_level(0.05, TESTS, 1)
    alone, family = interval_at(r, "gap", 0.95)[0], interval_at(r, "gap", level)[0]
    assert family < alone  # the construction widens with the level
    return round((alone + family) / 2, 6), level


def test_a_limit_failing_alone_is_undecided_under_family_control(
        pytester: pytest.Pytester, xdist_args: list[str]) -> None:
    limit, level = _limit()
    pytester.makepyfile(test_suite=SUITE.format(limit=limit))
    alone = pytester.runpytest("--fairness", *xdist_args)
    alone.assert_outcomes(passed=9, failed=2)  # the borderline limit, marker and inline
    result = pytester.runpytest("--fairness", "--fairness-family-alpha", "0.05",
                                "--fairness-report=out", "--junitxml=junit.xml",
                                "--fairness-markdown=summary.md", *xdist_args)
    result.assert_outcomes(passed=11)
    result.stdout.fnmatch_lines([
        f"family-wise control: *=0.05 over {TESTS} tests ({TESTS} checks); each check at "
        f"level {level:.6g} *",
        "OUTSIDE the family: 1 check under confidence='point'*test_suite.py::test_point: "
        "max_gap=0.5*",
        "*fairness: 2 inconclusive*",
    ])
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    levels = {t["nodeid"]: [c.get("level") for c in t["checks"]] for t in report["tests"]}
    assert levels["test_suite.py::test_borderline"] == [pytest.approx(level)]
    assert levels["test_suite.py::test_inline"] == [pytest.approx(level)]
    assert levels["test_suite.py::test_point"] == [None]
    assert report["run"]["family"] == {"alpha": 0.05, "tests": TESTS}
    props = [(p.get("name"), p.get("value"))
             for p in ET.parse(pytester.path / "junit.xml").iter("property")]
    assert ("fairness.level", f"max_gap={limit:g}: {level:.6g}") in props
    assert (f"Family-wise control: {TESTS} interval-judged checks at level {level:.6g}"
            in (pytester.path / "summary.md").read_text())


def test_family_alpha_from_the_ini_file(pytester: pytest.Pytester) -> None:
    limit, _ = _limit()
    pytester.makepyfile(test_suite=SUITE.format(limit=limit))
    pytester.makeini("[pytest]\nfairness_family_alpha = 0.05\n")
    pytester.runpytest("--fairness").assert_outcomes(passed=11)


def test_a_bad_alpha_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE.format(limit=0.05))
    result = pytester.runpytest("--fairness", "--fairness-family-alpha", "0.7")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--fairness-family-alpha*a number in (0, 0.5]*such as 0.05*"
                                 "got '0.7'*"])
    pytester.makeini("[pytest]\nfairness_family_alpha = often\n")
    result = pytester.runpytest("--fairness")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*fairness_family_alpha = often*(0, 0.5]*"
                                 "fairness_family_alpha = 0.05*"])


def test_a_check_that_cannot_be_relevelled_fails_closed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bare='''
from pytest_fairness import GroupStat, IndicatorResult, fairness


@fairness.threshold(max_gap=0.5, confidence="supported")
def test_no_replicates():
    return IndicatorResult("demo", "accuracy", 0.9, min_group_size=1,
                           groups=(GroupStat("a", 200, 0.92), GroupStat("b", 100, 0.86)),
                           intervals={"gap": (0.03, 0.09)})
''')
    assert pytester.runpytest("--fairness").ret == 0
    result = pytester.runpytest("--fairness", "--fairness-family-alpha=0.05")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*max_gap=0.5*family-wise control*cannot be recomputed*"
                                 "n_bootstrap=1000*"])


def test_a_check_the_collection_count_missed_fails_closed(pytester: pytest.Pytester,
                                                          xdist_args: list[str]) -> None:
    """An interval-judged check made in a helper module is not in the family's count: the
    test fails saying so, instead of being judged at a level the count did not pay for."""
    pytester.makepyfile(helper=DATA + '''
from pytest_fairness import fairness, indicators


def check_gap():
    r = indicators.group_metrics(Y, P, groups=G, n_bootstrap=1000, seed=0)
    fairness.check(r, max_gap=0.5, confidence="supported")
''', test_hidden='''
import pytest
from helper import check_gap


@pytest.mark.fairness
def test_hidden():
    check_gap()
''')
    pytester.syspathinsert()
    assert pytester.runpytest("--fairness", *xdist_args).ret == 0
    result = pytester.runpytest("--fairness", "--fairness-family-alpha=0.05", *xdist_args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*test_hidden*missed at collection*"])
