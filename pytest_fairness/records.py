"""The records of a run: what each fairness test produced, as frozen, typed values.

A fairness test leaves one :class:`TestRecord`: its results (:class:`KeyedResult`), the
verdicts of its limits (:class:`CheckOutcome`), its comparisons with a baseline or a
reference checkpoint (:class:`Comparison`) and what produced its features
(:class:`Extraction`). Everything between the test and the files passes these objects;
their ``to_dict``/``from_dict`` codec is used only where a record leaves the process: the
pytest-xdist report attribute, the JSON files (report, baseline) and the history's rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, final

from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.options import LIMITS
from pytest_fairness.results import (
    IndicatorResult,
    decode_float,
    encode_float,
    finite_or_none,
    result_id,
)

__all__ = [
    "BASELINE_FORMAT",
    "BASELINE_SCHEMA",
    "Baseline",
    "BaselineEntry",
    "CheckOutcome",
    "Comparison",
    "Extraction",
    "FieldError",
    "Fields",
    "GroupSummary",
    "KeyedResult",
    "ResultSummary",
    "TestRecord",
    "joined",
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
        Fields(data, "").check(CHECK_KINDS)
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
        Fields(data, "").check(COMPARISON_KINDS)
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


def joined(values: Iterable[object]) -> str | None:
    """The distinct values (None left out), in order, comma-joined; None if there are none.

    Examples
    --------
    >>> joined(["y", "x", None, "y"])
    'y,x'
    """
    return ",".join(dict.fromkeys(str(v) for v in values if v is not None)) or None


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
        return joined([e.model_fingerprint for e in self.extractions])

    @property
    def dataset_fingerprint(self) -> str | None:
        """The fingerprint of the datasets the test extracted features of (comma-joined)."""
        return joined([e.dataset_fingerprint for e in self.extractions])

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


# -- baseline entries ----------------------------------------------------------------------------
#
# What a baseline file keeps of each test (and what the history's rows are read back with):
# frozen values whose ``from_dict`` is the one check of stored data. A wrong value raises
# :class:`FieldError`, which names the key path, the value found and what was expected.

#: The ``format`` field of a baseline file.
BASELINE_FORMAT: Final = "pytest-fairness-baseline"
#: Version of the baseline layout; a newer file than this code understands is refused.
BASELINE_SCHEMA: Final = 1
#: How a baseline that does not decode is fixed.
REGENERATE: Final = ("Regenerate the baseline with `pytest --fairness "
                     "--fairness-save-baseline FILE.json`, or fix the file by hand.")


def shown(value: Any) -> str:
    """``repr(value)``, cut to 40 characters: a damaged value in a message."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


class FieldError(FairnessConfigError):
    """A stored value of the wrong kind, or a missing one.

    Parameters
    ----------
    path : str
        The key path of the object holding it (``['tests']['t.py::a']``).
    name : str or None
        The field (None when the object itself is wrong).
    found : object
        The value found (None when missing).
    kind : str
        What was expected, in short (``"num"``, ``"str"``, ``"bool"``, ``"object"``, ...).
    missing : bool
        True when the field is absent.
    """

    #: What each short kind means, for messages.
    EXPECTED: ClassVar[Mapping[str, str]] = {
        "num": "a finite number", "num?": "a finite number or null", "int": "an integer",
        "int?": "an integer or null", "str": "a string", "str?": "a string or null",
        "bool": "true or false", "bool?": "true or false or null", "object": "an object",
        "list": "a list", "pair?": "null or a pair of numbers", "span?": "null or two numbers",
        "worst?": 'null or {"group": ..., "value": ...}', "limit": "a limit keyword",
        "float?": "a number, 'inf', '-inf' or null",
    }

    def __init__(self, path: str, name: str | None, found: Any, kind: str, *,
                 missing: bool = False) -> None:
        self.path, self.name, self.found, self.kind, self.missing = (path, name, found, kind,
                                                                     missing)
        where = path if name is None else f"{path}[{name!r}]"
        if missing:
            text = f"{path} has no {name!r} (expected {self.expected})"
        else:
            text = f"{where} is {shown(found)}, not {self.expected}"
        super().__init__(text)

    @property
    def expected(self) -> str:
        """What was expected, in words."""
        return self.EXPECTED.get(self.kind, self.kind)


def _finite(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


_FITS: Final[Mapping[str, Callable[[Any], bool]]] = {
    "num": _finite,
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "list": lambda v: isinstance(v, list),
    "span": lambda v: isinstance(v, list) and len(v) == 2 and all(_finite(x) for x in v),
    "pair": lambda v: (isinstance(v, list) and len(v) == 2
                       and all(x is None or _finite(x) for x in v)),
    "float": lambda v: v in ("inf", "-inf") or (isinstance(v, (int, float))
                                                and not isinstance(v, bool)),
    "limit": lambda v: v in LIMITS,
    "strs": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "groups": lambda v: isinstance(v, list) and all(
        isinstance(g, list) and len(g) == 3 and isinstance(g[0], str)
        and all(x is None or (isinstance(x, (int, float)) and not isinstance(x, bool))
                for x in g[1:]) for g in v),
    "worst": lambda v: (isinstance(v, dict) and isinstance(v.get("group"), str)
                        and (v.get("value") is None or _finite(v.get("value")))),
}


#: The fields of a stored :class:`CheckOutcome` that reports read; "!": required.
CHECK_KINDS: Final = {
    "limit": "limit!", "threshold": "num!", "passed": "bool!", "observed": "float?",
    "indicator": "str!", "metric": "str!", "at": "num?", "key": "str?", "confidence": "str?",
    "interval": "span?", "where": "str?",
}
#: The fields of a stored :class:`Comparison`; "!": required.
COMPARISON_KINDS: Final = {
    "test": "str!", "result": "str!", "metric": "str!", "where": "str?", "baseline": "num?!",
    "now": "num?!", "tolerance": "num!", "lower_is_better": "bool!",
    "higher_is_better_groups": "bool?", "groups": "groups?", "notes": "strs?",
    "confidence": "str?", "interval": "span?", "paired": "bool?",
}


@final
class Fields:
    """Typed reads of one stored object: each read checks the value's kind.

    Parameters
    ----------
    data : object
        What was stored (an object is expected).
    path : str
        Its key path, for messages.

    Raises
    ------
    FieldError
        When ``data`` is not an object, or a read finds a value of another kind.

    Examples
    --------
    >>> Fields({"gap": 0.2}, "['x']").get("gap", "num?")
    0.2
    >>> Fields({"gap": "0.2"}, "['x']").get("gap", "num?")
    Traceback (most recent call last):
    ...
    pytest_fairness.records.FieldError: ['x']['gap'] is '0.2', not a finite number or null
    """

    def __init__(self, data: Any, path: str) -> None:
        if not isinstance(data, dict):
            raise FieldError(path, None, data, "object")
        self.data: Mapping[str, Any] = data
        self.path = path

    def get(self, name: str, kind: str, *, required: bool = False, default: Any = None) -> Any:
        """The field ``name``, of ``kind`` (``"num?"``: a finite number or None)."""
        if name not in self.data:
            if required:
                raise FieldError(self.path, name, None, kind, missing=True)
            return default
        value = self.data[name]
        if not (value is None and kind.endswith("?")) and not _FITS[kind.rstrip("?")](value):
            raise FieldError(self.path, name, value, kind)
        return value

    def check(self, kinds: Mapping[str, str]) -> None:
        """Check every field of ``kinds`` (``"num!"``: required, ``"num?"``: or None)."""
        for name, kind in kinds.items():
            self.get(name, kind.rstrip("!"), required=kind.endswith("!"))

    def inner(self, name: str, **options: Any) -> Fields:
        """The object at ``name``, to read in turn (an empty one when absent)."""
        return Fields(self.get(name, "object", **options) or {}, f"{self.path}[{name!r}]")


@final
@dataclass(frozen=True)
class GroupSummary:
    """One group of a :class:`ResultSummary`: its size, value, interval and exclusion."""

    n: float | None
    value: float | None
    interval: tuple[float | None, float | None] | None = None
    excluded: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dictionary."""
        return {"n": self.n, "value": self.value,
                "interval": None if self.interval is None else list(self.interval),
                "excluded": self.excluded}

    @classmethod
    def from_dict(cls, data: Any, path: str = "") -> GroupSummary:
        """Rebuild and check :meth:`to_dict` output (:class:`FieldError` naming the key)."""
        f = Fields(data, path)
        interval = f.get("interval", "pair?")
        return cls(f.get("n", "num?"), f.get("value", "num?", required=True),
                   None if interval is None else (interval[0], interval[1]),
                   f.get("excluded", "bool", default=False))


@final
@dataclass(frozen=True)
class ResultSummary:
    """The headline numbers of one result: what a baseline keeps and a regression compares.

    Parameters
    ----------
    indicator, metric : str
        The result's name and metric.
    higher_is_better : bool
        The metric's direction.
    at : float, int or None
        The result's coordinate.
    min_group_size : float, int or None
        The smallest group counted in the gap.
    value, gap, ratio : float or None
        The headline value, and the gap and ratio over the included groups (None with
        fewer than two).
    worst : (str, float or None) or None
        The worst group's label and value (None without groups).
    groups : mapping of str to GroupSummary
        Every group by label.
    params : mapping
        How the result was computed (a change is noted when comparing).
    replicates : mapping of str to str
        The packed bootstrap replicates of ``value``, ``gap``, ... (for paired comparisons).
    """

    indicator: str = ""
    metric: str = ""
    higher_is_better: bool = True
    at: float | int | None = None
    min_group_size: float | int | None = None
    value: float | None = None
    gap: float | None = None
    ratio: float | None = None
    worst: tuple[str, float | None] | None = None
    groups: Mapping[str, GroupSummary] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    replicates: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, keyed: KeyedResult) -> ResultSummary:
        """The summary of a result (every number finite or None)."""
        result = keyed.result
        stored = result.to_dict()  # params and replicates as JSON keeps them
        worst = result.worst_group
        included = len(result.included_groups) >= 2
        return cls(
            indicator=result.name, metric=result.metric,
            higher_is_better=result.higher_is_better, at=result.at,
            min_group_size=result.min_group_size, value=finite_or_none(result.value),
            gap=finite_or_none(result.gap) if included else None,
            ratio=finite_or_none(result.ratio) if included else None,
            worst=None if worst is None else (worst.label, finite_or_none(worst.value)),
            groups={g.label: GroupSummary(
                g.n, finite_or_none(g.value), None if g.interval is None else (
                    finite_or_none(g.interval[0]), finite_or_none(g.interval[1])), g.excluded)
                for g in result.groups},
            params=stored["params"], replicates=stored.get("replicates", {}),
        )

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dictionary (the baseline file's layout)."""
        return {
            "indicator": self.indicator, "metric": self.metric,
            "higher_is_better": self.higher_is_better, "at": self.at,
            "min_group_size": self.min_group_size, "value": self.value, "gap": self.gap,
            "ratio": self.ratio,
            "worst": None if self.worst is None else {"group": self.worst[0],
                                                      "value": self.worst[1]},
            "groups": {label: g.to_dict() for label, g in self.groups.items()},
            "params": dict(self.params),
            **({"replicates": dict(self.replicates)} if self.replicates else {}),
        }

    @classmethod
    def from_dict(cls, data: Any, path: str = "") -> ResultSummary:
        """Rebuild and check :meth:`to_dict` output.

        Raises
        ------
        FieldError
            Naming the key (``path['gap']``), the value and what was expected.
        """
        f = Fields(data, path)
        numbers = [f.get(name, "num?", required=True) for name in ("value", "gap", "ratio")]
        indicator, metric = f.get("indicator", "str", default=""), f.get("metric", "str",
                                                                           default="")
        higher = f.get("higher_is_better", "bool", default=True)
        at, size = f.get("at", "num?"), f.get("min_group_size", "num?")
        worst = f.get("worst", "worst?")
        groups = f.inner("groups")
        return cls(
            indicator=indicator, metric=metric, higher_is_better=higher, at=at,
            min_group_size=size, value=numbers[0], gap=numbers[1], ratio=numbers[2],
            worst=None if worst is None else (worst["group"], worst.get("value")),
            groups={label: GroupSummary.from_dict(g, f"{groups.path}[{label!r}]")
                    for label, g in groups.data.items()},
            params=dict(f.inner("params").data), replicates=dict(f.inner("replicates").data),
        )


@final
@dataclass(frozen=True)
class BaselineEntry:
    """What a baseline keeps of one test: its ids, outcome and result summaries.

    Parameters
    ----------
    test : str or None
        The node id without the checkpoint parameter.
    checkpoint, outcome : str or None
        The test's checkpoint and outcome when it was saved.
    results : mapping of str to ResultSummary
        One summary per result, by result id (:attr:`KeyedResult.id`).
    """

    test: str | None = None
    checkpoint: str | None = None
    outcome: str | None = None
    results: Mapping[str, ResultSummary] = field(default_factory=dict)

    @classmethod
    def of(cls, record: TestRecord) -> BaselineEntry:
        """The entry of a test's record."""
        return cls(record.test, record.checkpoint, record.outcome or None,
                   {r.id: ResultSummary.of(r) for r in record.results})

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dictionary."""
        return {"test": self.test, "checkpoint": self.checkpoint, "outcome": self.outcome,
                "results": {rid: s.to_dict() for rid, s in self.results.items()}}

    @classmethod
    def from_dict(cls, data: Any, path: str = "") -> BaselineEntry:
        """Rebuild and check :meth:`to_dict` output (:class:`FieldError` naming the key)."""
        f = Fields(data, path)
        results = f.inner("results", required=True)
        return cls(f.get("test", "str?"), f.get("checkpoint", "str?"), f.get("outcome", "str?"),
                   {rid: ResultSummary.from_dict(s, f"{results.path}[{rid!r}]")
                    for rid, s in results.data.items()})


@final
@dataclass(frozen=True)
class Baseline:
    """A baseline: run metadata and one :class:`BaselineEntry` per test id.

    Parameters
    ----------
    tests : mapping of str to BaselineEntry
        The entries, by node id.
    metadata : mapping
        What run the baseline came from (time, git commit, checkpoint, ...).
    """

    tests: Mapping[str, BaselineEntry] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def entry(self, nodeid: str, test: str | None = None) -> BaselineEntry | None:
        """The entry of a test: by node id, else by its checkpoint-free test id if unique."""
        if nodeid in self.tests:
            return self.tests[nodeid]
        wanted = test or nodeid
        matches = [entry for entry in self.tests.values() if entry.test == wanted]
        return matches[0] if len(matches) == 1 else None

    def to_dict(self) -> dict[str, Any]:
        """The file's JSON document (with its ``format`` and ``schema``)."""
        return {"format": BASELINE_FORMAT, "schema": BASELINE_SCHEMA,
                "metadata": dict(self.metadata),
                "tests": {nodeid: e.to_dict() for nodeid, e in self.tests.items()}}

    @classmethod
    def from_dict(cls, document: Any, *, source: str = "<baseline>") -> Baseline:
        """Check a baseline document and rebuild it.

        Raises
        ------
        FairnessConfigError
            Naming the file, the key (``['tests']['t.py::a']['results']['x']['gap']``),
            the value found and how to regenerate the baseline.
        """
        if not isinstance(document, dict) or document.get("format") != BASELINE_FORMAT:
            got = (document.get("format") if isinstance(document, dict)
                   else type(document).__name__)
            raise FairnessConfigError(
                f"{source!r} is not a pytest-fairness baseline (format={got!r}, expected "
                f"{BASELINE_FORMAT!r}); write one with --fairness-save-baseline."
            )
        schema = document.get("schema")
        if not isinstance(schema, int) or isinstance(schema, bool) or schema < 1:
            raise FairnessConfigError(f"{source!r} has an invalid schema={schema!r}; "
                                      "regenerate it with --fairness-save-baseline.")
        if schema > BASELINE_SCHEMA:
            raise FairnessConfigError(
                f"{source!r} has schema={schema}, newer than this pytest-fairness understands "
                f"({BASELINE_SCHEMA}); upgrade pytest-fairness."
            )
        if not isinstance(document.get("tests"), dict):
            raise FairnessConfigError(f"{source!r} has no 'tests' mapping; regenerate it.")
        try:
            f = Fields(document, "")
            tests = f.inner("tests")
            return cls({nodeid: BaselineEntry.from_dict(e, f"{tests.path}[{nodeid!r}]")
                        for nodeid, e in tests.data.items()}, dict(f.inner("metadata").data))
        except FieldError as error:
            raise FairnessConfigError(f"baseline {source!r}: {error}. {REGENERATE}") from None
