"""Unit tests of the iEAT indicator (Steed & Caliskan, FAccT 2021) and its stimuli loader."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from pytest_fairness import fairness
from pytest_fairness.data.ieat_stimuli import (
    IEATTestSpec,
    category_paths,
    ieat_tests,
    load_ieat_stimuli,
)
from pytest_fairness.errors import (
    FairnessConfigError,
    FairnessViolation,
    InsufficientDataError,
    InvalidDataError,
)
from pytest_fairness.indicators import embedding_association, ieat
from pytest_fairness.indicators.embedding_association import holm, ieat_battery
from pytest_fairness.results import IndicatorResult

# A = two copies of e1, B = two copies of e2, so s(w) = (w1 - w2) / |w| by hand.
A2 = [[1.0, 0.0], [1.0, 0.0]]
B2 = [[0.0, 1.0], [0.0, 1.0]]
X2 = [[1.0, 0.0], [3.0, 4.0]]  # s = 1, -0.2
Y2 = [[0.0, 1.0], [4.0, 3.0]]  # s = -1, 0.2


def _rand(seed: int, *sizes: int, d: int = 8) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(n, d)) for n in sizes]


# -- hand-computed ------------------------------------------------------------------------

def test_hand_computed_exact_case():
    """s = (1, -0.2 | -1, 0.2): the 6 splits sum to 0.8, 0, 1.2, -1.2, 0, -0.8 on the X side."""
    r = ieat(X2, Y2, A2, B2, seed=0)
    assert r.stats["statistic"] == pytest.approx(1.6)
    assert r.stats["effect_size"] == pytest.approx(0.8 / math.sqrt(2.08 / 3))
    assert r.value == r.stats["effect_size"]
    assert r.params["exact"] is True
    assert r.params["n_partitions"] == 6
    # only {x1, y2} (sum 1.2) exceeds 0.8; the identity split ties
    assert r.stats["p_value"] == pytest.approx(1 / 6)
    assert r.params["n_ties"] == 1
    assert r.stats["mean_association_x"] == pytest.approx(0.4)
    assert [g.value for g in r.groups] == pytest.approx([0.4, -0.4])


def test_hand_computed_reference_counts_ties():
    """The released code counts ties as exceedances: 2 of 6."""
    r = ieat(X2, Y2, A2, B2, seed=0, variant="reference")
    assert r.stats["p_value"] == pytest.approx(2 / 6)
    assert r.stats["effect_size"] == pytest.approx(0.8 / math.sqrt(2.08 / 3))


# Outputs of the hand-computed and seeded cases, pinned bit for bit (``==`` on the float
# literals ``repr`` printed) before intervals existed: the default now draws them, and neither
# they nor n_bootstrap=0 (no intervals) may move a number.
PINNED = [
    ("hand, paper", lambda **kw: ieat(X2, Y2, A2, B2, seed=0, **kw),
     {"statistic": 1.5999999999999999, "effect_size": 0.9607689228305227,
      "p_value": 0.16666666666666666, "mean_association_x": 0.39999999999999997,
      "mean_association_y": -0.39999999999999997, "std_association": 0.8326663997864531},
     (1, 1, 5.2580162446247416e-14)),
    ("hand, reference", lambda **kw: ieat(X2, Y2, A2, B2, seed=0, variant="reference", **kw),
     {"statistic": 1.5999999999999999, "effect_size": 0.9607689228305227,
      "p_value": 0.3333333333333333, "mean_association_x": 0.39999999999999997,
      "mean_association_y": -0.39999999999999997, "std_association": 0.8326663997864531},
     (1, 1, 5.2580162446247416e-14)),
    ("unequal sizes", lambda **kw: ieat(*_rand(3, 2, 3, 4, 4), seed=0, **kw),
     {"statistic": 0.01425769862155507, "effect_size": -0.4843998496525296, "p_value": 0.6,
      "mean_association_x": -0.18687864633801507, "mean_association_y": -0.1293383304325284,
      "std_association": 0.11878681619484724},
     (6, 1, 7.782017060952043e-14)),
    ("sampled, paper",
     lambda **kw: ieat(*_rand(5, 10, 10, 6, 6), n_permutations=2_000, exact_limit=100, seed=1,
                       **kw),
     {"statistic": -0.5926403980086974, "effect_size": -0.3337945037893621, "p_value": 0.77,
      "mean_association_x": -0.01412063979270158, "mean_association_y": 0.04514340000816816,
      "std_association": 0.17754648182663835},
     (1540, 0, 5.237860672335611e-13)),
    ("sampled, reference",
     lambda **kw: ieat(*_rand(5, 10, 10, 6, 6), n_permutations=2_000, exact_limit=100, seed=1,
                       variant="reference", **kw),
     {"statistic": -0.5926403980086974, "effect_size": -0.3337945037893621, "p_value": 0.77,
      "mean_association_x": -0.01412063979270158, "mean_association_y": 0.04514340000816816,
      "std_association": 0.17754648182663835},
     (1539, 0, 5.237860672335611e-13)),
]


@pytest.mark.parametrize(("case", "run", "stats", "counts"), PINNED, ids=[c[0] for c in PINNED])
def test_default_outputs_pinned_bit_for_bit(case, run, stats, counts):
    default, plain = run(), run(n_bootstrap=0)
    for r in (default, plain):
        assert r.stats == stats  # exact float equality, every key
        assert r.value == stats["effect_size"]
        assert [g.value for g in r.groups] == [stats["mean_association_x"],
                                               stats["mean_association_y"]]
        assert (r.params["n_exceeding"], r.params["n_ties"], r.params["tie_tolerance"]) == counts
    assert default.params["n_bootstrap"] == 1000 and "effect_size" in default.intervals
    assert all(g.interval is not None for g in default.groups)
    assert [g.interval for g in plain.groups] == [None, None]
    assert plain.intervals == {}


def test_battery_default_outputs_pinned_bit_for_bit():
    sets = {f"t{i}": tuple(_rand(20 + i, 9, 9, 4, 4)) for i in range(2)}
    default = ieat_battery(sets, n_permutations=500, exact_limit=1, seed=5)
    plain = ieat_battery(sets, n_permutations=500, exact_limit=1, seed=5, n_bootstrap=0)
    for out in (default, plain):
        assert [r.params["seed"] for r in out.values()] == [3712420728229738858,
                                                            3725969243744970365]
        assert [(r.value, r.stats["p_value"], r.stats["p_value_holm"])
                for r in out.values()] == [(0.41031439023383415, 0.188, 0.188),
                                           (1.2259205998861076, 0.006, 0.012)]
        assert [r.stats["statistic"] for r in out.values()] == [1.0983704034329262,
                                                                2.3644045671453346]
    assert all("effect_size" in r.intervals for r in default.values())
    assert all(r.intervals == {} for r in plain.values())

def test_unequal_sizes_keep_both_sizes():
    """|X|=2, |Y|=3: C(5, 2) = 10 splits, counted by brute force."""
    x, y, a, b = _rand(3, 2, 3, 4, 4)
    r = ieat(x, y, a, b, seed=0)
    unit = lambda m: m / np.linalg.norm(m, axis=1, keepdims=True)  # noqa: E731
    w = unit(np.vstack([x, y]))
    s = (w @ unit(a).T).mean(1) - (w @ unit(b).T).mean(1)
    obs = s[:2].sum()
    sums = [s[list(c)].sum() for c in itertools.combinations(range(5), 2)]
    assert r.params["n_partitions"] == 10
    assert r.stats["p_value"] == pytest.approx(sum(v > obs + 1e-12 for v in sums) / 10)
    assert r.stats["statistic"] == pytest.approx(s[:2].sum() - s[2:].sum())
    assert r.stats["effect_size"] == pytest.approx((s[:2].mean() - s[2:].mean()) / s.std(ddof=1))


def test_robust_ties_with_duplicate_items():
    """Y holds X's images in another order: 8 of 20 splits tie in exact arithmetic."""
    x = _rand(11, 3)[0]
    y = x[::-1].copy()
    a, b = _rand(12, 3, 3)
    r = ieat(x, y, a, b, seed=0, variant="reference")
    # the splits taking one copy of each image tie; the others do not
    assert r.params["n_ties"] == 8
    assert r.stats["p_value"] == pytest.approx((r.params["n_exceeding"] + 8) / 20)
    assert r.stats["statistic"] == pytest.approx(0.0, abs=1e-12)


def test_summation_order_does_not_decide_ties():
    """0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1 in floats; the tie is still found."""
    assert (0.1 + 0.2) + 0.3 != (0.3 + 0.2) + 0.1
    # s(w) = cos(angle to e1) - cos(angle to e2) for unit w = (c, s): choose vectors whose
    # associations are exactly representable is impossible in general, so build the tie
    # from duplicated items in a different order, over several seeds.
    found = 0
    for seed in range(40):
        x = _rand(seed, 3, d=5)[0]
        y = x[[2, 0, 1]]
        a, b = _rand(seed + 100, 2, 2, d=5)
        r = ieat(x, y, a, b, seed=0, variant="reference")
        found += r.params["n_ties"] == 8
    assert found == 40


def test_sampled_path_and_reference_rule():
    x, y, a, b = _rand(5, 10, 10, 6, 6)
    paper = ieat(x, y, a, b, n_permutations=2_000, exact_limit=100, seed=1)
    assert paper.params["exact"] is False
    assert paper.params["n_partitions"] == 2_000
    assert paper.stats["p_value"] * 2_000 == pytest.approx(round(paper.stats["p_value"] * 2_000))
    ref = ieat(x, y, a, b, n_permutations=2_000, exact_limit=100, seed=1, variant="reference")
    assert ref.params["n_partitions"] == 1_999
    assert ref.stats["p_value"] >= 1 / 2_000
    assert ref.stats["p_value"] == pytest.approx((1 + ref.params["n_exceeding"]
                                                  + ref.params["n_ties"]) / 2_000)


def test_reference_p_value_never_below_one_over_n():
    x = [[1.0, 0.0], [0.99, 0.1], [0.98, 0.2], [0.97, 0.15]] * 3
    y = [[0.0, 1.0], [0.1, 0.99], [0.2, 0.98], [0.15, 0.97]] * 3
    r = ieat(x, y, A2, B2, n_permutations=500, exact_limit=10, seed=3, variant="reference")
    assert r.stats["p_value"] == pytest.approx(1 / 500)
    p = ieat(x, y, A2, B2, n_permutations=500, exact_limit=10, seed=3)
    assert p.stats["p_value"] == 0.0


def test_seed_reproducible_and_reported():
    x, y, a, b = _rand(6, 9, 9, 4, 4)
    r1 = ieat(x, y, a, b, n_permutations=300, exact_limit=1, seed=42)
    r2 = ieat(x, y, a, b, n_permutations=300, exact_limit=1, seed=42)
    assert r1 == r2 and r1.params["seed"] == 42
    fresh = ieat(x, y, a, b, n_permutations=300, exact_limit=1)
    again = ieat(x, y, a, b, n_permutations=300, exact_limit=1, seed=fresh.params["seed"])
    assert isinstance(fresh.params["seed"], int)
    assert again.stats == fresh.stats
    gen = ieat(x, y, a, b, n_permutations=300, exact_limit=1, seed=np.random.default_rng(0))
    assert gen.params["seed"] is None
    assert any("Generator" in n for n in gen.notes)


def test_result_json_round_trip_and_params():
    r = ieat(X2, Y2, A2, B2, seed=0, names=["flower", "insect", "pleasant", "unpleasant"])
    assert IndicatorResult.from_dict(json.loads(json.dumps(r.to_dict()))) == r
    assert [g.group for g in r.groups] == ["flower", "insect"]
    for key in ("seed", "n_permutations", "exact", "variant", "exact_limit"):
        assert key in r.params
    assert r.higher_is_better is False


def test_exact_far_beyond_reference_limit():
    """n = 12 per target set: C(24, 12) = 2,704,156 splits counted exactly."""
    x, y, a, b = _rand(7, 12, 12, 5, 5, d=32)
    r = ieat(x, y, a, b, exact_limit=10**7, seed=0)
    assert r.params["exact"] is True and r.params["n_partitions"] == math.comb(24, 12)
    assert 0.0 <= r.stats["p_value"] <= 1.0


def test_exact_too_large_for_memory_is_refused():
    x, y, a, b = _rand(8, 30, 30, 3, 3, d=4)
    with pytest.raises(FairnessConfigError, match="lower exact_limit"):
        ieat(x, y, a, b, exact_limit=10**18, seed=0)


def test_torch_and_float32_inputs():
    x, y, a, b = _rand(9, 4, 4, 3, 3)
    base = ieat(x, y, a, b, seed=0)
    f32 = ieat(*(m.astype(np.float32) for m in (x, y, a, b)), seed=0)
    assert f32.stats["effect_size"] == pytest.approx(base.stats["effect_size"], rel=1e-5)


# -- gating ------------------------------------------------------------------------------

def test_marker_limits_read_effect_size_and_p_value():
    """By the point rule: d = 0.96, p = 1/6 (two items a set: the interval of |d| is 0-1.7)."""
    r = ieat(X2, Y2, A2, B2, seed=0, n_bootstrap=0)
    fairness.check(r, max_effect_size=1.0, min_p_value=0.1, confidence="point")
    with pytest.raises(FairnessViolation):
        fairness.check(r, max_effect_size=0.5, min_p_value=0.05, confidence="point")


# -- validation --------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("kwargs", "err", "fragment"),
    [
        ({"n_permutations": 0}, FairnessConfigError, r"n_permutations=0"),
        ({"n_permutations": True}, FairnessConfigError, r"n_permutations=True"),
        ({"n_permutations": 10.0}, FairnessConfigError, r"type=float"),
        ({"exact_limit": -1}, FairnessConfigError, r"exact_limit=-1"),
        ({"variant": "weat"}, FairnessConfigError, r"variant='weat'"),
        ({"seed": -3}, FairnessConfigError, r"seed=-3"),
        ({"seed": "abc"}, FairnessConfigError, r"seed='abc'"),
        ({"names": ["a", "b"]}, FairnessConfigError, r"four labels"),
        ({"names": "abcd"}, FairnessConfigError, r"four labels"),
        ({"names": ["a", "a", "c", "d"]}, FairnessConfigError, r"same label 'a'"),
    ],
)
def test_bad_arguments(kwargs, err, fragment):
    with pytest.raises(err, match=fragment):
        ieat(X2, Y2, A2, B2, **kwargs)


def test_different_dimensions():
    with pytest.raises(InvalidDataError, match=r"A has 3"):
        ieat(X2, Y2, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], B2)


def test_fewer_than_two_items():
    with pytest.raises(InsufficientDataError, match=r"Y has 1 item"):
        ieat(X2, [[0.0, 1.0]], A2, B2)
    with pytest.raises(InsufficientDataError, match=r"B has 0 item"):
        ieat(X2, Y2, A2, np.empty((0, 2)))


def test_zero_vector():
    with pytest.raises(InvalidDataError, match=r"X has a zero vector in row 1"):
        ieat([[1.0, 0.0], [0.0, 0.0]], Y2, A2, B2)


def test_nan_and_inf():
    with pytest.raises(InvalidDataError, match=r"A has NaN or infinite values in row 0"):
        ieat(X2, Y2, [[np.nan, 0.0], [1.0, 0.0]], B2)
    with pytest.raises(InvalidDataError, match=r"B has NaN or infinite values in row 1"):
        ieat(X2, Y2, A2, [[0.0, 1.0], [np.inf, 0.0]])


def test_not_two_dimensional_or_not_numeric():
    with pytest.raises(InvalidDataError, match=r"X must be a 2-D array.*shape \(2,\)"):
        ieat([1.0, 2.0], Y2, A2, B2)
    with pytest.raises(InvalidDataError, match=r"Y must be a numeric array"):
        ieat(X2, [["a", "b"], ["c", "d"]], A2, B2)
    with pytest.raises(InvalidDataError, match=r"2-D array.*shape \(2, 0\)"):
        ieat(np.empty((2, 0)), Y2, A2, B2)


def test_reference_requires_equal_sizes():
    with pytest.raises(FairnessConfigError, match=r"\|X\|=3, \|Y\|=2"):
        ieat(X2 + [[1.0, 1.0]], Y2, A2, B2, variant="reference")


def test_degenerate_associations():
    """A == B: every association is 0 and the effect size would be 0/0."""
    with pytest.raises(InvalidDataError, match=r"effect size is 0/0"):
        ieat(X2, Y2, A2, A2)


# -- bootstrap intervals -----------------------------------------------------------------

def _biased(seed: int = 0, sizes=(12, 14, 10, 11), d: int = 32) -> list[np.ndarray]:
    """Sets of the paper's sizes where X leans towards A and Y towards B."""
    x, y, a, b = _rand(seed, *sizes, d=d)
    shift = a.mean(axis=0) - b.mean(axis=0)
    return [x + 0.5 * shift, y - 0.5 * shift, a, b]


def _reference_effect(x, y, a, b) -> float:
    """The effect size of the sets written out, duplicated rows and all (no shortcut)."""
    unit = lambda m: m / np.linalg.norm(m, axis=1, keepdims=True)  # noqa: E731
    w = unit(np.vstack([x, y]))
    s = (w @ unit(a).T).mean(1) - (w @ unit(b).T).mean(1)
    return float((s[: len(x)].mean() - s[len(x):].mean()) / s.std(ddof=1))


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_intervals_contain_the_estimates(method):
    r = ieat(*_biased(), seed=4, n_bootstrap=1000, interval_method=method)
    assert set(r.intervals) == {"value", "effect_size", "statistic"}
    assert r.intervals["value"] == r.intervals["effect_size"]
    for name in ("effect_size", "statistic"):
        low, high = r.intervals[name]
        assert low < r.stats[name] < high
    for g in r.groups:
        assert g.interval is not None and g.interval[0] < g.value < g.interval[1]
    assert r.intervals["effect_size"][0] > 0  # a clear association stays clear
    assert (r.params["n_bootstrap"], r.params["confidence_level"],
            r.params["interval_method"]) == (1000, 0.95, method)


def test_intervals_are_bca_by_default_and_percentile_on_request():
    """BCa unless asked otherwise; percentile is the replicates' quantiles, same draws."""
    sets = _biased(2)
    default = ieat(*sets, seed=7, n_bootstrap=400)
    assert default.params["interval_method"] == "bca"
    assert default == ieat(*sets, seed=7, n_bootstrap=400, interval_method="bca")
    old = ieat(*sets, seed=7, n_bootstrap=400, interval_method="percentile")
    assert old.params["interval_method"] == "percentile"
    assert old.replicates == default.replicates  # one stream: only the construction differs
    reps = np.array(old.replicates["value"])
    assert old.intervals["effect_size"] == pytest.approx(tuple(np.quantile(reps, [0.025, 0.975])))
    assert default.intervals["effect_size"] != old.intervals["effect_size"]
    battery = ieat_battery({"t": sets}, seed=7, n_bootstrap=200)
    assert battery["t"].params["interval_method"] == "bca"


def test_intervals_leave_every_number_and_the_permutations_unchanged():
    """The bootstrap has its own stream: exact and sampled p-values are those without it."""
    for kwargs in ({"seed": 0}, {"n_permutations": 2_000, "exact_limit": 100, "seed": 1},
                   {"n_permutations": 2_000, "exact_limit": 100, "seed": 1,
                    "variant": "reference"}):
        sets = _rand(5, 10, 10, 6, 6)
        plain = ieat(*sets, n_bootstrap=0, **kwargs)
        boot = ieat(*sets, n_bootstrap=200, **kwargs)
        assert boot.stats == plain.stats and boot.value == plain.value
        assert [g.value for g in boot.groups] == [g.value for g in plain.groups]
        assert boot.params["n_exceeding"] == plain.params["n_exceeding"]
    # a Generator seed: the same draws give the same p-value with or without intervals
    sets = _rand(6, 9, 9, 4, 4)
    plain = ieat(*sets, n_permutations=300, exact_limit=1, seed=np.random.default_rng(7),
                 n_bootstrap=0)
    boot = ieat(*sets, n_permutations=300, exact_limit=1, seed=np.random.default_rng(7),
                n_bootstrap=100)
    assert boot.stats == plain.stats and "effect_size" in boot.intervals
    assert plain.intervals == {}


def test_replicates_are_the_statistic_of_resampled_sets(monkeypatch):
    """Each replicate equals the iEAT of the sets drawn, and every set keeps its size."""
    x, y, a, b = _biased(1, sizes=(5, 7, 4, 6), d=6)
    sizes = [5, 7, 4, 6]
    seen: list[np.ndarray] = []
    real = embedding_association.bootstrap

    def spy(statistic, units, **kwargs):
        def wrapped(w):
            seen.append(w.copy())
            return statistic(w)

        return real(wrapped, units, **kwargs)

    monkeypatch.setattr(embedding_association, "bootstrap", spy)
    # percentile: the default BCa adds its jackknife rows after the replicates
    ieat(x, y, a, b, seed=2, n_bootstrap=300, interval_method="percentile")
    draws = np.concatenate(seen[1:])  # seen[0] is the all-ones estimate
    assert draws.shape == (300, sum(sizes))
    bounds = np.cumsum([0, *sizes])
    for lo, hi, n in zip(bounds[:-1], bounds[1:], sizes):
        assert (draws[:, lo:hi].sum(axis=1) == n).all()  # stratified: X, Y, A, B keep sizes
        assert (draws[:, lo:hi] != 1).any()  # and are resampled
    # the vectorised statistic against the resampled sets written out
    captured: dict[str, object] = {}

    def keep(statistic, units, **kwargs):
        captured["statistic"] = statistic
        return real(statistic, units, **kwargs)

    monkeypatch.setattr(embedding_association, "bootstrap", keep)
    ieat(x, y, a, b, seed=2, n_bootstrap=100)
    stat = captured["statistic"](draws[:20])  # type: ignore[operator]
    for i, w in enumerate(draws[:20]):
        rows = [np.repeat(m, w[lo:hi].astype(int), axis=0)
                for m, lo, hi in zip((x, y, a, b), bounds[:-1], bounds[1:])]
        assert stat["effect_size"][i] == pytest.approx(_reference_effect(*rows), rel=1e-10)
        plain = ieat(*rows, seed=0, n_bootstrap=0)
        assert stat["statistic"][i] == pytest.approx(plain.stats["statistic"], rel=1e-10,
                                                     abs=1e-12)


def test_interval_seed_reproducible_and_reported():
    sets = _biased(2)
    r1 = ieat(*sets, seed=11, n_bootstrap=200)
    assert ieat(*sets, seed=11, n_bootstrap=200) == r1
    assert ieat(*sets, seed=12, n_bootstrap=200).intervals != r1.intervals
    fresh = ieat(*sets, n_bootstrap=200)
    again = ieat(*sets, n_bootstrap=200, seed=fresh.params["seed"])
    assert again.intervals == fresh.intervals
    # the 95 % interval lies within the 99 % one drawn from the same replicates
    wide = ieat(*sets, seed=11, n_bootstrap=200, confidence_level=0.99)
    assert wide.intervals["effect_size"][0] <= r1.intervals["effect_size"][0]
    assert wide.intervals["effect_size"][1] >= r1.intervals["effect_size"][1]


def test_reference_variant_takes_the_interval_keywords():
    """Same effect size under both variants, hence the same intervals for one seed."""
    x, y, a, b = _biased(3, sizes=(10, 10, 8, 8))
    ref = ieat(x, y, a, b, seed=5, n_bootstrap=300, variant="reference")
    paper = ieat(x, y, a, b, seed=5, n_bootstrap=300)
    assert ref.intervals == paper.intervals and ref.intervals
    assert ref.stats["p_value"] == ieat(x, y, a, b, seed=5, variant="reference",
                                        n_bootstrap=0).stats["p_value"]


def test_undefined_replicates_are_left_out_and_noted():
    """Y holds X's two images: a replicate drawing one image for both has std 0."""
    x = _rand(13, 2)[0]
    a, b = _rand(14, 3, 3)
    r = ieat(x, x[::-1].copy(), a, b, seed=0, n_bootstrap=400)
    assert any("bootstrap replicates drew targets that are all equally associated" in n
               for n in r.notes)
    low, high = r.intervals["effect_size"]
    assert math.isfinite(low) and math.isfinite(high) and low <= 0 <= high


def test_intervals_round_trip_and_gate():
    r = ieat(*_biased(), seed=4, n_bootstrap=300)
    assert IndicatorResult.from_dict(json.loads(json.dumps(r.to_dict()))) == r
    low, _ = r.intervals["effect_size"]
    # the whole interval of |d| lies above a limit just under its lower end: supported breach
    with pytest.raises(FairnessViolation):
        fairness.check(r, max_effect_size=0.9 * low, confidence="supported")
    fairness.check(r, max_effect_size=1.1 * low, confidence="supported")


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"n_bootstrap": -1}, r"n_bootstrap=-1"),
        ({"n_bootstrap": 50}, r"n_bootstrap=50"),
        ({"n_bootstrap": True}, r"n_bootstrap=True"),
        ({"n_bootstrap": 100.0}, r"n_bootstrap=100\.0"),
        ({"confidence_level": 1.0}, r"confidence_level=1\.0"),
        ({"confidence_level": "95%"}, r"confidence_level='95%'"),
        ({"interval_method": "normal"}, r"interval_method='normal'"),
    ],
)
def test_bad_interval_arguments(kwargs, fragment):
    with pytest.raises(FairnessConfigError, match=fragment):
        ieat(X2, Y2, A2, B2, **kwargs)
    with pytest.raises(FairnessConfigError, match=fragment):
        ieat_battery({"t": (X2, Y2, A2, B2)}, **kwargs)


def test_battery_intervals_per_test():
    sets = {f"t{i}": tuple(_biased(40 + i, sizes=(8, 8, 6, 6))) for i in range(2)}
    out = ieat_battery(sets, seed=9, n_bootstrap=200, interval_method="bca")
    for key, r in out.items():
        assert r.intervals and r.params["interval_method"] == "bca"
        alone = ieat(*sets[key], seed=r.params["seed"], n_bootstrap=200,
                     interval_method="bca")
        assert alone.intervals == r.intervals
        assert alone.stats["p_value"] == r.stats["p_value"]
    assert out["t0"].intervals != out["t1"].intervals


# -- Holm and batteries ------------------------------------------------------------------

def test_holm_hand_computed():
    assert holm([0.01, 0.04, 0.03, 0.005]).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5]).tolist() == [0.5]
    assert holm([0.4, 0.4, 0.9]).tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert holm([0.01, 0.04, 0.03]).tolist() == [0.03, 0.06, 0.06]  # once its doctest


@pytest.mark.parametrize(("values", "fragment"), [([], "empty"), ([0.1, 1.5], "entry 1 is 1.5"),
                                                  ([np.nan], "entry 0 is nan")])
def test_holm_bad_input(values, fragment):
    with pytest.raises((InsufficientDataError, InvalidDataError), match=fragment):
        holm(values)


def test_battery_reports_holm_beside_raw():
    sets = {f"t{i}": tuple(_rand(20 + i, 5, 5, 4, 4)) for i in range(3)}
    out = ieat_battery(sets, seed=5, names={"t0": ("a", "b", "c", "d")})
    raw = [r.stats["p_value"] for r in out.values()]
    assert [r.stats["p_value_holm"] for r in out.values()] == pytest.approx(holm(raw).tolist())
    assert list(out) == ["t0", "t1", "t2"]
    assert out["t0"].groups[0].group == "a"
    for key, r in out.items():
        assert r.params["battery_seed"] == 5 and r.params["n_tests"] == 3
        alone = ieat(*sets[key], seed=r.params["seed"])
        assert alone.stats["p_value"] == r.stats["p_value"]


def test_battery_sampled_seeds_differ_per_test():
    same = tuple(_rand(30, 9, 9, 4, 4))
    out = ieat_battery({"a": same, "b": same}, n_permutations=200, exact_limit=1, seed=0)
    assert out["a"].params["seed"] != out["b"].params["seed"]


@pytest.mark.parametrize(
    ("tests", "kwargs", "fragment"),
    [
        ({}, {}, "non-empty mapping"),
        ([("x", "y")], {}, "non-empty mapping"),
        ({"t": (X2, Y2, A2)}, {}, r"tests\['t'\] must be the four sets.*length 3"),
        ({"t": "abcd"}, {}, r"tests\['t'\] must be the four sets"),
        ({"t": (X2, Y2, A2, B2)}, {"names": {"u": ("a", "b", "c", "d")}}, r"\['u'\]"),
    ],
)
def test_battery_bad_arguments(tests, kwargs, fragment):
    with pytest.raises(FairnessConfigError, match=fragment):
        ieat_battery(tests, **kwargs)


def test_battery_names_the_failing_test():
    with pytest.raises(InvalidDataError, match=r"test 'bad': X has a zero vector in row 0"):
        ieat_battery({"ok": (X2, Y2, A2, B2), "bad": ([[0.0, 0.0], [1.0, 0.0]], Y2, A2, B2)})


# -- stimuli -----------------------------------------------------------------------------

def test_shipped_tests_match_the_seed_tables():
    t1, t2 = ieat_tests(table=1), ieat_tests(table=2)
    assert len(t1) == 15 and len(t2) == 16
    assert {t.label for t in t1} >= {"Insect-Flower", "Weapon (Modern)", "Skin-Tone"}
    wmbm = ieat_tests("Gender-Career (WMBM)")[0]
    # the paper's Table 2 puts Black Male as X for this row
    assert (wmbm.X, wmbm.Y) == ("intersectional/black-male", "intersectional/white-male")
    race = ieat_tests("Race")[0]
    assert race.categories == ("race/european-american", "race/african-american",
                               "valence/pleasant", "valence/unpleasant")
    names = [t.name for t in t1 + t2]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize(
    ("args", "kwargs", "fragment"),
    [((), {"table": 3}, "table=3"), (("Nope",), {}, r"unknown iEAT test\(s\) \['Nope'\]")],
)
def test_ieat_tests_bad_arguments(args, kwargs, fragment):
    with pytest.raises(FairnessConfigError, match=fragment):
        ieat_tests(*args, **kwargs)


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"X": ""}, "X must be a category folder"),
        ({"A": "/abs/path"}, "inside the stimuli root"),
        ({"B": "../up"}, "inside the stimuli root"),
        ({"Y": "t/x"}, "X and Y are the same folder"),
    ],
)
def test_spec_validation(fields, fragment):
    base = {"name": "s", "X": "t/x", "Y": "t/y", "A": "a/p", "B": "a/n", **fields}
    with pytest.raises(FairnessConfigError, match=fragment):
        IEATTestSpec(**base)


def _make_stimuli(root: Path, counts: dict[str, int]) -> None:
    for category, n in counts.items():
        folder = root / category
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(n):
            ext = (".jpg", ".PNG", ".jpeg", ".webp")[i % 4]
            (folder / f"img{i}{ext}").write_bytes(bytes([i]))
        (folder / "README.md").write_text("not an image")


SPEC = IEATTestSpec("toy", X="t/x", Y="t/y", A="a/good", B="a/bad", label="Toy")


def _fake_embed(paths: list[Path]) -> np.ndarray:
    """A deterministic fake extractor: direction by category, offset by file byte."""
    axis = {"x": 0, "good": 0, "y": 1, "bad": 1}
    out = np.zeros((len(paths), 3))
    for i, p in enumerate(paths):
        out[i, axis[p.parent.name]] = 1.0
        out[i, 2] = 0.1 + 0.05 * p.read_bytes()[0]
    return out


def test_loader_lists_paths_and_labels(tmp_path):
    _make_stimuli(tmp_path, {"t/x": 3, "t/y": 4, "a/good": 2, "a/bad": 5})
    stimuli = load_ieat_stimuli(tmp_path, tests=[SPEC])
    assert stimuli.categories == ("t/x", "t/y", "a/good", "a/bad")
    assert len(stimuli) == 14
    assert all(p.parent == tmp_path / lab for p, lab in zip(stimuli.paths, stimuli.labels))
    assert not any(p.name == "README.md" for p in stimuli.paths)
    assert category_paths(tmp_path, "t/y") == sorted(category_paths(tmp_path, "t/y"))


def test_loader_feeds_an_embed_callable_and_the_battery(tmp_path):
    _make_stimuli(tmp_path, {"t/x": 3, "t/y": 4, "a/good": 2, "a/bad": 5})
    stimuli = load_ieat_stimuli(tmp_path, tests=[SPEC, {"name": "rev", "X": "t/y", "Y": "t/x",
                                                       "A": "a/good", "B": "a/bad"}])
    calls: list[int] = []

    def embed(paths: list[Path]) -> np.ndarray:
        calls.append(len(paths))
        return _fake_embed(paths)

    features = stimuli.embed(embed, batch_size=5)
    assert calls == [5, 5, 4]
    assert {k: v.shape for k, v in features.items()} == {
        "t/x": (3, 3), "t/y": (4, 3), "a/good": (2, 3), "a/bad": (5, 3)}
    out = ieat_battery(stimuli.test_sets(features), seed=0, names=stimuli.set_names())
    assert out["toy"].stats["effect_size"] > 0 > out["rev"].stats["effect_size"]
    assert out["toy"].groups[0].group == "t/x"
    # features computed elsewhere, in path order, give the same sets
    split = stimuli.split(_fake_embed(list(stimuli.paths)))
    assert all(np.array_equal(split[k], features[k]) for k in features)


def test_loader_dataset_export(tmp_path):
    pytest.importorskip("pandas")
    _make_stimuli(tmp_path, {"t/x": 2, "t/y": 2, "a/good": 2, "a/bad": 2})
    stimuli = load_ieat_stimuli(tmp_path, tests=SPEC)
    try:
        dataset = stimuli.to_dataset()
    except ImportError:  # pragma: no cover - dataset module not available
        pytest.skip("pytest_fairness.data.dataset is not available")
    assert dataset.frame["category"].tolist() == list(stimuli.labels)
    assert dataset.frame["image_id"].iloc[0] == "t/x/img0.jpg"


def test_loader_errors(tmp_path):
    with pytest.raises(InvalidDataError, match=r"is not a directory"):
        load_ieat_stimuli(tmp_path / "missing", tests=[SPEC])
    _make_stimuli(tmp_path, {"t/x": 3, "t/y": 1, "a/good": 2})
    with pytest.raises(InvalidDataError, match=r"1 iEAT category folder\(s\) are missing.*a/bad"):
        load_ieat_stimuli(tmp_path, tests=[SPEC])
    _make_stimuli(tmp_path, {"a/bad": 2})
    with pytest.raises(InsufficientDataError, match=r"'t/y' has 1 image"):
        load_ieat_stimuli(tmp_path, tests=[SPEC])
    with pytest.raises(FairnessConfigError, match=r"min_images=0"):
        load_ieat_stimuli(tmp_path, tests=[SPEC], min_images=0)
    with pytest.raises(FairnessConfigError, match=r"tests is empty"):
        load_ieat_stimuli(tmp_path, tests=[])
    with pytest.raises(FairnessConfigError, match=r"'B' is missing"):
        load_ieat_stimuli(tmp_path, tests=[{"name": "n", "X": "t/x", "Y": "t/y", "A": "a"}])
    with pytest.raises(FairnessConfigError, match=r"got 3 \(type=int\)"):
        load_ieat_stimuli(tmp_path, tests=[3])
    with pytest.raises(InvalidDataError, match=r"category folder 'nope' is missing"):
        category_paths(tmp_path, "nope")


def test_shipped_tests_need_their_folders(tmp_path):
    with pytest.raises(InvalidDataError, match=r"valence/pleasant"):
        load_ieat_stimuli(tmp_path, tests="Insect-Flower")


def test_embed_errors(tmp_path):
    _make_stimuli(tmp_path, {"t/x": 2, "t/y": 2, "a/good": 2, "a/bad": 2})
    stimuli = load_ieat_stimuli(tmp_path, tests=[SPEC])
    with pytest.raises(FairnessConfigError, match=r"embed must be a callable"):
        stimuli.embed("model")  # type: ignore[arg-type]
    with pytest.raises(FairnessConfigError, match=r"batch_size=0"):
        stimuli.embed(_fake_embed, batch_size=0)
    with pytest.raises(InvalidDataError, match=r"embed returned shape \(1, 3\) for 8 paths"):
        stimuli.embed(lambda paths: np.ones((1, 3)))
    with pytest.raises(InvalidDataError, match=r"shape \(8, d\)"):
        stimuli.split(np.ones((7, 3)))
    with pytest.raises(InvalidDataError, match=r"no embeddings for categories \['a/bad'\]"):
        stimuli.test_sets({"t/x": 1, "t/y": 1, "a/good": 1})


def test_embed_accepts_torch_tensors(tmp_path):
    torch = pytest.importorskip("torch")
    _make_stimuli(tmp_path, {"t/x": 2, "t/y": 2, "a/good": 2, "a/bad": 2})
    stimuli = load_ieat_stimuli(tmp_path, tests=[SPEC])
    features = stimuli.embed(lambda paths: torch.tensor(_fake_embed(paths)))
    assert features["t/x"].dtype == np.float64
    assert stimuli.split(torch.tensor(_fake_embed(list(stimuli.paths))))["a/bad"].shape == (2, 3)


def test_threshold_marker_gates_an_ieat_test(pytester):
    """End to end: a biased and an unbiased iEAT under the documented marker, by the default
    rule: the biased one's |d| interval (1.80, 1.82) lies above 0.5 and p = 0, so it fails; the
    unbiased one's (0, 1.11) straddles 0.5, so it passes as inconclusive, saying so."""
    pytester.makepyfile(
        """
        import numpy as np
        from pytest_fairness import fairness, indicators

        A = [[1.0, 0.0], [0.9, 0.1]]
        B = [[0.0, 1.0], [0.1, 0.9]]

        @fairness.threshold(max_effect_size=0.5, min_p_value=0.05)
        def test_biased():
            X = [[1.0, 0.1], [0.9, 0.3], [1.0, 0.2]]
            Y = [[0.1, 1.0], [0.2, 0.8], [0.3, 1.0]]
            return indicators.ieat(X, Y, A, B, seed=0)

        @fairness.threshold(max_effect_size=0.5, min_p_value=0.05)
        def test_unbiased():
            rng = np.random.default_rng(0)
            X = rng.normal(size=(6, 2)) + [3, 3]
            return indicators.ieat(X, X[::-1] * 2, A, B, seed=0)
        """
    )
    result = pytester.runpytest("--fairness", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_biased*",
                                 "*test_unbiased*max_effect_size=0.5 INCONCLUSIVE*passed*",
                                 "*fairness: 1 inconclusive*"])


# -- the review's findings (the reference variant's sampling) -------------------------------------


def _biased_sets(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = np.c_[np.ones(n), rng.uniform(0, 0.2, n)]
    y = np.c_[rng.uniform(0, 0.2, n), np.ones(n)]
    a = np.c_[np.ones(3), rng.uniform(0, 0.1, 3)]
    b = np.c_[rng.uniform(0, 0.1, 3), np.ones(3)]
    return x, y, a, b


def test_reference_variant_samples_when_partitions_exceed_n_permutations() -> None:
    x, y, a, b = _biased_sets(7)  # C(14, 7) = 3432 > 1000 = n_permutations
    r = ieat(x, y, a, b, n_permutations=1_000, seed=0, variant="reference")
    assert r.params["exact"] is False
    assert r.stats["p_value"] >= 1 / 1_000


def test_reference_variant_is_exact_when_partitions_fit_in_n_permutations() -> None:
    """The other side of the reference rule: C(12, 6) = 924 <= 1000 enumerates."""
    x, y, a, b = _biased_sets(6)
    r = ieat(x, y, a, b, n_permutations=1_000, seed=0, variant="reference")
    assert r.params["exact"] is True and r.params["n_partitions"] == math.comb(12, 6)
    # Perfectly separated: only the observed split reaches the statistic (a tie, counted).
    assert r.stats["p_value"] == pytest.approx(1 / 924)
