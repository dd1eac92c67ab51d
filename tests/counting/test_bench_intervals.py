"""The counting benchmark's interval for the median of per-round ratios (bench/bench_count.py):
the standard distribution-free one, checked against published table values and the binomial
sums written out."""

import importlib.util
from math import comb
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "bench_count_under_test", Path(__file__).resolve().parents[2] / "bench" / "bench_count.py")
bench_count = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench_count)


@pytest.mark.parametrize("n, k", [(6, 1), (10, 2), (15, 4), (20, 6), (30, 10), (50, 18)])
def test_the_order_statistics_are_the_tables(n, k):
    # Conover, Practical Nonparametric Statistics, table of the sign test's ranks (95 %, two-sided)
    values = [float(v) for v in range(100, 100 + n)][::-1]         # any order in
    assert bench_count.median_interval(values) == (100.0 + k - 1, 100.0 + n - k)


def test_too_few_rounds_have_no_interval():
    assert bench_count.median_interval([1.2, 1.3, 1.1, 1.4, 1.25]) is None
    assert "too few rounds (5)" in bench_count.interval_of([1.2, 1.3, 1.1, 1.4, 1.25], ".2f")


@pytest.mark.parametrize("n", range(6, 61))
def test_the_widest_k_with_at_least_95_percent_coverage(n):
    def coverage(k):          # P(x(k) <= median <= x(n+1-k)) = P(k <= B <= n - k), B ~ Bin(n, 1/2)
        return sum(comb(n, j) for j in range(k, n - k + 1)) / 2 ** n
    lo, hi = bench_count.median_interval(list(range(1, n + 1)))
    k = lo
    assert hi == n + 1 - k
    assert coverage(k) >= 0.95 > coverage(k + 1)
