"""Parsers of option values shared by pytest options and the command."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_fairness.options import (
    COMPARE_METRICS,
    parse_compare_fail,
    parse_run_ref,
    parse_tolerance,
)


def test_compare_fail_parses_pairs() -> None:
    """Pairs are split on commas and colons, spaces ignored."""
    assert parse_compare_fail("gap:0.01, value:0.02") == {"gap": 0.01, "value": 0.02}
    assert parse_compare_fail("ratio:0,worst:1e-3") == {"ratio": 0.0, "worst": 0.001}
    assert parse_compare_fail("DEO:0, TPR:0.1") == {"DEO": 0.0, "TPR": 0.1}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "expected metric:tolerance pairs"),
        ("gap:0.01,,value:0.1", "empty item"),
        ("gap", r"'gap' has no tolerance; write metric:tolerance, e\.g\. gap:0\.01"),
        (":0.1", r"':0\.1' names no metric.*headline, gap, ratio, value, worst or a stat"),
        ("DEO:0.1,DEO:0.2", "metric 'DEO' is given twice"),
        ("gap:0.1,gap:0.2", "metric 'gap' is given twice"),
        ("gap:abc", r"gap: a tolerance must be a number >= 0.*got 'abc'"),
        ("gap:-0.1", r"gap: a tolerance must be a finite number >= 0.*got '-0\.1'"),
        ("value:nan", "finite number"),
        ("value:inf", "finite number"),
    ],
)
def test_compare_fail_errors(text: str, fragment: str) -> None:
    """Each malformed value names the problem and the fix."""
    with pytest.raises(argparse.ArgumentTypeError, match=fragment):
        parse_compare_fail(text)


@given(st.dictionaries(st.sampled_from(COMPARE_METRICS),
                       st.floats(min_value=0, max_value=10, allow_nan=False), min_size=1))
def test_compare_fail_round_trip(spec: dict[str, float]) -> None:
    """Writing a spec with repr and parsing it gives it back."""
    text = ",".join(f"{k}:{v!r}" for k, v in spec.items())
    assert parse_compare_fail(text) == spec


def test_tolerance() -> None:
    """A tolerance is a finite non-negative float."""
    assert parse_tolerance("0") == 0.0
    with pytest.raises(argparse.ArgumentTypeError, match="got 'x'"):
        parse_tolerance("x")


def test_run_ref() -> None:
    """A reference is stripped and must not be empty."""
    assert parse_run_ref(" 12 ") == "12"
    with pytest.raises(argparse.ArgumentTypeError, match="got an empty value"):
        parse_run_ref("  ")


def test_int_and_item_parsers() -> None:
    """Levels, batch sizes, seeds and perturbation items: the value, or the rule broken."""
    from pytest_fairness.options import (
        parse_batch_size,
        parse_levels,
        parse_perturbation_item,
        parse_seed,
    )

    assert (parse_levels("5"), parse_batch_size("8"), parse_seed("0")) == (5, 8, 0)
    assert parse_perturbation_item(" gaussian_blur :0.5") == ("gaussian_blur", 0.5)
    for parse, text, rule in ((parse_levels, "1", "levels must be an int >= 2"),
                              (parse_batch_size, "0", "batch size must be a positive int"),
                              (parse_batch_size, "x", "batch size must be a positive int"),
                              (parse_seed, "-1", "a seed must be a non-negative int"),
                              (parse_perturbation_item, "blur:2", "level in \\(0, 1\\]")):
        with pytest.raises(argparse.ArgumentTypeError, match=f"{rule}.*got '{text}'"):
            parse(text)


def test_checkpoint_ids_tell_same_named_files_apart() -> None:
    """File names where unique; else the shortest end of the path that differs."""
    from pytest_fairness.options import checkpoint_ids

    assert checkpoint_ids(["a/model.pt", "model.pt"]) == ("a/model.pt", "model.pt")
    assert checkpoint_ids(["x/a/m.pt", "y/a/m.pt", "b.pt"]) == ("x/a/m.pt", "y/a/m.pt", "b.pt")
    assert checkpoint_ids(["epoch-3"]) == ("epoch-3",)
