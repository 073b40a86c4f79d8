"""Fair SA: sensitivity analysis for fairness under image perturbations.

From "Fair SA: Sensitivity Analysis for Fairness in Face Recognition" (Joshi et al. 2022),
extending VPSA's item-response curves (RichardWebster et al. 2018); docs page "Fair SA and VPSA".
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_fairness.errors import (
    FairnessConfigError,
    InsufficientDataError,
    InvalidDataError,
    check_int,
    own_error,
)
from pytest_fairness.indicators._common import (
    as_1d,
    check_min_group_size,
    check_same_length,
    embedding_matrix,
    exclusion_notes,
    make_group_stats,
    row_norms,
)
from pytest_fairness.indicators._pairs import Verification, clean_threshold, false_matches
from pytest_fairness.results import (
    Curve,
    GroupKey,
    IndicatorResult,
    Matrix,
    group_label,
    normalize_group,
)
from pytest_fairness.stats import IntervalOptions, Units

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["curve_key", "fair_sa", "fair_sa_levels"]

__tracebackhide__ = own_error

#: Number of worst cells listed in the notes (and so in failure messages).
_WORST_CELLS = 3

FeatureGetter = Callable[[Any, float], "NDArray[np.float64]"]


def curve_key(kind: str, perturbation: str, subgroup: GroupKey | None = None) -> str:
    """A curve's key: ``fair_sa/young/jpeg`` (α(δ)), ``irc/jpeg`` or ``irc/young/jpeg`` (IRCs)."""
    if subgroup is None:
        return f"{kind}/{perturbation}"
    return f"{kind}/{group_label(normalize_group(subgroup))}/{perturbation}"


def fair_sa_levels(levels: Any) -> NDArray[np.float64]:
    """The levels ``fair_sa(levels=...)`` evaluates: an int spreads that many over [0, 1]."""
    if isinstance(levels, (int, np.integer)) and not isinstance(levels, bool):
        if levels < 2:
            raise FairnessConfigError(
                f"levels must be an int >= 2 (that many evenly spaced levels in [0, 1]) or a "
                f"sequence of levels in [0, 1]; got levels={levels!r}.")
        return np.linspace(0.0, 1.0, int(levels))
    try:
        values = np.asarray(levels, dtype=np.float64)
    except (TypeError, ValueError):
        values = np.asarray([np.nan])
    if values.ndim != 1 or values.size == 0 or not np.all((values >= 0) & (values <= 1)):
        raise FairnessConfigError(
            f"levels must be an int >= 2 or a non-empty sequence of numbers in [0, 1]; got "
            f"levels={levels!r}.")
    if np.any(np.diff(values) <= 0):
        raise FairnessConfigError(
            f"levels must be strictly increasing; got levels={levels!r}. Sort them and drop "
            "duplicates.")
    if values[-1] <= 0:
        raise FairnessConfigError(
            f"levels must include a level above 0 (level 0 is the clean image); got "
            f"levels={levels!r}.")
    return values if values[0] == 0 else np.concatenate([[0.0], values])


def _real(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float, np.floating))


def _check_perturbations(perturbations: Any) -> list[str]:
    """The perturbation names, default every built-in one."""
    from pytest_fairness.perturbations import PERTURBATIONS

    if perturbations is None:
        return list(PERTURBATIONS)
    if isinstance(perturbations, str):
        perturbations = [perturbations]
    if isinstance(perturbations, Mapping):
        raise FairnessConfigError(
            "perturbations takes names; pass perturbation callables to "
            "pytest_fairness.features.perturbed_features(model, images, perturbations=...).")
    names = list(perturbations) if isinstance(perturbations, Iterable) else [perturbations]
    if not names or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise FairnessConfigError(
            f"perturbations must be a non-empty list of distinct names (str); got "
            f"perturbations={perturbations!r}.")
    return names


def _checked(task: Any, levels: Any, far: Any, threshold: Any, prune: Any, seed: Any,
             min_group_size: Any, n_bootstrap: Any, confidence_level: Any,
             interval_method: Any) -> tuple[Any, float, float | None, int, IntervalOptions]:
    """The validated level grid, far, given threshold, min_group_size and interval options."""
    if task not in ("self_matching", "verification"):
        raise FairnessConfigError(
            f"task must be 'self_matching' or 'verification'; got task={task!r}.")
    min_group_size = check_min_group_size(min_group_size)
    grid = fair_sa_levels(levels)
    if not _real(far) or not 0 < far < 1:
        raise FairnessConfigError(
            f"far must be a number in (0, 1) (a false-accept rate, e.g. 0.01 for 1%); got "
            f"far={far!r}.")
    if threshold is not None and (not _real(threshold) or not -1 <= threshold <= 1):
        raise FairnessConfigError(
            f"threshold must be a cosine similarity in [-1, 1], or None to derive it from "
            f"far=; got threshold={threshold!r}.")
    if task == "verification" and threshold is not None:
        raise FairnessConfigError(
            "threshold= applies to task='self_matching'; verification sets its threshold "
            "from far= within each subgroup. Drop threshold= or change task.")
    if not isinstance(prune, bool):
        raise FairnessConfigError(f"prune must be True or False; got prune={prune!r}.")
    given = None if threshold is None else float(threshold)
    options = IntervalOptions.check(n_bootstrap, confidence_level, interval_method,
                                    check_int("seed", seed, low=0))
    return grid, float(far), given, min_group_size, options


def _embeddings(values: Any, what: str) -> NDArray[np.float64]:
    """Validate one embedding matrix and L2-normalise its rows."""
    name = f"the embedding matrix of {what}"
    array = embedding_matrix(values, name).astype(np.float64, copy=False)
    return array / row_norms(array, name)[:, None]


def _what(name: str | None, level: float) -> str:
    return "the clean images" if name is None else f"{name} at level {level:g}"


def _from_mapping(features: Mapping[Any, Any]) -> FeatureGetter:
    def lookup(name: str | None, level: float) -> Any:
        if name is None or level == 0:
            for key in (None, (None, 0), (None, 0.0)):
                if key in features:
                    return features[key]
            if name is None:
                raise FairnessConfigError(
                    "the precomputed features have no clean embeddings; add them under the "
                    "key None.")
        for key, value in features.items():
            if (isinstance(key, tuple) and len(key) == 2 and key[0] == name
                    and isinstance(key[1], (int, float)) and math.isclose(key[1], level)):
                return value
        raise FairnessConfigError(
            f"the precomputed features have no entry for ({name!r}, {level:g}); add it, or "
            "pass only the perturbations and levels that were extracted.")

    return lambda name, level: _embeddings(lookup(name, level), _what(name, level))


def _source(features: Any, dataset: Any, seed: int,
            names: list[str]) -> tuple[FeatureGetter, str]:
    if isinstance(features, Mapping):
        return _from_mapping(features), "precomputed"
    known = getattr(features, "fairness_perturbations", names)  # a PerturbedFeatures' names
    if unknown := [n for n in names if n not in known]:
        raise FairnessConfigError(
            f"perturbations={unknown!r}: not a built-in one ({', '.join(sorted(known))}) nor "
            f"one of yours; pass perturbed_features(model, images, perturbations="
            f"{{{unknown[0]!r}: callable}}) and name it here.")
    try:
        keyword = "perturbation" in inspect.signature(features).parameters
    except (TypeError, ValueError):
        keyword = False
    if not callable(features) or not keyword:
        raise FairnessConfigError(
            f"features must be a mapping of precomputed embeddings or a features callable "
            f"with a 'perturbation' keyword; got {type(features).__name__}. For a model, "
            "pass pytest_fairness.features.perturbed_features(model, images).")

    def get(name: str | None, level: float) -> NDArray[np.float64]:
        # (name, level) at seed 0 keeps the cache key of callables that take 2-tuples.
        spec = (name, level) if seed == 0 else (name, level, seed)
        perturbation = None if name is None or level == 0 else spec
        return _embeddings(features(dataset, perturbation=perturbation), _what(name, level))

    return get, getattr(features, "fairness_source", "features")


def _column(dataset: Any, name: str, parameter: str) -> Any:
    for holder in (getattr(dataset, "attributes", None), getattr(dataset, "frame", None), dataset):
        if holder is None or isinstance(holder, (str, bytes)):
            continue
        try:
            return holder[name]
        except (KeyError, TypeError, IndexError, ValueError):
            continue
    raise FairnessConfigError(
        f"{parameter}={name!r} names a column, but the dataset ({type(dataset).__name__}) has "
        f"no column {name!r}. Pass the labels themselves (one per image) instead.")


def _subgroups(
    attribute: Any, dataset: Any, n: int, protected: Any
) -> list[tuple[GroupKey, NDArray[np.bool_]]]:
    """One ``(row key, protected mask)`` per protected subgroup, one-vs-rest."""
    columns: dict[str | None, Any] = {None: attribute}
    if isinstance(attribute, str):
        columns = {None: _column(dataset, attribute, "attribute")}
    elif isinstance(attribute, Mapping) or hasattr(attribute, "columns"):
        names = list(attribute.columns) if hasattr(attribute, "columns") else list(attribute)
        if not names:
            raise FairnessConfigError("attribute has no columns; pass at least one attribute.")
        columns = {str(c): attribute[c] for c in names}
        if len(columns) == 1:
            columns = {None: next(iter(columns.values()))}
    wanted = None if protected is None else (
        list(protected) if isinstance(protected, (list, tuple, set)) else [protected])
    rows: list[tuple[GroupKey, NDArray[np.bool_]]] = []
    for column, values in columns.items():
        label = "attribute" if column is None else f"attribute[{column!r}]"
        array = as_1d(values, label)
        check_same_length(**{label: array}, embeddings=range(n))
        keys = [normalize_group(v) for v in array.tolist()]
        distinct = list(dict.fromkeys(keys))
        if len(distinct) < 2:
            raise InsufficientDataError(
                f"{label} has a single value {group_label(distinct[0])!r}; Fair SA compares a "
                "protected subgroup with the rest, so it needs at least two values.")
        try:
            distinct.sort()  # type: ignore[type-var,unused-ignore]
        except TypeError:
            distinct.sort(key=str)
        chosen = distinct if wanted is None else [normalize_group(v) for v in wanted]
        missing = [v for v in chosen if v not in distinct]
        if missing:
            raise FairnessConfigError(
                f"protected={protected!r}: value(s) {missing} do not occur in {label} (values: "
                f"{[group_label(v) for v in distinct][:20]}).")
        for value in chosen:
            mask = np.fromiter((k == value for k in keys), dtype=bool, count=n)
            key = value if column is None else f"{column}={group_label(value)}"
            rows.append((key, mask))
    return rows


def _trapezoid(x: NDArray[np.float64], y: NDArray[np.float64]) -> Any:
    """Trapezoid areas under curves ``y`` (..., levels), over the last axis."""
    return np.sum((y[..., 1:] + y[..., :-1]) / 2 * np.diff(x), axis=-1)


def _norms(alpha: NDArray[np.float64], x: NDArray[np.float64],
           included: NDArray[np.bool_]) -> dict[str, NDArray[np.float64]]:
    """AUC cells and L1 norms of α curves (r, subgroups, perturbations, levels), per replicate."""
    auc = _trapezoid(x, alpha)
    inc = np.abs(auc[:, included]) if included.any() else np.full(
        (auc.shape[0], 1, auc.shape[2]), np.nan)  # no subgroup: NaN norms
    flat = inc.reshape(auc.shape[0], -1)
    return {"auc": auc, "l1_row": np.abs(auc).sum(axis=-1), "l1": flat.sum(axis=-1),
            "max_abs_auc": flat.max(axis=-1),
            "l1_col": np.ascontiguousarray(np.swapaxes(inc, 1, 2)).sum(axis=-1)}


def _identities(identities: Any, dataset: Any, n: int, task: str) -> NDArray[Any] | None:
    """One identity key per image, or None (then verification cannot run)."""
    if identities is None:
        if task == "verification":
            raise FairnessConfigError(
                "task='verification' needs identities= (one identity label per image, or a "
                "column name) to tell genuine from impostor pairs.")
        return None
    raw = _column(dataset, identities, "identities") if isinstance(identities, str) else identities
    ids = as_1d(raw, "identities")
    check_same_length(identities=ids, embeddings=range(n))
    return np.asarray([normalize_group(v) for v in ids.tolist()] + [None], dtype=object)[:-1]


class _Sweep:
    """The images kept, the subgroups' sides and what each (perturbation, level) leaves."""

    def __init__(self, task: str, clean: NDArray[np.float64], ids: NDArray[Any] | None,
                 far: float, t: float | None, prune: bool,
                 rows: list[tuple[GroupKey, NDArray[np.bool_]]], options: IntervalOptions,
                 notes: list[str]) -> None:
        n = clean.shape[0]
        self.clean, self.keep, self.t = clean, np.ones(n, dtype=bool), t
        self.parts: list[Verification] = []
        self.verification: Verification | None = None
        if task == "self_matching":
            if self.t is None:
                self.t = clean_threshold(clean, ids, far)
            if prune:
                self.keep = ~false_matches(clean, ids, self.t)
                notes.append(f"pruning dropped {int((~self.keep).sum())} of {n} images that "
                             f"falsely match another clean image at t={self.t:.4g}")
        self.sizes = [(int((m & self.keep).sum()), int((~m & self.keep).sum())) for _, m in rows]
        for (key, _), (n_p, n_r) in zip(rows, self.sizes):
            if n_p == 0 or n_r == 0:
                side = "protected subgroup" if n_p == 0 else "rest (the other images)"
                raise InsufficientDataError(
                    f"subgroup {group_label(key)!r}: its {side} has no images"
                    f"{' after pruning' if prune else ''}, so α cannot be computed. Check the "
                    "attribute labels or pass protected= to choose subgroups.")
        first: dict[Any, int] = {}  # identities are the clusters when given
        self.units = Units.of(n, clusters=None if ids is None else np.array(
            [first.setdefault(v, len(first)) for v in ids.tolist()]))
        self.sides = [(side & self.keep).astype(np.float64) for _, m in rows for side in (m, ~m)]
        self.n_rows = len(rows)
        if task == "verification":
            assert ids is not None
            self._verification(ids, far, prune, rows, options, notes)

    def _verification(self, ids: NDArray[Any], far: float, prune: bool,
                      rows: list[tuple[GroupKey, NDArray[np.bool_]]],
                      options: IntervalOptions, notes: list[str]) -> None:
        n = self.clean.shape[0]
        everyone = Verification(np.arange(n), ids, far, "all images")
        self.parts = [Verification(np.flatnonzero(side), ids, far, f"{what}{group_label(k)!r}")
                      for k, m in rows
                      for side, what in ((m, "subgroup "), (~m, "the rest of subgroup "))]
        if prune:
            scores0 = self.clean @ self.clean.T
            for part in (everyone, *self.parts):
                part.prune(scores0)
            dropped = sum(part.pruned_pairs for part in self.parts)
            notes.append(f"pruning dropped {everyone.pruned_pairs} of {n * (n - 1)} pairs "
                         f"misclassified at level 0 ({dropped} within subgroups and rests)")
        for part in self.parts:
            part.weigh(self.units, spare=options.n_bootstrap > 0)
        self.verification = everyone

    def responses(self, emb: NDArray[np.float64]) -> tuple[Any, float]:
        """What one level leaves to weigh, and its overall match rate (or GAR)."""
        if self.verification is None:
            match = (np.einsum("ij,ij->i", emb, self.clean) >= self.t).astype(np.float64)
            return match, float(match[self.keep].mean())
        scores = emb @ self.clean.T
        return [part.pairs(scores) for part in self.parts], self.verification.gar(scores)

    def run(self, get: FeatureGetter, names: list[str], grid: NDArray[np.float64]
            ) -> tuple[Any, NDArray[np.float64]]:
        """Every (perturbation, level)'s responses (level 0 is the clean one) and IRCs."""
        overall = np.zeros((len(names), grid.size))
        data: list[Any] = []
        clean = self.responses(self.clean)
        for j, name in enumerate(names):
            for k, level in enumerate(grid):
                emb = get(name, float(level)) if k else self.clean
                if emb.shape != self.clean.shape:
                    raise InvalidDataError(
                        f"embeddings for ({name!r}, {level:g}) have shape {emb.shape} but the "
                        f"clean ones have shape {self.clean.shape}: a perturbed entry needs one "
                        "row per clean image, in the same order, from the same model. "
                        "Re-extract that entry from the clean images with the model of the "
                        "clean embeddings.")
                response, overall[j, k] = self.responses(emb) if k else clean
                data.append(response)
        return (np.stack(data, axis=1) if self.verification is None else data), overall

    def curves(self, data: Any, w: NDArray[np.float64], names: list[str],
               grid: NDArray[np.float64]) -> tuple[Any, Any]:
        """α and the protected side's rate (r, subgroup, perturbation, level) at weights w."""
        if self.verification is None:
            image = w[:, self.units.codes]
            with np.errstate(invalid="ignore", divide="ignore"):
                out = np.stack([(image * side) @ data / (image @ side)[:, None]
                                for side in self.sides], axis=1)
        else:
            out = np.stack([part.weighted_gar([d[s] for d in data], w)
                            for s, part in enumerate(self.parts)], axis=1)
        rate = out.reshape(w.shape[0], self.n_rows, 2, len(names), grid.size)
        return rate[:, :, 0] - rate[:, :, 1], rate[:, :, 0]


def _stats(estimate: Mapping[str, NDArray[np.float64]], included: NDArray[np.bool_],
           labels: list[str], names: list[str], irc_all: Any, t: float | None) -> dict[str, float]:
    stats = {"l1": float(estimate["l1"]), "max_abs_auc": float(estimate["max_abs_auc"]),
             **({} if t is None else {"threshold": t})}
    stats.update({f"l1_row[{labels[i]}]": float(estimate["l1_row"][i])
                  for i in np.flatnonzero(included)})
    stats.update({f"{kind}[{name}]": float(v[j]) for kind, v in (
        ("l1_col", estimate["l1_col"]), ("irc_auc", irc_all)) for j, name in enumerate(names)})
    return stats


def _intervals(boot: Any, stats: Mapping[str, float], labels: list[str], names: list[str],
               included: NDArray[np.bool_], n_bootstrap: int, notes: list[str]) -> Any:
    """The intervals of the stats, of every AUC cell and of every row norm (None: none)."""
    if boot is None:
        return {}, None, None
    found = {f"{kind}[{label}]": boot.interval(kind, i) for kind, some in (
        ("l1_row", labels), ("l1_col", names)) for i, label in enumerate(some)}
    found.update(l1=boot.interval("l1"), max_abs_auc=boot.interval("max_abs_auc"))
    intervals = {k: v for k, v in found.items() if k in stats and v is not None}
    if "l1" in intervals:
        intervals["value"] = intervals["l1"]
    cells = [tuple(boot.interval("auc", i, j) for j in range(len(names)))
             for i in range(len(labels))]
    rows = [boot.interval("l1_row", i) for i in range(len(labels))]
    left = int(np.isnan(boot.replicates["l1"]).sum()) if included.any() else 0
    if left:
        notes.append(f"{left} of {n_bootstrap} bootstrap replicates left out of the "
                     "intervals: a subgroup or its rest drew no images (or pairs)")
    return intervals, cells, rows


def _matrices(keys: list[Any], names: list[str], included: NDArray[np.bool_], auc: Any,
              cell_intervals: Any, irc_all: Any, irc_rows: Any) -> dict[str, Matrix]:
    matrices = {
        "auc": Matrix(tuple(k for k, inc in zip(keys, included) if inc), tuple(names),
                      tuple(map(tuple, auc[included])), None if cell_intervals is None else
                      tuple(c for c, inc in zip(cell_intervals, included) if inc)),
        "irc_auc": Matrix(("all", *keys), tuple(names), (tuple(irc_all), *map(tuple, irc_rows)))}
    if not included.all():
        matrices["auc_all"] = Matrix(tuple(keys), tuple(names), tuple(map(tuple, auc)),
                                     None if cell_intervals is None else tuple(cell_intervals))
    return matrices


def _curves(keys: list[Any], labels: list[str], names: list[str], grid: Any, overall: Any,
            alpha: Any, rate_p: Any, task: str, far: float) -> tuple[dict[str, Curve], list[Any]]:
    """Every α(δ) and item-response curve, and the index of them."""
    y_label = "α = P(match | protected) − P(match | rest)" if task == "self_matching" else (
        f"α = GAR@FAR={far:g} (protected) − GAR@FAR (rest)")
    irc_label = "match rate" if task == "self_matching" else f"GAR at FAR={far:g}"
    rows: list[tuple[Any, ...]] = [("irc", name, None, None, overall[j], irc_label)
                                   for j, name in enumerate(names)]
    rows += [(kind, name, key, labels[i], y[i, j], lab) for i, key in enumerate(keys)
             for j, name in enumerate(names)
             for kind, y, lab in (("fair_sa", alpha, y_label), ("irc", rate_p, irc_label))]
    curves = {curve_key(kind, name, key): Curve(tuple(grid), tuple(y), "level", lab)
              for kind, name, key, _, y, lab in rows}
    return curves, [{"curve": curve_key(kind, name, key), "kind": kind, "subgroup": label,
                     "perturbation": name} for kind, name, key, label, _, _ in rows]


def _cells(labels: list[str], names: list[str], grid: Any, auc: Any, alpha: Any,
           included: NDArray[np.bool_], notes: list[str]) -> list[dict[str, object]]:
    """The AUC cells by decreasing |AUC|; the worst ones, with their curves, go to notes."""
    order = sorted(np.ndindex(auc.shape), key=lambda c: (-abs(auc[c]), labels[c[0]], names[c[1]]))
    for i, j in [(i, j) for i, j in order if included[i]][:_WORST_CELLS]:
        points = ", ".join(f"{lv:g}: {a:+.3g}" for lv, a in zip(grid, alpha[i, j]))
        notes.append(f"cell {labels[i]} × {names[j]}: AUC {auc[i, j]:+.4g}; α(δ) = {points}")
    worst = np.argmax(np.abs(alpha), axis=-1)
    return [{"subgroup": labels[i], "perturbation": names[j], "auc": float(auc[i, j]),
             "clean_alpha": float(alpha[i, j, 0]), "worst_level": float(grid[worst[i, j]]),
             "worst_alpha": float(alpha[i, j, worst[i, j]]), "excluded": not bool(included[i])}
            for i, j in order]


def _named(labels: Any) -> Any:
    """How params record labels: the column name, None, or ``"labels"``."""
    return labels if isinstance(labels, str) or labels is None else "labels"


def _groups(keys: list[Any], sizes: list[tuple[int, int]], row_l1: Any, auc: Any, alpha: Any,
            row_intervals: Any, included: NDArray[np.bool_], min_group_size: int,
            notes: list[str]) -> tuple[Any, ...]:
    """One group per protected subgroup, its value the row L1 norm."""
    group_stats = make_group_stats(
        keys, [a for a, _ in sizes], row_l1, min_group_size=min_group_size, intervals=row_intervals,
        stats=[{"mean_auc": float(auc[i].mean()), "clean_alpha": float(alpha[i, 0, 0]),
                "worst_auc": float(auc[i, np.argmax(np.abs(auc[i]))]),
                "n_rest": float(sizes[i][1])} for i in range(len(keys))])
    for g, inc in zip(group_stats, included):
        if not inc and not g.excluded:  # the rest is the small side
            notes.append(f"subgroup {g.label}: its rest has fewer than min_group_size="
                         f"{min_group_size} images; left out of the AUC matrix")
    return tuple(g if inc else replace(g, excluded=True) for g, inc in zip(group_stats, included))


def fair_sa(features: Any, dataset: Any = None, *, attribute: Any, perturbations: Any = None,
            levels: Any = 5, task: str = "self_matching", threshold: float | None = None,
            far: float = 0.01, identities: Any = None, protected: Any = None,
            prune: bool = False, seed: int = 0, min_group_size: int = 30,
            n_bootstrap: int = 1000, confidence_level: float = 0.95,
            interval_method: str = "percentile") -> IndicatorResult:
    """Fair SA curves, VPSA item-response curves and the signed-AUC matrix.

    From "Fair SA: Sensitivity Analysis for Fairness in Face Recognition" (Joshi et al. 2022).

    Parameters
    ----------
    features : mapping or features callable
        ``{None: clean, (name, level): perturbed}`` embeddings, or ``features(dataset, *,
        perturbation=None | (name, level) | (name, level, seed))``.
    dataset : any object, optional
        Passed to a features callable; holds the columns named by ``attribute``/``identities``.
    attribute : str, array-like, mapping or DataFrame
        A column name or one label per image; several columns give rows ``"column=value"``.
    perturbations : str or sequence of str, optional
        Default: every one of :data:`pytest_fairness.perturbations.PERTURBATIONS`.
    levels : int or sequence of float, default 5
        An int n gives n evenly spaced levels in [0, 1]; level 0 is always included.
    task : {"self_matching", "verification"}
    threshold, far : float
        Self-matching cosine threshold (default: set from the false-accept rate ``far`` on
        clean impostor pairs); ``far`` is also verification's operating point.
    identities : str or array-like, optional
        Identity per image: required for verification; restricts impostor pairs.
    protected : value or list of values, optional
        The protected values (default every value, each against the rest).
    prune : bool, default False
        VPSA's pruning of images (or pairs) that fail at level 0.
    seed : int, default 0
        Seeds the perturbations' noise (via a features callable) and the bootstrap.
    min_group_size : int, default 30
        Smaller subgroups (or rests) are reported but left out of the matrix and norms.
    n_bootstrap, confidence_level, interval_method
        Bootstrap intervals (images, or identities when given, redrawn): 1,000 replicates by
        default; 0 computes none.

    Returns
    -------
    IndicatorResult
        ``value``: the matrix L1 norm; ``matrices["auc"]``, ``curves[curve_key(...)]``, one
        group per subgroup (its row L1 norm), ``tables["cells"]``; the worst cells in notes.

    Examples
    --------
    >>> import numpy as np
    >>> clean = np.eye(4)
    >>> blurred = np.eye(4)
    >>> blurred[3] = [1, 1, 1, 0]  # image 3 (subgroup b) no longer matches itself
    >>> r = fair_sa({None: clean, ("blur", 1.0): blurred}, attribute=["a", "a", "b", "b"],
    ...             perturbations=["blur"], levels=[1.0], threshold=0.5, min_group_size=1)
    >>> r.matrices["auc"].values, r.stats["l1"], r.curves["fair_sa/b/blur"].y
    (((0.25,), (-0.25,)), 0.5, (0.0, -0.5))
    """
    grid, far, t, min_group_size, options = _checked(
        task, levels, far, threshold, prune, seed, min_group_size, n_bootstrap,
        confidence_level, interval_method)
    names = _check_perturbations(perturbations)
    get, source = _source(features, dataset, int(seed), names)
    clean = get(None, 0.0)
    n = clean.shape[0]
    rows = _subgroups(attribute, dataset, n, protected)
    ids = _identities(identities, dataset, n, task)
    notes: list[str] = []
    sweep = _Sweep(task, clean, ids, far, t, prune, rows, options, notes)
    data, overall = sweep.run(get, names, grid)
    x = grid / grid[-1]
    included = np.array([min(a, b) >= min_group_size for a, b in sweep.sizes], dtype=bool)
    alphas, rates_p = sweep.curves(data, np.ones((1, sweep.units.n_clusters)), names, grid)
    alpha, rate_p = alphas[0], rates_p[0]
    estimate = {key: v[0] for key, v in _norms(alphas, x, included).items()}
    keys = [key for key, _ in rows]
    labels = [group_label(normalize_group(k)) for k in keys]
    irc_all = _trapezoid(x, overall)
    stats = _stats(estimate, included, labels, names, irc_all, sweep.t)
    params = {
        "task": task, "perturbations": names, "levels": grid.tolist(), "threshold": sweep.t,
        "threshold_source": "given" if t is not None else (
            "far" if task == "self_matching" else "far per subgroup"),
        "far": far, "prune": prune, "seed": int(seed), "protected": protected,
        "attribute": _named(attribute), "identities": _named(identities),
        "min_group_size": min_group_size, "n": n, "source": source}
    step = 2_000_000 // max([1, *(part.top for part in sweep.parts)])  # pairs × replicates
    boot = options.run(lambda w: _norms(np.concatenate([
        sweep.curves(data, w[i : i + step], names, grid)[0]
        for i in range(0, w.shape[0], step)]), x, included), sweep.units, params)
    intervals, cells_ci, rows_ci = _intervals(boot, stats, labels, names, included,
                                              options.n_bootstrap, notes)
    auc = estimate["auc"]
    matrices = _matrices(keys, names, included, auc, cells_ci, irc_all, _trapezoid(x, rate_p))
    curves, index_rows = _curves(keys, labels, names, grid, overall, alpha, rate_p, task, far)
    cells = _cells(labels, names, grid, auc, alpha, included, notes)
    group_stats = _groups(keys, sweep.sizes, estimate["l1_row"], auc, alpha, rows_ci,
                          included, min_group_size, notes)
    return IndicatorResult(
        name="fair_sa", metric=f"auc_l1 ({task.replace('_', '-')})", value=stats["l1"],
        groups=group_stats, stats=stats, intervals=intervals, curves=curves,
        matrices=matrices, tables={"cells": tuple(cells), "curves": tuple(index_rows)},
        params=params, replicates={} if boot is None else boot.draws({"value": "l1"}),
        higher_is_better=False, min_group_size=min_group_size,
        notes=(*exclusion_notes(group_stats, min_group_size), *notes))
