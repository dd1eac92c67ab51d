"""`binning: quantile` equals the study's own Δ code, line for line (SPEC §5 step 3).

`original` is a plain transcription of PlotInfo.quantile_accuracies_plot in
GPTAnalyzer/AggregateResults/plot_utils.py (yasamanrazeghi7/TermFrequency): np.quantile edges,
edges[-1] += 1, np.digitize, per-bin mean of the per-key accuracy, last bin − first bin, with
the original's silent 0 for a first bin outside the occupied range. Where that 0 would be
used, freqgap must stop naming the group; everywhere else it must give the same Δ.
"""

from __future__ import annotations

import warnings

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from freqgap.errors import FreqgapError
from freqgap.gaps.run import run_gaps
from tests.gaps.fixtures import build_world, options_for


def original(frequencies: np.ndarray, is_correct: np.ndarray, q_num: int = 10):
    """(Δ, bins, silent_zero) exactly as the original computes them."""
    quantiles = np.quantile(frequencies, q=np.linspace(0, 1, num=q_num + 1))
    quantiles[-1] += 1
    frequency_bins = np.digitize(frequencies, bins=quantiles)
    accuracies = np.zeros(shape=(quantiles.shape[0] - 1,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # np.mean of an empty interior bin
        for bin_id in range(frequency_bins.min(), frequency_bins.max() + 1):
            accuracies[bin_id - 1] = np.mean(is_correct[frequency_bins == bin_id])
    silent_zero = bool(frequency_bins.min() > 1 or frequency_bins.max() < q_num)
    return accuracies[-1] - accuracies[0], frequency_bins, silent_zero


def _world(tmp_path, omega: list[int], seed: int = 0):
    """One key per ω value (x1 = i), 4 seeds of correctness rising with ω."""
    rng = np.random.default_rng(seed)
    omega = np.asarray(omega)
    p = 0.15 + 0.7 * (np.argsort(np.argsort(omega, kind="stable")) / max(len(omega) - 1, 1))
    correct = rng.random((len(omega), 4)) < p[:, None]
    specs = [("mult", i, 1, list(map(bool, correct[i]))) for i in range(len(omega))]
    world = build_world(tmp_path, specs, {str(i): int(w) for i, w in enumerate(omega)})
    return world, correct.mean(axis=1)


def _check(tmp_path, omega: list[int], seed: int = 0, bin_percent: int = 10) -> str:
    """Run freqgap and the original on one fixture; 'equal' or 'stopped' (as it must)."""
    world, acc = _world(tmp_path, omega, seed)
    q = 100 // bin_percent
    want, bins, silent_zero = original(np.asarray(omega, dtype=float), acc, q_num=q)
    opts = options_for(world, tmp_path / "r", binning="quantile", min_seen_keys=2, boot_reps=0,
                       bin_percent=bin_percent)
    if silent_zero:
        with pytest.raises(FreqgapError, match=r"^gaps: group m/main/mult/k=2/1 .*bottom bin empty"):
            run_gaps(opts)
        assert not (tmp_path / "r" / "_manifest.json").exists()
        return "stopped"
    r = run_gaps(opts).gaps
    r = r[r["freq_def"] == "1"].iloc[0]
    assert r["n_bottom"] == (bins == 1).sum() and r["n_top"] == (bins == q).sum()
    assert r["delta"] == pytest.approx(want, abs=1e-12)
    return "equal"


def test_distinct_omega(tmp_path):
    rng = np.random.default_rng(3)
    assert _check(tmp_path, list(rng.choice(np.arange(1, 5000), size=47, replace=False))) == "equal"


def test_ties_at_interior_edges(tmp_path):
    # n = 21: edges at sorted indices 2 and 18 exactly; both sit inside runs of ties, and
    # the left-closed bins put the tied keys above the edge (qcut would put them below).
    omega = [1, 2, 5, 5, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 30, 30, 30, 31]
    assert _check(tmp_path, omega) == "equal"


def test_ties_at_the_minimum_leaving_the_bottom_bin_nonempty(tmp_path):
    omega = [3, 3] + list(range(10, 29))                  # q10 = 10 > 3: bottom = the two 3s
    assert _check(tmp_path, omega) == "equal"


def test_ties_at_the_minimum_empty_the_bottom_bin_where_the_original_printed_0(tmp_path):
    omega = [3, 3, 3] + list(range(10, 28))               # q10 = 3 = min: nothing below it
    assert original(np.asarray(omega, float), np.zeros(len(omega)))[2]
    assert _check(tmp_path, omega) == "stopped"


def test_ties_at_the_maximum_are_the_top_bin(tmp_path):
    # q90 = the largest ω: the original's top bin holds the tied maxima (its edges[-1] += 1);
    # a qcut-style rule (ω > q90) would find it empty.
    omega = list(range(1, 19)) + [50, 50, 50]
    assert _check(tmp_path, omega) == "equal"


@pytest.mark.parametrize("seed", range(6))
def test_random_omega_with_many_ties(tmp_path, seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(20, 60))
    omega = list(rng.integers(1, int(rng.integers(3, 40)), size=n))
    _check(tmp_path, omega, seed)


@pytest.mark.parametrize("bin_percent", [20, 25])
def test_other_numbers_of_bins(tmp_path, bin_percent):
    rng = np.random.default_rng(bin_percent)
    omega = list(rng.integers(1, 30, size=int(rng.integers(20, 50))))
    _check(tmp_path, omega, bin_percent=bin_percent)


def test_resamples_with_repeated_keys_follow_the_same_rule(tmp_path):
    """A bootstrap resample (keys drawn with multiplicity) binned by the SQL macro equals the
    original applied to the expanded sample."""
    world, acc = _world(tmp_path, list(range(5, 45)))
    res = run_gaps(options_for(world, tmp_path / "r", binning="quantile", boot_reps=0))
    con = duckdb.connect(str(res.results_dir / "freqgap.duckdb"), read_only=True)
    rng = np.random.default_rng(5)
    omega = np.array(sorted(rng.integers(1, 25, size=40)))
    accuracy = rng.random(40)
    checked = 0
    for rep in range(30):
        w = rng.multinomial(40, np.full(40, 1 / 40))
        last = np.cumsum(w)
        keep = w > 0
        table = pa.table({"sample_id": np.full(keep.sum(), rep), "omega": omega[keep],
                          "accuracy": accuracy[keep], "first_pos": (last - w + 1)[keep],
                          "last_pos": last[keep], "n_drawn": np.full(keep.sum(), 40)})
        con.register("s", table)
        got = con.execute("SELECT delta, withheld_reason FROM gap_of_samples('s')").fetchall()[0]
        con.unregister("s")
        want, _, silent_zero = original(np.repeat(omega, w).astype(float), np.repeat(accuracy, w))
        if silent_zero:
            assert got[0] is None and got[1].startswith("empty")
        else:
            assert got[0] == pytest.approx(want, abs=1e-12)
            checked += 1
    con.close()
    assert checked >= 10
