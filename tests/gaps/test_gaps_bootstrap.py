"""Bootstrap intervals: numpy draws the resamples, the SQL macro of sql/30_gaps.sql bins them.

Checked: the multiset representation binned by SQL equals sorting each expanded resample; the
seeds+keys resampling recomputes accuracy from the drawn seeds; same seed, same intervals,
whatever the other groups; an interval that includes the shots is wide when the shots decide.
"""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pandas as pd
import pytest

from freqgap.gaps.bootstrap import (bootstrap_intervals, key_weights, samples_table,
                                    seed_key_resamples)
from freqgap.gaps.run import run_gaps
from tests.gaps.fixtures import build_world, options_for, random_world


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """A results database (rank binning, bin_percent 10, min_seen_keys 20) to call the macros."""
    root = tmp_path_factory.mktemp("boot")
    world = random_world(root / "w", seed=4, tasks=("mult",), models=("a",), n_x1=40)
    res = run_gaps(options_for(world, root / "r", boot_reps=100))
    con = duckdb.connect(str(res.results_dir / "freqgap.duckdb"), read_only=True)
    yield con
    con.close()


def test_rank_rule_on_resamples_equals_sorting_each_resample(db):
    rng = np.random.default_rng(1)
    n, reps = 37, 200
    acc = rng.random(n)
    omega = np.sort(rng.integers(1, 100, n))
    w = key_weights(n, reps, np.random.default_rng(7))
    assert (w.sum(axis=1) == n).all()
    db.register("s", samples_table(np.arange(reps), w, omega, acc))
    got = db.execute("SELECT sample_id, delta FROM gap_of_samples('s') ORDER BY 1").df()
    db.unregister("s")
    m = math.ceil(n / 10)
    naive = []
    for r in range(reps):
        drawn = np.repeat(np.arange(n), w[r])            # positions, sorted = rank order
        naive.append(acc[drawn[-m:]].mean() - acc[drawn[:m]].mean())
    np.testing.assert_allclose(got["delta"], naive, rtol=0, atol=1e-12)


def test_seed_resamples_pool_the_drawn_seeds():
    correct = np.array([[1, 0], [2, 2], [0, 1]], dtype=float)     # 3 keys x 2 seeds
    rows = np.array([[1, 1], [2, 2], [0, 3]], dtype=float)
    w, acc = seed_key_resamples(correct, rows, 500, np.random.default_rng(3))
    again = np.random.default_rng(3)
    seed_w = again.multinomial(2, [0.5, 0.5], size=500)
    for r in range(500):
        denom = rows @ seed_w[r]
        alive = denom > 0
        want = np.where(alive, (correct @ seed_w[r]) / np.maximum(denom, 1), 0.0)
        np.testing.assert_allclose(acc[r], want)
        assert w[r].sum() == alive.sum() and (w[r][~alive] == 0).all()
    # The third key has no rows in seed 0: it drops out when only seed 0 is drawn.
    only0 = (seed_w[:, 0] == 2)
    assert only0.any() and (w[only0][:, 2] == 0).all()


def _ranked(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for task in ("mult", "add"):
        for pos in range(1, 41):
            rows.append({"model": "m", "revision": "", "task": task, "k": 2, "freq_def": "1",
                         "pos": pos, "omega": pos, "accuracy": rng.random()})
    return pd.DataFrame(rows)


def test_same_seed_same_intervals_whatever_the_other_groups(db):
    ranked = _ranked(0)
    a = bootstrap_intervals(db, ranked, None, "keys", 300, seed=11, level=0.95)
    b = bootstrap_intervals(db, ranked.sample(frac=1, random_state=3), None, "keys", 300,
                            seed=11, level=0.95)
    c = bootstrap_intervals(db, ranked, None, "keys", 300, seed=12, level=0.95)
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["ci_low"], c["ci_low"])
    assert (a["ci_low"] < a["ci_high"]).all() and (a["ci_kind"] == "keys").all()
    alone = bootstrap_intervals(db, ranked[ranked["task"] == "add"], None, "keys", 300, seed=11,
                                level=0.95)
    assert a[a["task"] == "add"]["ci_low"].item() == pytest.approx(alone["ci_low"].item())


def test_job_intervals_reproducible_and_around_delta(tmp_path):
    world = random_world(tmp_path / "w", seed=4, tasks=("mult",), models=("a",), n_x1=40)
    r1 = run_gaps(options_for(world, tmp_path / "r1", boot_seed=9, boot_reps=300)).gaps
    r2 = run_gaps(options_for(world, tmp_path / "r2", boot_seed=9, boot_reps=300)).gaps
    r3 = run_gaps(options_for(world, tmp_path / "r3", boot_seed=10, boot_reps=300)).gaps
    cols = ["ci_low", "ci_high"]
    pd.testing.assert_frame_equal(r1[cols], r2[cols])
    assert not np.allclose(r1[cols].to_numpy(), r3[cols].to_numpy(), equal_nan=True)
    ok = r1.dropna(subset=["delta"])
    assert len(ok) >= 4
    assert ((ok["ci_low"] <= ok["delta"] + 1e-9) & (ok["delta"] <= ok["ci_high"] + 1e-9)).mean() \
        >= 0.8
    assert (r1["boot_reps"] == 300).all() and (r1["boot_seed"] == 9).all()
    assert (ok["ci_kind"] == "seeds+keys").all()            # the conf default
    assert r1["ci_level"].iloc[0] == pytest.approx(0.95)


def test_an_interval_over_the_shots_is_wide_when_the_shots_decide(tmp_path):
    # Seed 0: only the frequent half right; seed 1: only the rare half. Pooled, every key is
    # right half the time: Δ = 0 and resampling keys alone cannot move it. Resampling the
    # seeds can: a resample with seed 0 twice has Δ = 1.
    n = 30
    specs = [("mult", i, 1, [i >= n // 2, i < n // 2]) for i in range(n)]
    world = build_world(tmp_path, specs, {str(i): 5 + i for i in range(n)})
    keys = run_gaps(options_for(world, tmp_path / "a", interval="keys")).gaps.iloc[0]
    both = run_gaps(options_for(world, tmp_path / "b", interval="seeds+keys")).gaps.iloc[0]
    assert keys["delta"] == pytest.approx(0.0) == both["delta"]
    assert (keys["ci_low"], keys["ci_high"]) == (pytest.approx(0.0), pytest.approx(0.0))
    assert both["ci_low"] == pytest.approx(-1.0) and both["ci_high"] == pytest.approx(1.0)
    assert (keys["ci_kind"], both["ci_kind"]) == ("keys", "seeds+keys")
    assert sorted(d["delta"] for d in both["delta_per_seed"]) == [-1.0, 1.0]
    assert both["delta_seed_sd"] == pytest.approx(math.sqrt(2))
