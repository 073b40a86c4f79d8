"""files.Fields: typed reads of a stored object (the former docstring example)."""

from __future__ import annotations

import pytest

from pytest_fairness.files import FieldError, Fields


def test_fields_read_a_value_of_its_kind() -> None:
    assert Fields({"gap": 0.2}, "['x']").get("gap", "num?") == 0.2


def test_fields_refuse_a_value_of_another_kind() -> None:
    with pytest.raises(FieldError) as caught:
        Fields({"gap": "0.2"}, "['x']").get("gap", "num?")
    assert str(caught.value) == "['x']['gap'] is '0.2', not a finite number or null"
