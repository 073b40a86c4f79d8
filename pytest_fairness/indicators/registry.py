"""The indicator registry: what every public indicator function is, and how it is judged.

It imports nothing else of the package, so any layer can read it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, final

#: The invariances an :class:`IndicatorSpec` may declare. "No number": the headline value,
#: the gap and every group's value, up to float rounding of sums taken in another order.
PROPERTIES: Mapping[str, str] = MappingProxyType({
    "row_permutation": "permuting the rows (images, queries, items) of each set of "
                       "row-aligned inputs, all its inputs together, changes no number",
    "group_relabelling": "renaming the group labels by any bijection (one that changes their "
                         "sorted order too) renames the groups of the result and changes no "
                         "number",
    "embedding_scale": "multiplying each embedding row by its own positive factor changes no "
                       "number (only cosine similarities are used)",
    "attribute_permutation": "permuting the columns of the 0/1 attribute matrices (and their "
                             "names) together changes no number",
    "duplicate_counted_once": "listing an image again (same image id) changes no number"})


@final
@dataclass(frozen=True, slots=True)
class Headline:
    """What a result is judged on when the user names no metric (history, baselines, reports).

    ``metric``: ``"gap"``, ``"value"`` or a ``stats`` key; ``magnitude``: judged on |value|
    (iEAT's d); ``has_gap``: False where groups are not people (iEAT's target sets, cells);
    ``secondary``: stats shown beside it; ``group_value``: what a group's value is, if not
    the result's metric.
    """

    metric: str
    label: str
    lower_is_better: bool = True
    magnitude: bool = False
    has_gap: bool = True
    secondary: tuple[str, ...] = ()
    group_value: str = ""

    @property
    def field(self) -> str:
        """Which stored number the headline is: ``"gap"`` or ``"value"``."""
        return "gap" if self.metric == "gap" else "value"

    def read(self, value: float | None, gap: float | None) -> float | None:
        """The headline number from a result's ``value`` and ``gap`` (None if undefined)."""
        number = gap if self.field == "gap" else value
        if number is None or number != number:
            return None
        return abs(number) if self.magnitude else number


#: The headline of a result whose indicator the registry does not know (a user's own).
GAP_HEADLINE = Headline("gap", "gap")


@final
@dataclass(frozen=True, slots=True)
class IndicatorSpec:
    """What the registry knows about one indicator function.

    ``higher_is_better`` is None when an argument (``direction_argument``) decides it;
    ``needs`` describes the inputs (``"argument: what it is"``); ``properties`` names the
    invariances guaranteed; ``metrics`` the names (or shell patterns) ``metric=`` may take.
    """

    name: str
    module: str
    source: str
    higher_is_better: bool | None
    needs: tuple[str, ...]
    properties: frozenset[str] = frozenset()
    direction_argument: str | None = None
    headline: Headline = GAP_HEADLINE
    metrics: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = sorted(self.properties - PROPERTIES.keys())
        if unknown:
            raise ValueError(
                f"IndicatorSpec {self.name!r}: unknown properties {unknown}; known: "
                f"{sorted(PROPERTIES)}.")
        if (self.higher_is_better is None) == (self.direction_argument is None):
            raise ValueError(
                f"IndicatorSpec {self.name!r}: give higher_is_better, or set it to None and "
                "name the argument that decides it in direction_argument (not both).")

    @property
    def function(self) -> Callable[..., Any]:
        """The indicator function (imports its module on first use)."""
        module = importlib.import_module(f"pytest_fairness.indicators.{self.module}")
        function: Callable[..., Any] = getattr(module, self.name)
        return function


_TABULAR = frozenset({"row_permutation", "group_relabelling"})
_AMPLIFICATION = _TABULAR | {"attribute_permutation"}
_EMBEDDINGS = frozenset({"row_permutation", "embedding_scale"})
_TRAIN = "train_attrs, train_groups: 0/1 training attributes (n, a) and groups"
_TEST = "test_attrs, test_groups: 0/1 test attributes and groups (ground truth)"
_PRED = "pred_attrs, pred_groups: predicted attributes and groups, or a list of runs"
_IEAT = Headline("effect_size", "|effect size|", magnitude=True, has_gap=False,
                 secondary=("p_value",), group_value="mean association")
_IEAT_METRICS = ("effect_size", "p_value", "statistic", "mean_association_x",
                 "mean_association_y", "std_association")
_AMP = Headline("amplification", "amplification", has_gap=False, secondary=("variance",))
_AMP_METRICS = ("amplification", "signed_mean", "abs_mean", "variance")

_SPECS = (
    IndicatorSpec(
        "group_metrics", "cross_domain", "Iurada et al. 2023 (classification)", True,
        ("y_true, y_pred: true and predicted labels (n,)", "groups: group of each row"),
        _TABULAR, headline=Headline("gap", "gap (DA)"),
        metrics=("accuracy", "MGA", "mGA", "DA", "DEO", "DEOdds", "DTO", "TPR", "FPR")),
    IndicatorSpec(
        "landmark_metrics", "cross_domain", "Iurada et al. 2023 (landmark detection)", True,
        ("y_true, y_pred: true and predicted landmarks (n, K, 2)",
         "groups: group of each image",
         "normalizer: a landmark pair or one distance per image"),
        _TABULAR, headline=Headline("gap", "gap (DS)"),
        metrics=("SDR", "NME", "MGS", "mGS", "DS", "DTO")),
    # Its inputs are results: it inherits their invariances and has none of its own.
    IndicatorSpec(
        "delta_dto", "cross_domain", "Iurada et al. 2023", True,
        ("result: group_metrics or landmark_metrics result of the model",
         "baseline: the same indicator and variant for the baseline model"),
        headline=Headline("value", "ΔDTO", lower_is_better=False, has_gap=False),
        metrics=("delta_dto", "DTO", "DTO_baseline")),
    # Higher is better only for label_type="human" (the correct-label rate); every other
    # type, "harmful" (the default) included, is a rate to keep low.
    IndicatorSpec(
        "label_association", "harmful_labels", "Goyal et al. 2022 §3.1", None,
        ("labels: top-k predicted labels (n, k)", "scores: their confidences",
         "groups: group of each image", "taxonomy: label → label type"),
        _TABULAR, direction_argument="label_type", metrics=("*_hit_rate",)),
    IndicatorSpec(
        "geodiversity", "geographic", "Goyal et al. 2022 §3.2", True,
        ("labels: top-k predicted labels (rows, k)", "scores: their confidences",
         "truth: ground-truth label(s) of each row",
         "household, region, income: of each row (constant within a household)",
         "image: image id of each row (optional)"),
        _TABULAR | {"duplicate_counted_once"}, metrics=("hit_rate", "images")),
    IndicatorSpec(
        "precision_at_k", "retrieval", "Goyal et al. 2022 §3.3", True,
        ("queries: embeddings (n, d) and their attribute frame",
         "database: embeddings (m, d) and their attribute frame",
         "match, by: attribute columns of the frames"),
        _TABULAR | _EMBEDDINGS, metrics=("precision@*",)),
    IndicatorSpec(
        "ieat", "embedding_association", "Steed & Caliskan 2021 §3.3", False,
        ("X, Y: embeddings of the two target sets", "A, B: embeddings of the two attribute sets"),
        _EMBEDDINGS, headline=_IEAT, metrics=_IEAT_METRICS),
    IndicatorSpec(
        "ieat_battery", "embedding_association",
        "Steed & Caliskan 2021 §3.3 (Holm-adjusted battery)",
        False, ("tests: test name → (X, Y, A, B) embeddings",), _EMBEDDINGS,
        headline=_IEAT, metrics=(*_IEAT_METRICS, "p_value_holm")),
    IndicatorSpec(
        "bias_amp", "amplification", "Zhao et al. 2017", False,
        (_TRAIN, _PRED), _AMPLIFICATION, headline=_AMP, metrics=_AMP_METRICS),
    IndicatorSpec(
        "directional_bias_amp", "amplification", "Wang & Russakovsky 2021", False,
        (_TRAIN, _TEST, _PRED, "direction: 'G->M' or 'M->G'"), _AMPLIFICATION,
        headline=_AMP, metrics=_AMP_METRICS),
    IndicatorSpec(
        "multi_mals", "amplification", "Zhao et al. 2023 (Multi_MALS)", False,
        (_TRAIN, _TEST, _PRED), _AMPLIFICATION, headline=_AMP, metrics=_AMP_METRICS),
    IndicatorSpec(
        "multi_directional", "amplification", "Zhao et al. 2023 (Multi→)", False,
        (_TRAIN, _TEST, _PRED, "direction: 'G->M' or 'M->G'"), _AMPLIFICATION,
        headline=_AMP, metrics=_AMP_METRICS),
    IndicatorSpec(
        "fair_sa", "sensitivity", "Joshi et al. 2022 §3", False,
        ("features: a features callable (e.g. perturbed_features(model, images)) or "
         "embeddings {None: clean, (perturbation, level): perturbed}",
         "attribute: protected attribute of each image",
         "identities: identity of each image (verification)"),
        _TABULAR | _EMBEDDINGS,
        headline=Headline("l1", "L1 of AUCs", has_gap=False, secondary=("max_abs_auc",)),
        metrics=("l1", "max_abs_auc", "l1_row[*]", "l1_col[*]", "irc_auc[*]", "mean_auc",
                 "worst_auc")))

#: Public function name → its :class:`IndicatorSpec`, in the order of the table above.
INDICATORS: Mapping[str, IndicatorSpec] = MappingProxyType({s.name: s for s in _SPECS})

def headline(name: str) -> Headline:
    """The :class:`Headline` of results named ``name`` (:data:`GAP_HEADLINE` if unknown)."""
    spec = INDICATORS.get(name)
    return GAP_HEADLINE if spec is None else spec.headline
