"""The ``pytest-fairness`` command: read the history and baselines without running tests.

::

    pytest-fairness history [--metric gap] [--last 20]        # tests × checkpoints table
    pytest-fairness compare A B [--fail gap:0.01,value:0.02]  # exit 1 on a regression
    pytest-fairness report RUN --html DIR                     # rebuild a run's report

``A``, ``B`` and ``RUN`` are baseline JSON files (or ``report.json`` files), run ids, run
labels or checkpoint names in the history store (``--history PATH``, default
``.fairness/history.sqlite``). ``compare`` is a CI merge gate that runs no tests: exit 0
when nothing regressed, 1 when something did, 2 on a usage error (a missing, damaged or
unreadable store or baseline, an output folder that cannot be written).

The command only reads the store: it opens it read-only, never switches it to WAL or
migrates it, so a store on a read-only disk or owned by another user can be read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from pytest_fairness.errors import FairnessConfigError, FairnessError
from pytest_fairness.indicators import headline
from pytest_fairness.options import COMPARE_METRICS, parse_compare_fail, parse_run_ref

__all__ = ["main"]

EXIT_OK: Final = 0
EXIT_REGRESSION: Final = 1
EXIT_USAGE: Final = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pytest-fairness",
        description="Read pytest-fairness history and baselines without running tests.",
    )
    parser.add_argument("--history", metavar="PATH",
                        default=str(Path(".fairness", "history.sqlite")),
                        help="history store (default: %(default)s)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    history = commands.add_parser("history", help="table of tests × checkpoints (runs)")
    history.add_argument("--metric", choices=COMPARE_METRICS, default="headline",
                         help="number shown per cell (default: %(default)s)")
    history.add_argument("--last", type=int, default=20, metavar="N",
                         help="show the last N runs (default: %(default)s)")

    compare = commands.add_parser("compare",
                                  help="compare B with baseline A; exit 1 on a regression")
    compare.add_argument("a", type=parse_run_ref, metavar="A", help="the baseline")
    compare.add_argument("b", type=parse_run_ref, metavar="B", help="the candidate")
    compare.add_argument("--fail", type=parse_compare_fail, default={"headline": 0.0},
                         metavar="METRIC:TOL[,...]",
                         help="what counts as a regression: a tolerance on each "
                              "indicator's headline, or metric:tolerance pairs (default: 0)")

    report = commands.add_parser("report", help="write report.json and report.html of a run")
    report.add_argument("run", type=parse_run_ref, metavar="RUN",
                        help="run id, label or checkpoint in the history")
    report.add_argument("--html", required=True, metavar="DIR", help="output directory")
    return parser


def _history(args: argparse.Namespace) -> int:
    from pytest_fairness.history import HistoryStore
    from pytest_fairness.report.terminal import format_number, text_table

    path = _store_path(args)
    if args.last < 1:
        raise FairnessConfigError(f"--last must be >= 1; got --last={args.last}.")
    with HistoryStore(path, read_only=True) as store:
        rows = store.series(last=args.last)
    if not rows:
        print(f"no fairness results in {path}")
        return EXIT_OK
    columns: list[tuple[int, str]] = []
    for row in rows:
        if (row["run_id"], row["column"]) not in columns:
            columns.append((row["run_id"], row["column"]))
    names = [c for _, c in columns]
    labels = [c if names.count(c) == 1 else f"{c}#{r}" for r, c in columns]
    field = {"worst": "worst_value"}.get(args.metric, args.metric)
    cells: dict[str, dict[int, str]] = {}
    for row in rows:
        test = f"{row['test']} :: {row['result_id']}"
        if field == "headline":
            value = headline(row["indicator"]).read(row["value"], row["gap"])
        else:
            value = row[field] if row[field] is not None or field != "worst_value" else row[
                "value"]
        mark = "" if row["outcome"] in (None, "passed") else " !"
        cells.setdefault(test, {})[columns.index((row["run_id"], row["column"]))] = (
            format_number(value) + mark)
    table = [[test, *(by.get(i, "-") for i in range(len(columns)))]
             for test, by in cells.items()]
    print(f"{args.metric} per test (rows) and checkpoint or run (columns); ! = test failed")
    for line in text_table(["test", *labels], table, indent=""):
        print(line)
    return EXIT_OK


def _store_path(args: argparse.Namespace) -> Path:
    path = Path(args.history)
    if not path.is_file():
        raise FairnessConfigError(
            f"no history store at {str(path)!r}; run `pytest --fairness` first, or pass "
            "--history PATH."
        )
    return path


def _output_folder(text: str) -> Path:
    """The ``--html`` folder, created; a folder that cannot be written is a usage error."""
    folder = Path(text)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise FairnessConfigError(
            f"--html {text!r}: cannot write the report there ({error.strerror or error}); pass "
            "a folder you can write, e.g. --html fairness-report."
        ) from None
    return folder


def _baseline(ref: str, history: str) -> tuple[dict[str, Any], str]:
    from pytest_fairness.baseline import resolve_baseline

    return resolve_baseline(ref, history)


def _compare(args: argparse.Namespace) -> int:
    from pytest_fairness.baseline import compare_baselines
    from pytest_fairness.report.terminal import regression_message

    base, base_source = _baseline(args.a, args.history)
    now, now_source = _baseline(args.b, args.history)
    comparisons, missing = compare_baselines(base, now, args.fail)
    tolerances = ", ".join(f"{k}:{v:g}" for k, v in args.fail.items())
    print(f"compare {now_source} with the baseline {base_source} ({tolerances})")
    for line in missing:
        print(f"  {line}")
    regressed = [c for c in comparisons if c.regressed]
    if regressed:
        print(regression_message(comparisons, source=base_source))
        return EXIT_REGRESSION
    print(f"no regression: {len(comparisons)} comparison{'s' if len(comparisons) != 1 else ''} "
          "within tolerance")
    return EXIT_OK


def _report(args: argparse.Namespace) -> int:
    from pytest_fairness.history import HistoryStore
    from pytest_fairness.report.html import write_html
    from pytest_fairness.report.json_report import build_report, write_json

    path = _store_path(args)
    with HistoryStore(path, read_only=True) as store:
        run_id, checkpoint = store.resolve(args.run)
        run = store.run(run_id)
        records = store.records(run_id, checkpoint=checkpoint)
        trends = store.series(last=20)
    metadata = {k: v for k, v in run.items() if k not in ("id", "metadata", "n_results")}
    metadata.update(run.get("metadata") or {})
    metadata["history_run_id"] = run_id
    document = build_report(records, run=metadata)
    folder = _output_folder(args.html)
    try:
        write_json(document, folder)
        page = write_html(document, folder, trends=trends)
    except OSError as error:
        raise FairnessConfigError(
            f"--html {args.html!r}: cannot write the report ({error}); pass a folder you can "
            "write."
        ) from None
    print(f"fairness report of run {run_id}: {page}")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status (0 ok, 1 regression, 2 usage error)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "history":
            return _history(args)
        if args.command == "compare":
            return _compare(args)
        return _report(args)
    except FairnessError as error:  # a bad argument, or a missing or damaged store or file
        print(f"pytest-fairness {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
