"""The plugin's command-line and ini options, and the parsers of their values.

Each ``parse_*`` function (shared with the ``pytest-fairness`` command) raises
``argparse.ArgumentTypeError`` naming the value and the fix, which both parsers turn into a
usage error naming the option. Imported when the plugin loads: the standard library only.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Final, final

if TYPE_CHECKING:
    import pytest

__all__ = [
    "CACHE_DIR_INI",
    "COMPARE_METRICS",
    "CONFIDENCE_MODES",
    "DEFAULT_CONFIDENCE",
    "CompareFail",
    "DATASET_NAMES",
    "DATA_INI",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_CACHE_DIR",
    "ENABLE_INI",
    "FAMILY_INI",
    "HISTORY_INI",
    "LIMITS",
    "METRIC_LIMITS",
    "LimitSpec",
    "MARKER_FAIRNESS",
    "MARKER_REGRESSION",
    "MARKER_THRESHOLD",
    "MARKER_UNIT",
    "INCONCLUSIVE_INI",
    "INCONCLUSIVE_POLICIES",
    "SEED_INI",
    "add_options",
    "checkpoint_ids",
    "strip_param",
    "parse_batch_size",
    "parse_compare_fail",
    "parse_data_item",
    "parse_device",
    "parse_family_alpha",
    "parse_levels",
    "parse_perturbation_item",
    "parse_run_ref",
    "parse_seed",
    "parse_tolerance",
    "pytest_id",
]

ENABLE_INI: Final = "fairness"
HISTORY_INI: Final = "fairness_history"
SEED_INI: Final = "fairness_seed"
INCONCLUSIVE_INI: Final = "fairness_inconclusive"
FAMILY_INI: Final = "fairness_family_alpha"
#: What an inconclusive verdict (an interval straddling a limit) can do to its test.
INCONCLUSIVE_POLICIES: Final = ("pass", "fail")
DATA_INI: Final = "fairness_data"
CACHE_DIR_INI: Final = "fairness_cache_dir"
DEFAULT_CACHE_DIR: Final = ".fairness/cache"
DEFAULT_BATCH_SIZE: Final = 64

#: The dataset fixtures, and the NAME of ``--fairness-data NAME=PATH``.
DATASET_NAMES: Final = ("casual_conversations", "celeba", "dollar_street", "fairface",
                        "fitzpatrick17k", "manifest", "miap", "utkface")
_DEVICE = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")

#: The names of the plugin's markers.
MARKER_FAIRNESS: Final = "fairness"
MARKER_THRESHOLD: Final = "fairness_threshold"
MARKER_REGRESSION: Final = "fairness_regression"
MARKER_UNIT: Final = "fairness_unit"

#: What a baseline comparison can look at, and which way is better: ``headline`` (what
#: each indicator is judged on: the gap of group indicators, iEAT's |effect size|, the
#: amplification, Fair SA's L1; lower is better but for ΔDTO), ``gap`` lower, ``ratio``
#: higher, ``value`` and ``worst`` (the worst group's value) by the result's
#: ``higher_is_better``. Same names as ``fairness.no_regression(metric=...)``.
COMPARE_METRICS: Final = ("headline", "gap", "ratio", "value", "worst")

#: How an interval decides a limit or a regression: ``point`` ignores it; ``supported``
#: fails only when the whole interval is beyond the bound; ``strict`` when any part of it is.
CONFIDENCE_MODES: Final = ("point", "supported", "strict")

#: The rule a limit or a comparison is judged by when none is named: its interval (the data
#: show it broken); ``"point"`` judges the estimate alone.
DEFAULT_CONFIDENCE: Final = "supported"


@final
@dataclass(frozen=True)
class LimitSpec:
    """One limit keyword: its direction, allowed range and what it bounds."""

    name: str
    bound: str  # "max" (observed must be <=) or "min" (observed must be >=)
    low: float | None
    high: float | None
    description: str
    #: False for a number that is itself a test's outcome (a p-value): it has no interval,
    #: and every rule judges it as it is.
    interval: bool = True


def _spec(name: str, low: float | None, high: float | None, description: str,
          interval: bool = True) -> LimitSpec:
    return LimitSpec(name, name.split("_", 1)[0], low, high, description, interval)


#: Every limit keyword of ``fairness.threshold``, the one schema the markers validate.
LIMITS: Final[Mapping[str, LimitSpec]] = {
    spec.name: spec
    for spec in (
        _spec("max_gap", 0.0, None, "largest allowed max − min across included groups"),
        _spec("min_ratio", 0.0, 1.0, "smallest allowed min / max across included groups"),
        _spec("min_value", None, None, "smallest allowed value of any included group"),
        _spec("max_value", None, None, "largest allowed value of any included group"),
        _spec("max_effect_size", 0.0, None, "largest allowed |effect size|"),
        _spec("min_p_value", 0.0, 1.0, "smallest allowed p-value", interval=False),
        _spec("max_amplification", None, None, "largest allowed bias amplification"),
        _spec("max_variance", 0.0, None, "largest allowed variance of the amplification"),
        _spec("max_auc", 0.0, None, "largest allowed |AUC| of any matrix cell"),
        _spec("max_l1", 0.0, None, "largest allowed L1 norm of the AUC matrix"),
    )
}


#: The limits whose number ``metric=`` can pick.
METRIC_LIMITS: Final = ("max_value", "min_value", "max_gap", "min_ratio")


def checkpoint_ids(checkpoints: Sequence[str]) -> tuple[str, ...]:
    """How test ids and reports name each ``--fairness-checkpoint``: unique and readable.

    A checkpoint's file name, or, where files share a name, the shortest end of each path
    that tells them apart.

    Examples
    --------
    >>> checkpoint_ids(["runs/epoch-3.pt", "epoch-4"])
    ('epoch-3.pt', 'epoch-4')
    >>> checkpoint_ids(["runs/a/model.pt", "runs/b/model.pt", "c/model.pt"])
    ('a/model.pt', 'b/model.pt', 'c/model.pt')
    """
    parts = [PurePath(c).parts or (c,) for c in checkpoints]
    ids = []
    for i, mine in enumerate(parts):
        others = [p for j, p in enumerate(parts) if j != i]
        size = next((k for k in range(1, len(mine)) if all(p[-k:] != mine[-k:] for p in others)),
                    len(mine))
        ids.append("/".join(mine[-size:]) if size < len(mine) else checkpoints[i])
    return tuple(ids)


def pytest_id(ident: str, config: pytest.Config) -> str:
    r"""``ident`` as pytest writes a parameter id into node ids (non-ASCII escaped).

    Examples
    --------
    >>> import types
    >>> pytest_id("café.pt", types.SimpleNamespace(getini=lambda name: False))
    'caf\\xe9.pt'
    """
    if config.getini("disable_test_id_escaping_and_forfeit_all_rights_to_community_support"):
        return ident
    return ident.encode("unicode_escape").decode("ascii")


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


_COMPARE_EXAMPLE: Final = "gap:0.01,value:0.02"


def parse_tolerance(text: str) -> float:
    """Parse a non-negative, finite tolerance such as ``"0.01"`` (``0_25`` is refused)."""
    try:
        value = None if "_" in str(text) else float(text)  # float("0_25") is 25.0
    except (TypeError, ValueError):
        value = None
    if value is None:
        raise argparse.ArgumentTypeError(
            f"a tolerance must be a number >= 0, such as 0.01; got {text!r}.")
    if math.isnan(value) or math.isinf(value) or value < 0:
        raise argparse.ArgumentTypeError(
            f"a tolerance must be a finite number >= 0, such as 0.01; got {text!r}."
        )
    return value


class CompareFail(dict[str, float]):
    """``--fairness-compare-fail``: the tolerance per metric, and a drift budget per metric.

    ``budgets`` bound how much worse a metric may get in total since the baseline entry's
    origin (the numbers it started from), however many accepted changes led there.
    """

    def __init__(self, tolerances: Mapping[str, float] | None = None,
                 budgets: Mapping[str, float] | None = None) -> None:
        super().__init__(tolerances or {})
        self.budgets: dict[str, float] = dict(budgets or {})


def parse_compare_fail(text: str) -> CompareFail:
    """Parse ``--fairness-compare-fail``: comma-separated ``metric:tolerance[:budget]``.

    A result regresses on a metric when it is worse than the baseline by more than the
    tolerance, in the metric's own direction, or (with a budget) worse than the baseline's
    origin by more than the budget. A metric is a word of :data:`COMPARE_METRICS` or a stat
    a result names (``DEO``, ``TPR``), checked against each result when it is compared. A
    bare tolerance is the headline's.

    Examples
    --------
    >>> parse_compare_fail("gap:0.01, DEO:0.02")
    {'gap': 0.01, 'DEO': 0.02}
    >>> parse_compare_fail("0.01")
    {'headline': 0.01}
    >>> parse_compare_fail("gap:0.01:0.03").budgets
    {'gap': 0.03}
    """
    try:
        float(text)
    except (TypeError, ValueError):
        pass
    else:
        return CompareFail({"headline": parse_tolerance(str(text).strip())})
    parsed = CompareFail()
    items = [item.strip() for item in str(text).split(",")]
    if not any(items):
        raise argparse.ArgumentTypeError(
            f"expected metric:tolerance pairs such as {_COMPARE_EXAMPLE!r}; got {text!r}."
        )
    for item in items:
        if not item:
            raise argparse.ArgumentTypeError(
                f"empty item in {text!r}; separate metric:tolerance pairs with single commas, "
                f"as in {_COMPARE_EXAMPLE!r}."
            )
        metric, sep, tolerance = item.partition(":")
        metric = metric.strip()
        if not sep:
            raise argparse.ArgumentTypeError(
                f"{item!r} has no tolerance; write metric:tolerance, e.g. {metric or 'gap'}:0.01 "
                f"(full example: {_COMPARE_EXAMPLE!r})."
            )
        if not metric:
            raise argparse.ArgumentTypeError(
                f"{item!r} names no metric; write metric:tolerance with a metric such as "
                f"{', '.join(COMPARE_METRICS)} or a stat (DEO, TPR), e.g. {_COMPARE_EXAMPLE!r}."
            )
        if metric in parsed:
            raise argparse.ArgumentTypeError(
                f"metric {metric!r} is given twice in {text!r}; give each metric once."
            )
        tolerance, sep, budget = tolerance.partition(":")
        try:
            parsed[metric] = parse_tolerance(tolerance.strip())
            if sep:
                parsed.budgets[metric] = parse_tolerance(budget.strip())
        except argparse.ArgumentTypeError as error:
            if metric not in parsed:
                raise argparse.ArgumentTypeError(f"{metric}: {error}") from None
            raise argparse.ArgumentTypeError(
                f"{metric}: {str(error).replace('a tolerance', 'a drift budget')} {item!r} "
                "reads metric:tolerance:budget, e.g. gap:0.01:0.03.") from None
        if parsed.budgets.get(metric, parsed[metric]) < parsed[metric]:
            raise argparse.ArgumentTypeError(
                f"{item!r}: the drift budget {parsed.budgets[metric]:g} is below the tolerance "
                f"{parsed[metric]:g}; a budget bounds the total change since the origin, so "
                f"it is at least one change's tolerance (e.g. {metric}:{parsed[metric]:g}:"
                f"{3 * parsed[metric]:g}).")
    return parsed


def parse_run_ref(text: str) -> str:
    """Check a baseline or run reference is not empty (it is resolved later)."""
    ref = str(text).strip()
    if not ref:
        raise argparse.ArgumentTypeError(
            "expected a baseline JSON file, a run id or a checkpoint name; got an empty value."
        )
    return ref


def parse_data_item(value: str) -> tuple[str, str]:
    """Parse ``NAME=PATH`` (``--fairness-data`` and the ``fairness_data`` ini lines)."""
    name, sep, path = value.partition("=")
    name, path = name.strip(), path.strip()
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(
            f"expected NAME=PATH (e.g. utkface=/data/UTKFace); got {value!r}"
        )
    if name not in DATASET_NAMES:
        raise argparse.ArgumentTypeError(
            f"unknown dataset {name!r} in {value!r}; known names: {', '.join(DATASET_NAMES)}"
        )
    return name, path


def parse_perturbation_item(value: str) -> tuple[str, float]:
    """Parse ``NAME:LEVEL`` (``pytest-fairness extract --perturbation``), level in (0, 1]."""
    name, sep, level = value.partition(":")
    try:
        number = float(level)
    except ValueError:
        number = math.nan
    if not sep or not name.strip() or not 0 < number <= 1:
        raise argparse.ArgumentTypeError(
            f"expected NAME:LEVEL with a level in (0, 1] (e.g. gaussian_blur:0.5); got "
            f"{value!r}"
        )
    return name.strip(), number


def _int_at_least(value: str, low: int, rule: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = low - 1
    if number < low:
        raise argparse.ArgumentTypeError(f"{rule}; got {value!r}")
    return number


def parse_levels(value: str) -> int:
    """Parse ``--fair-sa LEVELS``: an int >= 2, that many evenly spaced levels in [0, 1]."""
    return _int_at_least(value, 2, "levels must be an int >= 2 (as fair_sa's levels=, 0 "
                                    "included)")


def parse_batch_size(value: str) -> int:
    """Parse ``--fairness-batch-size``: a positive int."""
    return _int_at_least(value, 1, "batch size must be a positive int")


def parse_device(value: str) -> str:
    """Parse ``--fairness-device``: auto, cpu, cuda, cuda:N or mps."""
    if not _DEVICE.match(value):
        raise argparse.ArgumentTypeError(
            f"device must be auto, cpu, cuda, cuda:N or mps; got {value!r}"
        )
    return value


def parse_seed(value: str) -> int:
    """Parse ``--fairness-seed``: a non-negative int.

    Examples
    --------
    >>> parse_seed("7")
    7
    """
    return _int_at_least(value, 0, "a seed must be a non-negative int, such as 0")


def parse_family_alpha(value: str) -> float:
    """Parse ``--fairness-family-alpha``: the run's chance of any false alarm, in (0, 0.5].

    Examples
    --------
    >>> parse_family_alpha("0.05")
    0.05
    """
    try:
        alpha = float(value)
    except ValueError:
        alpha = math.nan
    if not 0 < alpha <= 0.5:  # NaN too
        raise argparse.ArgumentTypeError(
            f"the family-wise error rate must be a number in (0, 0.5], such as 0.05; got "
            f"{value!r}")
    return alpha


def add_options(parser: pytest.Parser) -> None:
    """Add ``--fairness``, the other ``--fairness-*`` options and their ini twins."""
    group = parser.getgroup("fairness", "fairness indicators (pytest-fairness)")
    add = group.addoption
    add("--fairness", action="store_true", dest="fairness", default=False,
        help="run fairness tests (they are skipped otherwise).")
    add("--fairness-report", metavar="DIR", default=None, dest="fairness_report",
        help="write report.json and a self-contained report.html into DIR.")
    add("--fairness-markdown", metavar="FILE", default=None, dest="fairness_markdown",
        help="write a short markdown summary of the run (verdicts, failing tests and their "
             "groups, regressions) to FILE, for a pull request; also appended to "
             "$GITHUB_STEP_SUMMARY when that is set.")
    add("--fairness-history", metavar="PATH", default=None, dest="fairness_history",
        help="SQLite history store (default: .fairness/history.sqlite in the rootdir).")
    add("--fairness-no-history", action="store_true", default=False,
        dest="fairness_no_history", help="do not record this run in the history.")
    add("--fairness-save-baseline", metavar="FILE.json", default=None,
        dest="fairness_save_baseline",
        help="write (or update) a committable baseline of this run's results.")
    add("--fairness-baseline", metavar="FILE.json|RUN_ID|CHECKPOINT", default=None,
        dest="fairness_baseline", type=parse_run_ref,
        help="compare results with this baseline (a file, or a run id, label or "
             "checkpoint in the history); see --fairness-compare-fail.")
    add("--fairness-compare-fail", metavar="METRIC:TOL[:BUDGET][,...]", default=[],
        action="append", dest="fairness_compare_fail", type=parse_compare_fail,
        help="fail each test whose results got worse than the baseline by more than "
             "the tolerance: a bare tolerance (0.01) applies to each indicator's headline "
             "(the gap, iEAT's |effect size|, the amplification, Fair SA's L1); or "
             "metric:tolerance pairs, e.g. gap:0.01,DEO:0.02 (metrics: headline, gap, "
             "ratio, value, worst, or a stat the results name such as DEO or TPR; each in "
             "its own direction). gap:0.01:0.03 also fails a total change of more than "
             "0.03 since the baseline entry's origin (a drift budget).")
    add("--fairness-compare-confidence", default=DEFAULT_CONFIDENCE,
        choices=CONFIDENCE_MODES, dest="fairness_compare_confidence",
        help="how --fairness-compare-fail judges a change: supported (default) when its "
             "whole bootstrap interval exceeds the tolerance (paired when both sides "
             "resampled the same images; both need replicates, which indicators keep by "
             "default); strict when any of it does; point on the change itself.")
    add("--fairness-inconclusive", default=None, choices=INCONCLUSIVE_POLICIES,
        dest="fairness_inconclusive",
        help="what a limit whose interval straddles it (an inconclusive verdict) does to its "
             "test: pass or fail; default: passes under confidence='supported', fails under "
             "'strict' (also the fairness_inconclusive ini value). Either way it is listed "
             "in the summary with what would decide it.")
    add("--fairness-family-alpha", metavar="ALPHA", default=None, type=parse_family_alpha,
        dest="fairness_family_alpha",
        help="control the chance of any false alarm over every interval-judged limit and "
             "comparison of the run at ALPHA (e.g. 0.05; Bonferroni: each test gets ALPHA/T, "
             "split over its checks); also the fairness_family_alpha ini value.")
    add("--fairness-reference-checkpoint", metavar="NAME", default=None,
        dest="fairness_reference_checkpoint",
        help="with several --fairness-checkpoint: compare each with this one (by path or "
             "file name; default the first).")
    add("--fairness-run-label", metavar="LABEL", default=None, dest="fairness_run_label",
        help="name this run in the history (e.g. a checkpoint or an experiment).")
    add("--fairness-paired", action="store_true", default=False, dest="fairness_paired",
        help="draw bootstrap replicates image by image, so that this run's results pair "
             "with later runs on the same images (e.g. a history to compare checkpoints "
             "in); implied by --fairness-baseline, --fairness-save-baseline and "
             "--fairness-checkpoint. Otherwise each kind of image (group and outcome) draws "
             "at once: cheaper, paired only with results of the same kinds.")
    add("--fairness-seed", metavar="INT", default=None, dest="fairness_seed", type=parse_seed,
        help="seed of the fairness_seed fixture, and of indicators given seed=None "
             "(bootstrap, permutations, noise); default: the fairness_seed ini value, else 0.")
    add("--fairness-data", action="append", default=[], metavar="NAME=PATH",
        type=parse_data_item,
        help=f"root of a dataset (repeatable); NAME in {', '.join(DATASET_NAMES)}.")
    add("--fairness-strict", action="store_true", default=False,
        help="error (not skip) when a requested dataset is not configured.")
    add("--fairness-device", default="auto", type=parse_device,
        help="device for feature extraction: auto (default), cpu, cuda[:N], mps.")
    add("--fairness-cache-dir", default=None, metavar="DIR",
        help=f"feature cache directory (default {DEFAULT_CACHE_DIR} under rootdir).")
    add("--fairness-no-cache", action="store_true", default=False,
        help="neither read nor write the feature cache.")
    add("--fairness-features", action="append", default=[], metavar="[CHECKPOINT=]DIR",
        dest="fairness_features",
        help="read features from DIR, written by `pytest-fairness extract`, instead of "
             "running the model (fairness_features then needs no fairness_model); with "
             "several --fairness-checkpoint, one CHECKPOINT=DIR per checkpoint.")
    add("--fairness-checkpoint", action="append", default=[], metavar="PATH",
        help="model checkpoint (repeatable): tests using it run once per checkpoint.")
    add("--fairness-batch-size", default=DEFAULT_BATCH_SIZE, type=parse_batch_size,
        help=f"batch size for feature extraction (default {DEFAULT_BATCH_SIZE}).")
    parser.addini(ENABLE_INI, type="bool", default=False,
                  help="run fairness tests (like --fairness).")
    parser.addini(SEED_INI, default="", help="seed of the fairness_seed fixture and of "
                  "indicators given seed=None (default 0).")
    parser.addini(INCONCLUSIVE_INI, default="",
                  help="pass or fail: what an inconclusive verdict does to its test (like "
                       "--fairness-inconclusive).")
    parser.addini(FAMILY_INI, default="",
                  help="the run's family-wise false-alarm rate (like --fairness-family-alpha).")
    parser.addini(HISTORY_INI, default="",
                  help="history store path, relative to the ini file (like --fairness-history).")
    parser.addini(DATA_INI, type="linelist", default=[],
                  help="dataset roots, one NAME=PATH per line (relative to rootdir).")
    parser.addini(CACHE_DIR_INI, default="",
                  help=f"feature cache directory (default {DEFAULT_CACHE_DIR}).")
