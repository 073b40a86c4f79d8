"""Committable baselines and direction-aware comparison with them.

A baseline is a JSON document meant to be committed next to the tests::

    {
      "format": "pytest-fairness-baseline",
      "schema": 1,
      "metadata": {"created": "...", "git_commit": "...", "checkpoint": "...", ...},
      "tests": {
        "tests/test_fairness.py::test_gap": {
          "checkpoint": null,
          "outcome": "passed",
          "test": "tests/test_fairness.py::test_gap",
          "results": {
            "group_metrics (accuracy)": {"value": 0.62, "gap": 0.25, "ratio": 0.67,
                                         "worst": {"group": "b", "value": 0.5},
                                         "groups": {"a": {"n": 20, "value": 0.75, ...}}, ...}
          }
        }
      }
    }

Keys are sorted and the file is indented, so a changed number is a one-line diff. There is
one entry per test id, and one summary per result the test produced (named by its dict key,
or by ``indicator (metric)`` and the coordinate).

Comparison knows each metric's direction (:data:`pytest_fairness.options.COMPARE_METRICS`):
a **gap** is worse when it grows, a **ratio** when it shrinks, the headline **value** and
the **worst** group's value by the result's ``higher_is_better``. A signed effect size
(iEAT's d) compares by magnitude: a strong reverse association is not an improvement.

A result regresses on a metric when it is worse than the baseline by more than the
tolerance, judged by the ``confidence`` rule: ``"point"`` on the change itself,
``"supported"`` only when the whole interval of the change lies beyond the tolerance,
``"strict"`` when any of it does. The interval comes from the two results' bootstrap
replicates. When both were drawn on the same units (same seed and
``params["bootstrap_plan"]``: the same images, households or stimuli), the comparison is
**paired**: replicate b of each side resampled the same units, so the change is
bootstrapped as one statistic and the noise both sides share cancels. Otherwise the two
bootstraps are independent and the interval is the wider, unpaired one; the comparison
says which.

Only the comparison of replicates imports numpy; the rest is the standard library.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.indicators import headline
from pytest_fairness.options import COMPARE_METRICS
from pytest_fairness.records import Comparison
from pytest_fairness.results import finite_or_none, result_id, summarize

__all__ = [
    "BASELINE_FORMAT",
    "BASELINE_SCHEMA",
    "build_baseline",
    "compare_baselines",
    "compare_checkpoints",
    "compare_results",
    "compare_test",
    "dump_baseline",
    "few_ids",
    "find_entry",
    "load_baseline",
    "match_baseline",
    "regression_tally",
    "resolve_baseline",
    "save_baseline",
    "strip_param",
    "unmatched_message",
    "validate_baseline",
]

BASELINE_FORMAT: Final = "pytest-fairness-baseline"
#: Version of the baseline layout; a newer file than this code understands is refused.
BASELINE_SCHEMA: Final = 1


# -- baseline documents -------------------------------------------------------------------


def strip_param(nodeid: str, ident: str | None) -> str:
    """Remove one parameter id (e.g. a checkpoint's) from a node id's ``[...]`` part.

    Lets the same test at two checkpoints be compared: ``t.py::test[ckpt1]`` and
    ``t.py::test[ckpt2]`` both become ``t.py::test``.

    Examples
    --------
    >>> strip_param("t.py::test_a[cpu-ckpt1]", "ckpt1")
    't.py::test_a[cpu]'
    >>> strip_param("t.py::test_a[ckpt1]", "ckpt1")
    't.py::test_a'
    """
    if not ident or not nodeid.endswith("]") or "[" not in nodeid:
        return nodeid
    head, _, inner = nodeid[:-1].partition("[")
    if inner == ident:
        return head
    parts = inner.split("-")
    idents = ident.split("-")
    width = len(idents)
    for start in range(len(parts) - width + 1):
        if parts[start:start + width] == idents:
            rest = parts[:start] + parts[start + width:]
            return f"{head}[{'-'.join(rest)}]" if rest else head
    return nodeid


def _entry(record: Mapping[str, Any]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for data in record.get("results", []):
        results[result_id(data)] = summarize(data)
    return {
        "test": record.get("test") or record["nodeid"],
        "checkpoint": record.get("checkpoint"),
        "outcome": record.get("outcome"),
        "results": results,
    }


def build_baseline(
    records: Iterable[Mapping[str, Any]],
    *,
    metadata: Mapping[str, Any] | None = None,
    previous: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Build a baseline document from the plugin's per-test records.

    Parameters
    ----------
    records : iterable of mapping
        One per test: ``nodeid``, ``outcome``, ``results`` (``IndicatorResult.to_dict()``
        with ``key``), optionally ``test`` and ``checkpoint``.
    metadata : mapping, optional
        Run metadata to keep (time, git commit, checkpoint, ...).
    previous : mapping, optional
        An existing baseline: its entries for tests not in ``records`` are kept, so a run
        of a subset (``-k``) updates only what it ran.
    """
    tests: dict[str, Any] = {}
    if previous is not None:
        tests.update(previous.get("tests", {}))
    for record in records:
        if record.get("results"):
            tests[record["nodeid"]] = _entry(record)
    return {
        "format": BASELINE_FORMAT,
        "schema": BASELINE_SCHEMA,
        "metadata": dict(metadata or {}),
        "tests": tests,
    }


def dump_baseline(document: Mapping[str, Any]) -> str:
    """Serialise a baseline deterministically: sorted keys, two-space indent, final newline."""
    text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return text + "\n"


def save_baseline(
    path: str | os.PathLike[str],
    records: Iterable[Mapping[str, Any]],
    *,
    metadata: Mapping[str, Any] | None = None,
    merge: bool = True,
) -> Path:
    """Write (or update, with ``merge``) a baseline file atomically and return its path."""
    target = Path(path)
    previous = load_baseline(target) if merge and target.exists() else None
    document = build_baseline(records, metadata=metadata, previous=previous)
    from pytest_fairness.report.json_report import atomic_write_text

    return atomic_write_text(target, dump_baseline(document))


def _read(path: Path, what: str) -> Any:
    """A JSON file read strictly (UTF-8, bounded nesting, no NaN): FairnessConfigError if not."""
    from pytest_fairness.data.jsonfile import read_json
    from pytest_fairness.errors import InvalidDataError

    if not path.is_file():
        raise FairnessConfigError(
            f"{what} file {str(path)!r} does not exist; write one with "
            "`pytest --fairness --fairness-save-baseline FILE.json`."
        )
    try:
        return read_json(path, what=f"{what} file")
    except InvalidDataError as error:
        raise FairnessConfigError(f"{error} {_REGENERATE}") from None


_REGENERATE: Final = ("Regenerate the baseline with `pytest --fairness "
                      "--fairness-save-baseline FILE.json`, or fix the file by hand.")


def load_baseline(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a baseline file.

    The file is read strictly (:func:`pytest_fairness.data.jsonfile.read_json`: UTF-8 only,
    nesting bounded, no ``NaN``) and every entry is checked (:func:`validate_baseline`).

    Raises
    ------
    FairnessConfigError
        When the file is missing, unreadable, not JSON, not a baseline, has a newer schema,
        or holds a value of the wrong type (the message names the key).
    """
    source = Path(path)
    return validate_baseline(_read(source, "baseline"), source=str(source))


#: The kind of each field of a result summary (:func:`pytest_fairness.results.summarize`).
#: "num?": a finite number or null; a key marked "!" must be present.
_SUMMARY_FIELDS: Final = {
    "value": "num?!", "gap": "num?!", "ratio": "num?!", "indicator": "str", "metric": "str",
    "higher_is_better": "bool", "at": "num?", "min_group_size": "num?", "worst": "worst?",
    "groups": "dict", "params": "dict", "replicates": "dict",
}
_GROUP_FIELDS: Final = {
    "n": "num?", "value": "num?!", "interval": "pair?", "excluded": "bool",
}
_ENTRY_FIELDS: Final = {
    "results": "dict!", "test": "str?", "checkpoint": "str?", "outcome": "str?",
}
_KINDS: Final = {
    "num?": "a finite number or null", "str": "a string", "str?": "a string or null",
    "bool": "true or false", "dict": "an object", "worst?": 'null or {"group": ..., "value": '
    "...}", "pair?": "null or a pair of numbers",
}


def _fits(value: Any, kind: str) -> bool:
    kind = kind.rstrip("!")
    if kind.endswith("?") and value is None:
        return True
    kind = kind.rstrip("?")
    if kind == "num":
        return (isinstance(value, (int, float)) and not isinstance(value, bool)
                and math.isfinite(value))
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "dict":
        return isinstance(value, dict)
    if kind == "pair":
        return isinstance(value, list) and len(value) == 2 and all(_fits(v, "num?") for v in value)
    if kind == "worst":
        return (isinstance(value, dict) and isinstance(value.get("group"), str)
                and _fits(value.get("value"), "num?"))
    raise AssertionError(kind)


def _check_fields(item: Any, fields: Mapping[str, str], where: str, source: str) -> None:
    if not isinstance(item, dict):
        raise FairnessConfigError(
            f"baseline {source!r}: {where} is {_shown(item)}, not an object. {_REGENERATE}"
        )
    for name, kind in fields.items():
        if name not in item:
            if kind.endswith("!"):
                raise FairnessConfigError(
                    f"baseline {source!r}: {where} has no {name!r} (expected "
                    f"{_KINDS[kind.rstrip('!')]}). {_REGENERATE}"
                )
            continue
        if not _fits(item[name], kind):
            raise FairnessConfigError(
                f"baseline {source!r}: {where}[{name!r}] is {_shown(item[name])}, not "
                f"{_KINDS[kind.rstrip('!')]}. {_REGENERATE}"
            )


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


def validate_baseline(document: Any, *, source: str = "<baseline>") -> dict[str, Any]:
    """Check a baseline document and return it.

    Checks the format and schema, and every entry: ``results`` is an object of result
    summaries whose ``value``, ``gap`` and ``ratio`` are present and finite numbers or null,
    whose ``groups`` hold finite numbers, and so on.

    Raises
    ------
    FairnessConfigError
        Naming the file, the key (``['tests']['t.py::a']['results']['x']['gap']``), the
        value found and how to regenerate the baseline.
    """
    if not isinstance(document, dict) or document.get("format") != BASELINE_FORMAT:
        got = document.get("format") if isinstance(document, dict) else type(document).__name__
        raise FairnessConfigError(
            f"{source!r} is not a pytest-fairness baseline (format={got!r}, expected "
            f"{BASELINE_FORMAT!r}); write one with --fairness-save-baseline."
        )
    schema = document.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool) or schema < 1:
        raise FairnessConfigError(
            f"{source!r} has an invalid schema={schema!r}; regenerate it with "
            "--fairness-save-baseline."
        )
    if schema > BASELINE_SCHEMA:
        raise FairnessConfigError(
            f"{source!r} has schema={schema}, newer than this pytest-fairness understands "
            f"({BASELINE_SCHEMA}); upgrade pytest-fairness."
        )
    if not isinstance(document.get("tests"), dict):
        raise FairnessConfigError(f"{source!r} has no 'tests' mapping; regenerate it.")
    if not isinstance(document.get("metadata", {}), dict):
        raise FairnessConfigError(
            f"baseline {source!r}: ['metadata'] is {_shown(document['metadata'])}, not an "
            f"object. {_REGENERATE}"
        )
    for nodeid, entry in document["tests"].items():
        where = f"['tests'][{nodeid!r}]"
        _check_fields(entry, _ENTRY_FIELDS, where, source)
        for rid, summary in entry["results"].items():
            at = f"{where}['results'][{rid!r}]"
            _check_fields(summary, _SUMMARY_FIELDS, at, source)
            for label, group in (summary.get("groups") or {}).items():
                _check_fields(group, _GROUP_FIELDS, f"{at}['groups'][{label!r}]", source)
    return document


def find_entry(
    baseline: Mapping[str, Any], nodeid: str, test: str | None = None
) -> dict[str, Any] | None:
    """The baseline entry of a test: by node id, else by its checkpoint-free test id if unique."""
    tests = baseline.get("tests", {})
    if nodeid in tests:
        return tests[nodeid]  # type: ignore[no-any-return]
    wanted = test or nodeid
    matches = [entry for entry in tests.values() if entry.get("test") == wanted]
    return matches[0] if len(matches) == 1 else None


def match_baseline(
    baseline: Mapping[str, Any], tests: Iterable[tuple[str, str | None]]
) -> tuple[list[str], list[str]]:
    """Which tests of a run the baseline has an entry for (:func:`find_entry`).

    ``tests`` are ``(nodeid, test)`` pairs, ``test`` being the node id without the
    checkpoint parameter. Returns the node ids matched and those not, each once.

    Examples
    --------
    >>> base = {"tests": {"t.py::a": {"test": "t.py::a", "results": {}}}}
    >>> match_baseline(base, [("t.py::a", None), ("t.py::b", None)])
    (['t.py::a'], ['t.py::b'])
    """
    matched: list[str] = []
    unmatched: list[str] = []
    for nodeid, test in dict.fromkeys(tests):
        (matched if find_entry(baseline, nodeid, test) is not None else unmatched).append(nodeid)
    return matched, unmatched


def few_ids(ids: Sequence[str], count: int = 3) -> str:
    """The first ``count`` ids, and how many more: ``a, b, c (and 4 more)``."""
    shown = ", ".join(ids[:count])
    return shown + (f" (and {len(ids) - count} more)" if len(ids) > count else "")


def _moved_prefix(run_ids: Sequence[str], baseline_ids: Sequence[str]) -> str | None:
    """A path prefix that one side's ids have and the other's lack (the rootdir moved)."""
    for longer, shorter in ((run_ids, baseline_ids), (baseline_ids, run_ids)):
        for long_id in longer:
            for short_id in shorter:
                if long_id.endswith("/" + short_id):
                    return long_id[: -len(short_id)]
    return None


def unmatched_message(
    baseline: Mapping[str, Any],
    run_ids: Sequence[str],
    *,
    source: str,
    rootdir: str = "",
    spaced: bool = False,
) -> str:
    """Why no test of a run matched the baseline: a few ids of each side and the likely cause.

    Parameters
    ----------
    baseline : mapping
        The baseline document.
    run_ids : sequence of str
        The node ids of the run's fairness tests that produced results.
    source : str
        Where the baseline came from.
    rootdir : str
        The run's rootdir (test ids are relative to it).
    spaced : bool
        True when the baseline was given as ``--fairness-baseline PATH`` (a space, no
        ``=``): pytest chooses the rootdir before it knows the option, and takes ``PATH``
        for a test path.
    """
    base_ids = list(baseline.get("tests", {}))
    lines = [
        f"no fairness test of this run matched the baseline {source} (0/{len(run_ids)} "
        "matched): nothing was compared with it.",
        f"  the baseline has: {few_ids(base_ids) or 'no tests'}",
        f"  this run has:     {few_ids(list(run_ids))}",
    ]
    prefix = _moved_prefix(list(run_ids), base_ids)
    where = f" (now {rootdir})" if rootdir else ""
    if prefix is not None:
        lines.append(f"  likely cause: the rootdir moved{where}: one side's test ids start with "
                     f"{prefix!r} and the other's do not. Test ids are relative to the rootdir.")
    else:
        lines.append(f"  likely causes: the rootdir moved{where} (test ids are relative to it), "
                     "or the tests were renamed or moved.")
    if spaced:
        lines.append("  `--fairness-baseline PATH` with a space: pytest chooses the rootdir "
                     "before it knows this option, takes PATH for a test path, and a PATH "
                     "outside the project moves the rootdir. Write --fairness-baseline=PATH "
                     "(or pass --rootdir).")
    lines.append("  If the tests were renamed on purpose, save a new baseline with "
                 "--fairness-save-baseline FILE.json.")
    return "\n".join(lines)


def regression_tally(comparisons: Sequence[Comparison]) -> str:
    """How many comparisons regressed, in how many tests: the same count everywhere.

    The pytest run's summary and ``pytest-fairness compare`` both print it.

    Examples
    --------
    >>> regression_tally([])
    'no regression in 0 comparisons'
    """
    regressed = [c for c in comparisons if c.regressed]
    total = f"{len(comparisons)} comparison{'s' if len(comparisons) != 1 else ''}"
    if not regressed:
        return f"no regression in {total}"
    tests = len({c.test for c in regressed})
    return (f"{len(regressed)} regression{'s' if len(regressed) != 1 else ''} in {tests} "
            f"test{'s' if tests != 1 else ''} ({total})")


# -- comparison ---------------------------------------------------------------------------------


def _reading(summary: Mapping[str, Any], metric: str) -> tuple[str | None, bool, str]:
    """How ``metric`` is read from a summary, and its replicates.

    Returns the stored number (``value``, ``gap`` or ``ratio``; None for ``worst``),
    whether it counts by magnitude, and how reports name it.
    """
    head = headline(str(summary.get("indicator")))
    if metric == "headline":
        return head.field, head.magnitude, head.label
    if metric == "value" and head.magnitude:  # iEAT's d: its sign is a direction
        return "value", True, f"|{summary.get('metric')}|"
    return (None if metric == "worst" else metric), False, ""


def _observe(summary: Mapping[str, Any], metric: str) -> tuple[float | None, str]:
    field, magnitude, label = _reading(summary, metric)
    if field is not None:
        number = finite_or_none(summary.get(field))
        return (abs(number) if magnitude and number is not None else number), label
    worst = summary.get("worst")
    if worst is None:  # no groups: the worst "group" is the whole result
        return finite_or_none(summary.get("value")), ""
    return finite_or_none(worst.get("value")), f"group {worst.get('group')}"


def _direction(metric: str, higher_is_better: bool, indicator: str) -> bool:
    """True when lower is better for ``metric``."""
    if metric == "headline":
        return headline(indicator).lower_is_better
    if metric == "gap":
        return True
    if metric == "ratio":
        return False
    return not higher_is_better


#: Params of the bootstrap: a change in them is the pairing note's business, not a change
#: in how the number was computed.
_BOOTSTRAP_PARAMS: Final = frozenset({"seed", "n_bootstrap", "confidence_level",
                                      "interval_method", "bootstrap_plan"})


def _param_notes(base: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    base_params, now_params = base.get("params") or {}, now.get("params") or {}
    changed = sorted(k for k in (set(base_params) | set(now_params)) - _BOOTSTRAP_PARAMS
                     if base_params.get(k) != now_params.get(k))
    if not changed:
        return []
    shown = ", ".join(f"{k}: {base_params.get(k)!r} → {now_params.get(k)!r}" for k in changed[:5])
    more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
    return [f"computed differently from the baseline ({shown}{more}); the comparison may "
            "not be like for like"]


def _replicates(summary: Mapping[str, Any], metric: str, where: str) -> Any:
    """The replicates of ``metric`` (read as :func:`_observe` reads it), or None."""
    packed = summary.get("replicates")
    name, magnitude, _ = _reading(summary, metric)
    if name is None or not isinstance(packed, Mapping) or name not in packed:
        return None
    import numpy as np

    from pytest_fairness.results import unpack_replicates

    values = np.array(unpack_replicates(packed[name], where=f"{where}['replicates'][{name!r}]"))
    return np.abs(values) if magnitude else values


def _pairing(base: Mapping[str, Any], now: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether two results' replicates were drawn on the same units, and how to say it."""
    b, n = base.get("params") or {}, now.get("params") or {}
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
    base: Mapping[str, Any], now: Mapping[str, Any], metric: str, lower_is_better: bool,
    where: str,
) -> tuple[tuple[float, float] | None, bool | None, str]:
    """The interval of how much worse ``now`` is, whether it is paired, and a note."""
    before, after = _replicates(base, metric, where), _replicates(now, metric, where)
    if before is None or after is None:
        side = "baseline" if before is None else "run"
        return None, None, (f"no bootstrap replicates of {metric} in the {side}: compute the "
                            "indicator with n_bootstrap=1000 and a fixed seed= (and save the "
                            "baseline again) to judge the change with an interval")
    import numpy as np

    paired, note = _pairing(base, now)
    if not paired:  # independent draws: break any alignment the two orders may share
        before = before[np.random.default_rng(0).permutation(before.size)]
    size = min(before.size, after.size)
    change = after[:size] - before[:size]
    change = change[~np.isnan(change)]
    if change.size < 2:
        return None, None, f"too few defined replicates of {metric} for an interval"
    level = float((now.get("params") or {}).get("confidence_level") or 0.95)
    low, high = np.quantile(change if lower_is_better else -change,
                            [(1 - level) / 2, (1 + level) / 2])
    return (float(low), float(high)), paired, f"{level:.0%} interval {note}"


def compare_results(
    base: Mapping[str, Any],
    now: Mapping[str, Any],
    tolerances: Mapping[str, float],
    *,
    test: str = "",
    result: str = "",
    confidence: str | Mapping[str, str] = "point",
) -> list[Comparison]:
    """Compare two result summaries on each metric of ``tolerances``.

    The summaries are :func:`pytest_fairness.results.summarize` output. ``confidence`` is
    the rule of every metric, or one per metric (default ``"point"``); the interval of
    the change is computed whenever both summaries carry bootstrap replicates.

    Examples
    --------
    >>> base = {"gap": 0.10, "value": 0.8, "higher_is_better": True, "groups": {}}
    >>> now = {"gap": 0.25, "value": 0.8, "higher_is_better": True, "groups": {}}
    >>> [(c.metric, c.regressed) for c in compare_results(base, now, {"gap": 0.01})]
    [('gap', True)]
    """
    for metric in tolerances:
        if metric not in COMPARE_METRICS:
            raise FairnessConfigError(
                f"cannot compare metric={metric!r}; metrics: {', '.join(COMPARE_METRICS)}."
            )
    higher = bool(now.get("higher_is_better", True))
    notes = _param_notes(base, now)
    if bool(base.get("higher_is_better", True)) != higher:
        notes.append("the metric's direction differs from the baseline's")
    base_groups, now_groups = base.get("groups") or {}, now.get("groups") or {}
    labels = list(base_groups) + [g for g in now_groups if g not in base_groups]
    groups = tuple(
        (label, finite_or_none((base_groups.get(label) or {}).get("value")),
         finite_or_none((now_groups.get(label) or {}).get("value")))
        for label in labels
    )
    out = []
    for metric, tolerance in tolerances.items():
        before, _ = _observe(base, metric)
        after, where = _observe(now, metric)
        mine = list(notes)
        if before is None or after is None:
            head = headline(str(now.get("indicator")))
            hint = (f"; {now.get('indicator')} has no gap, track its headline ({head.label}) "
                    "with metric='headline'" if metric in ("gap", "ratio") and not
                    head.has_gap else "")
            side = "baseline and run" if before is None and after is None else (
                "baseline" if before is None else "run")
            mine.append(f"{metric} is undefined in the {side}{hint}: cannot be compared, "
                        "counted as a regression")
        lower = _direction(metric, higher, str(now.get("indicator")))
        rule = confidence if isinstance(confidence, str) else confidence.get(metric, "point")
        interval, paired, note = _change_interval(base, now, metric, lower,
                                                  f"{test} :: {result}")
        if interval is not None or rule != "point":
            mine.append(note)
        out.append(Comparison(test, result, metric, before, after, float(tolerance), lower,
                              higher, groups, tuple(mine), where, rule, interval, paired))
    return out


def compare_baselines(
    base: Mapping[str, Any], now: Mapping[str, Any], tolerances: Mapping[str, float],
    *, confidence: str = "point",
) -> tuple[list[Comparison], list[str]]:
    """Compare every result present in both documents; also list what only one side has."""
    out: list[Comparison] = []
    missing: list[str] = []
    for nodeid, entry in now.get("tests", {}).items():
        old = find_entry(base, nodeid, entry.get("test"))
        if old is None:
            missing.append(f"new test (not in the baseline): {nodeid}")
            continue
        for rid, summary in entry.get("results", {}).items():
            if rid not in old.get("results", {}):
                missing.append(f"new result (not in the baseline): {nodeid} :: {rid}")
                continue
            out.extend(compare_results(old["results"][rid], summary, tolerances,
                                       test=nodeid, result=rid, confidence=confidence))
    for nodeid, entry in base.get("tests", {}).items():
        if find_entry(now, nodeid, entry.get("test")) is None:
            missing.append(f"missing test (in the baseline only): {nodeid}")
    return out, missing


def compare_test(
    baseline: Mapping[str, Any] | None,
    *,
    nodeid: str,
    test: str,
    results: Sequence[Mapping[str, Any]],
    compare_fail: Mapping[str, float],
    marks: Sequence[Mapping[str, Any]],
    source: str = "",
    compare_confidence: str = "point",
) -> tuple[list[Comparison], list[str]]:
    """The regression rule of one test: compare its results with the baseline entry.

    Each result is compared on the metrics of ``--fairness-compare-fail`` (judged by
    ``--fairness-compare-confidence``) and of the test's validated
    ``fairness.no_regression`` marks (a mark applies to every result, or to the one its
    ``result`` names). When several rules name a metric, the most demanding wins: the
    smaller tolerance, then ``strict`` over ``point`` over ``supported``.

    Parameters
    ----------
    baseline : mapping or None
        The baseline document, or None when the run has none.
    nodeid, test : str
        The test's node id, and its id without the checkpoint parameter.
    results : sequence of mapping
        The test's results (``IndicatorResult.to_dict()`` with ``key``).
    compare_fail : mapping
        Tolerance per metric from ``--fairness-compare-fail``.
    marks : sequence of mapping
        The validated keywords of each ``fairness_regression`` mark.
    source : str
        Where the baseline came from, for the notes.

    Returns
    -------
    (list of Comparison, list of str)
        The comparisons, and notes on what could not be compared.
    """
    if not marks and not compare_fail:
        return [], []
    if baseline is None:
        return [], ["fairness.no_regression: no baseline to compare with; pass "
                    "--fairness-baseline FILE.json|RUN_ID|CHECKPOINT."]
    entry = find_entry(baseline, nodeid, test)
    if entry is None:
        return [], [f"not in the baseline {source}: not compared."]
    comparisons: list[Comparison] = []
    notes: list[str] = []
    for data in results:
        rid = result_id(data)
        rules = {metric: (tolerance, compare_confidence)
                 for metric, tolerance in compare_fail.items()}
        for mark in marks:
            if mark.get("result") in (None, data.get("key"), data["name"]):
                mine = (mark["tolerance"], mark.get("confidence", "point"))
                rules[mark["metric"]] = min(rules.get(mark["metric"], mine), mine,
                                            key=lambda r: (r[0], _LENIENCE[r[1]]))
        if not rules:
            continue
        old = entry.get("results", {}).get(rid)
        if old is None:
            notes.append(f"{rid}: not in the baseline {source}: not compared.")
            continue
        comparisons.extend(compare_results(
            old, summarize(data), {m: r[0] for m, r in rules.items()}, test=nodeid,
            result=rid, confidence={m: r[1] for m, r in rules.items()}))
    return comparisons, notes


#: How readily each rule accepts a change (lower: more demanding).
_LENIENCE: Final = {"strict": 0, "point": 1, "supported": 2}


def compare_checkpoints(
    records: Iterable[Mapping[str, Any]],
    checkpoints: Sequence[str],
    tolerances: Mapping[str, float],
    *,
    reference: str | None = None,
    confidence: str = "point",
) -> list[Comparison]:
    """Compare each checkpoint of a run with the ``reference`` one (default the first).

    The records are the plugin's (``nodeid``, ``test``, ``checkpoint``, ``results``), in
    any order (they arrive as tests finish); a test's record at the reference checkpoint is
    the baseline of its records at every other checkpoint, result by result
    (:func:`compare_results`). Tests come by id, each test's checkpoints in the order of
    ``checkpoints``. Both sides were evaluated on the same images, so with intervals drawn
    under one seed every change is paired.

    Examples
    --------
    >>> def rec(ckpt, gap):
    ...     return {"nodeid": f"t.py::test[{ckpt}]", "test": "t.py::test", "checkpoint": ckpt,
    ...             "results": [{"name": "x", "metric": "m", "value": 0.5, "schema": 1,
    ...                          "key": None, "groups": [
    ...                              {"group": "a", "n": 50, "value": 0.5},
    ...                              {"group": "b", "n": 50, "value": 0.5 - gap}]}]}
    >>> [(c.test, round(c.worse_by, 3)) for c in compare_checkpoints(
    ...     [rec("e3", 0.05), rec("e2", 0.25), rec("e1", 0.1)], ["e1", "e2", "e3"],
    ...     {"gap": 0.0})]
    [('t.py::test[e2]', 0.15), ('t.py::test[e3]', -0.05)]
    """
    reference = checkpoints[0] if reference is None else reference
    given = {c: i for i, c in enumerate(checkpoints)}
    by_test: dict[str, dict[str, Mapping[str, Any]]] = {}
    for record in sorted(records, key=lambda r: (str(r.get("test") or r["nodeid"]),
                                                 given.get(str(r.get("checkpoint")),
                                                           len(given)))):
        if record.get("checkpoint") is not None and record.get("results"):
            by_test.setdefault(str(record.get("test") or record["nodeid"]), {})[
                str(record["checkpoint"])] = record
    out: list[Comparison] = []
    for runs in by_test.values():
        base = runs.get(reference)
        if base is None:
            continue
        before = {result_id(d): summarize(d) for d in base["results"]}
        for checkpoint, record in runs.items():
            if checkpoint == reference:
                continue
            for data in record["results"]:
                rid = result_id(data)
                if rid in before:
                    out.extend(compare_results(before[rid], summarize(data), tolerances,
                                               test=str(record["nodeid"]), result=rid,
                                               confidence=confidence))
    return out


def resolve_baseline(
    ref: str, history: str | os.PathLike[str] | None
) -> tuple[dict[str, Any], str]:
    """Load a baseline from a JSON file (a baseline or a ``report.json``) or the history store.

    ``ref`` is a file path, or a run id, run label or checkpoint name looked up in the
    store at ``history``. Returns the baseline document and a description of its source.

    Raises
    ------
    FairnessConfigError
        When the reference matches nothing; the message says what was tried.
    """
    path = Path(ref)
    if path.suffix.lower() == ".json" or _is_file(path):
        document = _read(path, "baseline")
        if isinstance(document, dict) and document.get("format") == "pytest-fairness-report":
            return _from_report(path), str(path)
        return validate_baseline(document, source=str(path)), str(path)
    if history is None or not _is_file(Path(history)):
        raise FairnessConfigError(
            f"baseline {ref!r} is not a file, and there is no history store at "
            f"{str(history)!r} to look it up as a run id, label or checkpoint. Give a baseline "
            "JSON file, or point --fairness-history at the store."
        )
    from pytest_fairness.history import HistoryStore

    with HistoryStore(history, read_only=True) as store:
        run_id, checkpoint = store.resolve(ref)
        records = store.records(run_id, checkpoint=checkpoint)
        run = store.run(run_id)
    metadata = {k: run.get(k) for k in ("started", "label", "checkpoint", "git_commit")}
    source = f"run {run_id}" + (f" (checkpoint {checkpoint})" if checkpoint else "")
    if run.get("label") or run.get("checkpoint"):
        source += f" [{run.get('label') or run.get('checkpoint')}]"
    return build_baseline(records, metadata={**metadata, "run_id": run_id}), source


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a path we may not look at counts as absent; the message names it
        return False


def _from_report(path: Path) -> dict[str, Any]:
    """A baseline built from a ``report.json`` (already read strictly once)."""
    from pytest_fairness.report.json_report import load_report

    report = load_report(path)
    tests = report.get("tests")
    try:
        if not isinstance(tests, list):
            raise TypeError(f"'tests' is {type(tests).__name__}, not a list")
        document = build_baseline(tests, metadata=report.get("run") or {})
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as error:
        raise FairnessConfigError(
            f"report {str(path)!r} is damaged or was edited: its results do not rebuild "
            f"({type(error).__name__}: {error}); write it again with `pytest --fairness "
            "--fairness-report DIR`."
        ) from None
    return validate_baseline(document, source=str(path))
