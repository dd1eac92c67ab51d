"""The benchmarks' shared parts: the interval for the median of per-round ratios
(bench/intervals.py: the standard distribution-free one, checked against published table
values and the binomial sums written out) and bench/RESULTS.md's writer (bench/results_md.py:
one section per benchmark, replaced in place, the others kept), with bench_count's section
made from a stored sitting."""

import importlib.util
import json
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


def test_results_md_replaces_its_own_section_and_keeps_the_others(tmp_path):
    results_md = _load("results_md")
    path = tmp_path / "RESULTS.md"
    where = dict(command="make x", machine="CPU Z, 2 cores", commit="abc1234", started="T0")
    results_md.write_section("count", "Counting", ["| a |", "|---|", "| 1 |"], path=path, **where)
    results_md.write_section("gaps", "Gaps", ["gaps body"], path=path, **where)
    results_md.write_section("count", "Counting", ["| a |", "|---|", "| 2 |"], path=path,
                             **{**where, "commit": "def5678"})
    text = path.read_text()
    assert text.startswith("# Benchmark results\n")
    assert text.count("<!-- results: count -->") == 1 and text.count("<!-- end: count -->") == 1
    assert "| 2 |" in text and "| 1 |" not in text and "abc1234" in text and "def5678" in text
    assert text.index("<!-- results: count -->") < text.index("<!-- results: gaps -->")   # order kept
    assert "gaps body" in text and "`make x`, started T0 on CPU Z, 2 cores; commit def5678." in text


def test_results_md_refuses_a_section_without_its_end(tmp_path):
    results_md = _load("results_md")
    path = tmp_path / "RESULTS.md"
    path.write_text("# Benchmark results\n\n<!-- results: count -->\n## Counting\nhalf of it\n")
    with pytest.raises(ValueError, match="no end marker"):
        results_md.write_section("count", "Counting", ["x"], path=path, command="c", machine="m",
                                 commit="c", started="s")
    assert "half of it" in path.read_text()          # left as it was


def test_results_md_names_the_machine():
    results_md = _load("results_md")
    assert results_md.machine("processor\t: 0\nmodel name\t: Some CPU 9000\n").startswith("Some CPU 9000, ")
    assert results_md.machine("").startswith("unknown CPU, ")


def _round_sitting():
    """A full sitting's JSON as bench_count stores it, with round numbers."""
    totals = {"tokens": 1000, "term_occurrences": 100, "triple_occurrences": 10}
    def layout(files, big):
        row = {"files": files, "mb": 100.0, "zstd": 400.0, "task_numpy": 40.0, "reference": 20.0,
               "cold": 60.0, "cold_wall": 4.0, "cold_cpu": 5.0, "cold_vs_reference": [3.0, 3.2, 3.1],
               "cold_py": 62.0, "cold_py_wall": 3.9, "cold_py_cpu": 4.8, "cold_py_vs_reference": [3.1] * 3,
               "task_parallel": 290.0, "warm": 261.0, "warm_wall": 0.5, "task_numba": 300.0,
               "totals": totals, "warm_share": [0.9] * 5}
        if big:
            row.update({"warm_w10": 200.0, "task_numba_w10": 250.0, "totals_w10": {**totals, "triple_occurrences": 40},
                        "warm_spread": 200.0, "w10_cost": [1.25] * 15, "w10_ratio_of_medians": 1.25,
                        "w10_user_cost": [1.2] * 15, "kernel_cpu": {"": [0.04] * 15, "_w10": [0.08] * 15}})
        return row
    return {"results": {f"{c}|{l}": layout(24 if l == "small" else 2, l == "big")
                        for c in ("real text", "generated") for l in ("small", "big")},
            "fixed_cpu_s": 3.8, "fixed_wall_s": 3.4, "fixed_freqgap_count_cpu_s": 3.9,
            "fixed_freqgap_count_wall_s": 3.4, "numba_compile_cpu_s": [19.0, 0.9], "session_start_s": 1.5,
            "load_average": [[1.5, 1, 1], [1.6, 1, 1]],
            "realtext": {"json_lines_mb": 313.0, "documents": 49150, "packages": {"dict-wn": "1:3.0-37"}},
            "cpu": "Some CPU (family 1, model 2)", "started": "2026-01-01T00:00:00Z", "commit": "abc1234",
            "quick": False}


def test_bench_count_writes_its_section_from_a_stored_sitting(tmp_path):
    bench_count = _load("bench_count")
    sitting = tmp_path / "count.json"
    sitting.write_text(json.dumps(_round_sitting()))
    results = tmp_path / "RESULTS.md"
    assert bench_count.from_sitting(sitting, results) == 0
    text = results.read_text()
    assert "`make bench-count`, started 2026-01-01T00:00:00Z on Some CPU (family 1, model 2); commit abc1234." in text
    assert "| real text, 2 files of 50 MB | 60.0 (3.0x) | 62.0 (3.1x) | 261.0 (13.1x) | 300.0 (15.0x) " in text
    assert "local[2];" in text and "W=10 costs 1.25x the CPU of W=5" in text
    assert text.count("<!-- results: count -->") == 1


@pytest.mark.parametrize("content", ["{not json", '{"results": {}}', "[1]"])
def test_bench_count_names_a_file_that_is_not_a_sitting(tmp_path, capsys, content):
    bench_count = _load("bench_count")
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    results = tmp_path / "RESULTS.md"
    assert bench_count.from_sitting(bad, results) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(bad) in err[0], err
    assert not results.exists()                      # nothing half-written


def test_bench_gaps_section_lists_every_run():
    bench_gaps = _load("bench_gaps")
    job = {"seconds": 34.0, "peak_rss_mb": 1066.0}
    report = {"memory_limit": "1GB", "prediction_rows": 254950, "fixed_startup_seconds": 3.0,
              "steady_pairs_rows_per_second": 15e6,
              "runs": {"full": {"counts": {"pairs": 100005153}, "job": job,
                                "job_low_memory": {**job, "memory_limit": "256MB"}},
                       "tiny": {"counts": {"pairs": 1000}, "job": {**job, "seconds": 3.0}},
                       "compare": {"counts": {"pairs": 10000000}, "job": job,
                                   "baseline_pandas": {"seconds": 60.0, "peak_rss_mb": 3000.0},
                                   "ratios": {"time_baseline_over_job_per_key_steps": 2.9,
                                              "time_baseline_over_whole_job": 1.8,
                                              "peak_rss_baseline_over_job": 2.8}}}}
    lines = bench_gaps.results_lines(report)
    assert "| job, full | 100,005,153 | 1GB | 34.0 | 1,066 |" in lines
    assert "| job, full, low memory | 100,005,153 | 256MB | 34.0 | 1,066 |" in lines
    assert any(line.startswith("| the study's way") and "60.0" in line for line in lines)
    assert any("2.9x the time of the job's same steps" in line for line in lines)


def test_pair_cold_usage_and_a_failing_checkout(tmp_path, capsys):
    """bench/pair_cold.py: wrong arguments print the usage line (exit 2); a checkout whose
    count fails is named, not averaged in."""
    pair = _load("pair_cold")
    assert pair.main(["only-one"]) == 2
    assert "pair_cold.py OLD_CHECKOUT NEW_CHECKOUT INPUT" in capsys.readouterr().err
    fake = tmp_path / "co"
    (fake / ".venv" / "bin").mkdir(parents=True)
    script = fake / ".venv" / "bin" / "freqgap"
    script.write_text("#!/bin/sh\nexit 3\n")
    script.chmod(0o755)
    with pytest.raises(SystemExit, match="exited 3"):
        pair.cold_cpu(str(fake), str(tmp_path), str(tmp_path / "out"))
