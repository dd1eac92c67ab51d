"""Counting benchmark (make bench-count): the job side by side with its baselines.

All rates are in MB of uncompressed JSON Lines per second. Baselines, measured in the same
run on the same corpus: `zstd -dc` alone (the decompression limit, one core) and the plain
single-process Python reference (json, str.split, Counter, the window loop: the study's
way). The job's fixed costs (Spark session start, per-run planning/merge/commit) are
measured apart from its steady-state throughput: steady = (full - small) bytes over
(full - small) seconds, where `small` is a run on one small shard.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from freqgap.counting.job import run_count  # noqa: E402
from freqgap.counting.reference import count_jsonl_lines  # noqa: E402
from freqgap.counting.rules import TermRules  # noqa: E402
from freqgap.counting.sources import iter_lines  # noqa: E402


def ensure_corpus(directory: Path, size_mb: float, shards: int) -> float:
    """Generate the bench corpus once (not timed as part of the benchmark)."""
    if (directory / "_manifest.json").exists():
        return 0.0
    t = time.monotonic()
    subprocess.run([sys.executable, str(REPO / "jobs" / "generate_corpus.py"), "--profile", "bench",
                    "--output", str(directory), "--shards", str(shards),
                    "--shard-mb", str(size_mb / shards), "--workers", "2"], check=True)
    return time.monotonic() - t


def zstd_rate(files: list[Path]) -> tuple[float, int]:
    t = time.monotonic()
    total = 0
    for f in files:
        out = subprocess.run(["zstd", "-dc", str(f)], check=True, capture_output=True).stdout
        total += len(out)
    return total / 1e6 / (time.monotonic() - t), total


def reference_rate(files: list[Path], limit_mb: float, rules: TermRules) -> tuple[float, float]:
    """Reference counter over the first `limit_mb` of the corpus (its rate is per MB)."""
    lines, size = [], 0
    for f in files:
        for _, line in iter_lines(str(f)):
            lines.append(line)
            size += len(line) + 1
            if size >= limit_mb * 1e6:
                break
        if size >= limit_mb * 1e6:
            break
    t = time.monotonic()
    count_jsonl_lines(lines, rules)
    return size / 1e6 / (time.monotonic() - t), size / 1e6


def job_seconds(spark, inputs: list[str], out: Path, rules: TermRules) -> float:
    shutil.rmtree(out, ignore_errors=True)
    t = time.monotonic()
    run_count(inputs, str(out), rules=rules, spark=spark, progress_interval=10)
    return time.monotonic() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(REPO / "out" / "bench" / "corpus"))
    ap.add_argument("--size-mb", type=float, default=520.0, help="uncompressed corpus size")
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--reference-mb", type=float, default=60.0,
                    help="MB of the corpus the (slow) reference counter runs over")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--report", default=str(REPO / "bench" / "results" / "count.md"))
    args = ap.parse_args()

    corpus = Path(args.corpus)
    gen_s = ensure_corpus(corpus, args.size_mb, args.shards)
    files = sorted(corpus.glob("*.jsonl.zst"))
    rules = TermRules.from_conf()
    zstd_mbs, raw_bytes = zstd_rate(files)
    raw_mb = raw_bytes / 1e6
    ref_mbs, ref_mb = reference_rate(files, args.reference_mb, rules)

    from freqgap.spark_session import get_spark
    t = time.monotonic()
    spark = get_spark(master=f"local[{args.cores}]", app_name="freqgap-bench")
    spark_start = time.monotonic() - t
    work = REPO / "out" / "bench"
    small_dir = work / "small"
    shutil.rmtree(small_dir, ignore_errors=True)
    small_dir.mkdir(parents=True)
    small_lines = [line for _, line in zip(range(2000), iter_lines(str(files[0])))]
    (small_dir / "small.jsonl").write_bytes(b"\n".join(l for _, l in small_lines) + b"\n")
    small_mb = (small_dir / "small.jsonl").stat().st_size / 1e6
    job_seconds(spark, [str(small_dir)], work / "warmup", rules)          # JIT and worker warm-up
    small_s = job_seconds(spark, [str(small_dir)], work / "out-small", rules)
    w5 = job_seconds(spark, [str(corpus)], work / "out-w5", rules)
    rules10 = TermRules.from_config({**rules.to_config(), "window": 10})
    small10 = job_seconds(spark, [str(small_dir)], work / "out-small10", rules10)
    w10 = job_seconds(spark, [str(corpus)], work / "out-w10", rules10)
    steady5 = (raw_mb - small_mb) / max(w5 - small_s, 1e-9)
    steady10 = (raw_mb - small_mb) / max(w10 - small10, 1e-9)
    per_core = steady5 / args.cores
    rows = [
        ("zstd -dc (decompression only, 1 core)", zstd_mbs, zstd_mbs, zstd_mbs / ref_mbs),
        (f"Python reference (1 core, first {ref_mb:.0f} MB)", ref_mbs, ref_mbs, 1.0),
        (f"count_terms W=5 (local[{args.cores}], steady state)", steady5, per_core, per_core / ref_mbs),
        (f"count_terms W=10 (local[{args.cores}], steady state)", steady10, steady10 / args.cores,
         steady10 / args.cores / ref_mbs),
    ]
    lines = [f"Corpus: {len(files)} shards, {raw_mb:,.0f} MB JSON Lines "
             f"({sum(f.stat().st_size for f in files) / 1e6:,.0f} MB zstd); machine: {os.cpu_count()} cores.",
             "", "| run | MB/s | MB/s per core | per core vs reference |", "|---|---:|---:|---:|"]
    lines += [f"| {name} | {a:,.1f} | {b:,.1f} | {c:,.2f}x |" for name, a, b, c in rows]
    lines += ["", f"Window 10 costs {steady5 / steady10:,.2f}x window 5 (steady state).",
              f"Fixed costs: Spark session start {spark_start:,.1f} s; one job run on a "
              f"{small_mb:.1f} MB file {small_s:,.1f} s (planning, merge, commit); "
              f"full W=5 run {w5:,.1f} s wall."]
    if gen_s:
        lines.append(f"(Generating the corpus took {gen_s:,.0f} s, not part of the benchmark.)")
    report = "\n".join(lines)
    print(report)
    Path(args.report).parent.mkdir(parents=True, exist_ok=True)
    Path(args.report).write_text(report + "\n")
    json.dump({"zstd": zstd_mbs, "reference": ref_mbs, "job_w5": steady5, "job_w10": steady10,
               "spark_start_s": spark_start, "small_run_s": small_s},
              open(Path(args.report).with_suffix(".json"), "w"), indent=1)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
