"""End to end: ``--fairness-markdown FILE`` and ``$GITHUB_STEP_SUMMARY``."""

from __future__ import annotations

import pytest

#: A pass and a fail by the point rule: the gap 0.25 against 0.3 and 0.1.
TESTS = """
from pytest_fairness import fairness, indicators as ind

@fairness.threshold(max_gap=0.3, confidence="point")
def test_pass():
    return ind.group_metrics(Y, P, groups=G, min_group_size=1, n_bootstrap=0)

@fairness.threshold(max_gap=0.1, confidence="point")
def test_fail():
    return ind.group_metrics(Y, P, groups=G, min_group_size=1, n_bootstrap=0)
"""


def test_summary_written_and_appended_to_the_step_summary(
        pytester: pytest.Pytester, data_source: str, xdist_args: list[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A failing and a passing test: the verdict, the broken limit and the groups, in both."""
    module = pytester.makepyfile(TESTS + data_source).name
    step = pytester.path / "step-summary.md"
    step.write_text("# earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    result = pytester.runpytest("--fairness", "--fairness-markdown", "out.md",
                                "--fairness-no-history", *xdist_args)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["fairness markdown summary: *out.md"])
    text = (pytester.path / "out.md").read_text()
    assert text.startswith("## Fairness: failed\n")
    assert "1 failed, 1 passed of 2 fairness tests" in text
    assert f"| {module}::test_fail | group_metrics (accuracy) | max_gap | 0.25 | ≤ 0.1 |" in text
    assert "| a | 20 | 0.75 | +0 |" in text and "| b (worst) | 20 | 0.5 | -0.25 |" in text
    assert "test_pass" not in text
    assert step.read_text() == f"# earlier step\n{text}\n"


@pytest.mark.parametrize("value, why", [("", "names no file"), (".", "is a folder"),
                                        ("a-file/x.md", "is not a folder")])
def test_markdown_option_is_checked_at_configure_time(
        pytester: pytest.Pytester, value: str, why: str) -> None:
    """An empty value, a folder, or a file under a regular file: a usage error, no test run."""
    pytester.makepyfile("def test_x():\n    pass\n")
    (pytester.path / "a-file").write_text("x")
    result = pytester.runpytest("--fairness", f"--fairness-markdown={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--fairness-markdown {value!r}: *{why}*fairness-summary.md*"])
