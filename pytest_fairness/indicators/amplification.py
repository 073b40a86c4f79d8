"""Bias amplification: BiasAmp, BiasAmp→, Multi_MALS and Multi→, from one core.

From "Men Also Like Shopping" (Zhao et al. 2017), "Directional Bias Amplification" (Wang &
Russakovsky 2021) and "Men Also Do Laundry: Multi-Attribute Bias Amplification" (Zhao,
Andrews & Xiang 2023); docs page "Bias amplification".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_fairness.errors import (
    FairnessConfigError,
    InsufficientDataError,
    InvalidDataError,
    check_int,
    own_error,
)
from pytest_fairness.indicators._combos import Hits, Labels, combinations
from pytest_fairness.indicators._common import (
    check_min_group_size,
    check_variant,
    encode_groups,
    exclusion_notes,
    make_group_stats,
    sort_keys,
)
from pytest_fairness.results import GroupKey, IndicatorResult, group_label
from pytest_fairness.stats import BOOTSTRAP_METHODS, Bootstrap, IntervalOptions, Units

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["bias_amp", "directional_bias_amp", "multi_directional", "multi_mals"]

__tracebackhide__ = own_error

N_NOTED, TABLE_ROWS = 3, 100  #: combinations named as "most amplified"; rows of the table
Row = dict[str, str | int | float | None]  # a row of ``tables["cells"]``: largest |Δ| first
Run = dict[str, Any]  # one run's scores: its amplification, per-cell Δ, counted cells, ...
_DIRECTIONS = {"G->M": "G->M", "G→M": "G->M", "M->G": "M->G", "M→G": "M->G"}


@dataclass(frozen=True)
class _Args:
    """The arguments of one indicator; :func:`_check` fills ``cut`` and ``names``."""

    train_attrs: Any
    train_groups: Any
    test_attrs: Any = None
    test_groups: Any = None
    pred_attrs: Any = None
    pred_groups: Any = None
    direction: str | None = None
    min_size: int = 1
    max_size: int | None = 1
    min_count: int = 1
    threshold: Any = None
    attribute_names: Sequence[str] | None = None
    min_group_size: int = 30
    variant: str = "paper"
    n_bootstrap: int = 1000
    confidence_level: float = 0.95
    interval_method: str = "percentile"
    seed: Any = None
    cut: NDArray[np.float64] | None = None
    names: tuple[str, ...] = ()


def _binary(values: Any, name: str, threshold: Any = None) -> NDArray[np.bool_]:
    """Return a (images, attributes) bool matrix, or raise naming the bad cell."""
    array = np.asarray(values.to_numpy() if hasattr(values, "to_numpy") else values)
    if array.ndim != 2:
        raise InvalidDataError(f"{name} must be a 2-D 0/1 matrix of shape (images, attributes); "
                               f"got shape {array.shape}.")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise InsufficientDataError(
            f"{name} has shape {array.shape}; pass at least one image and one attribute.")
    if array.dtype.kind not in "biuf":
        raise InvalidDataError(
            f"{name} must hold numbers (0/1 labels or scores); got dtype {array.dtype}.")
    bad = np.argwhere(~np.isfinite(array) if array.dtype.kind == "f" else array != array)
    if len(bad):
        r, c = (int(v) for v in bad[0])
        raise InvalidDataError(
            f"{name} has a non-finite value {array[r, c].item()!r} at row {r}, column {c} "
            f"({len(bad)} in all); drop those images or fill in the labels.")
    bad = np.argwhere((array != 0) & (array != 1)) if threshold is None else bad
    if len(bad):
        r, c = (int(v) for v in bad[0])
        hint = " pass threshold=<score cut-off> to binarise scores," * name.startswith("pred")
        raise InvalidDataError(f"{name} must be a 0/1 matrix, but row {r}, column {c} is "
                               f"{array[r, c].item()!r};{hint} or convert the labels to 0/1.")
    return np.asarray(array != 0 if threshold is None else array >= threshold, dtype=np.bool_)


def _check(a: _Args, function: str, n_attrs: int) -> _Args:
    """Validate the keywords in ``a``: sizes become ints, ``cut`` the threshold array."""
    check_variant(a.variant, function)
    min_group_size = check_min_group_size(a.min_group_size)
    for key, value in (("min_size", a.min_size), ("max_size", a.max_size),
                       ("min_count", a.min_count)):
        if value is not None or key != "max_size":
            check_int(key, value, low=1)
    if a.max_size is not None and a.max_size < a.min_size:
        raise FairnessConfigError(f"max_size={a.max_size} is below min_size={a.min_size}; "
                                  "pass max_size >= min_size (or None for no limit).")
    try:
        cut = None if isinstance(a.threshold, (bool, type(None))) else np.asarray(
            a.threshold, np.float64)
    except (TypeError, ValueError):
        cut = None
    if a.threshold is not None and (cut is None or cut.ndim > 1 or (
            cut.ndim == 1 and len(cut) != n_attrs) or not np.isfinite(cut).all()):
        raise FairnessConfigError(
            f"threshold must be a finite number or one number per attribute ({n_attrs}); "
            f"got threshold={a.threshold!r}.")
    names, columns = a.attribute_names, getattr(a.train_attrs, "columns", None)
    names = [str(x) for x in (names if names is not None else columns if columns is not None
                              else range(n_attrs))]
    dupes = sorted({x for x in names if names.count(x) > 1})
    if len(names) != n_attrs or dupes:
        raise FairnessConfigError(
            f"attribute_names has {len(names)} names but the attribute matrices have "
            f"{n_attrs} columns; pass one name per column." if len(names) != n_attrs else
            f"attribute_names must be unique; {dupes} appear more than once.")
    return replace(a, min_size=int(a.min_size), min_count=int(a.min_count), cut=cut,
                   names=tuple(names), max_size=None if a.max_size is None else int(a.max_size),
                   min_group_size=min_group_size)


def _runs(values: Any, n_test: int | None = None) -> list[Any]:
    """Runs: a 3-D array or 2-D matrices; with ``n_test``, ``n_test``-long group vectors."""
    if n_test is None and isinstance(values, np.ndarray) and values.ndim == 3:
        return list(values)
    if isinstance(values, (list, tuple)) and values and (
            all(np.ndim(v) == 2 for v in values) if n_test is None else len(values) != n_test
            and all(not isinstance(v, (str, bytes)) and np.ndim(v) >= 1 and len(v) == n_test
                    for v in values)):
        return list(values)
    return [values]


def _released(groups: Any, columns: int | None = None, name: str = "") -> Any:
    """The released layout: its width if ``groups`` has it, else None; codes, given it."""
    array = np.asarray(groups) if np.ndim(groups) == 2 and not hasattr(groups, "columns") else None
    ok = array is not None and array.ndim == 2 and array.dtype.kind in "biuf" and bool(
        array.size) and bool(np.isin(array, (0, 1)).all()) and bool((array.sum(axis=1) <= 1).all())
    if columns is None:
        return array.shape[1] if ok and array is not None and (
            array.shape[1] == 1 or (array.sum(axis=1) == 0).any()) else None
    if not ok or array is None or array.shape[1] != columns:
        raise InvalidDataError(
            f"train_groups is in the released evaluate script's layout ({columns} 0/1 group "
            f"column(s), the first group's rows all zeros), so {name} must be too; got shape "
            f"{np.shape(groups)}. Pass every group input in the same layout.")
    return np.where(array.any(axis=1), array.argmax(axis=1) + 1, 0).astype(np.intp)


def _encode(groups: Any, n: int, name: str, index: Mapping[GroupKey, int] | None = None,
            ) -> tuple[list[GroupKey], NDArray[np.intp]]:
    """Keys and codes of one group input; with ``index``, codes of the ground truth's keys."""
    keys, codes = encode_groups(groups, n, name=name)
    width = np.shape(groups)[1] if not isinstance(groups, Mapping) and not hasattr(
        groups, "columns") and np.ndim(groups) == 2 else 0
    empty = sorted(set(range(width)) - set(keys)) if index is None and width > 1 else []
    if empty:
        raise InsufficientDataError(
            f"{name} is one-hot with {width} group columns, but column(s) {empty} have no "
            "rows: every group needs images. Drop the empty columns.")
    unknown = [k for k in keys if index is not None and k not in index]
    if unknown:
        raise InvalidDataError(
            f"{name} predicts group {group_label(unknown[0])!r}, which is not a group of the "
            f"ground truth ({', '.join(map(group_label, index or {}))}); use the same labels.")
    return keys, codes if index is None else np.array([index[k] for k in keys], np.intp)[codes]


def _prepare(a: _Args, function: str, released: int | None) -> tuple[Any, ...]:
    """Check the inputs; the checked arguments, matrices, groups and codes (test: 0 if none)."""
    direction = a.direction
    need_test, pred_a, pred_g = function != "bias_amp", direction != "M->G", direction != "G->M"
    for name in ["train_attrs", "train_groups", *["test_attrs", "test_groups"] * need_test,
                 *["pred_attrs"] * pred_a, *["pred_groups"] * pred_g]:
        if getattr(a, name) is None:
            where = function if direction is None else f"{function}(direction={direction!r})"
            raise FairnessConfigError(f"{where} needs {name}; got {name}=None.")
    train = _binary(a.train_attrs, "train_attrs")
    a = _check(a, function, train.shape[1])
    test = _binary(a.test_attrs, "test_attrs") if need_test else None
    raw = _runs(a.pred_attrs) if pred_a else []
    labels = ["pred_attrs"] if len(raw) == 1 else [f"pred_attrs[{k}]" for k in range(len(raw))]
    preds = [_binary(p, label, a.cut) for p, label in zip(raw, labels)]
    n_pred = test.shape[0] if test is not None else preds[0].shape[0]
    columns = getattr(a.train_attrs, "columns", None)
    for label, given, x in [("test_attrs", a.test_attrs, test), *zip(labels, raw, preds)]:
        theirs = None if x is None else getattr(given, "columns", None)
        problem = (f"{label} has {x.shape[1]} attribute columns but train_attrs has "
                   f"{train.shape[1]}") if x is not None and x.shape[1] != train.shape[1] else ""
        if columns is not None and theirs is not None and list(columns) != list(theirs):
            problem = (f"{label} has columns {list(theirs)[:5]}... but train_attrs has "
                       f"{list(columns)[:5]}...")
        if problem:
            raise InvalidDataError(f"{problem}; the matrices must share their columns (same "
                                   "attributes, same order).")
        if x is not None and x.shape[0] != n_pred:
            raise InvalidDataError(
                f"{label} has {x.shape[0]} rows but {'test_attrs' if need_test else labels[0]} "
                f"has {n_pred}; predictions must cover the test images, in the same order.")
    runs = _runs(a.pred_groups, n_pred) if pred_g else []
    runs = runs * len(preds) if len(preds) > 1 and len(runs) == 1 else runs
    if len(preds) > 1 and len(runs) not in (0, len(preds)):
        raise InvalidDataError(
            f"pred_groups holds {len(runs)} runs but pred_attrs holds {len(preds)}; pass one "
            "group vector per prediction set, or one vector shared by all of them.")
    train_groups, test_groups = a.train_groups, a.test_groups
    if released is not None:  # the released layout → one code per image (0: the first group)
        train_groups = _released(train_groups, released, "train_groups")
        test_groups = _released(test_groups, released, "test_groups")
        runs = [_released(g, released, "pred_groups") for g in runs]
    train_keys, train_codes = _encode(train_groups, len(train), "train_groups")
    keys, test_keys, test_codes = train_keys, list[GroupKey](), np.zeros(n_pred, np.intp)
    if need_test:
        test_keys, test_codes = _encode(test_groups, n_pred, "test_groups")
        keys = sort_keys(list(dict.fromkeys([*train_keys, *test_keys])))
    if len(keys) < 2:
        raise InsufficientDataError(
            f"the groups have a single value {group_label(keys[0])!r}: amplification "
            "compares groups, so it needs at least two. Check the group column.")
    missing = [(split, k) for split, split_keys in (("train_groups", train_keys), (
        "test_groups", test_keys)) for k in keys if need_test and k not in split_keys]
    if missing:
        raise InsufficientDataError(
            f"group {group_label(missing[0][1])!r} has no rows in {missing[0][0]} (it occurs in "
            "the other split); every group needs images in both train and test. Drop the "
            "group or add its images.")
    index = {k: i for i, k in enumerate(keys)}
    return (a, train, test, preds, keys, np.array([index[k] for k in train_keys], np.intp)[
        train_codes], np.array([index[k] for k in test_keys], np.intp)[test_codes] if need_test
        else test_codes, [_encode(g, n_pred, f"pred_groups[{r}]" if len(runs) > 1 else
                                  "pred_groups", index)[1] for r, g in enumerate(runs)])


def _conf(values: Any) -> tuple[float, float, float]:
    """Mean, standard deviation and 1.96·std/√runs: the released ``conf_interval``."""
    mean, std = float(np.mean(values)), float(np.std(values))
    return mean, std, 1.96 * std / math.sqrt(len(values))


def _cells(runs: list[Run], counted: NDArray[np.bool_], shown: list[GroupKey],
           items: list[list[int]], names: Sequence[str], truth_train: NDArray[np.float64],
           truth_test: NDArray[np.float64] | None, y: NDArray[np.float64] | None) -> list[Row]:
    """``tables["cells"]``: largest |Δ| first, undefined last; ties by group, then combination."""
    pred, delta = (np.mean([r[k] for r in runs], axis=0) for k in ("pred", "delta"))
    ii, jj = np.nonzero(counted)
    magnitude = np.abs(delta[ii, jj])
    order = np.lexsort((ii, jj, -np.where(np.isnan(magnitude), -1.0, magnitude)))[:TABLE_ROWS]
    ii, jj = ii[order], jj[order]
    table: dict[str, list[Any]] = {
        "group": [group_label(shown[j]) for j in jj.tolist()],
        "attributes": ["+".join(sorted(names[c] for c in items[i])) for i in ii.tolist()],
        "size": [len(items[i]) for i in ii.tolist()]}
    for key, values in (("train", truth_train), ("test", truth_test), ("pred", pred),
                        ("delta", delta), ("y", y), ("delta_std", np.std(
                            [r["delta"] for r in runs], axis=0) if len(runs) > 1 else None)):
        if values is not None or key == "test":
            table[key] = [None] * len(ii) if values is None else [
                None if v != v else v for v in values[ii, jj].tolist()]
    return [dict(zip(table, values)) for values in zip(*table.values())]


def _replicates(
    options: IntervalOptions, score: Callable[[NDArray[np.float64]], tuple[Any, ...]],
    n_test: int, value: float, linearised: bool, runs: list[Run],
) -> tuple[Bootstrap | None, dict[str, tuple[float, float]], list[str], dict[str, object]]:
    """The runs' mean over drawn test images; ``linearised``: from sign(Δ̂ of ``runs``)·Δ*."""
    params: dict[str, object] = {}
    signs = [np.sign(r["delta"]) for r in runs] if linearised else []

    def row(runs: list[Run]) -> list[float]:
        out = [float(np.mean([r[k] for r in runs])) for k in ("amplification", "variance")]
        if linearised:  # NaN (left out) where a replicate leaves no cell counted
            out.append(float(np.mean([np.nansum((s * r["delta"])[r["counted"]]) /
                r["counted"].sum() if r["counted"].any() else math.nan
                for s, r in zip(signs, runs)])))
        return out

    boot = options.run(lambda w: dict(zip(("value", "variance", "linear"), np.array([
        row(score(weights)[0]) for weights in w]).T)), Units.of(n_test), params)
    if boot is None:
        return None, {}, [], params
    found = boot.defined("value", "variance")
    if linearised:
        params["interval_method"] = "linearised"
        found = {k: v for k, v in (("value", boot.interval("linear")),
                                   ("variance", found.get("variance"))) if v is not None}
    lost = int(np.isnan(boot.replicates["value"] + boot.replicates["variance"]).sum())
    low, high = found.get("value", (value,) * 2)
    notes = [f"{lost} of {options.n_bootstrap} bootstrap replicates drew test images that "
             "leave no cell defined; they are left out of the intervals."] * bool(lost) + [
        f"the value lies outside its bootstrap interval [{low:.4g}, {high:.4g}]: resampling "
        "inflates |Δ| of cells with few test images; raise min_count."] * (
        not low <= value <= high)
    return boot, found | ({"amplification": found["value"]} if "value" in found else {}), (
        notes), params


def _setup(function: str, given: set[str], a: _Args) -> tuple[Any, ...]:
    """Check the arguments ``a`` of ``function``; find M, the groups and the scored columns."""
    if (methods := (*BOOTSTRAP_METHODS, "linearised")) and a.interval_method not in methods:
        raise FairnessConfigError(f"interval_method must be one of {methods}; got "
                                  f"interval_method={a.interval_method!r}.")
    options = IntervalOptions.check(a.n_bootstrap, a.confidence_level, "percentile" if (
        a.interval_method == "linearised") else a.interval_method, a.seed)  # see _replicates
    if "direction" in given and a.direction not in _DIRECTIONS:
        raise FairnessConfigError(
            "direction must be 'G->M' (the group influences the attribute predictions) or 'M->G' "
            f"(the attributes influence the group prediction); got direction={a.direction!r}.")
    reference, direction = a.variant == "reference", _DIRECTIONS.get(a.direction or "")
    multi, a = function.startswith("multi"), replace(a, direction=direction)
    released = _released(a.train_groups) if multi and reference else None
    a, x_train, x_test, x_preds, keys, train_codes, test_codes, pred_codes = _prepare(
        a, function, released)
    n_groups = n_codes = len(keys)
    if function == "directional_bias_amp" and reference and a.min_count != 1:
        raise FairnessConfigError(
            f"variant='reference' uses every attribute column, as the released code does; "
            f"min_count={a.min_count} has no counterpart there. Leave min_count=1.")
    if function == "bias_amp" and reference and n_groups != 2:
        raise FairnessConfigError(
            f"variant='reference' reproduces code written for exactly two groups; got "
            f"{n_groups} groups ({', '.join(map(group_label, keys))}). Use variant='paper'.")
    if multi:
        combos, train, test = combinations(x_train, x_test, min_size=a.min_size,
            max_size=a.max_size, min_count=a.min_count, reference=reference)
    else:  # single attributes: combinations of size 1
        ok = x_train.sum(axis=0) >= a.min_count
        if x_test is not None:  # the released BiasAmp→ code uses every column
            ok = ok & (x_test.sum(axis=0) >= a.min_count) | reference
        if not ok.any():
            raise InsufficientDataError(
                f"no attribute occurs in at least min_count={a.min_count} " + (
                    "images of both train and test; lower min_count or check the attribute "
                    "matrices." if x_test is not None else "training images; lower "
                    "min_count or check train_attrs."))
        labels = Labels(x_train, "train_attrs")
        combos = {1: np.flatnonzero(ok)[:, None].astype(labels.cols.dtype)}
        train = test = labels.hits(combos)
        test = test if x_test is None else Labels(x_test, "test_attrs").hits(combos)
    notes = ["never occur in the test ground truth; their cells are undefined and left out"
             if direction else f"were never predicted; they add 0 but count in "
             f"|{'M' if multi else 'O'}| (released code)" if reference else
             "were never predicted; they are left out of the mean"]
    if multi and reference and n_groups == 2 and not direction:
        notes.append("variant='reference' with two groups: the released code compares bias "
                     "scores with 1/(|G|-1) = 1, so every Δ is 0.")
    codes_of, shown = np.arange(n_groups), keys
    columns = list(range(int(released is not None and direction is not None), n_groups))
    if released is not None and not direction and n_groups == 2:
        columns = [0]  # one 0/1 column: the rows holding 0 are scored
    elif released is not None and not direction:  # argmax: the first group → column 0
        codes_of = np.array([0, *range(n_groups - 1)], dtype=np.intp)
        n_codes, columns, shown = n_groups - 1, list(range(n_groups - 1)), keys[1:]
        notes.append(f"variant='reference': images of group {group_label(keys[0])!r} count as "
                     f"{group_label(keys[1])!r} (argmax of an all-zero row), as in the "
                     "released code.")
    shown = [shown[c] for c in columns]
    n_combos = sum(map(len, combos.values()))
    return (given, a, options, reference, direction, multi, released, x_train, x_test,
            x_preds, train_codes, test_codes, pred_codes, n_groups, n_codes, combos,
            train, test, notes, codes_of, shown, columns, n_combos)


def _amplification(function: str, **arguments: Any) -> IndicatorResult:
    """One indicator from its arguments: inputs, M, counts per group, Δ, the result."""
    (given, a, options, reference, direction, multi, released, x_train, x_test, x_preds,
     train_codes, test_codes, pred_codes, n_groups, n_codes, combos, train, test, notes,
     codes_of, shown, columns, n_combos) = _setup(function, set(arguments), _Args(**arguments))

    def tally(hits: Hits, codes: NDArray[np.intp]) -> Any:
        """``out(w)[i, g]``: images of code ``g`` holding combination ``i``, image j w[j] times."""
        from scipy import sparse
        m = sparse.csr_matrix((np.ones(len(hits[0])), (hits[1] * n_codes + codes_of[codes][
            hits[0]], hits[0])), shape=(n_combos * n_codes, len(codes)))
        return lambda w: (m @ w).reshape(n_combos, n_codes)

    def prob(c: NDArray[Any], n: Any) -> NDArray[np.float64]:
        """P(m | g) (G→M) or P(g | m), the bias score; NaN where undefined."""
        den = np.broadcast_to(n[None, :] if direction == "G->M" else c.sum(
            axis=1, keepdims=True), c.shape)
        return np.divide(c, den, out=np.full(c.shape, np.nan), where=den > 0)

    # M→G: test images truly holding m, by predicted group; else predicted attributes
    pred_counts = [tally(test, c) for c in pred_codes] if direction == "M->G" else [
        tally(Labels(x, "pred_attrs").hits(combos), test_codes if direction else c)
        for x, c in zip(x_preds, pred_codes or x_preds)]
    test_counts = None if x_test is None else tally(test, test_codes)
    counts = tally(train, train_codes)(np.ones(len(train_codes)))
    train_codes = codes_of[train_codes]
    truth_train = prob(counts, np.bincount(train_codes, minlength=n_codes))[:, columns]
    y = kept = None
    if direction:  # y, from the training images that define it
        kept = np.bincount(train_codes[x_train.any(axis=1) | ((train_codes != 0) & multi) | (
            not reference or (multi and released is None))], minlength=n_codes)  # see variant
        if not kept.sum():
            raise InsufficientDataError(
                "no training image has an attribute, so y (the direction of each "
                "correlation) is undefined. Check train_attrs.")
        diff = counts / kept.sum() - (kept / kept.sum())[None, :] * (
            counts.sum(axis=1, keepdims=True) / kept.sum())
        y = (np.sign(diff) if reference else (diff > 0).astype(np.float64))[:, columns]

    def score(w: NDArray[np.float64]) -> tuple[list[Run], Any, Any]:
        """Δ of every run, n and P_test, test image j counted ``w[j]`` times (1: the estimate)."""
        n = np.bincount(train_codes, minlength=n_codes) if x_test is None else np.bincount(
            codes_of[test_codes], w, minlength=n_codes)
        truth_test = None if test_counts is None else prob(test_counts(w), n)[:, columns]
        base = truth_test if truth_test is not None and direction and (
            reference or not multi) else truth_train
        runs = []
        for count in pred_counts:  # Δ per cell (combinations × evaluated groups), averages
            pred = prob(count(w), n)[:, columns]
            delta = pred - base
            if not direction:  # Zhao et al.'s indicator: 1/|G|, or 1/(|G| - 1) in the MBA class
                delta = np.where(truth_train > 1 / (n_groups - (multi and reference)), delta, 0.0)
            undefined = np.isnan(pred) | np.isnan(base)
            counted = np.ones_like(undefined) if reference and not direction else ~undefined
            cell = delta if y is None else y * delta if reference else y * delta + (1 - y) * -delta
            total = int(counted.sum()) // (1 if direction else delta.shape[1])
            finite = delta[counted & ~np.isnan(delta)]
            with np.errstate(invalid="ignore", divide="ignore"):  # NaN: a group without cells
                group_values = np.nansum(np.where(counted, abs(delta) if multi else cell, np.nan),
                                         axis=0) / counted.sum(axis=0)
            means = [float(np.nansum(v[counted]) / total) if total else math.nan
                     for v in (cell, abs(delta))]
            runs.append({"amplification": means[multi], "signed_mean": means[0],
                         "abs_mean": means[1], "variance": float(np.var(finite)) if finite.size
                         else math.nan, "pred": pred, "delta": delta, "counted": counted,
                         "groups": group_values, "undefined": int(undefined.all(axis=1).sum())})
        return runs, n, truth_test

    runs, n, truth_test = score(np.ones(len(test_codes)))
    stats: dict[str, float] = {}
    intervals: dict[str, tuple[float, float]] = {}
    for key in ("amplification", "signed_mean", "abs_mean", "variance"):
        mean, std, half = _conf([r[key] for r in runs])
        stats[key] = mean
        if len(runs) > 1:
            stats[f"{key}_std"], intervals[key] = std, (mean - half, mean + half)
    counted = np.logical_or.reduce([r["counted"] for r in runs])
    items = [row for block in combos.values() for row in block.tolist()]
    stats.update(n_combinations=float(len(items)), n_cells=float(counted.sum()),
                 runs=float(len(runs)), **{} if kept is None else {"n_train_kept": float(
                     kept.sum())})
    intervals |= {"value": intervals["amplification"]} if intervals else {}
    boot, found, boot_notes, params = _replicates(options, score, len(test_codes),
                                                  stats["amplification"],
                                                  a.interval_method == "linearised", runs)
    intervals |= found
    notes += boot_notes  # after notes[0], the template of the undefined cells' note
    per_run = np.array([r["groups"] for r in runs])
    groups = make_group_stats(shown, n[columns], per_run.mean(axis=0), intervals=None if len(
        runs) == 1 else [(m - h, m + h) for m, _, h in map(_conf, per_run.T)],
        min_group_size=a.min_group_size)
    rows = _cells(runs, counted, shown, items, a.names, truth_train, truth_test, y)
    notes = [f"{runs[0]['undefined']} combination(s) {notes[0]}."] * bool(
        runs[0]["undefined"]) + notes[1:]
    if [r for r in rows[:N_NOTED] if r["delta"]]:
        notes.append("most amplified: " + "; ".join(
            f"{r['group']} × {r['attributes']}: Δ={r['delta']:+.4f} (train {r['train']:.3f} → "
            f"pred {r['pred']:.3f})" for r in rows[:N_NOTED] if r["delta"]))
    if counted.sum() > TABLE_ROWS:
        notes.append(f"tables['cells'] keeps the {TABLE_ROWS:,} largest |Δ| of "
                     f"{int(counted.sum()):,} cells.")
    metric = "Multi_MALS" if function == "multi_mals" else "Multi" if multi else "BiasAmp"
    return IndicatorResult(
        name=function, metric=f"{metric} ({direction[0]}→{direction[-1]})" if direction else
        metric, value=stats["amplification"], groups=groups, stats=stats, intervals=intervals,
        tables={"cells": tuple(rows)} | ({} if len(runs) == 1 else {"runs": tuple(
            {"run": k, **{key: r[key] for key in ("amplification", "signed_mean", "variance")}}
            for k, r in enumerate(runs))}), higher_is_better=False,
        min_group_size=a.min_group_size, notes=(*notes, *exclusion_notes(
            groups, a.min_group_size)), params={k: getattr(a, k) for k in (
                "direction", "min_size", "max_size", "min_count", "variant", "threshold")
                if k in given} | {"n_train": len(x_train), "n_test": len(test_codes)} | params,
        replicates={} if boot is None else boot.draws({"value": "value"}))


def bias_amp(train_attrs: Any, train_groups: Any, pred_attrs: Any, pred_groups: Any, *,
             min_count: int = 1, threshold: Any = None, attribute_names: Sequence[str] | None
             = None, min_group_size: int = 30, variant: str = "paper", n_bootstrap: int = 1000,
             confidence_level: float = 0.95, interval_method: str = "percentile",
             seed: Any = None) -> IndicatorResult:
    """BiasAmp of "Men Also Like Shopping" (Zhao et al. 2017), signed.

    Over the attributes of ``min_count`` training images; never-predicted ones are left out.

    Parameters
    ----------
    n_bootstrap, confidence_level, interval_method, seed
        Bootstrap intervals over the prediction rows (default 1,000; 0: none); the seed is in
        ``params``.

    Examples
    --------
    >>> r = bias_amp([[1]] * 4, ["m", "m", "m", "w"], [[1]] * 4, ["m"] * 4, min_group_size=1)
    >>> r.value, r.tables["cells"][0]["delta"]
    (0.25, 0.25)
    """
    return _amplification("bias_amp", **locals())


def directional_bias_amp(
        train_attrs: Any, train_groups: Any, test_attrs: Any, test_groups: Any,
        pred_attrs: Any = None, pred_groups: Any = None, *, direction: str, min_count: int = 1,
        threshold: Any = None, attribute_names: Sequence[str] | None = None,
        min_group_size: int = 30, variant: str = "paper", n_bootstrap: int = 1000,
        confidence_level: float = 0.95, interval_method: str = "percentile",
        seed: Any = None) -> IndicatorResult:
    """BiasAmp→ of "Directional Bias Amplification" (Wang & Russakovsky 2021), signed.

    Predictions against the test ground truth, G→M or M→G (``direction``).

    Parameters
    ----------
    n_bootstrap, confidence_level, interval_method, seed
        Bootstrap intervals over the test images (default 1,000; 0: none); seed in ``params``.

    Examples
    --------
    >>> x, g = [[1], [1], [0], [0]], [0, 0, 1, 1]
    >>> r = directional_bias_amp(x, g, x, g, [[1], [1], [1], [0]], direction="G->M",
    ...                          min_group_size=1)
    >>> r.value, r.group(1).value
    (-0.25, -0.5)
    """
    return _amplification("directional_bias_amp", **locals())


def multi_mals(train_attrs: Any, train_groups: Any, test_attrs: Any, test_groups: Any,
               pred_attrs: Any, pred_groups: Any, *, min_size: int = 1,
               max_size: int | None = None, min_count: int = 1, threshold: Any = None,
               attribute_names: Sequence[str] | None = None, min_group_size: int = 30,
               variant: str = "paper", n_bootstrap: int = 1000, confidence_level: float = 0.95,
               interval_method: str = "percentile", seed: Any = None) -> IndicatorResult:
    """Multi_MALS of "Men Also Do Laundry: Multi-Attribute Bias Amplification".

    The mean |Δ| over groups and attribute combinations, with ``variance(Δ)``.

    Parameters
    ----------
    n_bootstrap, confidence_level, interval_method, seed
        Bootstrap intervals over the test images (default 1,000; 0: none); seed in ``params``.

    Examples
    --------
    >>> x, g = [[1, 1], [1, 1], [1, 0], [0, 1]], ["w", "m", "m", "m"]
    >>> r = multi_mals(x, g, x, g, [[1, 1], [1, 1], [1, 0], [1, 1]], ["w", "w", "m", "m"],
    ...                min_group_size=1)
    >>> round(r.value, 4), r.tables["cells"][0]["attributes"]
    (0.1667, '1')
    """
    return _amplification("multi_mals", **locals())


def multi_directional(
        train_attrs: Any, train_groups: Any, test_attrs: Any, test_groups: Any,
        pred_attrs: Any = None, pred_groups: Any = None, *, direction: str, min_size: int = 1,
        max_size: int | None = None, min_count: int = 1, threshold: Any = None,
        attribute_names: Sequence[str] | None = None, min_group_size: int = 30,
        variant: str = "paper", n_bootstrap: int = 1000, confidence_level: float = 0.95,
        interval_method: str = "linearised", seed: Any = None) -> IndicatorResult:
    """Multi→ of "Men Also Do Laundry: Multi-Attribute Bias Amplification".

    The mean |Δ| over groups and attribute combinations, G→M or M→G, with ``variance(Δ)``
    and the signed mean of ``y·Δ + (1 − y)(−Δ)``.

    Parameters
    ----------
    n_bootstrap, confidence_level, interval_method, seed
        Bootstrap intervals over the test images (default 1,000; 0: none); seed in ``params``.
        ``"linearised"`` (the default): the value's interval is the percentile interval of
        the replicates of the mean of ``sign(Δ̂)·Δ*``, each cell's |Δ| taken with the sign
        of its estimate. Replicates of mean |Δ| add their own upward bias to the
        estimate's; these add none. The value stays the paper's estimate.

    Examples
    --------
    >>> x, g = [[1, 1], [1, 1], [1, 0], [0, 1]], ["w", "w", "m", "m"]
    >>> r = multi_directional(x, g, x, g, [[1, 1], [1, 0], [1, 0], [0, 1]], direction="G->M",
    ...                       min_group_size=1)
    >>> r.value, r.stats["variance"]
    (0.16666666666666666, 0.05555555555555556)
    """
    return _amplification("multi_directional", **locals())
