"""The regression rule: direction-aware comparison of results with a baseline.

A gap is worse when it grows, a ratio when it shrinks, the value and the worst group by
``higher_is_better``; a signed effect size (iEAT's d) compares by magnitude. ``confidence``
judges the change itself (``"point"``) or its bootstrap interval, paired when both sides
resampled the same units (see "Judging a change by its interval: paired regressions" in
``docs/ci-and-history.md``). Only the comparison of replicates imports numpy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.indicators import headline
from pytest_fairness.options import DEFAULT_CONFIDENCE, CompareFail
from pytest_fairness.readings import Reading, read_metric
from pytest_fairness.records import (
    Baseline,
    BaselineEntry,
    Comparison,
    ResultSummary,
    TestRecord,
)
from pytest_fairness.results import finite_or_none

__all__ = [
    "CHECKPOINT_FIX", "NOT_COMPARED", "REFERENCE", "UNGATED", "against_reference",
    "compare_baselines", "compare_checkpoints", "compare_results", "compare_test",
]


#: Params of the bootstrap: a change in them is the pairing note's business, not a change
#: in how the number was computed.
_BOOTSTRAP_PARAMS: Final = frozenset({"seed", "n_bootstrap", "confidence_level",
                                      "interval_method", "bootstrap_plan",
                                      "bootstrap_draw"})


def _param_notes(base: ResultSummary, now: ResultSummary) -> list[str]:
    before, after = base.params, now.params
    changed = sorted(k for k in (set(before) | set(after)) - _BOOTSTRAP_PARAMS
                     if before.get(k) != after.get(k))
    if not changed:
        return []
    shown = ", ".join(f"{k}: {before.get(k)!r} → {after.get(k)!r}" for k in changed[:5])
    more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
    return [f"computed differently from the baseline ({shown}{more}); the comparison may "
            "not be like for like"]


def _pairing(base: ResultSummary, now: ResultSummary) -> tuple[bool, str]:
    """Whether two results' replicates were drawn on the same units, and how to say it."""
    b, n = base.params, now.params
    kinds = "kinds" in (b.get("bootstrap_draw"), n.get("bootstrap_draw"))
    if kinds and b.get("bootstrap_plan") != n.get("bootstrap_plan"):
        return False, ("unpaired: replicates drawn per kind of image (group and outcome) pair "
                       "only when every image is of the same kind in both; draw image by image "
                       "to pair them: compare in the run that computes them (--fairness-baseline"
                       ", --fairness-checkpoint), or record both with --fairness-paired")
    if b.get("bootstrap_plan") is None or b.get("bootstrap_plan") != n.get("bootstrap_plan"):
        return False, ("unpaired: the two results resampled different units (other images, "
                       "clusters or an older baseline); the interval adds both bootstraps' noise")
    if b.get("seed") is None or b.get("seed") != n.get("seed"):
        return False, (f"unpaired: drawn with different seeds ({b.get('seed')} and "
                       f"{n.get('seed')}); pass the same seed= (e.g. fairness_seed) to pair "
                       "them and narrow the interval")
    return True, (f"paired: both resampled the same units (seed {n.get('seed')}, "
                  f"{n.get('n_bootstrap')} replicates)")


def _change_interval(
    base: ResultSummary, now: ResultSummary, metric: str, readings: tuple[Any, Any],
    level: float | None = None,
) -> tuple[tuple[float, float] | None, bool | None, str]:
    """The interval of how much worse ``now`` is, whether it is paired, and a note.

    At ``level`` when given (family-wise control), else at the result's own level.
    """
    if readings[0] is None or readings[0].replicates is None or readings[1].replicates is None:
        side = "run" if readings[0] is not None and readings[0].replicates else "baseline"
        return None, None, (f"no bootstrap replicates of {metric} in the {side}: compute the "
                            "indicator with intervals (n_bootstrap=1000, the default) and save "
                            "the baseline again to judge the change with an interval, or "
                            "judge it by the point rule (--fairness-compare-confidence point)")
    import numpy as np

    before, after = (np.array(r.replicates) for r in readings)
    lower_is_better = readings[1].lower_is_better
    paired, note = _pairing(base, now)
    if not paired:  # independent draws: break any alignment the two orders may share
        before = before[np.random.default_rng(0).permutation(before.size)]
    size = min(before.size, after.size)
    change = after[:size] - before[:size]
    change = change[~np.isnan(change)]
    if change.size < 2:
        return None, None, f"too few defined replicates of {metric} for an interval"
    level = level or float(now.params.get("confidence_level") or 0.95)
    low, high = np.quantile(change if lower_is_better else -change,
                            [(1 - level) / 2, (1 + level) / 2])
    return (float(low), float(high)), paired, f"{100 * level:.6g}% interval {note}"


def _undefined_note(now: ResultSummary, metric: str, before: float | None,
                    after: float | None, *, missing: str = "") -> str:
    """Why a metric undefined on a side counts as a regression (and what to track instead)."""
    head = headline(now.indicator)
    if missing:
        return (f"{metric} is not in the baseline entry of {missing} (saved by an older "
                "pytest-fairness, or of another indicator): cannot be compared, counted as a "
                "regression; save the baseline again with --fairness-save-baseline")
    hint = (f"; {now.indicator} has no gap, track its headline ({head.label}) with "
            "metric='headline'" if metric in ("gap", "ratio") and not head.has_gap else "")
    side = "baseline and run" if before is None and after is None else (
        "baseline" if before is None else "run")
    return (f"{metric} is undefined in the {side}{hint}: cannot be compared, counted as a "
            "regression")


def compare_results(
    base: ResultSummary,
    now: ResultSummary,
    tolerances: Mapping[str, float],
    *,
    test: str = "",
    result: str = "",
    confidence: str | Mapping[str, str] = DEFAULT_CONFIDENCE,
    level: float | None = None,
) -> list[Comparison]:
    """Compare two result summaries on each metric of ``tolerances``.

    ``confidence`` is the rule of every metric, or one per metric; the interval of the
    change is computed whenever both summaries carry bootstrap replicates, at ``level``
    for metrics judged by it under ``--fairness-family-alpha`` (else the result's own).

    Examples
    --------
    >>> base = ResultSummary(value=0.8, stats={"DEO": 0.10})
    >>> now = ResultSummary(value=0.8, stats={"DEO": 0.25})
    >>> [(c.metric, c.regressed) for c in compare_results(base, now, {"DEO": 0.01})]
    [('DEO', True)]
    """
    where = f"{test} :: {result}"
    old, new = base.result(where), now.result(where)
    notes = _param_notes(base, now)
    if base.higher_is_better != now.higher_is_better:
        notes.append("the metric's direction differs from the baseline's")
    labels = list(base.groups) + [g for g in now.groups if g not in base.groups]
    groups = tuple(
        (label, getattr(base.groups.get(label), "value", None),
         getattr(now.groups.get(label), "value", None))
        for label in labels)
    out = []
    for metric, tolerance in tolerances.items():
        try:
            after = read_metric(new, metric)
        except FairnessConfigError as error:
            raise FairnessConfigError(f"{where}: cannot compare {error}" if test
                                      else f"cannot compare {error}") from None
        try:
            earlier: Reading | None = read_metric(old, metric)
        except FairnessConfigError:  # a stat the stored entry does not keep
            earlier = None
        before = None if earlier is None else finite_or_none(earlier.number)
        mine = list(notes)
        if before is None or finite_or_none(after.number) is None:
            mine.append(_undefined_note(now, metric, before, finite_or_none(after.number),
                                        missing="" if earlier else where))
        rule = confidence if isinstance(confidence, str) else confidence.get(
            metric, DEFAULT_CONFIDENCE)
        mine_level = None if rule == "point" else level
        interval, paired, note = _change_interval(base, now, metric, (earlier, after),
                                                  mine_level)
        if interval is not None or rule != "point":
            mine.append(note)
        label = "" if after.label == after.name == metric else after.label
        out.append(Comparison(test, result, metric, before, finite_or_none(after.number),
                              float(tolerance), after.lower_is_better, now.higher_is_better,
                              groups, tuple(mine), label, rule, interval, paired,
                              level=mine_level))
    return out


def _drift(entry: BaselineEntry, rid: str, now: ResultSummary, tolerances: Mapping[str, float],
           *, test: str, source: str) -> list[Comparison]:
    """The change of a result since its entry's origin, on each metric with a drift budget.

    The origin keeps no replicates: the drift is judged on the point change. A metric the
    origin lacks cannot be judged and counts as over budget.
    """
    budgets = tolerances.budgets if isinstance(tolerances, CompareFail) else {}
    origin = entry.origin or entry
    since = f"saved {origin.saved}" if origin.saved else "saved on an unknown date"
    out = []
    for metric, budget in budgets.items():
        base = origin.results.get(rid)
        c = (compare_results(base, now, {metric: budget}, test=test, result=rid,
                             confidence="point")[0] if base
             else Comparison(test, rid, metric, None, now.value, budget, True))
        head = f"drift budget of {metric}: {test} :: {rid}"
        if c.worse_by is None:
            text = (f"{head}: the origin ({since}) or this run has no {metric} to compare: "
                    "the drift cannot be judged, counted as over budget")
        else:
            text = (f"{head}: origin {c.baseline:.4g} ({since}) → now {c.now:.4g}, "
                    f"{c.worse_by:+.4g} worse in total, budget {budget:g}")
        if c.regressed:
            text += (" — exceeded: the accepted changes since the origin add up. Fix the "
                     "model; or, to accept the drift deliberately, delete the test's "
                     f"\"origin\" from the baseline file {source} (its current numbers "
                     "become the origin)")
        out.append(replace(c, metric=f"{metric} drift since the origin", where=since,
                           notes=(text,), confidence="point", interval=None, paired=None,
                           since="origin"))
    return out


def compare_baselines(base: Baseline, now: Baseline, tolerances: Mapping[str, float], *,
                      confidence: str = DEFAULT_CONFIDENCE
                      ) -> tuple[list[Comparison], list[str]]:
    """Compare every result present in both baselines; also list what only one side has.

    A drift budget (:class:`~pytest_fairness.options.CompareFail`) compares ``now`` with
    the origin of ``base``'s entry as well.
    """
    out: list[Comparison] = []
    missing: list[str] = []
    for nodeid, entry in now.tests.items():
        old = base.entry(nodeid, entry.test)
        if old is None:
            missing.append(f"new test (not in the baseline): {nodeid}")
            continue
        for rid, summary in entry.results.items():
            if rid not in old.results:
                missing.append(f"new result (not in the baseline): {nodeid} :: {rid}")
                continue
            out.extend(compare_results(old.results[rid], summary, tolerances,
                                       test=nodeid, result=rid, confidence=confidence))
            out.extend(_drift(old, rid, summary, tolerances, test=nodeid, source="A"))
    for nodeid, entry in base.tests.items():
        if now.entry(nodeid, entry.test) is None:
            missing.append(f"missing test (in the baseline only): {nodeid}")
    return out, missing


#: How a note on a gated result that could not be compared starts: such a result fails.
NOT_COMPARED: Final = "not compared: "
#: How readily each rule accepts a change (lower: more demanding).
_LENIENCE: Final = {"strict": 0, "point": 1, "supported": 2}


def compare_test(baseline: Baseline | None, record: TestRecord, *,
                 compare_fail: Mapping[str, float], marks: Sequence[Mapping[str, Any]],
                 source: str = "", compare_confidence: str = DEFAULT_CONFIDENCE,
                 level: float | None = None) -> tuple[list[Comparison], list[str]]:
    """The regression rule of one test: compare its results with its baseline entry.

    Each result is compared on the metrics of ``--fairness-compare-fail`` (judged by
    ``--fairness-compare-confidence``) and of the test's validated
    ``fairness.no_regression`` marks (a mark applies to every result, or to the one its
    ``result`` names). When several rules name a metric, the most demanding wins: the
    smaller tolerance, then ``strict`` over ``point`` over ``supported``.

    Parameters
    ----------
    baseline, record : Baseline or None, TestRecord
        The run's baseline (None without one), and the test's record.
    compare_fail, compare_confidence : mapping, str
        Tolerance per metric from ``--fairness-compare-fail``, and its rule.
    marks : sequence of mapping
        The validated keywords of each ``fairness_regression`` mark.
    source : str
        Where the baseline came from, for the notes.
    level : float, optional
        The level of interval-judged comparisons under ``--fairness-family-alpha``.

    Returns
    -------
    (list of Comparison, list of str)
        The comparisons, and notes on what could not be compared. A gated result the
        baseline lacks, a gated baseline result the test did not return, and a mark's
        ``result`` that names nothing each give a note starting with :data:`NOT_COMPARED`
        (``not compared: <test> :: <result> (why)``): the gate did not reach a verdict.
    """
    if not marks and not compare_fail:
        return [], []
    if baseline is None:
        return [], ["fairness.no_regression: no baseline to compare with; pass "
                    "--fairness-baseline FILE.json|RUN_ID|CHECKPOINT."]
    entry = baseline.entry(record.nodeid, record.test)
    has = ", ".join(entry.results) if entry is not None and entry.results else "no result"
    comparisons: list[Comparison] = []
    notes: list[str] = []

    def gated(*names: str | None) -> dict[str, tuple[float, str]]:
        rules = {metric: (tolerance, compare_confidence)
                 for metric, tolerance in compare_fail.items()}
        for mark in marks:
            if mark.get("result") in (None, *names):
                mine = (mark["tolerance"], mark.get("confidence", DEFAULT_CONFIDENCE))
                rules[mark["metric"]] = min(rules.get(mark["metric"], mine), mine,
                                            key=lambda r: (r[0], _LENIENCE[r[1]]))
        return rules

    produced = {keyed.id for keyed in record.results}
    for keyed in record.results:
        rid = keyed.id
        rules = gated(rid, keyed.key, keyed.result.name)
        if not rules:
            continue
        old = None if entry is None else entry.results.get(rid)
        if old is None:
            notes.append(f"{NOT_COMPARED}{record.nodeid} :: {rid} (" + (
                f"the test is not in the baseline {source}" if entry is None else
                f"not in the baseline {source}, whose entry of the test has: {has}") + ")")
            continue
        summary = ResultSummary.of(keyed)
        comparisons.extend(compare_results(
            old, summary, {m: r[0] for m, r in rules.items()},
            test=record.nodeid, result=rid, confidence={m: r[1] for m, r in rules.items()},
            level=level))
        if entry is not None:
            comparisons.extend(_drift(entry, rid, summary, compare_fail, test=record.nodeid,
                                      source=source))
    for rid, summary in (entry.results.items() if entry is not None else ()):
        if rid not in produced and gated(rid, summary.indicator):
            returned = ", ".join(sorted(produced)) or "no result"
            notes.append(f"{NOT_COMPARED}{record.nodeid} :: {rid} (in the baseline {source}; "
                         f"this run's test returned {returned})")
    names = {n for keyed in record.results for n in (keyed.id, keyed.key, keyed.result.name)}
    for mark in marks:
        if mark.get("result") is not None and mark["result"] not in names | set(
                entry.results if entry is not None else ()):
            notes.append(f"{NOT_COMPARED}{record.nodeid} :: {mark['result']} (fairness."
                         f"no_regression(result={mark['result']!r}) names no result of the "
                         f"test; it returned {', '.join(sorted(produced)) or 'no result'})")
    return comparisons, notes


def compare_checkpoints(records: Iterable[TestRecord], checkpoints: Sequence[str],
                        tolerances: Mapping[str, float], *, reference: str | None = None,
                        confidence: str = DEFAULT_CONFIDENCE) -> list[Comparison]:
    """Compare each checkpoint of a run with the ``reference`` one (default the first).

    A test's record at the reference checkpoint is the baseline of its records at the
    others, result by result; tests come by id, checkpoints in the order of ``checkpoints``
    (the records may arrive in any order). Both sides saw the same images: with one seed,
    every change is paired.

    Examples
    --------
    >>> from pytest_fairness.records import KeyedResult
    >>> from pytest_fairness.results import GroupStat, IndicatorResult
    >>> def rec(ckpt, gap):
    ...     r = IndicatorResult("x", "m", 0.5, groups=(
    ...         GroupStat("a", 50, 0.5), GroupStat("b", 50, 0.5 - gap)))
    ...     return TestRecord(f"t.py::test[{ckpt}]", "t.py::test", ckpt,
    ...                       results=(KeyedResult(None, r),))
    >>> [(c.test, round(c.worse_by, 3)) for c in compare_checkpoints(
    ...     [rec("e3", 0.05), rec("e2", 0.25), rec("e1", 0.1)], ["e1", "e2", "e3"],
    ...     {"gap": 0.0})]
    [('t.py::test[e2]', 0.15), ('t.py::test[e3]', -0.05)]
    """
    reference = checkpoints[0] if reference is None else reference
    given = {c: i for i, c in enumerate(checkpoints)}
    by_test: dict[str, dict[str, TestRecord]] = {}
    for record in sorted(records, key=lambda r: (r.test, given.get(str(r.checkpoint),
                                                                   len(given)))):
        if record.checkpoint is not None and record.results:
            by_test.setdefault(record.test, {})[record.checkpoint] = record
    return [c for runs in by_test.values() if reference in runs
            for checkpoint, record in runs.items() if checkpoint != reference
            for c in against_reference(record, runs[reference], compare_fail=tolerances, marks=(),
                                       compare_confidence=confidence,
                                       names=(reference, checkpoint)).checkpoint_comparisons]


#: How the checkpoint the others are compared with is named in notes and messages.
REFERENCE: Final = "the reference checkpoint "
#: How a note on a checkpoint comparison that nothing gates, and that did not happen, starts.
UNGATED: Final = "not compared (nothing is gated): "
#: What to do when a gated checkpoint comparison reached no verdict.
CHECKPOINT_FIX: Final = ("let the reference checkpoint's test run and return the same results "
                         "(or drop the gate: --fairness-compare-fail, fairness.no_regression)")


def against_reference(record: TestRecord, reference: TestRecord | str, *,
                      compare_fail: Mapping[str, float], marks: Sequence[Mapping[str, Any]],
                      compare_confidence: str, names: tuple[str, str],
                      level: float | None = None) -> TestRecord:
    """``record`` with its comparisons with its test at the reference checkpoint.

    :func:`compare_test` with the reference record as the baseline: the same rules, and
    the same ``not compared`` notes for a gated result one side lacks. Judged on
    ``compare_fail`` and the test's ``no_regression`` ``marks``; else the headline is shown,
    not judged. ``reference`` is the record, or why there is none (then a gated test gets a
    ``not compared`` note, which fails it). ``names``: the reference's and ``record``'s
    checkpoint ids; ``level`` as in :func:`compare_test`.
    """
    judged = bool(compare_fail or marks)
    versus = REFERENCE + names[0]
    if isinstance(reference, str):
        note = (f"{NOT_COMPARED if judged else UNGATED}{record.test} at {names[1]}: {versus} "
                f"produced no result for it ({reference})")
        return replace(record, notes=(*record.notes, note), checkpoint_judged=judged)
    baseline = Baseline({reference.nodeid: BaselineEntry.of(reference)})
    comparisons, notes = compare_test(
        baseline, record, marks=marks, source=f"of {versus}",
        compare_fail=dict(compare_fail) or ({} if marks else {"headline": 0.0}),  # no drift
        compare_confidence=compare_confidence, level=level)
    if not judged:
        notes = [note.replace(NOT_COMPARED, UNGATED, 1) for note in notes]
    return replace(record, checkpoint_comparisons=tuple(comparisons),
                   checkpoint_judged=judged, notes=(*record.notes, *notes))
