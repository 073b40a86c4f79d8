"""The ``pytest-fairness`` command: read the history and baselines without running tests.

``runs``, ``history``, ``compare A B`` (a CI merge gate: exit 0, 1 on a regression, 2 on a
usage error) and ``report RUN --html DIR`` only read the store, opened read-only; ``extract``
writes a model's features as Parquet shards. See docs/ci-and-history.md and docs/scale.md.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from pytest_fairness import options
from pytest_fairness.errors import FairnessConfigError, FairnessError

if TYPE_CHECKING:
    from pytest_fairness.history import HistoryStore
    from pytest_fairness.readings import Reading

__all__ = ["ROOT_MARKERS", "find_history", "main"]


#: Files that mark a project's top for pytest's rootdir (``.git``: the search stops there).
ROOT_MARKERS: Final = ("pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", ".git")


#: The most runs ``--last`` may ask for (SQLite's LIMIT takes a 64-bit integer).
MAX_LAST: Final = 1_000_000_000


def find_history(start: Path | None = None) -> Path:
    """The nearest ``.fairness/`` store up to the project's top, else by the nearest marker."""
    here = (start or Path.cwd()).resolve()
    chain = [here, *here.parents]
    marked = [f for f in chain if any((f / name).exists() for name in ROOT_MARKERS)]
    top = next((f for f in chain if (f / ".git").exists()), marked[-1] if marked else here)
    found = [f for f in chain[: chain.index(top) + 1] if (f / ".fairness").is_dir()]
    return (found or marked or [here])[0] / ".fairness" / "history.sqlite"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pytest-fairness",
        description="Read pytest-fairness history and baselines without running tests; "
                    "extract features for them.",
    )
    # --history before or after the command (`compare A B --history PATH`); SUPPRESS keeps
    # the value given before the command when it is not repeated.
    common = argparse.ArgumentParser(add_help=False)
    for where, default in ((parser, None), (common, argparse.SUPPRESS)):
        where.add_argument("--history", metavar="PATH", default=default,
                           help="history store (default: .fairness/history.sqlite of the "
                                "project, found from the current folder up)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    runs = commands.add_parser("runs", parents=[common],
                               help="the runs in the history: id, label, checkpoints")
    history = commands.add_parser("history", parents=[common],
                                  help="table of tests × checkpoints (runs)")
    history.add_argument("--metric", default=None,
                         help="number shown per cell, as metric= names it: headline, gap, "
                              "ratio, value, worst, or a stat such as DEO or TPR (default: "
                              "what each test's limits read, else its headline)")
    for listing in (runs, history):
        listing.add_argument("--last", type=int, default=20, metavar="N",
                             help="show the last N runs (default: %(default)s)")

    compare = commands.add_parser("compare", parents=[common],
                                  help="compare B with baseline A; exit 1 on a regression")
    compare.add_argument("a", type=options.parse_run_ref, metavar="A", help="the baseline")
    compare.add_argument("b", type=options.parse_run_ref, metavar="B", help="the candidate")
    compare.add_argument("--fail", type=options.parse_compare_fail, default={"headline": 0.0},
                         metavar="METRIC:TOL[:BUDGET][,...]",
                         help="what counts as a regression: a tolerance on each "
                              "indicator's headline, or metric:tolerance pairs (default: 0); "
                              "metric:tolerance:budget also bounds B's change since the origin "
                              "of A's entry (a drift budget)")
    compare.add_argument("--confidence", choices=options.CONFIDENCE_MODES,
                         default=options.DEFAULT_CONFIDENCE,
                         help="judge each change by its bootstrap interval: supported (the "
                              "default) fails when all of it exceeds the tolerance, strict when "
                              "any does; or by itself (point), as --fairness-compare-confidence")

    report = commands.add_parser("report", parents=[common],
                                 help="write report.json and report.html of a run")
    report.add_argument("run", type=options.parse_run_ref, metavar="RUN",
                        help="run id, label or checkpoint in the history")
    report.add_argument("--html", required=True, metavar="DIR", help="output directory")

    extract = commands.add_parser(
        "extract", help="run a model over a dataset; write its features as Parquet shards",
        description="Run a model over a dataset, clean and perturbed, and write the features "
                    "as Parquet shards under --out. Under `torchrun --nproc-per-node N` each "
                    "process extracts a part. Run again to resume: shards whose checksums "
                    "match are kept.")
    extract.add_argument("--model", required=True, metavar="PKG.MODULE:FUNCTION",
                         help="factory returning the model (called with checkpoint=PATH when "
                              "--checkpoint is given)")
    extract.add_argument("--checkpoint", default=None, metavar="PATH",
                         help="passed to the factory as checkpoint=PATH")
    extract.add_argument("--data", "--fairness-data", dest="data", required=True,
                         type=options.parse_data_item, metavar="NAME=PATH",
                         help="the dataset, as pytest's --fairness-data NAME=PATH")
    extract.add_argument("--out", required=True, metavar="DIR", help="features directory")
    extract.add_argument("--perturbation", action="append", default=[],
                         type=options.parse_perturbation_item, metavar="NAME:LEVEL",
                         help="also extract this perturbation at this level (repeatable)")
    extract.add_argument("--fair-sa", type=options.parse_levels, default=None, metavar="LEVELS",
                         help="also extract every perturbation at LEVELS evenly spaced levels "
                              "(as fair_sa(levels=LEVELS))")
    extract.add_argument("--seed", type=options.parse_seed, default=0,
                         help="seed of the random perturbations (default: %(default)s)")
    extract.add_argument("--image-size", type=_image_size, default=224, metavar="N",
                         help="resize images to N×N (default: %(default)s)")
    extract.add_argument("--normalize", choices=("imagenet", "none"), default="imagenet",
                         help="per-channel normalisation (default: %(default)s)")
    extract.add_argument("--batch-size", type=options.parse_batch_size, default=64, metavar="N",
                         help="images per forward pass (default: %(default)s)")
    extract.add_argument("--num-workers", type=_workers, default=0, metavar="N",
                         help="DataLoader worker processes per rank (default: %(default)s)")
    extract.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                         help="auto: each rank's GPU if any, else the CPU")
    return parser


def _history(args: argparse.Namespace) -> int:
    from pytest_fairness.report.terminal import format_number, text_table

    with _store(args) as store:
        rows = store.series(last=args.last, payloads=True)
    if not rows:
        print(f"no fairness results in {store.path}")
        return 0
    columns = list(dict.fromkeys((row["run_id"], row["column"]) for row in rows))
    run_labels = {row["run_id"]: row["label"] for row in rows
                  if row["label"] and row["label"] != row["column"]}
    names = [c for _, c in columns]
    labels = [(c if names.count(c) == 1 else f"{c}#{r}")
              + (f" [{run_labels[r]}]" if r in run_labels else "") for r, c in columns]
    from pytest_fairness.readings import read_metric

    cells: dict[str, dict[int, str]] = {}
    ends: dict[str, list[Reading]] = {}  # the first and last reading: the drift since then
    for row in rows:
        metric = args.metric or row["reads"] or "headline"
        shown = "" if args.metric or not row["reads"] else f" [{row['reads']}]"
        test = f"{row['test']} :: {row['result_id']}{shown}"
        reading = read_metric(row["result"], metric)
        ends[test] = [*ends.get(test, [reading])[:1], reading]
        mark = "" if row["outcome"] in (None, "passed") else " !"
        cells.setdefault(test, {})[columns.index((row["run_id"], row["column"]))] = (
            format_number(reading.number) + mark)
    table = [[test, *(by.get(i, "-") for i in range(len(columns))), _drift(*ends[test])]
             for test, by in cells.items()]
    shown = args.metric or "the number each test's limits read ([named]; else the headline)"
    print(f"{shown} per test (rows) and checkpoint or run (columns); ! = test failed; drift = "
          "how much worse the last is than the first shown (its origin), - when better")
    print(*text_table(["test", *labels, "drift"], table, indent=""), sep="\n")
    return 0


def _drift(first: Reading, last: Reading) -> str:
    """How much worse ``last`` is than ``first``, in the metric's direction (``-`` if undefined)."""
    from pytest_fairness.report.terminal import fmt_signed

    change = last.number - first.number
    return "-" if math.isnan(change) else fmt_signed(change if last.lower_is_better else -change)


def _store(args: argparse.Namespace) -> HistoryStore:
    """The store, opened read-only (``--last`` checked first)."""
    from pytest_fairness.history import HistoryStore

    path = Path(args.history) if args.history is not None else find_history()
    if not path.exists():  # a folder: HistoryStore says it must name a file
        searched = "" if args.history is not None else (
            f" (searched from {Path.cwd()} up to the project's top for a .fairness/ folder)")
        raise FairnessConfigError(
            f"no history store at {str(path)!r}{searched}; run `pytest --fairness` first, or "
            "pass --history PATH.")
    if not 1 <= getattr(args, "last", 1) <= MAX_LAST:
        raise FairnessConfigError(f"--last must be an integer from 1 to {MAX_LAST:,}; got "
                                  f"--last={args.last}.")
    return HistoryStore(path, read_only=True)


def _runs(args: argparse.Namespace) -> int:
    from pytest_fairness.report.terminal import text_table

    with _store(args) as store:
        runs = store.runs()[-args.last:]  # oldest first
    if not runs:
        print(f"no runs in {store.path}")
        return 0
    table = [[str(run["id"]), run["started"] or "-", run["label"] or "-",
              run["checkpoint"] or "-", (run["git_commit"] or "-")[:10], str(run["n_results"]),
              "-" if run["exitstatus"] is None else str(run["exitstatus"])] for run in runs]
    print(f"runs in {store.path}: refer to one by its id, label or checkpoint")
    print(*text_table(["run", "started", "label", "checkpoint", "commit", "results", "exit"],
                      table, indent=""), sep="\n")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from pytest_fairness.baseline import match_baseline, resolve_baseline, unmatched_message
    from pytest_fairness.regression import compare_baselines
    from pytest_fairness.report.terminal import regression_message, regression_tally

    history = args.history if args.history is not None else str(find_history())
    base, base_source = resolve_baseline(args.a, history)
    now, now_source = resolve_baseline(args.b, history)
    for side, baseline, source in (("A", base, base_source), ("B", now, now_source)):
        if not baseline.tests:
            raise FairnessConfigError(
                f"{side} ({source}) holds no fairness results, so nothing can be "
                "compared; give a run, checkpoint or baseline file that has results "
                "(`pytest-fairness runs` lists them with their number of results).")
    tests = [(nodeid, entry.test) for nodeid, entry in now.tests.items()]
    matched, _ = match_baseline(base, tests)
    if tests and not matched:
        raise FairnessConfigError(unmatched_message(base, [t for t, _ in tests],
                                                    source=base_source))
    comparisons, missing = compare_baselines(base, now, args.fail, confidence=args.confidence)
    tolerances = ", ".join(f"{k}:{v:g}" for k, v in args.fail.items())
    if args.confidence != "point":
        tolerances += f", confidence {args.confidence}"
    print(f"compare {now_source} with the baseline {base_source} ({tolerances})")
    for line in missing:
        print(f"  {line}")
    print(f"baseline matched {len(matched)}/{len(tests)} tests; {regression_tally(comparisons)}")
    if not comparisons:
        raise FairnessConfigError(
            f"no result of {now_source} has a counterpart in {base_source}, so "
            "nothing was compared (listed above); compare runs of the same tests.")
    if any(c.regressed for c in comparisons):
        print(regression_message(comparisons, source=base_source, with_test=True))
        return 1
    print(f"no regression: {len(comparisons)} comparison{'s' if len(comparisons) != 1 else ''} "
          "within tolerance")
    return 0


def _report(args: argparse.Namespace) -> int:
    from pytest_fairness.report.html import write_html
    from pytest_fairness.report.json_report import build_report, write_json

    with _store(args) as store:
        run_id, checkpoint = store.resolve(args.run)
        run = store.run(run_id)
        records = store.records(run_id, checkpoint=checkpoint)
        trends = store.series(last=20)
    document = build_report(records, run={
        **{k: v for k, v in run.items() if k not in ("id", "metadata", "n_results")},
        **run["metadata"], "history_run_id": run_id})
    if not args.html.strip():
        raise FairnessConfigError("--html '' names no folder; give the folder to write the "
                                  "report to, e.g. --html fairness-report.")
    folder = Path(args.html)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_json(document, folder)
        page = write_html(document, folder, trends=trends)
    except OSError as error:
        raise FairnessConfigError(
            f"--html {args.html!r}: cannot write the report there ({error.strerror or error}); "
            "pass a folder you can write, e.g. --html fairness-report."
        ) from None
    print(f"fairness report of run {run_id}: {page}")
    return 0


def _image_size(value: str) -> int:
    """Parse ``extract --image-size``: pixels a side, 1 to the job's largest."""
    from pytest_fairness.features.job import MAX_IMAGE_SIZE

    try:
        size = _workers(value)
    except argparse.ArgumentTypeError:
        size = 0
    if not 1 <= size <= MAX_IMAGE_SIZE:
        raise argparse.ArgumentTypeError(f"must be an int from 1 to {MAX_IMAGE_SIZE} (pixels "
                                         f"a side, as 224); got {value!r}")
    return size


def _workers(value: str) -> int:
    """Parse ``extract --num-workers``: an int >= 0."""
    try:
        count = int(value) if value.strip().isdigit() else -1
    except ValueError:  # digits int() does not read, as "²"
        count = -1
    if count < 0:
        raise argparse.ArgumentTypeError(f"must be an int >= 0; got {value!r}")
    return count


def _extract(args: argparse.Namespace) -> int:
    import shlex

    from pytest_fairness.features.job import ExtractJob, run_job
    from pytest_fairness.indicators.sensitivity import fair_sa_levels
    from pytest_fairness.perturbations import PERTURBATIONS

    name, root = args.data
    root, out = str(Path(root).resolve()), Path(args.out).resolve()
    perturbations = [(n, level, args.seed) for n, level in args.perturbation]
    words = ["pytest-fairness", "extract", "--model", args.model, "--data", f"{name}={root}",
             "--out", str(out)]
    if args.checkpoint is not None:
        words += ["--checkpoint", str(Path(args.checkpoint).resolve())
                  if Path(args.checkpoint).exists() else args.checkpoint]
    for n, level in args.perturbation:
        words += ["--perturbation", f"{n}:{level:g}"]
    if args.fair_sa is not None:
        words += ["--fair-sa", str(args.fair_sa)]
        perturbations += [(n, float(level), args.seed) for n in PERTURBATIONS
                          for level in fair_sa_levels(args.fair_sa)[1:]
                          if (n, float(level), args.seed) not in perturbations]
    for flag, value, default in (("--seed", args.seed, 0), ("--image-size", args.image_size, 224),
                                 ("--normalize", args.normalize, "imagenet")):
        if value != default:
            words += [flag, str(value)]
    job = ExtractJob(model=args.model, dataset=name, root=root, out=out,
                     perturbations=tuple(perturbations), checkpoint=args.checkpoint,
                     image_size=args.image_size, normalize=args.normalize,
                     batch_size=args.batch_size, num_workers=args.num_workers,
                     device=args.device, command=shlex.join(words))
    summary = run_job(job, log=lambda line: print(line, flush=True))
    print(f"{summary.prefix}extracted {len(summary.extracted)} shard(s), kept {len(summary.kept)} "
          "whose checksums matched", flush=True)
    if summary.manifest is not None:
        print(f"features written: {summary.manifest}", flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status (0 ok, 1 regression, 2 usage error)."""
    args = _parser().parse_args(argv)
    commands = {"runs": _runs, "history": _history, "compare": _compare, "report": _report,
                "extract": _extract}
    try:
        return commands[args.command](args)
    except FairnessError as error:  # a bad argument, or a missing or damaged store or file
        print(f"pytest-fairness {args.command}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
