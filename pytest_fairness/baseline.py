"""Committable baselines: the file format, and where a baseline comes from.

A baseline is a JSON document (sorted keys, indented: a changed number is a one-line diff)
with one :class:`~pytest_fairness.records.BaselineEntry` per test id; it can also be read
from a ``report.json`` or a run of the history (:func:`resolve_baseline`). The format and
its use are in "CI gating and history" (``docs/ci-and-history.md``); comparing is
:mod:`pytest_fairness.regression`'s business.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_fairness.errors import FairnessConfigError
from pytest_fairness.files import REPORT_FORMAT, atomic_write_text, load_report
from pytest_fairness.records import (
    BASELINE_FORMAT,
    BASELINE_SCHEMA,
    REGENERATE,
    Baseline,
    BaselineEntry,
    ResultSummary,
    TestRecord,
)
from pytest_fairness.results import unpack_replicates

__all__ = [
    "BASELINE_FORMAT", "BASELINE_SCHEMA", "build_baseline", "dump_baseline", "few_ids",
    "find_entry", "load_baseline", "match_baseline", "not_compared_message", "resolve_baseline",
    "save_baseline", "unmatched_message", "update_command", "validate_baseline",
]


def build_baseline(records: Iterable[TestRecord], *, metadata: Mapping[str, object] | None = None,
                   previous: Baseline | None = None, saved: str | None = None) -> Baseline:
    """Build a baseline from the run's per-test records.

    Parameters
    ----------
    records : iterable of TestRecord
        One per test; those without results are left out.
    metadata : mapping, optional
        Run metadata to keep (time, git commit, checkpoint, ...).
    previous : Baseline, optional
        An existing baseline: its entries for tests not in ``records`` are kept, so a run
        of a subset (``-k``) updates only what it ran; a test it has keeps its origin (the
        numbers and date its entry started from, which a drift budget reads).
    saved : str, optional
        The date of this save, kept in each entry written.
    """
    tests = dict(previous.tests) if previous is not None else {}
    for record in records:
        if record.results:
            entry = replace(BaselineEntry.of(record), saved=saved)
            tests[record.nodeid] = replace(entry, origin=_origin(tests.get(record.nodeid), entry))
    return Baseline(tests, dict(metadata or {}))


def _origin(old: BaselineEntry | None, new: BaselineEntry) -> BaselineEntry | None:
    """The origin a re-saved entry keeps: the old entry's origin, else the old entry itself.

    A new test starts its own origin (None); a result the origin lacks starts there now.
    """
    if old is None:
        return None
    origin = old.origin or BaselineEntry(results=old.results, saved=old.saved)
    results = {**{rid: s for rid, s in new.results.items() if rid not in origin.results},
               **origin.results}
    return BaselineEntry(results={rid: replace(s, replicates={}) for rid, s in results.items()},
                         saved=origin.saved)


def dump_baseline(baseline: Baseline) -> str:
    """Serialise a baseline deterministically: sorted keys, two-space indent, final newline."""
    return json.dumps(baseline.to_dict(), indent=2, sort_keys=True, ensure_ascii=False,
                      allow_nan=False) + "\n"


def save_baseline(path: str | os.PathLike[str], records: Iterable[TestRecord], *,
                  metadata: Mapping[str, object] | None = None, merge: bool = True) -> Path:
    """Write (or update, with ``merge``) a baseline file atomically and return its path."""
    target = Path(path)
    previous = load_baseline(target) if merge and target.exists() else None
    return atomic_write_text(target, dump_baseline(build_baseline(
        records, metadata=metadata, previous=previous, saved=time.strftime("%Y-%m-%d"))))


def _read(path: Path, what: str) -> Any:
    """A JSON file read strictly (UTF-8, bounded nesting, no NaN): FairnessConfigError if not."""
    from pytest_fairness.data.jsonfile import read_json
    from pytest_fairness.errors import InvalidDataError

    if not path.is_file():
        raise FairnessConfigError(f"{what} file {str(path)!r} does not exist; write one with "
                                  "`pytest --fairness --fairness-save-baseline FILE.json`.")
    try:
        return read_json(path, what=f"{what} file")
    except InvalidDataError as error:
        raise FairnessConfigError(f"{error} {REGENERATE}") from None


def load_baseline(path: str | os.PathLike[str]) -> Baseline:
    """Read a baseline file strictly (UTF-8, nesting bounded, no ``NaN``) and check every entry.

    Raises
    ------
    FairnessConfigError
        When the file is missing, unreadable, not JSON, not a baseline, has a newer schema,
        or holds a value of the wrong type (the message names the key).
    """
    return validate_baseline(_read(Path(path), "baseline"), source=str(Path(path)))


def validate_baseline(document: Any, *, source: str = "<baseline>") -> Baseline:
    """Check a baseline document (:meth:`Baseline.from_dict`) and return it decoded.

    Raises
    ------
    FairnessConfigError
        Naming the file, the key (``['tests']['t.py::a']['results']['x']['gap']``), the
        value found and how to regenerate the baseline.
    """
    _check_format(document, source)
    baseline = Baseline.from_dict(document, source=source)
    _check_consistent(baseline, source)
    return baseline


def _check_format(document: Any, source: str) -> None:
    """A baseline document of this format and a schema this code reads (1: no origins)."""
    if not isinstance(document, dict) or document.get("format") != BASELINE_FORMAT:
        got = document.get("format") if isinstance(document, dict) else type(document).__name__
        raise FairnessConfigError(
            f"{source!r} is not a pytest-fairness baseline (format={got!r}, expected "
            f"{BASELINE_FORMAT!r}); write one with --fairness-save-baseline.")
    schema = document.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool) or schema < 1:
        raise FairnessConfigError(f"{source!r} has an invalid schema={schema!r}; "
                                  "regenerate it with --fairness-save-baseline.")
    if schema > BASELINE_SCHEMA:
        raise FairnessConfigError(f"{source!r} has schema={schema}, newer than this "
                                  f"pytest-fairness understands ({BASELINE_SCHEMA}); "
                                  "upgrade pytest-fairness.")
    if not isinstance(document.get("tests"), dict):
        raise FairnessConfigError(f"{source!r} has no 'tests' mapping; regenerate it.")


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-12


def _inconsistency(summary: ResultSummary, where: str) -> str | None:
    """What in a result's numbers contradicts the rest, or None (:func:`validate_baseline`)."""
    values = [g.value for g in summary.groups.values() if not g.excluded]
    defined = [v for v in values if v is not None]
    if len(defined) >= 2 and len(defined) == len(values):
        low, high = min(defined), max(defined)
        ratio = None if low < 0 else 1.0 if high == 0 else low / high
        for name, stored, expected in (("gap", summary.gap, high - low),
                                       ("ratio", summary.ratio, ratio)):
            if stored is not None and expected is not None and not _close(stored, expected):
                how = "max − min" if name == "gap" else "min / max"
                return (f"its {name} {stored!r} is not {how} of its included group values "
                        f"({expected!r})")
    points = {"value": summary.value, "gap": summary.gap, "ratio": summary.ratio,
              **summary.stats}
    n_bootstrap = summary.params.get("n_bootstrap")
    for name, text in summary.replicates.items():
        draws = unpack_replicates(text, where=f"{where}['replicates'][{name!r}]")
        if isinstance(n_bootstrap, int) and len(draws) != n_bootstrap:
            return (f"it has {len(draws)} {name} replicates, but its params say "
                    f"n_bootstrap={n_bootstrap}")
        finite = sorted(v for v in draws if math.isfinite(v))
        point = points.get(name)
        if point is None or not math.isfinite(point) or not finite:
            continue
        low, high = finite[int(0.001 * (len(finite) - 1))], finite[-1 - int(0.001 * (
            len(finite) - 1))]
        slack = max(high - low, 1e-6 * max(1.0, abs(point)))  # float32 replicates
        if not low - slack <= point <= high + slack:
            return (f"its {name} {point!r} lies far outside its bootstrap replicates "
                    f"([0.1 %, 99.9 %] range [{low:.6g}, {high:.6g}])")
    return None


def _check_consistent(baseline: Baseline, source: str) -> None:
    """Every entry's numbers agree with one another, and no two share a stat's replicates.

    Two entries whose stat of one name has the same replicates but another value were
    copied from one another; replicates that never vary (a perfect group's 1.0) and stats
    of other names (a group's worst value, the lowest group's) may legitimately agree.

    Raises
    ------
    FairnessConfigError
        Naming the file, the test, the result and what contradicts what.
    """
    seen: dict[tuple[str, object], tuple[str, float | None]] = {}
    for nodeid, entry in baseline.tests.items():
        for rid, summary in entry.results.items():
            where = f"{nodeid} :: {rid}"
            problem = _inconsistency(summary, where)
            points = {"value": summary.value, "gap": summary.gap, "ratio": summary.ratio,
                      **summary.stats}
            for name, text in summary.replicates.items():
                first = seen.setdefault((name, text), (where, points.get(name)))
                if problem is None and first[0] != where and first[1] != points.get(name) and \
                        len({v for v in unpack_replicates(text) if math.isfinite(v)}) > 1:
                    problem = (f"its {name} replicates are those of {first[0]}, whose {name} "
                               f"is another ({first[1]!r}, here {points.get(name)!r})")
            if problem is not None:
                raise FairnessConfigError(
                    f"baseline {source!r}: {where}: {problem}. The numbers contradict one "
                    "another: the file was edited or damaged. Save the baseline again with "
                    f"`pytest --fairness --fairness-save-baseline {source}`.")


def find_entry(baseline: Baseline, nodeid: str, test: str | None = None) -> BaselineEntry | None:
    """The baseline entry of a test: by node id, else by its checkpoint-free test id if unique."""
    return baseline.entry(nodeid, test)


def match_baseline(baseline: Baseline, tests: Iterable[tuple[str, str | None]]
                   ) -> tuple[list[str], list[str]]:
    """Which tests of a run the baseline has an entry for (:meth:`Baseline.entry`).

    ``tests`` are ``(nodeid, test)`` pairs, ``test`` being the node id without the
    checkpoint parameter. Returns the node ids matched and those not, each once.

    Examples
    --------
    >>> base = Baseline({"t.py::a": BaselineEntry("t.py::a")})
    >>> match_baseline(base, [("t.py::a", None), ("t.py::b", None)])
    (['t.py::a'], ['t.py::b'])
    """
    matched: list[str] = []
    unmatched: list[str] = []
    for nodeid, test in dict.fromkeys(tests):
        (matched if baseline.entry(nodeid, test) is not None else unmatched).append(nodeid)
    return matched, unmatched


def few_ids(ids: Sequence[str], count: int = 3) -> str:
    """The first ``count`` ids, and how many more: ``a, b, c (and 4 more)``."""
    return ", ".join(ids[:count]) + (f" (and {len(ids) - count} more)" if len(ids) > count else "")


def _moved_prefix(run_ids: Sequence[str], baseline_ids: Sequence[str]) -> str | None:
    """A path prefix that one side's ids have and the other's lack (the rootdir moved)."""
    pairs = [*itertools.product(run_ids, baseline_ids), *itertools.product(baseline_ids, run_ids)]
    return next((long[: -len(short)] for long, short in pairs if long.endswith("/" + short)), None)


def unmatched_message(baseline: Baseline, run_ids: Sequence[str], *, source: str,
                      rootdir: str = "", spaced: bool = False) -> str:
    """Why no test of a run matched the baseline: a few ids of each side and the likely cause.

    Parameters
    ----------
    baseline, run_ids : Baseline, sequence of str
        The baseline; the node ids of the run's fairness tests that produced results.
    source, rootdir : str
        Where the baseline came from; the run's rootdir (test ids are relative to it).
    spaced : bool
        The baseline was given as ``--fairness-baseline PATH`` (a space: pytest takes
        ``PATH`` for a test path when it chooses the rootdir).
    """
    base_ids = list(baseline.tests)
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


def update_command(ref: str) -> str:
    """How to update the baseline ``--fairness-baseline REF`` names (a file, or a run)."""
    if Path(ref).suffix.lower() == ".json" or _is_file(Path(ref)):
        return (f"`pytest --fairness --fairness-save-baseline {ref}` (without "
                "--fairness-baseline: a failing run does not overwrite the baseline it compared "
                "with)")
    return ("record a run to compare with, without the gate (`pytest --fairness "
            "--fairness-run-label LABEL`), or save a baseline file with `pytest --fairness "
            "--fairness-save-baseline FILE.json`")


def not_compared_message(notes: Sequence[str], ref: str) -> str:
    """A gate that reached no verdict: the ``not compared: ...`` notes and the fix, one a line.

    Examples
    --------
    >>> print(not_compared_message(["not compared: t.py::a :: acc (why)"], "b.json"))
    not compared: t.py::a :: acc (why); if the change is intended, update the baseline: \
`pytest --fairness --fairness-save-baseline b.json` (without --fairness-baseline: a failing \
run does not overwrite the baseline it compared with)
    """
    return "\n".join([f"{notes[0]}; if the change is intended, update the baseline: "
                      f"{update_command(ref)}", *notes[1:]])


def resolve_baseline(ref: str, history: str | os.PathLike[str] | None, *,
                     passed: bool = False) -> tuple[Baseline, str]:
    """Load a baseline from a JSON file (a baseline or a ``report.json``) or the history store.

    ``ref`` is a file path, or a run id, run label or checkpoint name looked up in the
    store at ``history`` (``run:ID``, ``label:NAME``, ``checkpoint:NAME`` say which): with
    ``passed``, the latest run it names that passed
    (:meth:`~pytest_fairness.history.HistoryStore.resolve`). Returns the baseline and a
    description of its source; the baseline's ``metadata["chosen"]`` says which run a
    reference chose, and why.

    Raises
    ------
    FairnessConfigError
        When the reference matches nothing, or two things, or (``passed``) only runs that
        did not pass; the message says what was tried and how to pick.
    """
    path = Path(ref)
    if path.suffix.lower() == ".json" or _is_file(path):
        document = _read(path, "baseline")
        if isinstance(document, dict) and document.get("format") == REPORT_FORMAT:
            return _from_report(path), str(path)
        return validate_baseline(document, source=str(path)), str(path)
    if history is None or not _is_file(Path(history)):
        raise FairnessConfigError(
            f"baseline {ref!r} is not a file, and there is no history store at "
            f"{str(history)!r} to look it up as a run id, label or checkpoint. Give a baseline "
            "JSON file, or point --fairness-history at the store.")
    from pytest_fairness.history import HistoryStore

    with HistoryStore(history, read_only=True) as store:
        run_id, checkpoint = store.resolve(ref, passed=passed)
        _, found = store.matches(ref)
        records = store.records(run_id, checkpoint=checkpoint)
        run = store.run(run_id)
    metadata = {k: run.get(k) for k in ("started", "label", "checkpoint", "git_commit")}
    source = f"run {run_id}" + (f" (checkpoint {checkpoint})" if checkpoint else "")
    if run.get("label") or run.get("checkpoint"):
        source += f" [{run.get('label') or run.get('checkpoint')}]"
    newer = [f"run {i} (exit {s})" for i, _, s in found if i > run_id and s != 0]
    chosen = f"{ref} is {source}" + (
        f", the latest run it names that passed (newer, not passed: {few_ids(newer)})"
        if newer else "" if run.get("exitstatus") == 0 or not passed else
        f" (exit {run.get('exitstatus')}: chosen explicitly)")
    return build_baseline(records, metadata={**metadata, "run_id": run_id, "chosen": chosen},
                          saved=str(run.get("started") or "")[:10] or None), source


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a path we may not look at counts as absent; the message names it
        return False


def _from_report(path: Path) -> Baseline:
    """A baseline built from a ``report.json`` (already read strictly once)."""
    report = load_report(path)
    tests = report.get("tests")
    try:
        if not isinstance(tests, list):
            raise TypeError(f"'tests' is {type(tests).__name__}, not a list")
        # Only what a baseline keeps is decoded, as a baseline file would be.
        records = [TestRecord.from_dict(
            {k: t[k] for k in ("nodeid", "test", "checkpoint", "outcome", "results") if k in t}
            if isinstance(t, dict) else t, f"['tests'][{i}]") for i, t in enumerate(tests)]
        baseline = build_baseline(records, metadata=report.get("run") or {})
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as error:
        raise FairnessConfigError(
            f"report {str(path)!r} is damaged or was edited: its results do not rebuild "
            f"({type(error).__name__}: {error}); write it again with `pytest --fairness "
            "--fairness-report DIR`.") from None
    return validate_baseline(baseline.to_dict(), source=str(path))
