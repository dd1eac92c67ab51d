"""The bootstrap interval over keys: reproducible under a seed, and the resampling right."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from freqgap.gaps.bootstrap import bin_size, bootstrap_intervals, resample_deltas
from freqgap.gaps.run import run_gaps
from tests.gaps.fixtures import options_for, random_world


def test_rank_resampling_equals_sorting_each_resample():
    rng = np.random.default_rng(1)
    n, reps = 37, 300
    acc = rng.random(n)
    omega = np.sort(rng.integers(1, 100, n))
    got, discarded = resample_deltas(acc, omega, "rank", 10, reps, np.random.default_rng(7))
    idx = np.random.default_rng(7).integers(0, n, size=(reps, n), dtype=np.int32)
    m = bin_size(n, 10)
    naive = [acc[np.sort(r)[-m:]].mean() - acc[np.sort(r)[:m]].mean() for r in idx]
    assert discarded == 0
    np.testing.assert_allclose(got, naive)


def test_quantile_resamples_with_an_empty_bin_are_discarded_not_zero():
    acc = np.linspace(0, 1, 12)
    deltas, discarded = resample_deltas(acc, np.full(12, 4), "quantile", 10, 50,
                                        np.random.default_rng(0))
    assert len(deltas) == 0 and discarded == 50


def _ranked(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for task in ("mult", "add"):
        for pos in range(1, 41):
            rows.append({"model": "m", "revision": "", "task": task, "k": 2, "freq_def": "1",
                         "pos": pos, "omega": pos, "accuracy": rng.random()})
    return pd.DataFrame(rows)


def test_same_seed_same_intervals_other_seed_other_intervals():
    ranked = _ranked(0)
    a = bootstrap_intervals(ranked, "rank", 10, 500, seed=11, level=0.95)
    b = bootstrap_intervals(ranked.sample(frac=1, random_state=3), "rank", 10, 500, seed=11,
                            level=0.95)
    c = bootstrap_intervals(ranked, "rank", 10, 500, seed=12, level=0.95)
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["ci_low"], c["ci_low"])
    assert (a["ci_low"] < a["ci_high"]).all()


def test_a_groups_interval_does_not_depend_on_the_other_groups():
    ranked = _ranked(0)
    both = bootstrap_intervals(ranked, "rank", 10, 300, seed=5, level=0.9)
    alone = bootstrap_intervals(ranked[ranked["task"] == "add"], "rank", 10, 300, seed=5,
                                level=0.9)
    assert both[both["task"] == "add"]["ci_low"].item() == alone["ci_low"].item()


def test_job_intervals_reproducible_and_around_delta(tmp_path):
    world = random_world(tmp_path / "w", seed=4, tasks=("mult",), models=("a",), n_x1=40)
    r1 = run_gaps(options_for(world, tmp_path / "r1", boot_seed=9, boot_reps=300)).gaps
    r2 = run_gaps(options_for(world, tmp_path / "r2", boot_seed=9, boot_reps=300)).gaps
    r3 = run_gaps(options_for(world, tmp_path / "r3", boot_seed=10, boot_reps=300)).gaps
    cols = ["ci_low", "ci_high"]
    pd.testing.assert_frame_equal(r1[cols], r2[cols])
    assert not np.allclose(r1[cols].to_numpy(), r3[cols].to_numpy(), equal_nan=True)
    ok = r1.dropna(subset=["delta"])
    assert ((ok["ci_low"] <= ok["delta"] + 1e-9) & (ok["delta"] <= ok["ci_high"] + 1e-9)).mean() \
        >= 0.8
    assert (r1["boot_reps"] == 300).all() and (r1["boot_seed"] == 9).all()
    assert r1["ci_level"].iloc[0] == pytest.approx(0.95)
