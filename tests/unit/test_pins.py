"""With ``n_bootstrap=0`` (the default) every number is what it was before intervals.

Floats are compared at a relative tolerance of 1e-9 (absolute 1e-12 near zero), since the
last bits of a float differ between CPUs and BLAS builds; ints, strings, booleans, None and
the shape of the data (keys, lengths) must match exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit import pin_cases
from tests.unit.pin_cases import differences

PINS = json.loads((Path(__file__).parent / "golden" / "pins.json").read_text())


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
