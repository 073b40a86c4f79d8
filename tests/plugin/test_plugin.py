"""End-to-end behaviour of the plugin, through pytester."""

from __future__ import annotations

import numpy.fft  # noqa: F401  (pytester forgets what a run imported; these load once)
import pytest
import scipy.sparse  # noqa: F401
import scipy.special  # noqa: F401

HEADER = "from pytest_fairness import fairness, indicators as ind\nimport pytest\n"


def test_skipped_without_flag(pytester: pytest.Pytester, data_source: str,
                              xdist_args: list[str]) -> None:
    pytester.makepyfile(HEADER + data_source + """
@fairness.threshold(max_gap=0.5)
def test_gap():
    return ind.group_metrics(Y, P, groups=G, min_group_size=1)

@pytest.mark.fairness
def test_marked():
    raise AssertionError("must not run")

def test_plain():
    pass
""")
    result = pytester.runpytest("-rs", *xdist_args)
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(["*run with `pytest --fairness`*"])


def test_ini_enables(pytester: pytest.Pytester, data_source: str) -> None:
    pytester.makeini("[pytest]\nfairness = true\n")
    pytester.makepyfile(HEADER + data_source + """
@fairness.threshold(max_gap=0.5)
def test_gap():
    return ind.group_metrics(Y, P, groups=G, min_group_size=1)
""")
    pytester.runpytest().assert_outcomes(passed=1)


def test_pass_and_summary(pytester: pytest.Pytester, data_source: str,
                          xdist_args: list[str]) -> None:
    pytester.makepyfile(HEADER + data_source + """
@fairness.threshold(max_gap=0.3, min_value=0.5, confidence="point")
def test_gap():
    return ind.group_metrics(Y, P, groups=G, min_group_size=1, n_bootstrap=0)

@pytest.mark.fairness
def test_report_only():
    return {"overall": ind.group_metrics(Y, P, groups=G, min_group_size=1)}
""")
    result = pytester.runpytest("--fairness", "-W", "error::pytest.PytestReturnNotNoneWarning",
                                *xdist_args)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([
        "*fairness summary*",
        "*test_pass_and_summary.py::test_*group_metrics (accuracy)*0.625*0.25*",
        "*test_pass_and_summary.py::test_*group_metrics (accuracy)*0.625*0.25*",
    ])
    result.stdout.fnmatch_lines(["*test_gap*max_gap=0.3; min_value=0.5*passed*"])


def test_failure_shows_group_table(pytester: pytest.Pytester, data_source: str,
                                   xdist_args: list[str]) -> None:
    pytester.makepyfile(HEADER + data_source + """
@fairness.threshold(max_gap=0.1, confidence="point")
def test_gap():
    return ind.group_metrics(Y, P, groups=G, min_group_size=1, n_bootstrap=0)
""")
    result = pytester.runpytest("--fairness", *xdist_args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "FairnessViolation: 1 fairness limit broken: max_gap=0.1 (gap 0.25)",
        "*FAIL max_gap=0.1: gap 0.25, needs <= 0.1",
        "*group*n*accuracy*Δ best*",
        "*a*20*0.75*+0*",
        "*b*20*0.5*-0.25*",
    ])
    result.stdout.fnmatch_lines(["*fairness summary*", "*test_gap*max_gap=0.1 FAIL*failed*"])


def test_excluded_group_is_shown(pytester: pytest.Pytester, data_source: str) -> None:
    pytester.makepyfile(HEADER + data_source + """
@fairness.threshold(max_gap=0.01, confidence="point")
def test_gap():
    return ind.group_metrics(Y + [1, 1], P + [0, 0], groups=G + ["c", "c"], min_group_size=10,
                             n_bootstrap=0)
""")
    result = pytester.runpytest("--fairness")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*c*2*0*excluded (n < 10)*"])


def test_inline_check(pytester: pytest.Pytester, data_source: str, xdist_args: list[str]) -> None:
    pytester.makepyfile(HEADER + data_source + """
@pytest.mark.fairness
def test_inline_fail():
    r = ind.group_metrics(Y, P, groups=G, min_group_size=1, n_bootstrap=0)
    fairness.check(r, min_ratio=0.9, confidence="point")

@pytest.mark.fairness
def test_inline_pass():
    r = ind.group_metrics(Y, P, groups=G, min_group_size=1, n_bootstrap=0)
    outcomes = fairness.check(r, min_ratio=0.5, confidence="point")
    assert outcomes[0].passed
""")
    result = pytester.runpytest("--fairness", *xdist_args)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        '>*fairness.check(r, min_ratio=0.9, confidence="point")',
        "E*FairnessViolation: 1 fairness limit broken: min_ratio=0.9 (ratio 0.6667)",
    ])
    result.stdout.fnmatch_lines(["*test_inline_pass*min_ratio=0.5*passed*"])


def test_marker_validated_at_import(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(HEADER + """
@fairness.threshold(max_gapp=0.1)
def test_typo():
    pass
""")
    result = pytester.runpytest("--fairness")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*unknown keyword max_gapp=0.1*Allowed keywords: max_gap, *"])


def test_handwritten_marker_validated_at_setup(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(HEADER + """
@pytest.mark.fairness_threshold(0.1)
def test_positional():
    pass

@pytest.mark.fairness_threshold(max_gap=-1)
def test_negative():
    pass
""")
    result = pytester.runpytest("--fairness")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*keyword arguments only*",
                                 "*invalid fairness marker*max_gap must be in ?0.0, inf?*"])


def test_strict_markers_accepts_ours(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(HEADER + """
@pytest.mark.fairness
@pytest.mark.fairness_regression(tolerance=0.1)
def test_x():
    pass
""")
    pytester.runpytest("--strict-markers").assert_outcomes(skipped=1)


def test_select_with_m_fairness(pytester: pytest.Pytester, data_source: str) -> None:
    pytester.makepyfile(HEADER + data_source + """
@fairness.threshold(max_gap=0.5)
def test_gap():
    return ind.group_metrics(Y, P, groups=G, min_group_size=1)

def test_plain():
    pass
""")
    result = pytester.runpytest("--fairness", "-m", "fairness")
    result.assert_outcomes(passed=1, deselected=1)


def test_returning_something_else_is_an_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(HEADER + """
@fairness.threshold(max_gap=0.5)
def test_number():
    return 0.3
""")
    result = pytester.runpytest("--fairness")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*returned float; a fairness test returns an IndicatorResult*"])


def test_limit_that_does_not_fit(pytester: pytest.Pytester, data_source: str) -> None:
    pytester.makepyfile(HEADER + data_source + """
@fairness.threshold(max_effect_size=0.5)
def test_gap():
    return ind.group_metrics(Y, P, groups=G, min_group_size=1)
""")
    result = pytester.runpytest("--fairness")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*max_effect_size bounds stats?'effect_size'?*its stats: *DA*"])


def test_result_keyword_picks_dict_entry(pytester: pytest.Pytester, data_source: str) -> None:
    pytester.makepyfile(HEADER + data_source + """
@fairness.threshold(max_gap=0.1, result="strict", confidence="point")
@fairness.threshold(max_gap=0.5, confidence="point")
def test_two():
    r = ind.group_metrics(Y, P, groups=G, min_group_size=1, n_bootstrap=0)
    return {"strict": r, "loose": r}
""")
    result = pytester.runpytest("--fairness")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*strict: group_metrics (accuracy)*", "*FAIL max_gap=0.1*"])


def test_hooks_receive_results(pytester: pytest.Pytester, data_source: str,
                               xdist_args: list[str]) -> None:
    pytester.makeconftest("""
def pytest_fairness_result(item, key, result):
    item.user_properties.append(("seen", result.name))

def pytest_fairness_summary(records, lines):
    lines.append(f"custom: {len(records)} fairness tests")
""")
    pytester.makepyfile(HEADER + data_source + """
@fairness.threshold(max_gap=0.5)
def test_gap():
    return ind.group_metrics(Y, P, groups=G, min_group_size=1)
""")
    result = pytester.runpytest("--fairness", "--junitxml=out.xml", *xdist_args)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["custom: 1 fairness tests"])
    assert 'name="seen" value="group_metrics"' in (pytester.path / "out.xml").read_text()


def test_plain_tests_untouched(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
def test_returns():
    return 5
""")
    result = pytester.runpytest("--fairness")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.no_fnmatch_line("*fairness summary*")


def test_seed_option_and_ini(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_seed(fairness_seed):\n    print('seed', fairness_seed)\n")
    pytester.runpytest("-s").stdout.fnmatch_lines(["*seed 0*"])
    pytester.runpytest("-s", "--fairness-seed", "7").stdout.fnmatch_lines(["*seed 7*"])
    pytester.makeini("[pytest]\nfairness_seed = 11\n")
    pytester.runpytest("-s").stdout.fnmatch_lines(["*seed 11*"])
    result = pytester.runpytest("--fairness-seed", "-1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*a seed must be a non-negative int*"])
