"""With ``n_bootstrap=0`` (the default) every number is what it was before intervals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit import pin_cases

PINS = json.loads((Path(__file__).parent / "golden" / "pins.json").read_text())


@pytest.mark.parametrize("name", sorted(PINS))
def test_outputs_unchanged_to_the_bit(name: str) -> None:
    got = json.loads(json.dumps(pin_cases._numbers(pin_cases._cases()[name]())))
    assert got == PINS[name]
