"""End to end: report.json, report.html and JUnit XML properties."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import numpy.fft  # noqa: F401  (pytester forgets what a run imported; these load once)
import pytest
import scipy.sparse  # noqa: F401
import scipy.special  # noqa: F401

from pytest_fairness.files import load_report
from pytest_fairness.report.json_report import report_results

# Runs that draw figures go through a subprocess: in-process pytester runs drop the modules
# they imported, and numpy's and matplotlib's C extensions refuse a second import.
pytest.importorskip("matplotlib")

HEADER = "from pytest_fairness import fairness, indicators as ind\nimport pytest\n"
#: A pass and a fail by the point rule (gap 0.25); the results keep their default intervals,
#: which the reports carry.
TESTS = HEADER + """
@fairness.threshold(max_gap=0.3, confidence="point")
def test_pass():
    return ind.group_metrics(Y, P, groups=G, min_group_size=1)

@fairness.threshold(max_gap=0.1, confidence="point")
def test_fail():
    return ind.group_metrics(Y, P, groups=G, min_group_size=1)

@pytest.mark.fairness
def test_two():
    r = ind.group_metrics(Y, P, groups=G, min_group_size=1)
    return {"first": r, "second": r}
"""
XSS = "<script>alert(1)</script>"


class Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.chunks: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.chunks.append(data)


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["no_xdist", "xdist_two"])
def test_report_files(pytester: pytest.Pytester, data_source: str, mode: list[str]) -> None:
    """report.json round-trips every result; report.html parses and names every test."""
    pytester.makepyfile(TESTS + data_source)
    result = pytester.runpytest_subprocess("--fairness", "--fairness-report", "out",
                                           "--fairness-no-history", *mode)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["fairness report: out*report.html"])
    document = load_report(pytester.path / "out")
    nodeids = sorted(t["nodeid"] for t in document["tests"])
    assert nodeids == sorted(f"test_report_files.py::test_{n}" for n in ("pass", "fail", "two"))
    results = report_results(document)
    assert len(results) == 4
    assert all({**r.to_dict(), "key": d["key"]} == d for (_, r), d in zip(
        results, [d for t in document["tests"] for d in t["results"]]))
    assert document["summary"]["failed"] == 1 and document["run"]["versions"]["python"]
    parser = Text()
    parser.feed((pytester.path / "out" / "report.html").read_text())
    text = " ".join(parser.chunks)
    for nodeid in nodeids:
        assert nodeid in text
    assert "max_gap ≤ 0.1" in text and "FAIL" in text
    assert "img" in parser.tags and "script" not in parser.tags


def test_failure_points_at_the_report(pytester: pytest.Pytester, data_source: str) -> None:
    pytester.makepyfile(TESTS + data_source)
    result = pytester.runpytest("--fairness", "--fairness-report", "out", "-k", "fail",
                                "--fairness-no-history", "-p", "no:xdist")
    result.stdout.fnmatch_lines(["*HTML report with plots: out*report.html"])


def test_hostile_group_name_is_escaped(pytester: pytest.Pytester) -> None:
    """A group named <script>alert(1)</script> appears escaped, never as markup."""
    pytester.makepyfile(HEADER + f"""
Y = [1, 0, 1, 1, 0, 1, 0, 0] * 5
P = [1, 0, 1, 0, 0, 0, 0, 1] * 5
G = (["a"] * 4 + [{XSS!r}] * 4) * 5

@pytest.mark.fairness
def test_groups():
    return ind.group_metrics(Y, P, groups=G, min_group_size=1)
""")
    pytester.runpytest_subprocess("--fairness", "--fairness-report", "out",
                                  "--fairness-no-history").assert_outcomes(passed=1)
    page = (pytester.path / "out" / "report.html").read_text()
    assert XSS not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    groups = load_report(pytester.path / "out")["tests"][0]["results"][0]["groups"]
    assert XSS in [g["group"] for g in groups]


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["no_xdist", "xdist_two"])
def test_junit_properties(pytester: pytest.Pytester, data_source: str, mode: list[str]) -> None:
    """Each fairness test carries indicator, metric, value, gap, limit under xunit2 and xdist."""
    pytester.makepyfile(TESTS + data_source)
    pytester.runpytest("--fairness", "--junitxml=junit.xml", "-o", "junit_family=xunit2",
                       "--fairness-no-history", *mode)
    root = ET.parse(pytester.path / "junit.xml").getroot()
    props = {case.get("name"): [(p.get("name"), p.get("value"))
                                for p in case.iter("property")]
             for case in root.iter("testcase")}
    assert props["test_fail"] == [
        ("fairness.indicator", "group_metrics"), ("fairness.metric", "accuracy"),
        ("fairness.value", "0.625"), ("fairness.gap", "0.25"),
        ("fairness.limit", "max_gap=0.1 observed=0.25 failed"),
    ]
    assert ("fairness.limit", "max_gap=0.3 observed=0.25 passed") in props["test_pass"]
    assert ("fairness.value[first]", "0.625") in props["test_two"]
    assert ("fairness.gap[second]", "0.25") in props["test_two"]


def test_unwritable_report_folder_is_a_clear_line_not_an_internal_error(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
from pytest_fairness import fairness, indicators

@fairness.threshold(max_gap=0.5)
def test_gap():
    return indicators.group_metrics([1, 0, 1, 0], [1, 0, 1, 1], groups=["a", "a", "b", "b"],
                                    min_group_size=1)
""")
    result = pytester.runpytest("--fairness", "--fairness-report", "/proc/fairness-x")
    result.assert_outcomes(passed=1)
    assert result.ret == 0 and "INTERNALERROR" not in result.stdout.str()
    result.stdout.fnmatch_lines(["fairness report NOT written to '/proc/fairness-x': *"
                                 "Pass a folder you can write*"])
