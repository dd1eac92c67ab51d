"""The counting job: plan, count in resumable groups, merge, commit atomically (SPEC §2).

Layout of an output directory while running and when done:

    OUT/_work/plan.json          inputs + config fingerprint (checked by --resume)
    OUT/_work/groups/g00003/     partial sums of one group of input files (done = present)
    OUT/unigrams/ pairs/ triples/  final Parquet, renamed into place at the end
    OUT/_manifest.json           written last: only its presence makes OUT a result

A group is one Spark job over a few input files. Each file is read by one task (zstd is
not splittable) and, when the group has fewer files than cores, its lines are spread over
all cores before tokenising, so one 15 GB shard does not pin the run to one core.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from freqgap.errors import FreqgapError
from freqgap.counting import partials
from freqgap.contract import DATASETS as CONTRACT
from freqgap.counting.codec import TermCodec
from freqgap.counting.corpus_check import verify_corpus_inputs
from freqgap.counting.rules import TermRules
from freqgap.counting.sources import InputFile, list_inputs
from freqgap.counting.storage import Storage, qualify
from freqgap.manifest import MANIFEST_NAME, build_manifest, manifest_text, now_iso
from freqgap.progress import Progress, format_duration

ROWS_PER_OUTPUT_FILE = 5_000_000
MIN_ROWS_PER_OUTPUT_FILE = 250_000   # a dataset is written by up to one task per core above this
GROUP_MIN_BYTES = 2 << 30            # on disk, per resumable group (see CountJob._groups)
DATASETS = ("unigrams", "pairs", "triples")
_PARTIAL_KEY = ("kind", "key")
# dataset -> (partial kind, number of terms in a key, output columns)
_LAYOUT = {"unigrams": (partials.UNIGRAM, 1, ("term", "kind", "count")),
           "pairs": (partials.PAIR, 2, ("t1", "t2", "count")),
           "triples": (partials.TRIPLE, 3, ("t1", "t2", "t3", "count"))}


class CountJobError(FreqgapError):
    """A failure the user can act on; the message says what and where."""


@dataclass
class CountOptions:
    """Everything a run depends on besides the term rules."""

    inputs: list[str]
    output: str
    rules: TermRules
    on_bad_record: str = "fail"
    resume: bool = False
    files_per_job: int | None = None      # None: the cluster's default parallelism
    spread: int | None = None             # None: auto; 0: never; N: N partitions
    progress_interval: float = 10.0


def _spark_types():
    from pyspark.sql.types import (BinaryType, BooleanType, IntegerType, LongType, StringType,
                                   StructField, StructType)
    lines = StructType([StructField("file", IntegerType()), StructField("line", LongType()),
                        StructField("payload", BinaryType()), StructField("is_text", BooleanType()),
                        StructField("error", StringType())])
    partial = StructType([StructField("kind", StringType()), StructField("key", LongType()),
                          StructField("n", LongType())])
    return lines, partial


def _files_of(batches, group: list[InputFile]):
    """The group's files whose positions arrive as `id` rows of `spark.range` (no Python
    step to make the file list: the closure carries it)."""
    for batch in batches:
        for position in batch.column("id").to_pylist():
            yield group[position]


def _make_readers(rules: TermRules, on_bad: str, paths: dict[int, str], group: list[InputFile]):
    """The mapInArrow functions (closures are pickled to the executors)."""
    def read(batches):
        yield from partials.read_lines(_files_of(batches, group), rules.text_field, on_bad)

    def count(batches):
        yield from partials.count_lines(partials.rows_of(batches), rules, on_bad, paths)

    def read_and_count(batches):
        yield from partials.count_lines(
            partials.line_rows(_files_of(batches, group), rules.text_field, on_bad), rules, on_bad, paths)

    return read, count, read_and_count


def _make_decoder(rules: TermRules, order: int, names: tuple[str, ...]):
    """mapInArrow function: (key, n) rows -> the dataset's string columns and count."""
    def decode(batches):
        import pyarrow as pa

        codec = TermCodec(rules)
        for batch in batches:
            keys = batch.column("key").to_numpy()
            ids = TermCodec.split(keys, order)
            columns = [codec.decode(i) for i in ids]
            if order == 1:
                columns.append(pa.array(np.where(ids[0] < codec.word_base, "number", "word"), pa.string()))
            if "step_bucket" in names:       # counts by training position (counting/order_source.py)
                columns.append(batch.column("step_bucket"))
            columns.append(batch.column("n"))
            yield pa.RecordBatch.from_arrays(columns, names=list(names))

    return decode


def fingerprint(config: dict[str, Any], files: list[InputFile]) -> str:
    """A hash of the config and the inputs (path, size, mtime): equal means same result."""
    payload = json.dumps({"config": config, "inputs": [(f.path, f.size, f.mtime) for f in files]},
                         sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


_BAD_INPUT_RE = re.compile(r"BadInputError: (.+)")


def explain_failure(exc: BaseException) -> str | None:
    """The worker's BadInputError message inside a Spark exception, if there is one."""
    match = _BAD_INPUT_RE.search(str(exc))
    return match.group(1).strip() if match else None


class _ProgressThread(threading.Thread):
    """Polls Spark's status tracker and prints files, bytes, MB/s and ETA every interval."""

    def __init__(self, spark, total_files: int, total_bytes: int, interval: float) -> None:
        super().__init__(daemon=True)
        self.tracker = spark.sparkContext.statusTracker()
        self.progress = Progress("count_terms", total_bytes, unit="MB", interval=interval,
                                 scale=1e6)
        self.total_files = total_files
        self.files_done = 0
        self.bytes_done = 0
        self.group_bytes = 0
        self.stop_event = threading.Event()
        self.interval = interval
        self.phase = "counting"

    def _running_fraction(self) -> float:
        done = total = 0
        for stage_id in self.tracker.getActiveStageIds():
            info = self.tracker.getStageInfo(stage_id)
            if info is not None:
                done += info.numCompletedTasks
                total += info.numTasks
        return done / total / 2 if total else 0.0

    def run(self) -> None:
        while not self.stop_event.wait(self.interval):
            current = self.bytes_done + self.group_bytes * self._running_fraction()
            self.progress.update(done=current, force=True,
                                 extra=f"files {self.files_done}/{self.total_files} done, {self.phase}")

    def stop(self) -> None:
        self.stop_event.set()


class CountJob:
    """One run of the counting job over one output directory."""

    def __init__(self, spark, options: CountOptions) -> None:
        self.spark = spark
        self.opts = options
        self.storage = Storage(spark)
        self.out = qualify(options.output)
        self.work = f"{self.out}/_work"
        self.rules = options.rules
        self.started = now_iso()
        self.t0 = time.monotonic()

    # ---- planning -------------------------------------------------------------------
    def config(self) -> dict[str, Any]:
        return {**self.rules.to_config(), "on_bad_record": self.opts.on_bad_record}

    def plan(self) -> tuple[list[InputFile], list[list[InputFile]]]:
        files = list_inputs(self.opts.inputs)
        # A generated corpus (data/sample/) is checked against its manifest's sha256 first.
        verify_corpus_inputs(self.opts.inputs, [f.path for f in files])
        return files, self._groups(files)

    def _groups(self, files: list[InputFile]) -> list[list[InputFile]]:
        """Consecutive files per Spark job, the unit of --resume. By default a group has at
        least two files per core (tasks of unequal size still balance) and at least
        GROUP_MIN_BYTES on disk: a group's checkpoint (written, then re-read by the merge)
        buys a resume point only when redoing the group would cost more than writing it,
        so a small corpus is one group, summed directly without a checkpoint."""
        if self.opts.files_per_job:
            per = self.opts.files_per_job
            return [files[i:i + per] for i in range(0, len(files), per)]
        min_files = max(1, 2 * self.spark.sparkContext.defaultParallelism)
        groups: list[list[InputFile]] = [[]]
        size = 0
        for f in files:
            if len(groups[-1]) >= min_files and size >= GROUP_MIN_BYTES:
                groups.append([])
                size = 0
            groups[-1].append(f)
            size += f.size
        if len(groups) > 1 and (len(groups[-1]) < min_files or size < GROUP_MIN_BYTES):
            groups[-2].extend(groups.pop())             # no small remainder group
        return groups

    def _check_output(self, fp: str) -> dict[str, Any] | None:
        """Return the existing manifest if OUT already holds this very result."""
        manifest_path = f"{self.out}/{MANIFEST_NAME}"
        if self.storage.exists(manifest_path):
            existing = json.loads(self.storage.read_text(manifest_path))
            # plan_fingerprint: config + inputs, known before counting (the manifest's own
            # `fingerprint` is the contract's, freqgap/contract.py).
            if existing.get("plan_fingerprint", existing.get("fingerprint")) == fp:
                return existing
            raise CountJobError(
                f"{self.opts.output} already holds a different result (other inputs or settings; "
                f"see its {MANIFEST_NAME}). Choose another --output or remove that directory.")
        names = [n for n in self.storage.list_names(self.out) if n not in DATASETS and n != "_work"]
        if names:
            raise CountJobError(f"{self.opts.output} exists and is not a freqgap counts directory "
                                f"(it holds {names[:5]}); choose another --output.")
        return None

    def _prepare_work(self, fp: str, files: list[InputFile]) -> None:
        plan_path = f"{self.work}/plan.json"
        if self.storage.exists(plan_path):
            previous = json.loads(self.storage.read_text(plan_path))
            if self.opts.resume:
                if previous.get("fingerprint") != fp:
                    raise CountJobError(
                        f"--resume: the inputs or settings changed since the interrupted run in "
                        f"{self.opts.output}; rerun without --resume to start over.")
                return
            print(f"note: discarding an unfinished run in {self.opts.output} "
                  "(use --resume to continue it instead)", flush=True)
        self.storage.delete(self.work)
        for name in DATASETS:
            self.storage.delete(f"{self.out}/{name}")
        self.storage.mkdirs(f"{self.work}/groups")
        self.storage.write_text_atomic(plan_path, json.dumps(
            {"fingerprint": fp, "config": self.config(),
             "inputs": [f.__dict__ for f in files]}, indent=1))

    # ---- counting -------------------------------------------------------------------
    def _spread_for(self, group: list[InputFile]) -> int:
        """Partitions to spread lines over, or 0. Spreading moves every line through the JVM
        twice (~1.4x the CPU per MB), so by default only when more than half the cores
        would otherwise idle (fewer files than half the cores)."""
        parallel = max(1, self.spark.sparkContext.defaultParallelism)
        if self.opts.spread is not None:
            return self.opts.spread
        return 2 * parallel if 2 * len(group) <= parallel else 0

    def _partial_frame(self, group: list[InputFile], paths: dict[int, str]):
        """The DataFrame of a group's partial counts (each task's keys summed in numpy)."""
        lines_t, partial_t = _spark_types()
        read, count, read_and_count = _make_readers(self.rules, self.opts.on_bad_record, paths, group)
        files_df = self.spark.range(0, len(group), 1, numPartitions=len(group))
        spread = self._spread_for(group)
        if spread:
            partial = files_df.mapInArrow(read, lines_t).repartition(spread).mapInArrow(count, partial_t)
        else:
            partial = files_df.mapInArrow(read_and_count, partial_t)
        return partial

    def _count_group(self, group: list[InputFile], target: str, paths: dict[int, str]) -> None:
        """Write a group's partial counts, committed by renaming (the unit of --resume).
        The exact sum over tasks happens once, in the merge: no shuffle here."""
        tmp = target + ".tmp"
        self.storage.delete(tmp)
        self._partial_frame(group, paths).write.mode("overwrite").parquet(tmp)
        self.storage.rename(tmp, target)

    # ---- merging and committing -----------------------------------------------------
    def _merge(self, partial):
        """Exact sums by (kind, key) over every task and group, kept for the writes."""
        from pyspark.sql import functions as F

        return partial.groupBy(*_PARTIAL_KEY).agg(F.sum("n").alias("n")).persist()

    bucketed = False     # True: kinds are u@<step bucket> etc. and the tables get step_bucket

    def _write_datasets(self, merged, sizes: dict[str, int]) -> None:
        from pyspark.sql import functions as F

        final = f"{self.work}/final"
        self.storage.delete(final)
        partitions = int(self.spark.conf.get("spark.sql.shuffle.partitions"))
        for name, (kind, order, columns) in _LAYOUT.items():
            if self.bucketed:
                columns = (*columns[:-1], "step_bucket", "count")
                rows = (merged.where(F.substring_index("kind", "@", 1) == kind)
                        .select("key", F.substring_index("kind", "@", -1).cast("bigint")
                                .alias("step_bucket"), "n"))
                order_by = ("key", "step_bucket")
            else:
                rows, order_by = merged.where(F.col("kind") == kind).select("key", "n"), ("key",)
            schema = CONTRACT[name].spark_ddl(("step_bucket",) if self.bucketed else ())
            # One file per 5M rows, and up to one writing task per shuffle partition (the
            # merge's) once there are enough rows: one task per dataset made the triples
            # write alone take seconds on one core.
            rows_n = sizes.get(name, 0)
            n_files = max(1, math.ceil(rows_n / ROWS_PER_OUTPUT_FILE),
                          min(partitions, math.ceil(rows_n / MIN_ROWS_PER_OUTPUT_FILE)))
            # The merge already partitioned rows by key: sort within those partitions by the
            # int64 key, no second shuffle; strings exist only after this point.
            (rows.coalesce(n_files).sortWithinPartitions(*order_by)
             .mapInArrow(_make_decoder(self.rules, order, columns), schema)
             .write.mode("overwrite").parquet(f"{final}/{name}"))
        for name in DATASETS:
            self.storage.delete(f"{self.out}/{name}")
            self.storage.rename(f"{final}/{name}", f"{self.out}/{name}")

    def _statistics(self, merged, files: list[InputFile]) -> dict[str, Any]:
        """Totals, per-file statistics and the skip report. Collected rows are bounded: a
        few per file and subset, and at most 20 example lines per task, file and reason."""
        from pyspark.sql import functions as F

        base_kind = F.substring_index("kind", "@", 1)      # u@<bucket> counts as u
        is_count = base_kind.isin(*partials.COUNT_KINDS)
        # One pass (one Spark job): count rows fold into (rows, total) per kind; statistics
        # rows are already distinct by (kind, key) after the merge and come through as they are.
        collected = (merged.groupBy(F.when(is_count, base_kind).otherwise(F.col("kind")).alias("kind"),
                                    F.when(is_count, F.lit(None).cast("bigint"))
                                    .otherwise(F.col("key")).alias("key"))
                     .agg(F.count("*").alias("rows"), F.sum("n").alias("n")).collect())
        kinds = {r["kind"]: (r["rows"], int(r["n"] or 0)) for r in collected
                 if r["kind"] in partials.COUNT_KINDS}
        per_file: dict[int, dict[str, int]] = {f.index: {} for f in files}
        by_index = {f.index: f.path for f in files}
        subsets: dict[str, int] = {}
        skipped: dict[str, dict[str, Any]] = {}
        stat_rows = [r for r in collected if r["kind"] not in partials.COUNT_KINDS]
        for r in sorted(stat_rows, key=lambda r: (r["kind"], r["key"] or 0)):
            name, *args = r["kind"].split(partials.SEP)
            if name in (partials.LINES, partials.BYTES, partials.DOCS, partials.TOKENS):
                per_file[int(args[0])][name] = int(r["n"])
            elif name == partials.SUBSET:
                subsets[args[0]] = int(r["n"])
            else:
                entry = skipped.setdefault(by_index[int(args[0])], {}).setdefault(
                    args[1], {"count": 0, "first_lines": []})
                if name == partials.SKIPS:
                    entry["count"] = int(r["n"])
                elif r["key"] and len(entry["first_lines"]) < partials.SKIP_EXAMPLES:
                    entry["first_lines"].append(int(r["key"]))
        sizes = {name: kinds.get(kind, (0, 0))[0] for name, (kind, _, _) in _LAYOUT.items()}
        return {
            "sizes": sizes,
            "totals": {
                "files": len(files),
                "documents": sum(v.get(partials.DOCS, 0) for v in per_file.values()),
                "lines": sum(v.get(partials.LINES, 0) for v in per_file.values()),
                "text_bytes": sum(v.get(partials.BYTES, 0) for v in per_file.values()),
                "input_bytes": sum(f.size for f in files),
                "tokens": sum(v.get(partials.TOKENS, 0) for v in per_file.values()),
                "term_occurrences": kinds.get(partials.UNIGRAM, (0, 0))[1],
                "distinct_terms": sizes["unigrams"],
                "distinct_pairs": sizes["pairs"],
                "pair_occurrences": kinds.get(partials.PAIR, (0, 0))[1],
                "distinct_triples": sizes["triples"],
                "triple_occurrences": kinds.get(partials.TRIPLE, (0, 0))[1],
                "skipped_records": sum(v["count"] for d in skipped.values() for v in d.values()),
            },
            "per_file": per_file,
            "subsets": subsets,
            "skipped": skipped,
        }

    # ---- the run --------------------------------------------------------------------
    def manifest_extra(self) -> dict[str, Any]:
        """Extra top-level manifest fields of a subclass (the training-order job)."""
        return {}

    def run(self) -> dict[str, Any]:
        """Count, commit and return the manifest (or the existing one if already done)."""
        files, groups = self.plan()
        config = self.config()
        fp = fingerprint(config, files)
        existing = self._check_output(fp)
        if existing is not None:
            print(f"{self.opts.output} already holds this result (same inputs and settings); "
                  "nothing to do.", flush=True)
            return existing
        self._prepare_work(fp, files)
        paths = {f.index: f.path for f in files}
        done = set(self.storage.list_names(f"{self.work}/groups"))
        total_bytes = sum(f.size for f in files)
        watcher = _ProgressThread(self.spark, len(files), total_bytes, self.opts.progress_interval)
        watcher.start()
        group_dirs = []
        redone = 0
        _, partial_t = _spark_types()
        try:
            if len(groups) == 1 and not done:
                # One group: a checkpoint would save nothing on resume, so sum directly.
                watcher.group_bytes = total_bytes
                watcher.phase = "counting, merging and writing Parquet"
                partial = self._partial_frame(groups[0], paths)
                redone = 1
                groups_to_write = []
            else:
                groups_to_write = groups
            for number, group in enumerate(groups_to_write):
                name = f"g{number:05d}"
                target = f"{self.work}/groups/{name}"
                group_dirs.append(target)
                if name in done:
                    watcher.files_done += len(group)
                    watcher.bytes_done += sum(f.size for f in group)
                    continue
                watcher.group_bytes = sum(f.size for f in group)
                watcher.phase = f"counting group {number + 1}/{len(groups)}"
                self._count_group(group, target, paths)
                redone += 1
                watcher.files_done += len(group)
                watcher.bytes_done += watcher.group_bytes
                watcher.group_bytes = 0
            if groups_to_write:
                watcher.phase = "merging groups and writing Parquet"
                partial = self.spark.read.schema(partial_t).parquet(*group_dirs)
            merged = self._merge(partial)
            stats = self._statistics(merged, files)          # the first action: counting runs here
            watcher.files_done, watcher.bytes_done, watcher.group_bytes = len(files), total_bytes, 0
            watcher.phase = "writing Parquet"
            self._write_datasets(merged, stats["sizes"])
            merged.unpersist()
        except Exception as exc:
            message = explain_failure(exc)
            if message:
                raise CountJobError(
                    f"bad input: {message} (no result was written; fix the input, or rerun with "
                    "--on-bad-record skip to skip and report bad records)") from None
            raise
        finally:
            watcher.stop()
        elapsed = time.monotonic() - self.t0
        totals = stats["totals"]
        totals["elapsed_s"] = round(elapsed, 3)
        totals["mb_per_s"] = round(totals["input_bytes"] / 1e6 / elapsed, 3) if elapsed else None
        totals["record_mb_per_s"] = round(totals["text_bytes"] / 1e6 / elapsed, 3) if elapsed else None
        inputs = [{"path": f.path, "size": f.size, "mtime": f.mtime, **{
            k: stats["per_file"][f.index].get(k, 0) for k in (partials.LINES, partials.DOCS,
                                                             partials.TOKENS, partials.BYTES)}}
                  for f in files]
        manifest = build_manifest("count_terms", config, inputs, totals, self.started,
                                  plan_fingerprint=fp, subsets=stats["subsets"], skipped=stats["skipped"],
                                  groups={"count": len(groups), "counted_this_run": redone},
                                  outputs={n: {"rows": stats["sizes"][n]} for n in DATASETS},
                                  **self.manifest_extra())
        text = manifest_text(manifest)
        self.storage.write_text_atomic(f"{self.out}/{MANIFEST_NAME}", text)
        manifest = json.loads(text)
        self.storage.delete(self.work)
        return manifest


def run_count(inputs: list[str], output: str, rules: TermRules | None = None, spark=None,
              **options: Any) -> dict[str, Any]:
    """Library entry point: count `inputs` into `output` and return the manifest."""
    from freqgap.spark_session import get_spark

    spark = spark or get_spark()
    opts = CountOptions(inputs=list(inputs), output=output, rules=rules or TermRules.from_conf(),
                        **options)
    return CountJob(spark, opts).run()


def summary_text(manifest: dict[str, Any]) -> str:
    """The end-of-run summary printed by the job."""
    t = manifest["totals"]
    lines = [
        f"counted {t['files']} files: {t['input_bytes'] / 1e6:,.1f} MB on disk, "
        f"{t['text_bytes'] / 1e6:,.1f} MB of records, in {format_duration(t.get('elapsed_s', 0))} "
        f"({t.get('mb_per_s') or 0:,.2f} MB/s on disk, {t.get('record_mb_per_s') or 0:,.2f} MB/s of records)",
        f"  documents {t['documents']:,}   tokens {t['tokens']:,}   term occurrences {t['term_occurrences']:,}",
        f"  distinct terms {t['distinct_terms']:,}   pairs {t['distinct_pairs']:,}   "
        f"triples {t['distinct_triples']:,}",
        f"  skipped records {t['skipped_records']:,}",
    ]
    for path, reasons in sorted(manifest.get("skipped", {}).items()):
        for reason, info in sorted(reasons.items()):
            lines.append(f"    {path}: {info['count']} x {reason} (lines {info['first_lines'][:5]})")
    return "\n".join(lines)
