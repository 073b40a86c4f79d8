"""The records of a run: what each fairness test produced, as frozen, typed values.

A test leaves one :class:`TestRecord` (results, verdicts, comparisons, extractions); their
``to_dict``/``from_dict`` codec is used only where a record leaves the process (the xdist
report attribute, report and baseline files, the history's rows).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Final, final

from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.files import FieldError, Fields
from pytest_fairness.results import (
    GroupStat,
    IndicatorResult,
    decode_float,
    encode_float,
    finite_or_none,
    result_id,
    unpack_replicates,
)

__all__ = [
    "BASELINE_FORMAT", "BASELINE_SCHEMA", "Baseline", "BaselineEntry", "CheckOutcome",
    "Comparison", "Extraction", "FieldError", "Fields", "GroupSummary", "KeyedResult",
    "ResultSummary", "TestRecord", "joined"]

EPS: Final = 1e-12  # slack: a value recomputed bit-for-bit differently is not worse


def _plain(value: Any) -> Any:
    """A field for JSON: records by their ``to_dict``, tuples as lists, mappings as dicts."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return {k: _plain(v) for k, v in value.items()} if isinstance(value, Mapping) else value


def _fields(record: Any, *skip: str) -> dict[str, Any]:
    """A record's fields by name, for JSON (:func:`_plain`), but those in ``skip``."""
    return {f.name: _plain(getattr(record, f.name)) for f in fields(record) if f.name not in skip}


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
    limit, threshold, observed : str, float, float
        The keyword (``"max_gap"``), its value, and the number the limit bounds.
    passed, verdict, decide : bool, str, str
        Whether the test passes on it; ``"pass"``, ``"fail"`` or ``"inconclusive"`` (the
        interval straddles the limit: ``passed`` follows ``--fairness-inconclusive``); what
        would decide an inconclusive one. Stored without them: from ``passed``, and ``""``.
    result, key : IndicatorResult or None, str or None
        The result checked (the slice at ``at``; None once read back from its stored form),
        and its key when the test returned a dict.
    confidence, interval : str, (float, float) or None
        The rule (``"point"``, ``"supported"``, ``"strict"``) and the interval it used.
    where : str
        Which group or cell produced ``observed`` (empty for whole-result numbers).
    indicator, metric, at : str, str, float or None
        The identity of the result checked (from ``result``; what the stored form keeps).
    reads, level : str, float or None
        The limit's ``metric=`` (``"TPR"``), or ``""`` for what the limit reads by default;
        the interval's level under ``--fairness-family-alpha`` (None: the result's own).
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
    reads: str = ""
    verdict: str = ""
    decide: str = ""
    level: float | None = None

    def __post_init__(self) -> None:
        if self.verdict not in ("pass", "fail", "inconclusive"):  # stored before verdicts
            object.__setattr__(self, "verdict", "pass" if self.passed else "fail")
        if self.result is not None:  # the identity of the result checked, kept when stored
            object.__setattr__(self, "indicator", self.result.name)
            object.__setattr__(self, "metric", self.result.metric)
            object.__setattr__(self, "at", self.result.at)

    @property
    def label(self) -> str:
        """``indicator (metric)`` with the coordinate and key, for reports."""
        text = f"{self.indicator} ({self.metric})" + ("" if self.at is None else f" at {self.at:g}")
        return text if self.key is None else f"{self.key}: {text}"

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable summary (without the result; ``level`` when set)."""
        skip = ("result", "level") if self.level is None else ("result",)
        return {**_fields(self, *skip), "observed": encode_float(self.observed)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckOutcome:
        """Rebuild an outcome from :meth:`to_dict` output (without its result)."""
        Fields(data, "").check(CHECK_KINDS)
        return cls(
            data["limit"], data["threshold"], decode_float(data["observed"]), data["passed"],
            key=data.get("key"), confidence=data.get("confidence") or "point",
            interval=_span(data.get("interval")), where=data.get("where") or "",
            indicator=data["indicator"], metric=data["metric"], at=data.get("at"),
            reads=data.get("reads") or "", verdict=data.get("verdict") or "",
            decide=data.get("decide") or "", level=data.get("level"))


def _span(value: Any) -> tuple[float, float] | None:
    return None if value is None else (float(value[0]), float(value[1]))


@final
@dataclass(frozen=True)
class Comparison:
    """One metric of one result, baseline against now.

    Parameters
    ----------
    test, result, metric : str
        The test id, the result's name within it, and ``"gap"``, ``"ratio"``, ...
    baseline, now : float or None
        The two numbers (None when the metric is undefined, e.g. a gap with one group).
    tolerance, lower_is_better, higher_is_better_groups : float, bool, bool
        How much worse is accepted, the metric's direction, and that of the group values.
    groups : tuple of (label, baseline value, now value)
        Every group of either side, for the group-by-group table.
    notes, where : tuple of str, str
        Caveats; which group ``worst`` refers to, or how ``headline`` was read.
    confidence, interval, paired : str, (float, float) or None, bool or None
        The rule (see :attr:`regressed`); the interval of :attr:`worse_by` from both
        sides' bootstrap replicates, and whether it is paired (same units drawn).
    since, level : str, float or None
        What ``baseline`` is: ``"baseline"``, or ``"origin"`` for a drift budget (whose
        ``tolerance`` is the budget); the interval's level under ``--fairness-family-alpha``.
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
    since: str = "baseline"
    level: float | None = None

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
        """Return a JSON-serialisable dictionary (``level`` when set)."""
        return {**_fields(self, *(("level",) if self.level is None else ())),
                "worse_by": self.worse_by, "regressed": self.regressed}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Comparison:
        """Rebuild a :class:`Comparison` from :meth:`to_dict` output."""
        Fields(data, "").check(COMPARISON_KINDS)
        return cls(
            data["test"], data["result"], data["metric"], data["baseline"], data["now"],
            data["tolerance"], data["lower_is_better"], data.get("higher_is_better_groups", True),
            tuple((g[0], g[1], g[2]) for g in data.get("groups") or ()),
            tuple(data.get("notes") or ()), data.get("where") or "",
            data.get("confidence") or "point", _span(data.get("interval")), data.get("paired"),
            data.get("since") or "baseline", data.get("level"))


@final
@dataclass(frozen=True)
class Extraction:
    """What produced one of a test's features (one ``fairness_features`` call).

    Parameters
    ----------
    dataset, dataset_fingerprint : str
        The dataset's name and fingerprint (annotations and file list).
    model_fingerprint, features_digest : str
        The model's fingerprint (weights and architecture, or a given id), and a sha256
        of the extracted arrays.
    features : str
        The folder the features were read from (``--fairness-features``), or ``""``.
    """

    dataset: str
    dataset_fingerprint: str
    model_fingerprint: str
    features_digest: str
    features: str = ""

    def to_dict(self) -> dict[str, str]:
        """Return a JSON-serialisable dictionary."""
        return _fields(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Extraction:
        """Rebuild from :meth:`to_dict` output."""
        return cls(str(data["dataset"]), str(data["dataset_fingerprint"]),
                   str(data["model_fingerprint"]), str(data["features_digest"]),
                   str(data.get("features", "")))


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
    nodeid, test, checkpoint, outcome : str, str, str or None, str
        The node id; the same without the checkpoint parameter; the checkpoint the test ran
        for (as given); its outcome, set on the controller.
    results, checks, regressions : tuple
        The results (:class:`KeyedResult`), the verdicts (markers' first, then inline
        ones) and the comparisons with the baseline.
    notes, extractions : tuple
        What could not be compared and why; what produced each of the test's features.
    checkpoint_comparisons, checkpoint_judged : tuple, bool
        The comparisons with the reference checkpoint's record, and whether they are verdicts.
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
    checkpoint_comparisons: tuple[Comparison, ...] = ()
    checkpoint_judged: bool = False

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
        return {**_fields(self), "model_fingerprint": self.model_fingerprint,
                "dataset_fingerprint": self.dataset_fingerprint}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "") -> TestRecord:
        """Rebuild a record from :meth:`to_dict` output (``path`` names it in messages)."""
        Fields(data, path).check(RECORD_KINDS)
        return cls(
            data["nodeid"], data.get("test") or data["nodeid"], data.get("checkpoint"),
            data.get("outcome") or "",
            tuple(map(KeyedResult.from_dict, data.get("results") or ())),
            tuple(map(CheckOutcome.from_dict, data.get("checks") or ())),
            tuple(map(Comparison.from_dict, data.get("regressions") or ())),
            tuple(data.get("notes") or ()),
            tuple(map(Extraction.from_dict, data.get("extractions") or ())),
            tuple(map(Comparison.from_dict, data.get("checkpoint_comparisons") or ())),
            bool(data.get("checkpoint_judged")))


# -- stored data: baseline entries and the one check of what was stored --------------------------

#: The ``format`` field of a baseline file.
BASELINE_FORMAT: Final = "pytest-fairness-baseline"
#: Version of the baseline layout; a newer file than this code understands is refused.
BASELINE_SCHEMA: Final = 2  # 2: entries keep their date and drift origin
#: How a baseline that does not decode is fixed.
REGENERATE: Final = ("Regenerate the baseline with `pytest --fairness "
                     "--fairness-save-baseline FILE.json`, or fix the file by hand.")


#: The fields of a stored :class:`CheckOutcome` that reports read.
CHECK_KINDS: Final = {
    "limit": "limit!", "threshold": "num!", "passed": "bool!", "observed": "float?",
    "indicator": "str!", "metric": "str!", "at": "num?", "key": "str?", "confidence": "str?",
    "interval": "span?", "where": "str?", "reads": "str?", "verdict": "str?", "decide": "str?",
    "level": "num?"}
#: The fields of a stored :class:`TestRecord` itself (its parts check their own).
RECORD_KINDS: Final = {
    "nodeid": "str!", "test": "str?", "checkpoint": "str?", "outcome": "str?", "notes": "strs?",
    "checkpoint_judged": "bool?",
}
#: The fields of a stored :class:`Comparison` (``worse_by`` and ``regressed`` are recomputed).
COMPARISON_KINDS: Final = {
    "worse_by": "num?", "regressed": "bool?",
    "test": "str!", "result": "str!", "metric": "str!", "where": "str?", "baseline": "num?!",
    "now": "num?!", "tolerance": "num!", "lower_is_better": "bool!",
    "higher_is_better_groups": "bool?", "groups": "groups?", "notes": "strs?",
    "confidence": "str?", "interval": "span?", "paired": "bool?", "since": "str?",
    "level": "num?"}


def _finite(stats: Mapping[str, float]) -> dict[str, float | None]:
    return {k: finite_or_none(v) for k, v in stats.items()}


def _numbers(f: Fields, name: str) -> dict[str, float | None]:
    """A stored mapping of names to finite numbers or null (stats), each value checked."""
    inner = f.inner(name)
    return {key: inner.get(key, "num?") for key in inner.data}


@final
@dataclass(frozen=True)
class GroupSummary:
    """One group of a :class:`ResultSummary`: size, value, interval, exclusion and stats."""

    n: float | None
    value: float | None
    interval: tuple[float | None, float | None] | None = None
    excluded: bool = False
    stats: Mapping[str, float | None] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dictionary (``stats`` only when there are some)."""
        return _fields(self, *() if self.stats else ("stats",))

    @classmethod
    def from_dict(cls, data: object, path: str = "") -> GroupSummary:
        """Rebuild and check :meth:`to_dict` output (:class:`FieldError` naming the key)."""
        f = Fields(data, path)
        interval = f.get("interval", "pair?")
        return cls(f.get("n", "num?"), f.get("value", "num?", required=True),
                   None if interval is None else (interval[0], interval[1]),
                   f.get("excluded", "bool", default=False), _numbers(f, "stats"))


@final
@dataclass(frozen=True)
class ResultSummary:
    """The numbers of one result that a baseline keeps and a regression compares.

    Parameters
    ----------
    indicator, metric, higher_is_better, at, min_group_size
        As in :class:`~pytest_fairness.results.IndicatorResult`.
    value, gap, ratio : float or None
        The headline value, and the gap and ratio of the included groups (None with < 2).
    worst : (str, float or None) or None
        The worst group's label and value.
    groups, stats : mapping of str to GroupSummary, of str to float or None
        Every group by label (with its stats), and the result's named stats.
    params, replicates : mapping
        How the result was computed, and its packed bootstrap replicates by name.
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
    replicates: Mapping[str, object] = field(default_factory=dict)
    stats: Mapping[str, float | None] = field(default_factory=dict)

    @classmethod
    def of(cls, keyed: KeyedResult) -> ResultSummary:
        """The summary of a result (every number finite or None)."""
        result = keyed.result
        stored = result.to_dict()  # params and replicates as JSON keeps them
        worst = result.worst_group
        included = len(result.included_groups) >= 2
        return cls(
            result.name, result.metric, result.higher_is_better, result.at,
            result.min_group_size, finite_or_none(result.value),
            finite_or_none(result.gap) if included else None,
            finite_or_none(result.ratio) if included else None,
            None if worst is None else (worst.label, finite_or_none(worst.value)),
            {g.label: GroupSummary(g.n, finite_or_none(g.value), None if g.interval is None
                                   else (finite_or_none(g.interval[0]),
                                         finite_or_none(g.interval[1])), g.excluded,
                                   _finite(g.stats))
             for g in result.groups},
            stored["params"], stored.get("replicates", {}), _finite(result.stats),
        )

    def result(self, where: str = "") -> IndicatorResult:
        """The result again, as far as the summary keeps it: what a regression reads.

        A damaged replicate is a :class:`FairnessConfigError` naming ``where``.
        """
        return IndicatorResult(
            self.indicator, self.metric, decode_float(self.value),
            groups=tuple(GroupStat(label, int(g.n or 0), decode_float(g.value),
                                   excluded=g.excluded,
                                   stats={k: decode_float(v) for k, v in g.stats.items()})
                         for label, g in self.groups.items()),
            stats={k: decode_float(v) for k, v in self.stats.items()}, params=self.params,
            higher_is_better=self.higher_is_better, at=self.at,
            replicates={k: unpack_replicates(v, where=f"{where}['replicates'][{k!r}]")
                        for k, v in self.replicates.items()})

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dictionary (the baseline file's layout)."""
        worst = None if self.worst is None else {"group": self.worst[0], "value": self.worst[1]}
        skip = [name for name in ("replicates", "stats") if not getattr(self, name)]
        return {**_fields(self, *skip), "worst": worst}

    @classmethod
    def from_dict(cls, data: object, path: str = "") -> ResultSummary:
        """Rebuild and check :meth:`to_dict` output.

        Raises
        ------
        FieldError
            Naming the key (``path['gap']``), the value and what was expected.
        """
        f = Fields(data, path)
        value, gap, ratio = (f.get(n, "num?", required=True) for n in ("value", "gap", "ratio"))
        indicator, metric = (f.get(n, "str", default="") for n in ("indicator", "metric"))
        higher = f.get("higher_is_better", "bool", default=True)
        at, size = f.get("at", "num?"), f.get("min_group_size", "num?")
        worst = f.get("worst", "worst?")
        return cls(indicator, metric, higher, at, size, value, gap, ratio,
                   None if worst is None else (worst["group"], worst.get("value")),
                   f.each("groups", GroupSummary.from_dict), dict(f.inner("params").data),
                   dict(f.inner("replicates").data), _numbers(f, "stats"))


@final
@dataclass(frozen=True)
class BaselineEntry:
    """What a baseline keeps of one test: its ids, outcome and result summaries.

    Parameters
    ----------
    test, checkpoint, outcome : str or None
        The node id without the checkpoint parameter; checkpoint and outcome when saved.
    results : mapping of str to ResultSummary
        One summary per result, by result id (:attr:`KeyedResult.id`).
    saved : str or None
        The date the entry was saved (None in files saved before dates were kept).
    origin : BaselineEntry or None
        What a drift budget reads: the numbers (without replicates) and date the entry
        started from, kept when the baseline is saved again; None: it is its own origin.
    """

    test: str | None = None
    checkpoint: str | None = None
    outcome: str | None = None
    results: Mapping[str, ResultSummary] = field(default_factory=dict)
    saved: str | None = None
    origin: BaselineEntry | None = None

    @classmethod
    def of(cls, record: TestRecord) -> BaselineEntry:
        """The entry of a test's record."""
        return cls(record.test, record.checkpoint, record.outcome or None,
                   {r.id: ResultSummary.of(r) for r in record.results})

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dictionary (``saved`` and ``origin`` only when set)."""
        return _fields(self, *(name for name in ("saved", "origin") if not getattr(self, name)))

    @classmethod
    def from_dict(cls, data: object, path: str = "") -> BaselineEntry:
        """Rebuild and check :meth:`to_dict` output (:class:`FieldError` naming the key)."""
        f = Fields(data, path)
        results = f.each("results", ResultSummary.from_dict, required=True)
        origin = f.get("origin", "object?")
        return cls(f.get("test", "str?"), f.get("checkpoint", "str?"), f.get("outcome", "str?"),
                   results, f.get("saved", "str?"),
                   None if origin is None else cls.from_dict(origin, f"{f.path}['origin']"))


@final
@dataclass(frozen=True)
class Baseline:
    """A baseline: one :class:`BaselineEntry` per node id, and the run's ``metadata``."""

    tests: Mapping[str, BaselineEntry] = field(default_factory=dict)
    metadata: Mapping[str, object] = field(default_factory=dict)

    def entry(self, nodeid: str, test: str | None = None) -> BaselineEntry | None:
        """The entry of a test: by node id, else by its checkpoint-free test id if unique."""
        if nodeid in self.tests:
            return self.tests[nodeid]
        matches = [entry for entry in self.tests.values() if entry.test == (test or nodeid)]
        return matches[0] if len(matches) == 1 else None

    def to_dict(self) -> dict[str, Any]:
        """The file's JSON document (with its ``format`` and ``schema``)."""
        return {"format": BASELINE_FORMAT, "schema": BASELINE_SCHEMA, **_fields(self)}

    @classmethod
    def from_dict(cls, document: Any, *, source: str = "<baseline>") -> Baseline:
        """Rebuild a baseline document whose format and schema were checked.

        Raises
        ------
        FairnessConfigError
            Naming the file, the key (``['tests']['t.py::a']['results']['x']['gap']``),
            the value found and how to regenerate the baseline.
        """
        try:
            f = Fields(document, "")
            return cls(f.each("tests", BaselineEntry.from_dict), dict(f.inner("metadata").data))
        except FieldError as error:
            raise FairnessConfigError(f"baseline {source!r}: {error}. {REGENERATE}") from None
