"""Indicator calls whose outputs are pinned (``golden/pins.json``).

Floats are compared within rel 1e-9 (abs 1e-12), the rest exactly (``test_pins.py``).

The pins were written by the code before intervals were added to every indicator: with
``n_bootstrap=0`` (the default) no number may change. Regenerate only on purpose:
``python tests/unit/pin_cases.py > tests/unit/golden/pins.json``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from pytest_fairness import indicators

TAX = {1: "non_human", 2: "human", 3: "crime", 4: "possibly_human"}


def _classification(seed: int, n: int = 300, k: int = 3) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return dict(y_true=y, y_pred=np.where(rng.random(n) < 0.8, y, 1 - y),
                groups=rng.integers(0, k, n))


def _landmarks(seed: int, n: int = 120) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=(n, 68, 2)) * 10
    return dict(y_true=truth, y_pred=truth + rng.normal(size=truth.shape) * 0.3,
                groups=rng.integers(0, 2, n), normalizer="interocular")


def _labels(seed: int, n: int = 200) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    return dict(labels=rng.integers(1, 5, (n, 3)),
                scores=np.sort(rng.random((n, 3)), axis=1)[:, ::-1],
                groups=rng.choice(["a", "b", "c"], n))


def _geo(seed: int, n: int = 240) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    hh = rng.integers(0, 60, n)
    region = np.array(["Africa", "Asia", "Europe", "Americas"])[hh % 4]
    income = np.exp(1.5 + (hh % 9) / 3)
    return dict(labels=rng.integers(0, 8, (n, 5)), scores=np.sort(rng.random((n, 5)))[:, ::-1],
                truth=rng.integers(0, 8, n), household=hh.astype(str), region=region,
                income=income, min_group_size=3)


def _retrieval(seed: int) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(80, 16))
    db = rng.normal(size=(150, 16))
    qf = pd.DataFrame({"gender": rng.choice(["f", "m"], 80), "age": rng.choice(["y", "o"], 80)})
    dbf = pd.DataFrame({"gender": rng.choice(["f", "m"], 150)})
    return (q, qf), (db, dbf)


def _ieat_sets(seed: int) -> tuple[Any, ...]:
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=(m, 8)) + shift for m, shift in
                 ((6, 0.3), (7, 0.0), (5, 0.2), (6, -0.1)))


def _cases() -> dict[str, Callable[[], Any]]:
    g = indicators
    base = g.group_metrics(**_classification(0), min_group_size=1)
    return {
        "group_metrics": lambda: g.group_metrics(**_classification(1), min_group_size=20),
        "group_metrics_small_excluded": lambda: g.group_metrics(
            **_classification(2, n=90, k=5), min_group_size=20),
        "group_metrics_reference": lambda: g.group_metrics(
            **_classification(3, k=2), variant="reference", min_group_size=1),
        "landmark_metrics": lambda: g.landmark_metrics(**_landmarks(4), sdr_threshold=0.05,
                                                       min_group_size=5),
        "landmark_metrics_reference": lambda: g.landmark_metrics(
            **_landmarks(5), variant="reference", min_group_size=1),
        "delta_dto": lambda: g.delta_dto(
            g.group_metrics(**_classification(0), min_group_size=1), base),
        "label_association": lambda: g.label_association(
            **_labels(6), taxonomy=TAX, top_k=2, min_group_size=10),
        "label_association_reference": lambda: g.label_association(
            **_labels(7), taxonomy=TAX, top_k=3, min_group_size=1, variant="reference"),
        "geodiversity": lambda: g.geodiversity(**_geo(8)),
        "geodiversity_reference": lambda: g.geodiversity(**_geo(9), variant="reference"),
        "precision_at_k": lambda: g.precision_at_k(
            *_retrieval(10), k=[1, 5], match="gender", by=["gender", "age"],
            min_group_size=5),
        "ieat": lambda: g.ieat(*_ieat_sets(11), seed=0, n_permutations=2000),
        "ieat_battery": lambda: g.ieat_battery(
            {"one": _ieat_sets(12), "two": _ieat_sets(13)}, seed=1, n_permutations=500),
    }


def _numbers(result: Any) -> Any:
    """The numbers of a result (or a dict of them): no params, which may gain keys."""
    if isinstance(result, dict):
        return {k: _numbers(v) for k, v in result.items()}
    data = result.to_dict()
    keep = ("value", "groups", "stats", "intervals", "curves", "matrices", "tables", "at")
    out = {k: data[k] for k in keep if k in data}
    out["slices"] = [_numbers(s) for s in result.slices]
    out["gap"], out["ratio"] = _float(result.gap), _float(result.ratio)
    return out


def _float(x: float) -> Any:
    return None if x != x else x


def outputs() -> dict[str, Any]:
    """Every case's numbers, as JSON-ready data."""
    return {name: _numbers(case()) for name, case in _cases().items()}


REL, ABS = 1e-9, 1e-12


def differences(got: Any, want: Any, where: str = "") -> list[str]:
    """Where ``got`` departs from the pinned ``want``: one line per difference."""
    if isinstance(want, float) or isinstance(got, float):
        numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool)
                      for x in (got, want))
        if numbers and math.isclose(got, want, rel_tol=REL, abs_tol=ABS):
            return []
        return [f"{where or '.'}: {got!r} != pinned {want!r}"]
    if isinstance(want, dict) and isinstance(got, dict):
        if sorted(got) != sorted(want):
            return [f"{where or '.'}: keys {sorted(got)} != pinned {sorted(want)}"]
        return [line for key in sorted(want)
                for line in differences(got[key], want[key], f"{where}.{key}")]
    if isinstance(want, list) and isinstance(got, list):
        if len(got) != len(want):
            return [f"{where or '.'}: {len(got)} items != pinned {len(want)}"]
        return [line for i, (g, w) in enumerate(zip(got, want))
                for line in differences(g, w, f"{where}[{i}]")]
    if type(got) is not type(want) or got != want:
        return [f"{where or '.'}: {got!r} != pinned {want!r}"]
    return []


if __name__ == "__main__":
    print(json.dumps(outputs(), indent=1, sort_keys=True))
