"""Unit tests of the bootstrap layer in stats.py."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_fairness.errors import FairnessConfigError, InvalidDataError
from pytest_fairness.results import IndicatorResult
from pytest_fairness.stats import (
    IntervalOptions,
    Units,
    as_generator,
    bootstrap,
    check_bootstrap_options,
    resolve_seed,
)


def _data() -> tuple[np.ndarray, np.ndarray]:
    values = np.r_[np.ones(40), np.zeros(20), np.ones(15), np.zeros(45)]
    groups = np.r_[np.zeros(60, int), np.ones(60, int)]
    return values, groups


def test_as_generator_rejects_negative_seed() -> None:
    with pytest.raises(FairnessConfigError, match=r"seed=-1"):
        as_generator(-1)


def test_resolve_seed_reports_drawn_seed() -> None:
    rng, seed = resolve_seed(None)
    assert isinstance(seed, int)
    assert resolve_seed(5)[1] == 5
    assert resolve_seed(np.random.default_rng(1))[1] is None
    assert rng is not None


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ((-1, 0.95, "percentile"), r"n_bootstrap=-1"),
        ((True, 0.95, "percentile"), r"n_bootstrap=True"),
        ((50, 0.95, "percentile"), r"at least 100"),
        ((1000, 1.0, "percentile"), r"confidence_level=1\.0"),
        ((1000, 0.95, "normal"), r"interval_method='normal'"),
    ],
)
def test_check_bootstrap_options_rejects(args: tuple, fragment: str) -> None:
    with pytest.raises(FairnessConfigError, match=fragment):
        check_bootstrap_options(*args)


def test_check_bootstrap_options_accepts_off() -> None:
    assert check_bootstrap_options(0, 0.9, "bca") == (0, 0.9, "bca")


def test_strata_keep_their_size_in_every_replicate() -> None:
    """Stratified draws: each stratum's total weight equals its cluster count."""
    strata = np.r_[np.zeros(7, int), np.ones(3, int), np.full(5, 2)]
    units = Units.of(15, strata=strata)
    seen = []

    def statistic(w: np.ndarray) -> dict[str, np.ndarray]:
        seen.append(w)
        return {"a": w[:, :7].sum(axis=1), "b": w[:, 7:10].sum(axis=1)}

    b = bootstrap(statistic, units, n_bootstrap=100, seed=0)
    assert (b.replicates["a"] == 7).all() and (b.replicates["b"] == 3).all()
    w = np.concatenate(seen[1:])
    assert w.shape == (100, 15) and (w[:, 10:].sum(axis=1) == 5).all()
    assert not (w == 1).all()  # really resampled


def test_cluster_across_strata_is_refused() -> None:
    with pytest.raises(InvalidDataError, match="one stratum"):
        Units.of(4, clusters=[0, 0, 1, 1], strata=[0, 1, 1, 1])


def test_string_cluster_ids_number_clusters_in_sorted_order() -> None:
    """Household or identity ids given as strings are clusters too, not a numpy error."""
    assert Units.of(4, clusters=["b", "a", "b", "c"]).codes.tolist() == [1, 0, 1, 2]
    pairs = np.array([["x", "1"], ["x", "0"], ["y", "1"], ["x", "1"]])
    assert Units.of(4, clusters=pairs).codes.tolist() == [1, 0, 2, 1]


def test_clusters_codes_are_the_rows_sorted_ranks() -> None:
    """Mixed-radix codes equal ``np.unique(rows, axis=0)``'s inverse: pairing relies on them."""
    rng = np.random.default_rng(3)
    for labels in (rng.integers(-5, 9, 300), rng.integers(0, 4, (300, 3)),
                   rng.integers(0, 50, (300, 2)) / 7, rng.integers(-2**40, 2**40, (300, 2))):
        expected = np.unique(labels.reshape(300, -1), axis=0, return_inverse=True)[1]
        assert Units.of(300, clusters=labels).codes.tolist() == expected.reshape(-1).tolist()


def test_clusters_of_wrong_length_are_refused() -> None:
    with pytest.raises(InvalidDataError, match=r"clusters must have one label per row \(4\)"):
        Units.of(4, clusters=[0, 1])


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_array_statistics_and_nan_replicates(method: str) -> None:
    """Array-valued statistics get one interval per entry; NaN replicates are skipped."""
    x = np.arange(20.0)
    units = Units.of(20)

    def statistic(w: np.ndarray) -> dict[str, np.ndarray]:
        mean = w @ x / w.sum(axis=1)
        return {"pair": np.stack([mean, 2 * mean], axis=1),
                "nan": np.full(w.shape[0], np.nan)}

    b = bootstrap(statistic, units, n_bootstrap=200, method=method, seed=1)
    lo0, hi0 = b.interval("pair", 0)
    lo1, hi1 = b.interval("pair", 1)
    assert lo0 < 9.5 < hi0 and lo1 == pytest.approx(2 * lo0) and hi1 == pytest.approx(2 * hi0)
    assert b.interval("nan") is None


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_pooled_kinds_resample_like_units(method: str) -> None:
    """Pooling identical rows into kinds gives the same intervals up to Monte Carlo error."""
    rng = np.random.default_rng(5)
    y = (rng.random(400) < 0.3).astype(float)
    g = rng.integers(0, 2, 400)

    def make(units: Units):
        t = units.totals(y, np.arange(400), g, 2)
        c = units.totals(np.ones(400), np.arange(400), g, 2)
        return lambda w: {"gap": np.diff((t.T @ w.T).T / (c.T @ w.T).T, axis=1)[:, 0]}

    plain = Units.of(400)
    pooled = Units.of(400, kinds=np.stack([y, g], axis=1))
    assert pooled.n_clusters == 4
    a = bootstrap(make(plain), plain, n_bootstrap=4000, method=method, seed=0)
    b = bootstrap(make(pooled), pooled, n_bootstrap=4000, method=method, seed=0)
    assert a.estimate["gap"] == pytest.approx(b.estimate["gap"], abs=1e-12)
    assert a.interval("gap") == pytest.approx(b.interval("gap"), abs=0.01)


def test_plan_depends_on_what_is_drawn_only() -> None:
    assert Units.of(4).plan == Units.of(4, kinds=[0, 0, 1, 1]).plan != Units.of(5).plan


def test_interval_options_record_what_they_drew() -> None:
    options = IntervalOptions.check(200, 0.9, "percentile", seed=1)
    params: dict[str, object] = {}
    x = np.arange(10.0)
    b = options.run(lambda w: {"mean": w @ x / w.sum(axis=1)}, Units.of(10), params)
    assert b is not None
    assert sorted(params) == ["bootstrap_plan", "confidence_level", "interval_method",
                              "n_bootstrap", "seed"]
    assert b.confidence_level == 0.9
    assert IntervalOptions.check(0, 0.95, "percentile", None).run(None, None, {}) is None


def test_bootstrap_interval_of_a_mean_covers_it() -> None:
    x = np.arange(10.0)
    b = bootstrap(lambda w: {"mean": w @ x / w.sum(axis=1)}, Units.of(10),
                  n_bootstrap=200, seed=0)
    interval = b.interval("mean")
    assert interval is not None
    low, high = interval
    assert bool(low < 4.5 < high)


@pytest.mark.parametrize("how", ["rows", "clusters", "kinds"])
@pytest.mark.usefixtures("paired_draws")  # kinds drawn row by row, as a comparing run does
def test_sums_formed_while_drawing_are_the_weights_product(how: str) -> None:
    """Without holding the weights, the sums are those of the weights drawn: exactly the
    same replicates, added in another order."""
    from pytest_fairness import draws

    rng = np.random.default_rng(4)
    n = 20_000  # two blocks of units; the second a partial one
    labels = rng.integers(0, 5, n)
    units = {"rows": Units.of(n), "clusters": Units.of(n, clusters=rng.integers(0, 900, n)),
             "kinds": Units.of(n, kinds=labels)}[how]
    assert (units.sizes is not None) == (how == "kinds") and not units.by_kind
    totals = rng.random((units.n_clusters, 7))
    key = np.array([3, 9], dtype=np.uint64)
    weights = draws.draw(units, key, 0, 48)
    np.testing.assert_allclose(draws.drawn_sums(units, key, 48, totals), weights @ totals,
                               rtol=1e-12)


def test_draws_too_large_to_keep_give_the_kept_draws_intervals(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A statistic of weighted sums drawn without its weights (the cache too small to keep
    them) has the replicates and intervals of the same draw kept whole."""
    from pytest_fairness import draws
    from pytest_fairness.indicators.cross_domain import landmark_metrics

    rng = np.random.default_rng(5)
    truth = rng.normal(size=(400, 5, 2)) * 20
    pred = truth + rng.normal(size=truth.shape)
    groups = rng.integers(0, 3, 400)

    def call() -> IndicatorResult:
        return landmark_metrics(truth, pred, groups=groups, normalizer=(0, 1),
                                n_bootstrap=200, seed=2, min_group_size=30)

    monkeypatch.setattr(draws, "_cache", {})
    kept = call()
    monkeypatch.setattr(draws, "_cache", {})
    monkeypatch.setattr(draws, "_CACHE_BYTES", 0)
    formed = call()
    assert not draws._cache
    assert formed.replicates == kept.replicates
    for name, pair in kept.intervals.items():
        assert formed.intervals[name] == pytest.approx(pair, abs=1e-12)
