"""Unit tests for pytest_fairness.provenance: extraction entries and same-features checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from pytest_fairness.data import FairnessDataset
from pytest_fairness.errors import CheckpointIgnoredError
from pytest_fairness.features import Features
from pytest_fairness.provenance import (
    extraction,
    publish,
    publish_reference,
    read_reference,
    same_features,
    same_features_message,
)
from pytest_fairness.records import Extraction, TestRecord, joined

ENTRY = {"dataset": "d", "dataset_fingerprint": "data:1", "model_fingerprint": "state:1f3a",
         "features_digest": "9c0d"}


def record(checkpoint: str | None, *entries: dict[str, Any], test: str = "t.py::g"
           ) -> TestRecord:
    """A plugin record of ``test`` at ``checkpoint`` with these extraction entries."""
    return TestRecord.from_dict({"test": test, "nodeid": f"{test}[{checkpoint}]",
                                 "checkpoint": checkpoint, "extractions": list(entries)})


def features(values: list[float]) -> Features:
    """Features of a two-image dataset."""
    dataset = FairnessDataset(pd.DataFrame({"image_id": ["a", "b"], "path": ["a", "b"]}),
                              name="tiny")
    return Features(dataset, {"embeddings": np.array(values, dtype=np.float32)})


def test_extraction_entry_names_dataset_fingerprints_and_digest() -> None:
    entry = extraction(features([1.0, 2.0]), model_fingerprint="state:ab")
    assert entry.dataset == "tiny" and entry.model_fingerprint == "state:ab"
    assert entry.dataset_fingerprint == features([0.0, 0.0]).dataset.fingerprint
    assert entry.features_digest == features([1.0, 2.0]).digest
    assert entry.features_digest != features([1.0, 2.5]).digest


def test_joined_keeps_distinct_values_in_order() -> None:
    assert joined(["y", "x", "y"]) == "y,x"
    assert joined([None]) is None and joined([]) is None


def test_same_features_names_every_checkpoint_of_the_test() -> None:
    records = [record("c.pt", ENTRY), record("a.pt", ENTRY), record("b.pt", ENTRY),
               record("a.pt", ENTRY, test="t.py::other")]
    (found,) = same_features(records)
    assert found.test == "t.py::g"
    assert found.nodeids == ("t.py::g[a.pt]", "t.py::g[b.pt]", "t.py::g[c.pt]")
    assert "checkpoints a.pt, b.pt and c.pt gave identical features" in found.message


@pytest.mark.parametrize("other", [
    {**ENTRY, "features_digest": "other"},  # the model changed with the checkpoint
    {**ENTRY, "model_fingerprint": "state:2b4c"},  # a new head on a shared backbone
])
def test_different_model_or_features_are_not_flagged(other: dict[str, Any]) -> None:
    assert same_features([record("a.pt", ENTRY), record("b.pt", other)]) == []


def test_tests_without_checkpoint_are_not_compared() -> None:
    assert same_features([record(None, ENTRY), record(None, ENTRY, test="t.py::h")]) == []


def test_message_shows_the_fix_and_a_model_id_that_names_every_checkpoint() -> None:
    message = same_features_message("t.py::g", ["/x/a.pt", "/x/b.pt"], "state:" + "f" * 64)
    assert "checkpoints a.pt and b.pt" in message and "ffff..." in message
    assert "def fairness_model(fairness_checkpoint):" in message
    assert "model_id" not in message
    named = same_features_message("t.py::g", ["a.pt", "b.pt"], "id:resnet")
    assert "named 'resnet' at every checkpoint" in named and "model_id=f" in named


def test_publish_fails_the_second_checkpoint_with_the_same_features(tmp_path: Path) -> None:
    entry = Extraction.from_dict(ENTRY)
    publish(tmp_path, test="t.py::g", checkpoint="a.pt", entry=entry)
    publish(tmp_path, test="t.py::g", checkpoint="a.pt", entry=entry)  # the same checkpoint
    publish(tmp_path, test="t.py::h", checkpoint="b.pt", entry=entry)  # another test
    publish(tmp_path, test="t.py::g", checkpoint="b.pt",
            entry=Extraction.from_dict({**ENTRY, "features_digest": "other"}))
    with pytest.raises(CheckpointIgnoredError, match=r"checkpoints a\.pt and b\.pt .*t\.py::g"):
        publish(tmp_path, test="t.py::g", checkpoint="b.pt", entry=entry)


def test_a_reference_record_is_read_back_or_said_missing(tmp_path: Path) -> None:
    """What the reference checkpoint's test published, by test id; nothing in time: why."""
    record = TestRecord("t.py::g[a.pt]", "t.py::g", "a.pt")
    publish_reference(tmp_path, test="t.py::g", kept=record)
    publish_reference(tmp_path, test="t.py::h", kept="its test failed")
    assert read_reference(tmp_path, test="t.py::g") == record
    assert read_reference(tmp_path, test="t.py::h") == "its test failed"
    assert read_reference(tmp_path, test="t.py::x", wait=0) == "no result within 0 s"
