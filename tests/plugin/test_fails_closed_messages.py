"""Errors from the plugin's fixtures and feature calls print as one message, with a fix.

A missing manifest behind a dataset fixture, or a bad ``fairness_features`` call, used to
print a traceback through the plugin's own frames; an unknown keyword or column name gets
a "did you mean".
"""

from __future__ import annotations

import re

import pandas  # noqa: F401  (pytester forgets what a run imported; pandas loads once)
import pytest
import torch  # noqa: F401

TESTS = '''
from pytest_fairness import fairness, indicators

def test_manifest(fairness_manifest):
    pass

def test_features(fairness_features, fairness_manifest):
    fairness_features(fairness_manifest, precomputed="nope.npy")

def test_column(fairness_manifest):
    fairness_manifest.groups("groop")
'''

CONFTEST = '''
import pandas  # noqa: F401  (pytester forgets what a run imported; pandas loads once)
import pytest
import torch  # noqa: F401

@pytest.fixture(scope="session")
def fairness_model():
    import torch
    return torch.nn.Flatten()
'''


def test_a_dataset_fixture_error_is_one_message(
        pytester: pytest.Pytester, xdist_args: list[str]) -> None:
    pytester.makepyfile(test_errors=TESTS)
    result = pytester.runpytest("--fairness", "--fairness-data", "manifest=missing.csv",
                                "-k", "test_manifest", *xdist_args)
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(["InvalidDataError: manifest: '*missing.csv' does not exist; "
                                 "pass a CSV/TSV/Parquet manifest with a 'path' column."])
    assert "pytest_fairness/" not in out and "def load" not in out, out


def test_a_features_error_points_at_the_test_line_only(
        pytester: pytest.Pytester, xdist_args: list[str]) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_errors=TESTS)
    (pytester.path / "manifest.csv").write_text("path,group\na.png,x\n")
    result = pytester.runpytest("--fairness", "--fairness-data", "manifest=manifest.csv",
                                "-k", "test_features", *xdist_args)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        '>       fairness_features(fairness_manifest, precomputed="nope.npy")',
        "E       pytest_fairness.errors.InvalidDataError: precomputed features 'nope.npy' do "
        "not exist; pass a .npy*"])
    assert "pytest_fairness/" not in out, out


def test_an_unknown_column_or_keyword_gets_a_did_you_mean(
        pytester: pytest.Pytester, xdist_args: list[str]) -> None:
    pytester.makepyfile(test_errors=TESTS)
    (pytester.path / "manifest.csv").write_text("path,group\na.png,x\n")
    result = pytester.runpytest("--fairness", "--fairness-data", "manifest=manifest.csv",
                                "-k", "test_column", *xdist_args)
    out = result.stdout.str()
    assert "has no column 'groop'" in out and "Did you mean 'group'?" in out, out
    pytester.makepyfile(test_errors='''
from pytest_fairness import fairness, indicators

@fairness.threshold(max_gapp=0.1)
def test_keyword():
    return indicators.group_metrics([1, 0], [1, 0], groups=["a", "b"])
''')
    out = pytester.runpytest("--fairness", *xdist_args).stdout.str()
    assert "unknown keyword max_gapp=0.1. Did you mean 'max_gap'?" in out, out


def test_an_indicator_error_shows_the_test_line_and_a_bug_its_traceback(
        pytester: pytest.Pytester, xdist_args: list[str]) -> None:
    pytester.makepyfile(test_calls='''
from pytest_fairness import indicators
from pytest_fairness.indicators import cross_domain

def test_pos_label():
    indicators.group_metrics([1, 0, 1, 0], [1, 0, 0, 1], groups=list("aabb"), pos_label=7)

def test_bug(monkeypatch):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")
    monkeypatch.setattr(cross_domain, "as_1d", broken)
    indicators.group_metrics([1, 0, 1, 0], [1, 0, 0, 1], groups=list("aabb"))
''')
    result = pytester.runpytest("-p", "no:randomly", *xdist_args)
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    failures = out[out.index("= FAILURES ="):out.index("short test summary")]
    sections = dict(re.findall(r"_+ (test_\w+) _+\n(.*?)(?=\n_+ test_|\Z)", failures, re.S))
    assert "pos_label=7 does not occur" in sections["test_pos_label"], out
    assert "cross_domain.py" not in sections["test_pos_label"], out
    assert "ZeroDivisionError: a bug" in sections["test_bug"], out
    assert "cross_domain.py" in sections["test_bug"], out
