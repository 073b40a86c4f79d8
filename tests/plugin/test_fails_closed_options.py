"""Options that ask for a verdict reach one, or the run fails saying why (issue: fail closed).

Each of these used to exit 0 having compared nothing: gating options without
``--fairness`` (the tests were skipped), gating options on a run whose selection held no
fairness result, a repeated ``--fairness-compare-fail`` (the last one won) and a tolerance
such as ``0_25`` (Python reads it as 25).
"""

from __future__ import annotations

import pytest

TEST = '''
from pytest_fairness import fairness, indicators

{data}

@fairness.no_regression(tolerance=0.0)
def test_gap():
    return indicators.group_metrics(Y, P, groups=G, min_group_size=1)

def test_plain():
    assert True
'''


@pytest.fixture
def project(pytester: pytest.Pytester, data_source: str) -> pytest.Pytester:
    pytester.makepyfile(test_gate=TEST.format(data=data_source))
    pytester.runpytest("--fairness", "--fairness-save-baseline", "base.json",
                       "--fairness-no-history").assert_outcomes(passed=2)
    return pytester


@pytest.mark.parametrize("options", [
    ["--fairness-baseline", "base.json"],
    ["--fairness-baseline", "base.json", "--fairness-compare-fail", "0.01"],
    ["--fairness-save-baseline", "new.json"],
], ids=["baseline", "compare-fail", "save-baseline"])
def test_gating_options_without_fairness_are_a_usage_error(
        project: pytest.Pytester, options: list[str], xdist_args: list[str]) -> None:
    result = project.runpytest(*options, *xdist_args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{options[0]}*ask* for a fairness verdict, but fairness "
                                 "tests are skipped without --fairness: add --fairness*"])
    assert not (project.path / "new.json").exists()


@pytest.mark.parametrize("options", [
    ["--fairness-baseline", "base.json", "--fairness-compare-fail", "0"],
    ["--fairness-save-baseline", "new.json"],
], ids=["baseline", "save-baseline"])
def test_gates_fail_a_run_whose_selection_has_no_fairness_result(
        project: pytest.Pytester, xdist_args: list[str], options: list[str]) -> None:
    result = project.runpytest("--fairness", *options, "-k", "plain", *xdist_args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stdout.fnmatch_lines([f"fairness ERROR: {options[0]}* ask* for a fairness verdict, "
                                 "but no fairness test of this run produced a result: nothing "
                                 "was compared or saved.*"])
    assert not (project.path / "new.json").exists()


def test_a_repeated_compare_fail_is_a_usage_error(project: pytest.Pytester,
                                                  xdist_args: list[str]) -> None:
    result = project.runpytest("--fairness", "--fairness-baseline", "base.json",
                               "--fairness-compare-fail", "gap:0.01",
                               "--fairness-compare-fail", "value:0.5", *xdist_args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--fairness-compare-fail is given 2 times (gap:0.01 and "
                                 "value:0.5); give it once, with comma-separated "
                                 "metric:tolerance pairs*"])


@pytest.mark.parametrize("value", ["gap:0_25", "0_1"])
def test_a_tolerance_with_an_underscore_is_refused(project: pytest.Pytester, value: str,
                                                   xdist_args: list[str]) -> None:
    result = project.runpytest("--fairness", "--fairness-baseline", "base.json",
                               "--fairness-compare-fail", value, *xdist_args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*a tolerance must be a number >= 0, such as 0.01; got "
                                 f"'{value.split(':')[-1]}'*"])
