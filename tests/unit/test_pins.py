"""With ``n_bootstrap=0`` every number is what it was before intervals.

The pins were written when ``n_bootstrap=0`` was the default; it is 1000 now, so each pinned
call (``pin_cases._cases``) is made here with ``n_bootstrap=0`` named (:func:`without_intervals`).

Floats are compared at a relative tolerance of 1e-9 (absolute 1e-12 near zero), since the
last bits of a float differ between CPUs and BLAS builds; ints, strings, booleans, None and
the shape of the data (keys, lengths) must match exactly.
"""

from __future__ import annotations

import functools
import inspect
import json
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_fairness import indicators
from tests.unit import pin_cases
from tests.unit.pin_cases import differences

PINS = json.loads((Path(__file__).parent / "golden" / "pins.json").read_text())


@pytest.fixture
def without_intervals(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The pinned calls with ``n_bootstrap=0``: every indicator that draws replicates."""
    functions = {name: getattr(indicators, name) for name in indicators.__all__}
    calls = {name: functools.partial(function, n_bootstrap=0)
             if "n_bootstrap" in inspect.signature(function).parameters else function
             for name, function in functions.items()}
    monkeypatch.setattr(pin_cases, "indicators", types.SimpleNamespace(**calls))
    yield


@pytest.mark.usefixtures("without_intervals")
@pytest.mark.parametrize("name", sorted(PINS))
def test_outputs_unchanged_within_tolerance(name: str) -> None:
    got = json.loads(json.dumps(pin_cases._numbers(pin_cases._cases()[name]())))
    assert differences(got, PINS[name]) == []


@pytest.mark.parametrize(("got", "want", "same"), [
    (0.1 + 0.2, 0.3, True),  # last bits
    (1.0 + 1e-6, 1.0, False),
    (1e-13, 0.0, True),
    (1e-9, 0.0, False),
    (float("nan"), 0.3, False),
    (3, 3, True),
    (3, 4, False),
    (True, 1, False),
    ("a", "b", False),
    (None, 0.0, False),
    ({"a": [1, 2.0]}, {"a": [1, 2.0 + 1e-12]}, True),
    ({"a": [1, 2.0]}, {"a": [1, 2.0, 3]}, False),
    ({"a": 1}, {"b": 1}, False),
])
def test_pins_compare_floats_within_tolerance_and_the_rest_exactly(
        got: Any, want: Any, same: bool) -> None:
    assert (differences(got, want) == []) is same
