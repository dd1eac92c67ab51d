"""Δ, ρ and the per-key table on small hand-computed fixtures (SPEC §5)."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pandas as pd
import pytest

from freqgap.gaps.inputs import GapsInputError
from freqgap.gaps.run import run_gaps
from tests.gaps.fixtures import build_world, options_for

T, F = True, False


def md5(key: str) -> str:
    return hashlib.md5(key.encode()).hexdigest()


def row(gaps: pd.DataFrame, freq_def: str, task: str = "mult", k: int = 2) -> pd.Series:
    sel = gaps[(gaps["task"] == task) & (gaps["freq_def"] == freq_def) & (gaps["k"] == k)]
    assert len(sel) == 1
    return sel.iloc[0]


# x1 -> (ω{x1}, correct per seed); x2 = 1 for every instance, so the key of '1' is x1.
TIES = {1: (3, [F, F]), 2: (5, [T, F]), 3: (5, [T, T]), 4: (7, [T, F]), 5: (8, [T, T]),
        6: (9, [F, F]), 7: (10, [T, F]), 8: (12, [F, T]), 9: (20, [F, F]), 10: (20, [T, F]),
        11: (30, [T, T]),
        20: (0, [F, F]), 21: (0, [T])}          # never seen: left out, counted


@pytest.fixture(scope="module")
def ties_result(tmp_path_factory):
    root = tmp_path_factory.mktemp("ties")
    world = build_world(root, [("mult", x1, 1, c) for x1, (_, c) in TIES.items()],
                        {str(x1): w for x1, (w, _) in TIES.items() if w})
    return run_gaps(options_for(world, root / "results", min_seen_keys=2))


def test_ties_at_the_bin_edges_are_broken_by_md5_of_the_key(ties_result):
    # 11 seen keys -> bins of ceil(1.1) = 2. Bottom: '1' (ω 3) and one of '2'/'3' (ω 5);
    # top: '11' (ω 30) and one of '9'/'10' (ω 20). md5 decides, as documented.
    assert md5("2") < md5("3") and md5("9") < md5("10")
    r = row(ties_result.gaps, "1")
    assert (r["n_keys"], r["n_bottom"], r["n_top"]) == (11, 2, 2)
    bottom = (0.0 + 0.5) / 2            # keys '1', '2'
    top = (0.5 + 1.0) / 2               # keys '10', '11'
    assert r["delta"] == pytest.approx(top - bottom) == pytest.approx(0.5)
    assert (r["bottom_max_omega"], r["top_min_omega"]) == (5, 20)


def test_unseen_keys_are_left_out_and_counted(ties_result):
    r = row(ties_result.gaps, "1")
    assert (r["n_unseen_keys"], r["n_unseen_rows"]) == (2, 3)
    all_rows = [c for _, cs in TIES.values() for c in cs]
    assert r["accuracy"] == pytest.approx(sum(all_rows) / len(all_rows))   # overall: all rows
    pk = ties_result.per_key
    unseen = pk[(pk["freq_def"] == "1") & (pk["omega"] == 0)].sort_values("key")
    assert list(unseen["key"]) == ["20", "21"]
    assert list(unseen["n_rows"]) == [2, 1]


def test_spearman_uses_average_ranks(ties_result):
    seen = {x1: (w, np.mean(c)) for x1, (w, c) in TIES.items() if w}
    df = pd.DataFrame(seen.values(), columns=["w", "a"])
    expected = np.corrcoef(df["w"].rank(), df["a"].rank())[0, 1]
    assert row(ties_result.gaps, "1")["spearman_rho"] == pytest.approx(expected)


def test_spearman_hand_value(tmp_path):
    # ω 1, 2, 2, 5 and accuracy 0, .5, 1, 1: average ranks (1, 2.5, 2.5, 4) and
    # (1, 2, 3.5, 3.5); Pearson of those = 3.75 / 4.5.
    specs = [("mult", 1, 1, [F, F]), ("mult", 2, 1, [T, F]), ("mult", 3, 1, [T, T]),
             ("mult", 4, 1, [T, T])]
    world = build_world(tmp_path, specs, {"1": 1, "2": 2, "3": 2, "4": 5})
    r = row(run_gaps(options_for(world, tmp_path / "r", min_seen_keys=2)).gaps, "1")
    assert r["spearman_rho"] == pytest.approx(3.75 / 4.5)
    assert r["delta"] == pytest.approx(1.0 - 0.0)      # 4 keys -> bins of 1


def test_commuted_instances_share_one_key_and_equal_terms_use_pairs(tmp_path):
    specs = [("mult", 3, 4, [T, T]), ("mult", 4, 3, [F, F]),      # {3,4}: pooled, acc .5
             ("mult", 7, 7, [T, F]),                               # ('7','7') in pairs
             ("mult", 10, 9, [F, F]), ("mult", 9, 10, [F, T]),     # ('10','9'): string order
             ("mult", 2, 5, [T, T])]                               # absent pair: unseen
    uni = {"3": 1, "4": 1, "7": 999, "9": 1, "10": 1, "2": 1}
    pairs = {("3", "4"): 50, ("7", "7"): 40, ("10", "9"): 30}
    world = build_world(tmp_path, specs, uni, pairs)
    res = run_gaps(options_for(world, tmp_path / "r", min_seen_keys=2))
    pk = res.per_key[res.per_key["freq_def"] == "1,2"].set_index("key")
    assert pk.loc["3,4", ["omega", "n_instances", "n_rows"]].tolist() == [50, 2, 4]
    assert pk.loc["3,4", "accuracy"] == pytest.approx(0.5)
    assert pk.loc["7,7", ["omega", "n_terms"]].tolist() == [40, 2]
    assert pk.loc["10,9", "omega"] == 30 and pk.loc["10,9", "accuracy"] == pytest.approx(0.25)
    assert pk.loc["2,5", "omega"] == 0
    r = row(res.gaps, "1,2")
    # 3 seen keys -> bins of 1: top {3,4} (ω 50), bottom {10,9} (ω 30).
    assert (r["n_keys"], r["n_unseen_keys"]) == (3, 1)
    assert r["delta"] == pytest.approx(0.5 - 0.25)


ALL_SAME = [("mult", x1, 1, c) for x1, c in
            zip(range(1, 7), [[T, T], [F, F], [T, F], [F, T], [T, T], [F, F]])]


def test_every_key_with_the_same_omega(tmp_path):
    world = build_world(tmp_path, ALL_SAME, {str(x1): 4 for _, x1, _, _ in ALL_SAME})
    r = row(run_gaps(options_for(world, tmp_path / "r", min_seen_keys=2)).gaps, "1")
    acc = {str(x1): np.mean(c) for _, x1, _, c in ALL_SAME}
    order = sorted(acc, key=md5)                     # rank order: ω equal, then md5(key)
    assert r["delta"] == pytest.approx(acc[order[-1]] - acc[order[0]])
    assert r["spearman_rho"] is None or math.isnan(r["spearman_rho"])    # ω constant


def test_quantile_binning_with_every_omega_equal_is_an_error(tmp_path):
    world = build_world(tmp_path, ALL_SAME, {str(x1): 4 for _, x1, _, _ in ALL_SAME})
    with pytest.raises(GapsInputError, match="bin empty"):
        run_gaps(options_for(world, tmp_path / "r", min_seen_keys=2, binning="quantile"))
    assert not (tmp_path / "r" / "_manifest.json").exists()


def test_one_seen_key_gives_no_delta(tmp_path):
    world = build_world(tmp_path, [("mult", 1, 1, [T]), ("mult", 2, 1, [F])], {"1": 5})
    r = row(run_gaps(options_for(world, tmp_path / "r", min_seen_keys=2)).gaps, "1")
    assert r["n_keys"] == 1 and r["n_unseen_keys"] == 1
    assert r["delta"] is None or math.isnan(r["delta"])
    assert r["withheld_reason"] == "1 seen keys, fewer than min_seen_keys = 2"


def test_time_unit_keys_use_triples(tmp_path):
    specs = [("hour_min", x1, "", [x1 % 2 == 0, True]) for x1 in range(1, 6)]
    uni = {str(x): 1 for x in range(1, 6)}
    pairs = {tuple(sorted((str(x), "hour"))): 10 * x for x in range(1, 6)}
    triples = {tuple(sorted((str(x), "hour", "60"))): x for x in range(1, 5)}
    world = build_world(tmp_path, specs, uni, pairs, triples)
    res = run_gaps(options_for(world, tmp_path / "r", min_seen_keys=2))
    pk = res.per_key[(res.per_key["freq_def"] == "1,2,3")].set_index("key")
    assert pk.loc["2,60,hour", ["omega", "n_terms"]].tolist() == [2, 3]
    assert pk.loc["5,60,hour", "omega"] == 0
    # accuracy by x1: 1 -> .5, 2 -> 1, 3 -> .5, 4 -> 1, 5 -> .5; bins of 1 key.
    r = row(res.gaps, "1,2", task="hour_min")          # ω{x1,hour} = 10 x1: x1=5 vs x1=1
    assert r["n_keys"] == 5 and r["delta"] == pytest.approx(0.5 - 0.5)
    r = row(res.gaps, "1,2,3", task="hour_min")        # ω = x1 for 1..4, x1=5 unseen
    assert (r["n_keys"], r["n_unseen_keys"]) == (4, 1)
    assert r["delta"] == pytest.approx(1.0 - 0.5)


def test_bins_that_would_overlap_give_no_delta(tmp_path):
    # bin_percent 50 with 3 keys: ceil(1.5) = 2 keys per bin, sharing the middle key.
    specs = [("mult", x1, 1, [x1 > 1]) for x1 in (1, 2, 3)]
    world = build_world(tmp_path, specs, {"1": 1, "2": 2, "3": 3})
    r = row(run_gaps(options_for(world, tmp_path / "r", min_seen_keys=2, bin_percent=50)).gaps, "1")
    assert r["n_bottom"] == r["n_top"] == 2
    assert math.isnan(r["delta"]) and math.isnan(r["ci_low"])
    assert "would share keys" in r["withheld_reason"]


def test_fewer_seen_keys_than_the_minimum_withhold_every_effect_size(tmp_path):
    # 11 seen keys (TIES): a Δ with min_seen_keys 11, none with the default 20.
    specs = [("mult", x1, 1, c) for x1, (_, c) in TIES.items()]
    world = build_world(tmp_path, specs, {str(x1): w for x1, (w, _) in TIES.items() if w})
    at11 = row(run_gaps(options_for(world, tmp_path / "a", min_seen_keys=11)).gaps, "1")
    assert not math.isnan(at11["delta"]) and at11["withheld_reason"] is None
    assert not math.isnan(at11["logit_slope"]) and not math.isnan(at11["ci_low"])
    r = row(run_gaps(options_for(world, tmp_path / "b")).gaps, "1")     # default: 20
    assert r["min_seen_keys"] == 20 and r["n_keys"] == 11
    assert r["withheld_reason"] == "11 seen keys, fewer than min_seen_keys = 20"
    for col in ("delta", "spearman_rho", "ci_low", "ci_high", "logit_slope", "logit_slope_low"):
        assert r[col] is None or math.isnan(r[col]), col
    assert r["accuracy"] == pytest.approx(at11["accuracy"])     # still reported


def test_delta_per_seed_and_its_spread(tmp_path):
    # Two seeds; each seed's keys binned on their own by the same rule.
    rng = np.random.default_rng(8)
    n = 24
    correct = rng.random((n, 2)) < np.linspace(0.1, 0.9, n)[:, None]
    specs = [("mult", i, 1, list(map(bool, correct[i]))) for i in range(n)]
    world = build_world(tmp_path, specs, {str(i): 10 + 3 * i for i in range(n)})
    r = row(run_gaps(options_for(world, tmp_path / "r")).gaps, "1")
    order = np.arange(n)                      # ω rises with i, all distinct
    m = math.ceil(n / 10)
    want = [correct[order[-m:], s].mean() - correct[order[:m], s].mean() for s in (0, 1)]
    got = [d["delta"] for d in r["delta_per_seed"]]
    assert [d["seed"] for d in r["delta_per_seed"]] == [0, 1]
    np.testing.assert_allclose(got, want)
    assert r["delta_seed_min"] == pytest.approx(min(want))
    assert r["delta_seed_max"] == pytest.approx(max(want))
    assert r["delta_seed_sd"] == pytest.approx(np.std(want, ddof=1))
    assert r["n_seed_deltas"] == 2
