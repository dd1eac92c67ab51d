"""The counting benchmark's interval for the median of per-round ratios (bench/intervals.py):
the standard distribution-free one, checked against published table values and the binomial
sums written out."""

import importlib.util
import json
import sys
from math import comb
from pathlib import Path

import pytest


def _load(name):
    """A module of bench/ (a directory of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(
        f"bench_{name}_under_test", Path(__file__).resolve().parents[2] / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


intervals = _load("intervals")


@pytest.mark.parametrize("n, k", [(6, 1), (10, 2), (15, 4), (20, 6), (30, 10), (50, 18)])
def test_the_order_statistics_are_the_tables(n, k):
    # Conover, Practical Nonparametric Statistics, table of the sign test's ranks (95 %, two-sided)
    values = [float(v) for v in range(100, 100 + n)][::-1]         # any order in
    assert intervals.median_interval(values) == (100.0 + k - 1, 100.0 + n - k)


def test_too_few_rounds_have_no_interval():
    assert intervals.median_interval([1.2, 1.3, 1.1, 1.4, 1.25]) is None
    assert "too few rounds (5)" in intervals.interval_of([1.2, 1.3, 1.1, 1.4, 1.25], ".2f")


@pytest.mark.parametrize("n", range(6, 61))
def test_the_widest_k_with_at_least_95_percent_coverage(n):
    def coverage(k):          # P(x(k) <= median <= x(n+1-k)) = P(k <= B <= n - k), B ~ Bin(n, 1/2)
        return sum(comb(n, j) for j in range(k, n - k + 1)) / 2 ** n
    lo, hi = intervals.median_interval(list(range(1, n + 1)))
    k = lo
    assert hi == n + 1 - k
    assert coverage(k) >= 0.95 > coverage(k + 1)


def _sitting(w10, cold, quick=False):
    layout = {"task_numba": 250.0, "warm_share": [0.9] * 5, "cold_vs_reference": cold,
              "cold_py_vs_reference": cold}
    return {"quick": quick, "results": {"real text|small": dict(layout),
                                        "real text|big": {**layout, "w10_cost": w10}}}


def test_pooling_reads_rounds_and_sittings_apart():
    pool_count = _load("pool_count")
    # 6 sittings: every round of the first five passes W = 10's goal, the sixth's all fail
    sittings = [_sitting([1.2] * 15, [3.1, 3.2, 3.3]) for _ in range(5)] + [_sitting([1.4] * 15, [2.9] * 3)]
    lines = {line.split(" (")[0] + "|" + line.split("(")[1].split(";")[0]: line
             for line in pool_count.pool(sittings)}
    w10 = lines["W = 10 / W = 5, warm job|2 files"]
    assert "rounds 90, median 1.2 [1.2, 1.2], 75 pass" in w10
    assert "sittings 6, median of their medians 1.2 [1.2, 1.4], 5 pass" in w10
    cold = lines["cold spark-submit / reference|24 files"]
    assert "rounds 18, median 3.2 [3.1, 3.3], 15 pass" in cold      # x(5), x(14) of 18
    assert "sittings 6, median of their medians 3.2 [2.9, 3.2], 5 pass" in cold
    assert not any(key.startswith("W = 10") and "24 files" in key for key in lines)


def test_pooling_skips_quick_sittings_and_says_when_there_are_none(tmp_path, capsys):
    pool_count = _load("pool_count")
    quick = tmp_path / "quick.json"
    quick.write_text(json.dumps(_sitting([1.2], [3.0], quick=True)))
    assert pool_count.load([quick]) == []
    argv, sys.argv = sys.argv, ["pool_count", str(quick)]
    try:
        assert pool_count.main() == 2
    finally:
        sys.argv = argv
    assert "no full sittings" in capsys.readouterr().err


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"quick": false}'])
def test_pooling_names_a_file_that_is_not_a_sitting(tmp_path, capsys, content):
    pool_count = _load("pool_count")
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    argv, sys.argv = sys.argv, ["pool_count", str(bad)]
    try:
        assert pool_count.main() == 2
    finally:
        sys.argv = argv
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(bad) in err[0], err
