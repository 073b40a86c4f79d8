"""The records of a run: what each fairness test produced, as frozen, typed values.

A fairness test leaves one :class:`TestRecord`: its results (:class:`KeyedResult`), the
verdicts of its limits (:class:`CheckOutcome`), its comparisons with a baseline or a
reference checkpoint (:class:`Comparison`) and what produced its features
(:class:`Extraction`). Everything between the test and the files passes these objects;
their ``to_dict``/``from_dict`` codec is used only where a record leaves the process: the
pytest-xdist report attribute, the JSON files (report, baseline) and the history's rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, final

from pytest_fairness.results import IndicatorResult, decode_float, encode_float, result_id

__all__ = [
    "CheckOutcome",
    "Comparison",
    "Extraction",
    "KeyedResult",
    "TestRecord",
]

#: Float slack so that a value recomputed bit-for-bit differently does not count as worse.
EPS: Final = 1e-12


@final
@dataclass(frozen=True)
class KeyedResult:
    """A result as a test returned it: with its dict key (None outside a dict).

    Parameters
    ----------
    key : str or None
        The key the test gave the result (``return {"overall": r}``).
    result : IndicatorResult
        The result.
    """

    key: str | None
    result: IndicatorResult

    @property
    def id(self) -> str:
        """The result's name within its test (:func:`pytest_fairness.results.result_id`)."""
        r = self.result
        return result_id({"key": self.key, "name": r.name, "metric": r.metric, "at": r.at})

    def to_dict(self) -> dict[str, Any]:
        """``IndicatorResult.to_dict()`` with the ``key``."""
        return {**self.result.to_dict(), "key": self.key}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> KeyedResult:
        """Rebuild from :meth:`to_dict` output."""
        return cls(data.get("key"), IndicatorResult.from_dict(data))


@final
@dataclass(frozen=True)
class CheckOutcome:
    """The verdict of one limit on one result.

    Parameters
    ----------
    limit : str
        The keyword (``"max_gap"``).
    threshold : float
        The limit's value.
    observed : float
        The number the limit bounds.
    passed : bool
        The verdict.
    result : IndicatorResult or None
        The result checked (the slice at ``at`` when one was picked); None once the
        outcome was read back from its stored form, which keeps the result's identity
        (``indicator``, ``metric``, ``at``) only.
    key : str or None
        The result's key when the test returned a dict.
    confidence : str
        ``"point"``, ``"supported"`` or ``"strict"``.
    interval : (float, float) or None
        The interval of ``observed`` the verdict used, if any.
    where : str
        Which group or cell produced ``observed`` (empty for whole-result numbers).
    indicator, metric : str
        The name and metric of the result checked (taken from ``result``).
    at : float, int or None
        The coordinate of the result checked.
    """

    limit: str
    threshold: float
    observed: float
    passed: bool
    result: IndicatorResult | None = field(default=None, compare=False)
    key: str | None = None
    confidence: str = "point"
    interval: tuple[float, float] | None = None
    where: str = ""
    indicator: str = ""
    metric: str = ""
    at: Any = None

    def __post_init__(self) -> None:
        if self.result is not None:  # the identity of the result checked, kept when stored
            object.__setattr__(self, "indicator", self.result.name)
            object.__setattr__(self, "metric", self.result.metric)
            object.__setattr__(self, "at", self.result.at)

    @property
    def label(self) -> str:
        """``indicator (metric)`` with the coordinate and key, for reports."""
        text = f"{self.indicator} ({self.metric})"
        if self.at is not None:
            text += f" at {self.at:g}"
        if self.key is not None:
            text = f"{self.key}: {text}"
        return text

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable summary (the result itself is not repeated)."""
        return {
            "limit": self.limit,
            "threshold": self.threshold,
            "observed": encode_float(self.observed),
            "passed": self.passed,
            "indicator": self.indicator,
            "metric": self.metric,
            "at": self.at,
            "key": self.key,
            "confidence": self.confidence,
            "interval": None if self.interval is None else list(self.interval),
            "where": self.where,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckOutcome:
        """Rebuild an outcome from :meth:`to_dict` output (without its result)."""
        interval = data.get("interval")
        return cls(
            limit=data["limit"], threshold=data["threshold"],
            observed=decode_float(data["observed"]), passed=data["passed"],
            key=data.get("key"), confidence=data.get("confidence") or "point",
            interval=None if interval is None else (float(interval[0]), float(interval[1])),
            where=data.get("where") or "", indicator=data["indicator"],
            metric=data["metric"], at=data.get("at"),
        )


@final
@dataclass(frozen=True)
class Comparison:
    """One metric of one result, baseline against now.

    Parameters
    ----------
    test, result : str
        The test id and the result's name within it.
    metric : str
        ``"gap"``, ``"ratio"``, ``"value"`` or ``"worst"``.
    baseline, now : float or None
        The two numbers (None when the metric is undefined, e.g. a gap with one group).
    tolerance : float
        How much worse is accepted.
    lower_is_better : bool
        The metric's direction.
    groups : tuple of (label, baseline value, now value)
        Every group of either side, for the group-by-group table.
    notes : tuple of str
        Caveats (changed params, metric not comparable, how the interval was drawn).
    where : str
        Which group ``worst`` refers to, or how ``headline`` was read.
    confidence : str
        The rule: ``"point"``, ``"supported"`` or ``"strict"`` (see the module docstring).
    interval : (float, float) or None
        Interval of :attr:`worse_by`, from the bootstrap replicates of both sides.
    paired : bool or None
        Whether the interval is paired (both sides drawn on the same units); None
        without an interval.
    """

    test: str
    result: str
    metric: str
    baseline: float | None
    now: float | None
    tolerance: float
    lower_is_better: bool
    higher_is_better_groups: bool = True
    groups: tuple[tuple[str, float | None, float | None], ...] = ()
    notes: tuple[str, ...] = field(default=())
    where: str = ""
    confidence: str = "point"
    interval: tuple[float, float] | None = None
    paired: bool | None = None

    @property
    def worse_by(self) -> float | None:
        """How much worse now is than the baseline (negative when better); None if undefined."""
        if self.baseline is None or self.now is None:
            return None
        diff = self.now - self.baseline
        return diff if self.lower_is_better else -diff

    @property
    def regressed(self) -> bool:
        """True when now is worse than the baseline by more than the tolerance.

        ``"point"`` judges the change, ``"supported"`` the interval's lower end (the data
        show a regression), ``"strict"`` its upper end (they do not rule one out). A
        metric undefined on either side, or an interval a rule needs and cannot have,
        counts as a regression: a tolerance is never silently ignored.
        """
        worse = self.worse_by
        if worse is None:
            return True
        if self.confidence == "point":
            return worse > self.tolerance + EPS
        if self.interval is None:
            return True
        low, high = self.interval
        return (low if self.confidence == "supported" else high) > self.tolerance + EPS

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dictionary."""
        return {
            "test": self.test,
            "result": self.result,
            "metric": self.metric,
            "baseline": self.baseline,
            "now": self.now,
            "tolerance": self.tolerance,
            "lower_is_better": self.lower_is_better,
            "higher_is_better_groups": self.higher_is_better_groups,
            "worse_by": self.worse_by,
            "regressed": self.regressed,
            "groups": [list(g) for g in self.groups],
            "notes": list(self.notes),
            "where": self.where,
            "confidence": self.confidence,
            "interval": None if self.interval is None else list(self.interval),
            "paired": self.paired,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Comparison:
        """Rebuild a :class:`Comparison` from :meth:`to_dict` output."""
        return cls(
            test=data["test"], result=data["result"], metric=data["metric"],
            baseline=data["baseline"], now=data["now"], tolerance=data["tolerance"],
            lower_is_better=data["lower_is_better"],
            higher_is_better_groups=data.get("higher_is_better_groups", True),
            groups=tuple((g[0], g[1], g[2]) for g in data.get("groups", [])),
            notes=tuple(data.get("notes", [])), where=data.get("where", ""),
            confidence=data.get("confidence") or "point",
            interval=None if data.get("interval") is None else (
                float(data["interval"][0]), float(data["interval"][1])),
            paired=data.get("paired"),
        )


@final
@dataclass(frozen=True)
class Extraction:
    """What produced one of a test's features (one ``fairness_features`` call).

    Parameters
    ----------
    dataset : str
        The dataset's name.
    dataset_fingerprint : str
        Its fingerprint (annotations and file list).
    model_fingerprint : str
        The model's fingerprint (weights and architecture, or a given id).
    features_digest : str
        A sha256 of the extracted arrays.
    """

    dataset: str
    dataset_fingerprint: str
    model_fingerprint: str
    features_digest: str

    def to_dict(self) -> dict[str, str]:
        """Return a JSON-serialisable dictionary."""
        return {"dataset": self.dataset, "dataset_fingerprint": self.dataset_fingerprint,
                "model_fingerprint": self.model_fingerprint,
                "features_digest": self.features_digest}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Extraction:
        """Rebuild from :meth:`to_dict` output."""
        return cls(str(data["dataset"]), str(data["dataset_fingerprint"]),
                   str(data["model_fingerprint"]), str(data["features_digest"]))


def _joined(values: list[str]) -> str | None:
    """Distinct values in order, comma-joined; None when there are none."""
    return ",".join(dict.fromkeys(values)) or None


@final
@dataclass(frozen=True)
class TestRecord:
    """What one fairness test produced: its results, verdicts, comparisons and notes.

    Parameters
    ----------
    nodeid : str
        The test's node id.
    test : str
        The node id without the checkpoint parameter (the same test at every checkpoint).
    checkpoint : str or None
        The checkpoint the test ran for (``--fairness-checkpoint``), as given.
    outcome : str
        ``"passed"``, ``"failed"`` or ``"skipped"``; set on the controller from the report.
    results : tuple of KeyedResult
        The test's results, with the key the test gave each.
    checks : tuple of CheckOutcome
        The verdicts: the markers' first, then inline ones.
    regressions : tuple of Comparison
        The comparisons with the baseline.
    notes : tuple of str
        What could not be compared, and why.
    extractions : tuple of Extraction
        What produced each of the test's features.
    """

    __test__: ClassVar[bool] = False  # a dataclass, not a test class for pytest to collect

    nodeid: str
    test: str
    checkpoint: str | None = None
    outcome: str = ""
    results: tuple[KeyedResult, ...] = ()
    checks: tuple[CheckOutcome, ...] = ()
    regressions: tuple[Comparison, ...] = ()
    notes: tuple[str, ...] = ()
    extractions: tuple[Extraction, ...] = ()

    @property
    def model_fingerprint(self) -> str | None:
        """The fingerprint of the model the test's features came from (comma-joined if several)."""
        return _joined([e.model_fingerprint for e in self.extractions])

    @property
    def dataset_fingerprint(self) -> str | None:
        """The fingerprint of the datasets the test extracted features of (comma-joined)."""
        return _joined([e.dataset_fingerprint for e in self.extractions])

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: it crosses the xdist boundary; history, baselines, reports store it."""
        return {
            "nodeid": self.nodeid,
            "test": self.test,
            "checkpoint": self.checkpoint,
            "outcome": self.outcome,
            "results": [r.to_dict() for r in self.results],
            "checks": [c.to_dict() for c in self.checks],
            "regressions": [c.to_dict() for c in self.regressions],
            "notes": list(self.notes),
            "model_fingerprint": self.model_fingerprint,
            "dataset_fingerprint": self.dataset_fingerprint,
            "extractions": [e.to_dict() for e in self.extractions],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TestRecord:
        """Rebuild a record from :meth:`to_dict` output."""
        return cls(
            nodeid=data["nodeid"], test=data.get("test") or data["nodeid"],
            checkpoint=data.get("checkpoint"), outcome=data.get("outcome") or "",
            results=tuple(KeyedResult.from_dict(r) for r in data.get("results", ())),
            checks=tuple(CheckOutcome.from_dict(c) for c in data.get("checks", ())),
            regressions=tuple(Comparison.from_dict(c) for c in data.get("regressions", ())),
            notes=tuple(data.get("notes", ())),
            extractions=tuple(Extraction.from_dict(e) for e in data.get("extractions", ())),
        )
