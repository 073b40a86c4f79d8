"""End to end: predictions are checked where they are made, and a NaN group fails its limit.

NaN logits, one column of logits and labels of another type than the predictions are each a
clear error naming the argument; a group whose value is NaN fails the limits on groups.
"""

from __future__ import annotations

import pytest

HEADER = '''
import math
import numpy as np
from pytest_fairness import fairness, indicators as ind
from pytest_fairness.results import GroupStat, IndicatorResult
Y = [1, 0, 1, 1, 0, 1, 0, 0] * 5
G = ["a", "a", "a", "a", "b", "b", "b", "b"] * 5
'''

CASES = {
    "nan_logits": (
        "logits = np.tile([[0.0, 1.0]], (40, 1)); logits[5, 1] = np.nan; logits[9] = np.inf\n"
        "    return ind.group_metrics(Y, logits, groups=G, min_group_size=1)",
        "*InvalidDataError: y_pred has NaN or infinite values in 2 row(s), the first row 5*"),
    "one_logit_column": (
        "return ind.group_metrics(Y, np.linspace(-1, 1, 40)[:, None], groups=G, "
        "min_group_size=1)",
        "*y_pred has shape (40, 1): one column of scores cannot be argmaxed into classes*"),
    "string_labels": (
        "names = np.array(['no', 'yes'])[Y]\n"
        "    return ind.group_metrics(names, Y, groups=G, min_group_size=1)",
        "*y_true is <U3 (e.g. 'yes') and y_pred is int64 (e.g. 1)*"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_predictions_fail_the_test_naming_them(pytester: pytest.Pytester, case: str,
                                                   xdist_args: list[str]) -> None:
    body, line = CASES[case]
    pytester.makepyfile(HEADER + f'''
@fairness.threshold(max_gap=0.5)
def test_model():
    {body}
''')
    result = pytester.runpytest("--fairness", *xdist_args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([line])


def test_a_nan_group_value_fails_min_value(pytester: pytest.Pytester,
                                           xdist_args: list[str]) -> None:
    pytester.makepyfile(HEADER + '''
@fairness.threshold(min_value=0.5, confidence="point")
def test_model():
    return IndicatorResult("custom", "accuracy", 0.8, min_group_size=1, groups=(
        GroupStat("a", 10, 0.9), GroupStat("b", 10, math.nan), GroupStat("c", 10, 0.7)))
''')
    result = pytester.runpytest("--fairness", *xdist_args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*min_value=0.5 (value NaN (group b))*"])


#: A test whose group "b" has a label that would forge a line and a colour; {returned} is
#: what it returns, with ``groups`` the hostile labels. Its limit is judged by the point rule:
#: the gap 0.25 breaks max_gap=0.1, while its interval [0, 0.55] would straddle it.
HOSTILE_TEST = HEADER + r'''
HOSTILE = "a\x1b[31mred\nFAILED forged"
PRED = [1, 0, 1, 0, 0, 0, 0, 1] * 5

@fairness.threshold(max_gap=0.1, confidence="point")
def test_model():
    groups = [HOSTILE if g == "b" else g for g in G]
    return {returned}
'''


def test_control_characters_in_labels_print_escaped(pytester: pytest.Pytester,
                                                    xdist_args: list[str]) -> None:
    """A group label or result key cannot forge a line or a colour on the terminal."""
    pytester.makepyfile(HOSTILE_TEST.format(
        returned="{HOSTILE: ind.group_metrics(Y, PRED, groups=groups, min_group_size=1, "
                 "n_bootstrap=0)}"))
    result = pytester.runpytest("--fairness", *xdist_args)
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "\x1b" not in output
    assert not any(line.startswith("FAILED forged") for line in output.splitlines())
    result.stdout.fnmatch_lines([
        r"*FairnessViolation: 1 fairness limit broken: max_gap=0.1*",
        r"*a\x1b[[]31mred\nFAILED forged*← worst",  # the group table
        r"[[]a\x1b[[]31mred\nFAILED forged]",  # the result's key in the section
        r"*::test_model*group_metrics (accuracy)*a\x1b[[]31mred\nFAILED forged*FAIL*failed",
    ])


def test_a_label_in_a_limit_error_prints_escaped(pytester: pytest.Pytester,
                                                 xdist_args: list[str]) -> None:
    """An error naming the groups (too few large enough) cannot forge a line either."""
    pytester.makepyfile(HOSTILE_TEST.format(
        returned="ind.group_metrics(Y, PRED, groups=groups, min_group_size=30)"))
    result = pytester.runpytest("--fairness", *xdist_args)
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "\x1b" not in output, output
    assert not any(line.startswith("FAILED forged") for line in output.splitlines()), output
