"""Benchmark: multi-attribute bias amplification at COCO-like scale.

40,000 train and 40,000 test images, 80 attributes, about 3 labels per image (seeded, with
group-dependent label frequencies), two groups, max_size 3. Our counting (``multi_mals`` +
``multi_directional`` G->M, as a user computing both would call them) is timed against a
straightforward per-combination implementation in the same run; both must give identical
numbers (goal: >= 50x). Every timed repeat starts with an empty matrix cache
(``amplification.clear_cache()``), so the second call profits only from the first call of
the same repeat, never from an earlier repeat. Timed: the default table (1,000 rows), the
full per-cell table (``table_rows=None``), and each call on its own. Then the reference
variant's M (every exact training label set, ~10^4 of them) is timed on its own
(goal: under 2 seconds).

Run: ``.venv/bin/python benchmarks/amplification.py [--quick]``
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

from pytest_fairness.indicators import amplification, multi_directional, multi_mals


def make_data(n_train: int, n_test: int, n_attrs: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    popularity = rng.dirichlet(np.full(n_attrs, 0.6), size=2)  # per group

    def labels(groups):
        n = len(groups)
        k = np.clip(1 + rng.poisson(2.0, n), 1, 12)  # about 3 labels per image
        gumbel = -np.log(-np.log(rng.random((n, n_attrs))))
        order = np.argsort(-(np.log(popularity[groups] + 1e-12) + gumbel), axis=1)
        x = np.zeros((n, n_attrs), dtype=np.int8)
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(n_attrs)[None, :].repeat(n, 0), axis=1)
        x[rank < k[:, None]] = 1
        return x

    g_train = rng.integers(0, 2, n_train)
    g_test = rng.integers(0, 2, n_test)
    train, test = labels(g_train), labels(g_test)
    drop = rng.random(test.shape) < 0.1
    add = rng.random(test.shape) < 0.01 * (1 + popularity[g_test] * n_attrs) / 2
    pred = np.where(drop, 0, np.maximum(test, add)).astype(np.int8)
    pred_g = np.where(rng.random(n_test) < 0.1, 1 - g_test, g_test)
    return train, g_train, test, g_test, pred, pred_g


# -- straightforward baseline: one pass over the images per combination -----------------------


def baseline(train, g_train, test, g_test, pred, pred_g, max_size, min_count):
    n_groups = 2
    tr_cols, te_cols, pr_cols = (np.ascontiguousarray(x.T.astype(bool))
                                 for x in (train, test, pred))

    def has(cols, m):
        return cols[list(m)].all(axis=0)

    candidates = set()
    for row in train:
        labels = np.flatnonzero(row).tolist()
        for s in range(1, min(max_size, len(labels)) + 1):
            candidates.update(itertools.combinations(labels, s))
    combos = [m for m in sorted(candidates)
              if has(tr_cols, m).sum() >= min_count and has(te_cols, m).sum() >= min_count]
    n_train_g = np.bincount(g_train, minlength=n_groups)
    n_test_g = np.bincount(g_test, minlength=n_groups)
    mals, gm, gm_signed = [], [], []
    for m in combos:
        tr, pr = has(tr_cols, m), has(pr_cols, m)
        c_tr = np.bincount(g_train[tr], minlength=n_groups)
        c_pr = np.bincount(pred_g[pr], minlength=n_groups)
        c_pr_true_g = np.bincount(g_test[pr], minlength=n_groups)
        b_tr = c_tr / c_tr.sum()
        if c_pr.sum():
            b_pr = c_pr / c_pr.sum()
            mals.append(np.where(b_tr > 1 / n_groups, b_pr - b_tr, 0.0))
        p_gm = c_tr / len(g_train)
        y = p_gm > (n_train_g / len(g_train)) * (tr.sum() / len(g_train))
        delta = c_pr_true_g / n_test_g - c_tr / n_train_g
        gm.append(delta)
        gm_signed.append(np.where(y, delta, -delta))
    mals, gm, gm_signed = np.array(mals), np.array(gm), np.array(gm_signed)
    return {
        "n_combinations": len(combos),
        "multi_mals": np.abs(mals).sum() / len(mals),
        "multi_mals_variance": mals.var(),
        "multi_mals_signed": mals.sum() / len(mals),
        "multi_gm": np.abs(gm).mean(),
        "multi_gm_variance": gm.var(),
        "multi_gm_signed": gm_signed.mean(),
    }


def ours(train, g_train, test, g_test, pred, pred_g, max_size, min_count,
         table_rows=amplification.TABLE_ROWS):
    mals = multi_mals(train, g_train, test, g_test, pred, pred_g, max_size=max_size,
                      min_count=min_count, table_rows=table_rows)
    gm = multi_directional(train, g_train, test, g_test, pred, direction="G->M",
                           max_size=max_size, min_count=min_count, table_rows=table_rows)
    return {
        "n_combinations": int(mals.stats["n_combinations"]),
        "multi_mals": mals.value,
        "multi_mals_variance": mals.stats["variance"],
        "multi_mals_signed": mals.stats["signed_mean"],
        "multi_gm": gm.value,
        "multi_gm_variance": gm.stats["variance"],
        "multi_gm_signed": gm.stats["signed_mean"],
    }


def timed(fn, *args, repeat=1, **kwargs):
    """Best wall time of ``repeat`` cold calls (the matrix cache emptied before each)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        amplification.clear_cache()
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4,000 images per split")
    args = parser.parse_args()
    n = 4_000 if args.quick else 40_000
    data = make_data(n, n, 80)
    train = data[0]
    print(f"train {train.shape}, test {data[2].shape}, labels per image "
          f"{train.sum(axis=1).mean():.2f} (max {train.sum(axis=1).max()}), max_size 3")

    t_ours, ours_out = timed(ours, *data, 3, 1, repeat=5)
    t_full, ours_full = timed(ours, *data, 3, 1, table_rows=None, repeat=3)
    assert ours_full == ours_out
    t_mals, _ = timed(multi_mals, *data, max_size=3, repeat=5)
    t_gm, _ = timed(multi_directional, *data[:5], direction="G->M", max_size=3, repeat=5)
    t_base, base_out = timed(baseline, *data, 3, 1)
    print(f"|M| = {ours_out['n_combinations']:,} combinations (baseline: "
          f"{base_out['n_combinations']:,})")
    worst = 0.0
    for key, value in ours_out.items():
        diff = abs(value - base_out[key])
        worst = max(worst, diff)
        print(f"  {key:22s} ours {value:.12g}   baseline {base_out[key]:.12g}   |diff| {diff:.1e}")
    print(f"identical numbers: {worst <= 1e-12} (largest difference {worst:.1e})")
    print(f"per-combination baseline (numbers only): {t_base:.3f} s")
    print(f"ours, numbers + default table ({amplification.TABLE_ROWS:,} rows): {t_ours:.3f} s "
          f"-> {t_base / t_ours:.1f}x (goal >= 50x)")
    print(f"  of which each call alone, cold: multi_mals {t_mals:.3f} s, multi_directional "
          f"{t_gm:.3f} s (sum {t_mals + t_gm:.3f} s -> {t_base / (t_mals + t_gm):.1f}x)")
    print(f"ours, full per-cell table (table_rows=None: every group x combination as a row, "
          f"frozen into the result): {t_full:.3f} s -> {t_base / t_full:.1f}x")

    t_ref, ref = timed(multi_mals, *data, variant="reference", repeat=3)
    t_ref_gm, _ = timed(multi_directional, data[0], data[1], data[2], data[3], data[4],
                        direction="G->M", variant="reference", repeat=3)
    print(f"reference M (exact training label sets): {int(ref.stats['n_combinations']):,} "
          f"combinations; multi_mals {t_ref:.3f} s, multi_directional {t_ref_gm:.3f} s "
          f"(goal < 2 s)")


if __name__ == "__main__":
    main()
