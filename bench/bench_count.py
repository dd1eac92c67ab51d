"""Counting benchmark (make bench-count): the job side by side with its baselines.

All rates are in MB of uncompressed JSON Lines per second. "Per core" rates are MB per
CPU-second, measured from /proc as the CPU time of every process involved (the driver,
the JVM and its Python workers; the zstd child; the reference's own process), so they hold
on a shared, noisy machine where wall-clock rates do not. Baselines, measured in the same
run on the same corpus: `zstd -dc` alone (the decompression limit, one core) and the plain
single-process Python reference (json, str.split, Counter, the window loop: the study's
way). The job's fixed costs (Spark session start, per-run planning/merge/commit) are
measured apart from its steady-state throughput. After one warm-up run over the whole corpus
(the JVM compiles its hot paths: a fixed cost, measured as cold minus warm CPU), steady
state is the marginal rate between a run on half the shards and a run on all of them:
(all - half) MB over (all - half) seconds, so per-run costs (planning, merge, commit)
cancel out.
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


_TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(root: int) -> float:
    """user+sys CPU seconds of a process and all its descendants (living and reaped)."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry)
        parents[pid] = int(fields[1])
        times[pid] = sum(int(x) for x in fields[11:15]) / _TICK   # utime stime cutime cstime
    total, stack = 0.0, [root]
    while stack:
        pid = stack.pop()
        total += times.get(pid, 0.0)
        stack.extend(child for child, parent in parents.items() if parent == pid)
    return total


def ensure_corpus(directory: Path, size_mb: float, shards: int) -> float:
    """Generate the bench corpus once (not timed as part of the benchmark)."""
    if (directory / "_manifest.json").exists():
        return 0.0
    t = time.monotonic()
    subprocess.run([sys.executable, str(REPO / "jobs" / "generate_corpus.py"), "--profile", "bench",
                    "--output", str(directory), "--shards", str(shards),
                    "--shard-mb", str(size_mb / shards), "--workers", "2"], check=True)
    return time.monotonic() - t


def zstd_rate(files: list[Path]) -> tuple[float, float, int]:
    """(wall MB/s, MB per CPU-second, bytes) of `zstd -dc` over the corpus."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    total = 0
    for f in files:
        proc = subprocess.Popen(["zstd", "-dc", str(f)], stdout=subprocess.PIPE)
        while block := proc.stdout.read(1 << 20):
            total += len(block)
        proc.wait()
    wall = time.monotonic() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return total / 1e6 / wall, total / 1e6 / cpu, total


def first_lines(files: list[Path], limit_mb: float) -> tuple[list[tuple[int, bytes]], int]:
    """(line number, line) of the first `limit_mb` MB of the corpus, and their size."""
    lines, size = [], 0
    for f in files:
        for number, line in iter_lines(str(f)):
            lines.append((number, line))
            size += len(line) + 1
            if size >= limit_mb * 1e6:
                return lines, size
    return lines, size


def reference_rate(files: list[Path], limit_mb: float, rules: TermRules) -> tuple[float, float]:
    """Reference counter over the first `limit_mb` of the corpus (its rate is per MB)."""
    numbered, size = first_lines(files, limit_mb)
    lines = [line for _, line in numbered]
    t = time.process_time()
    count_jsonl_lines(lines, rules)
    return size / 1e6 / (time.process_time() - t), size / 1e6


def engine_rate(files: list[Path], limit_mb: float, rules: TermRules) -> float:
    """The job's per-task code (parse, tokenise, count, sum by key) in this process, no Spark:
    MB per CPU-second over the first `limit_mb` MB, the same records as the reference."""
    from freqgap.counting.partials import count_lines

    numbered, size = first_lines(files, limit_mb)
    rows = [(0, number, line, False, None) for number, line in numbered]
    t = time.process_time()
    for _ in count_lines(iter(rows), rules, "fail", {0: "bench"}):
        pass
    return size / 1e6 / (time.process_time() - t)


def job_seconds(spark, inputs: list[str], out: Path, rules: TermRules) -> tuple[float, float]:
    """(wall seconds, CPU seconds of driver + JVM + Python workers) of one job run."""
    shutil.rmtree(out, ignore_errors=True)
    jvm = spark.sparkContext._gateway.proc.pid
    cpu0, t = tree_cpu_seconds(jvm) + time.process_time(), time.monotonic()
    manifest = run_count(inputs, str(out), rules=rules, spark=spark, progress_interval=10)
    job_seconds.last_totals = manifest["totals"]
    return time.monotonic() - t, tree_cpu_seconds(jvm) + time.process_time() - cpu0


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
    zstd_wall, zstd_cpu, raw_bytes = zstd_rate(files)
    raw_mb = raw_bytes / 1e6
    # The single-process rates alternate, three times each, and the medians are kept.
    ref_runs, engine_runs = [], []
    for _ in range(3):
        ref_cpu, ref_mb = reference_rate(files, args.reference_mb, rules)
        ref_runs.append(ref_cpu)
        engine_runs.append(engine_rate(files, args.reference_mb, rules))
    ref_cpu, engine_cpu = sorted(ref_runs)[1], sorted(engine_runs)[1]

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
    half = [str(f) for f in files[: len(files) // 2]]
    half_mb = sum(len(line) + 1 for f in files[: len(files) // 2] for _, line in iter_lines(str(f))) / 1e6
    rules10 = TermRules.from_config({**rules.to_config(), "window": 10})
    runs = {}
    for label, r in (("W=5", rules), ("W=10", rules10)):
        cold = job_seconds(spark, [str(corpus)], work / "out-full", r)       # warm-up
        small = job_seconds(spark, [str(small_dir)], work / "out-small", r)
        part = job_seconds(spark, half, work / "out-half", r)
        full = job_seconds(spark, [str(corpus)], work / "out-full", r)
        runs[label] = {"wall": (raw_mb - half_mb) / max(full[0] - part[0], 1e-9),
                       "cpu": (raw_mb - half_mb) / max(full[1] - part[1], 1e-9),
                       "small_wall": small[0], "full_wall": full[0], "jit_cpu": cold[1] - full[1],
                       "totals": job_seconds.last_totals}
    rows = [
        ("zstd -dc (decompression only)", zstd_wall, zstd_cpu),
        (f"Python reference (first {ref_mb:.0f} MB, median of 3)", None, ref_cpu),
        (f"count_terms' task code alone, no Spark (same {ref_mb:.0f} MB, median of 3)", None, engine_cpu),
        (f"count_terms W=5, local[{args.cores}], steady state (marginal)", runs["W=5"]["wall"], runs["W=5"]["cpu"]),
        (f"count_terms W=10, local[{args.cores}], steady state (marginal)", runs["W=10"]["wall"], runs["W=10"]["cpu"]),
    ]
    lines = [f"Corpus: {len(files)} shards, {raw_mb:,.0f} MB JSON Lines "
             f"({sum(f.stat().st_size for f in files) / 1e6:,.0f} MB zstd); machine: {os.cpu_count()} cores, "
             f"load average at start {os.getloadavg()[0]:.1f}.",
             "", "| run | wall MB/s | MB per CPU-second (per core) | per core vs reference |",
             "|---|---:|---:|---:|"]
    lines += [f"| {name} | {'-' if wall is None else f'{wall:,.1f}'} | {cpu:,.1f} | {cpu / ref_cpu:,.2f}x |"
              for name, wall, cpu in rows]
    w5, w10 = runs["W=5"], runs["W=10"]
    t5, t10 = w5["totals"], w10["totals"]
    lines += ["", f"Window 10 costs {w5['cpu'] / w10['cpu']:,.2f}x window 5 in CPU time "
                  f"({w5['wall'] / w10['wall']:,.2f}x in wall time), steady state. It counts "
                  f"{t10['pair_occurrences'] / t5['pair_occurrences']:,.1f}x the pair and "
                  f"{t10['triple_occurrences'] / t5['triple_occurrences']:,.1f}x the triple occurrences "
                  f"({t5['triple_occurrences']:,} -> {t10['triple_occurrences']:,}; distinct triples "
                  f"{t5['distinct_triples']:,} -> {t10['distinct_triples']:,}) on this corpus, where "
                  f"{t5['term_occurrences'] / t5['tokens']:.1%} of tokens are terms.",
              f"Fixed costs: Spark session start {spark_start:,.1f} s; one job run on a "
              f"{small_mb:.1f} MB file {w5['small_wall']:,.1f} s wall (planning, merge, commit); "
              f"JVM warm-up (first run's extra CPU) {w5['jit_cpu']:,.1f} CPU-s; "
              f"full W=5 run, warm, {w5['full_wall']:,.1f} s wall."]
    if gen_s:
        lines.append(f"(Generating the corpus took {gen_s:,.0f} s, not part of the benchmark.)")
    report = "\n".join(lines)
    print(report)
    Path(args.report).parent.mkdir(parents=True, exist_ok=True)
    Path(args.report).write_text(report + "\n")
    json.dump({"zstd_cpu": zstd_cpu, "reference_cpu": ref_cpu, "engine_cpu": engine_cpu, "runs": runs,
               "spark_start_s": spark_start},
              open(Path(args.report).with_suffix(".json"), "w"), indent=1)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
