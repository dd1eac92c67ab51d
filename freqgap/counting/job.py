"""The counting job: plan, count in resumable groups, reduce, commit atomically (SPEC §2).

Layout of an output directory while running and when done:

    OUT/_work/plan.json              inputs + config fingerprint (checked by --resume)
    OUT/_work/exchange/g00003/…      the run files of one group's count tasks (exchange.py)
    OUT/_work/groups/g00003.json     the group's task results (done = present)
    OUT/_work/final/                 the reduce tasks' Parquet tables
    OUT/unigrams/ pairs/ triples/    final Parquet, renamed into place at the end
    OUT/_manifest.json               written last: only its presence makes OUT a result

Two kinds of Spark jobs, both plain RDD `parallelize(...).mapPartitions(...)` over Python
workers: a group's count tasks (one per file: zstd is not splittable; when a group has fewer
files than half the cores its lines are spread over all cores first, so one 15 GB shard
does not pin the run to one core), then one reduce job whose tasks each sum a key range
(cut at quantiles of the runs' index keys) over every run file and write their part of
the tables. The JVM schedules and carries one small result per task; it never touches a
per-key row.

The driver imports only what plans, tracks and commits a run (inputs, kinds, task_results,
storage: no numpy, pyarrow or zstandard, whose imports every cold run's driver would pay;
tests/counting/test_startup_imports.py checks); the functions that run in the tasks
import the task code when they run there.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


from freqgap.errors import FreqgapError
from freqgap.counting import kinds
from freqgap.counting.corpus_check import verify_corpus_inputs
from freqgap.counting.inputs import InputFile, check_unchanged, list_inputs
from freqgap.counting.kinds import DATASETS, LAYOUT
from freqgap.counting.records import MAX_SKIPPED_SHARE, refuse_mostly_skipped
from freqgap.counting.rules import SENTENCE_UNIT, TermRules
from freqgap.counting.storage import Storage, qualify
from freqgap.counting.vocab import refuse_plural_forms
from freqgap.counting.exchange.task_results import WORK_FORMAT, TaskResult, key_ranges
from freqgap.counting.hits import HITS_TABLE, HitMerge, HitSettings
from freqgap.manifest import (MANIFEST_NAME, build_manifest, dataset_records, manifest_text,
                              now_iso)
from freqgap.progress import Progress, format_duration

GROUP_MIN_BYTES = 2 << 30            # on disk, per resumable group (see CountJob._groups)
REDUCE_ROWS = 20_000_000             # partial rows per reduce task (bounds its memory)
ONE_REDUCER_ROWS = 1_000_000         # below this, one reduce task writes one file per table
# Count tasks per core and group (balanced_bins). One: each task hands over its own partial
# sums and costs tens of ms beyond its work, and bins balanced by size leave little for
# dynamic scheduling to even out (measured: docs/performance.md).
TASKS_PER_CORE = 1
SPREAD_MIN_BYTES = 64 << 20          # on disk: a smaller group is never spread by default


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
    max_skipped_share: float = MAX_SKIPPED_SHARE     # more skipped records: no result
    limit: int | None = None              # a dry run: the first N records only (counting/limit.py)
    hits: HitSettings | None = None       # hit lists (--hits): counting/hits.py


def _file_counter(rules: TermRules, on_bad: str, paths: dict[int, str], pieces: bool = False,
                  limit: int | None = None, hits: HitSettings | None = None):
    """items -> partial batches: the count task of the ordinary job. The items are
    InputFiles (their line rows: partials.line_rows) or, with pieces, the pieces of spread
    files (spread.piece_rows); with `limit`, only the first `limit` records."""
    def count(items):
        from freqgap.counting import partials, spread     # in the worker (module docstring)

        rows = (spread.piece_rows if pieces else partials.line_rows)(items, rules.text_field, on_bad)
        if limit:
            from freqgap.counting.limit import first_records

            rows = first_records(rows, limit)
        return partials.count_lines(rows, rules, on_bad, paths, hits=hits)
    return count


def _spilling(count, base: str):
    """mapPartitions function: run `count` over the items of the partition's bins and
    spill its partial counts to run files under `base`; yields the task's result (a dict)."""
    def task(bins):
        from freqgap.counting.exchange.runs import spill        # in the worker (module docstring)

        yield spill(count(item for items in bins for item in items), base).to_json()
    return task


def _splitter(base: str, text_field: str, on_bad: str):
    """mapPartitions function of the split job: files -> pieces (counting/spread.py)."""
    def split(files):
        from freqgap.counting.spread import split_files    # in the worker (module docstring)

        return split_files(files, base, text_field, on_bad)
    return split


def _reducer(runs: list, ranges: list, rules: TermRules, final: str, bucketed: bool):
    """mapPartitions function of the reduce job: key-range numbers -> their reduce results."""
    def reduce(parts):
        from freqgap.counting.exchange.final_tables import reduce_range   # in the worker (module docstring)

        for part in parts:
            lo, hi = ranges[part]
            yield reduce_range(runs, lo, hi, part, rules, final, bucketed)
    return reduce


def _hits_writer(rows: list[tuple], optional: tuple[str, ...]):
    """map function: a directory -> the rows of the hits table written there."""
    def write(directory: str) -> int:
        from freqgap.counting.engines import load_hit_scan    # in the worker (module docstring)

        return load_hit_scan().write_table(rows, directory, optional)
    return write


def balanced_bins(items: list, bins: int) -> list[list]:
    """Items (with a .size) in at most `bins` lists of about equal total size (largest
    first, each to the lightest list). Why: a Python task costs tens of ms beyond its work
    and hands over its own partial sums, so 24 files on 2 cores run as 2 tasks, not 24."""
    if len(items) <= bins:
        return [[item] for item in items]
    out: list[list] = [[] for _ in range(bins)]
    load = [0] * bins
    for item in sorted(items, key=lambda i: -i.size):
        lightest = load.index(min(load))
        out[lightest].append(item)
        load[lightest] += item.size
    return out


def fingerprint(config: dict[str, Any], files: list[InputFile]) -> str:
    """A hash of the config and the inputs (path, size, mtime in ns, inode): equal means
    same result, so --resume refuses an input edited in place (counting/inputs.py)."""
    payload = json.dumps({"config": config, "inputs": [f.identity for f in files]},
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
        self.total_bytes = total_bytes
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
        return done / total if total else 0.0

    def run(self) -> None:
        while not self.stop_event.wait(self.interval):
            current = self.bytes_done + self.group_bytes * self._running_fraction()
            self.progress.update(done=current, force=True,
                                 extra=f"files {self.files_done}/{self.total_files} done, {self.phase}")

    def reducing(self) -> None:
        """Every file counted: the reduce's phase."""
        self.files_done, self.bytes_done, self.group_bytes = self.total_files, self.total_bytes, 0
        self.phase = "summing and writing Parquet"

    def stop(self) -> None:
        self.stop_event.set()


@contextmanager
def _bad_input_named():
    """A failure caused by bad input becomes one line naming it (nothing was committed)."""
    try:
        yield
    except Exception as exc:
        message = explain_failure(exc)
        if message:
            raise CountJobError(
                f"bad input: {message} (no result was written; fix the input, or rerun with "
                "--on-bad-record skip to skip and report bad records)") from None
        raise


class CountJob:
    """One run of the counting job over one output directory."""

    lists_hits = True        # whether its tasks find hit lists (--hits)

    def __init__(self, spark, options: CountOptions) -> None:
        refuse_plural_forms(options.rules.vocab)       # before any work (counting/vocab.py)
        if options.hits and not self.lists_hits:   # its tasks find no hits (order files)
            raise CountJobError("--hits lists documents of JSON Lines or Parquet inputs or the "
                                "sequences of an indexed dataset; an --order-file count does "
                                "not take it")
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
        return {**self.rules.to_config(), "on_bad_record": self.opts.on_bad_record,
                **({"limit": self.opts.limit} if self.opts.limit else {}),
                **({"hits": self.opts.hits.to_config()} if self.opts.hits else {})}

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
        so a small corpus is one group, summed directly without a checkpoint. A dry run
        (--limit) is one group: its one task reads the files in order."""
        if self.opts.limit:
            return [files]
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
                f"see its {MANIFEST_NAME}). Choose another --out or remove that directory.")
        names = [n for n in self.storage.list_names(self.out)
                 if n not in DATASETS and n not in ("_work", HITS_TABLE)]
        if names:
            raise CountJobError(f"{self.opts.output} exists and is not a freqgap counts directory "
                                f"(it holds {names[:5]}); choose another --out.")
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
                if previous.get("work_format") != WORK_FORMAT:
                    raise CountJobError(
                        f"--resume: the interrupted run in {self.opts.output} was written by another "
                        f"version of freqgap (its partial counts are in another format); rerun "
                        f"without --resume to start over.")
                return
            print(f"note: discarding an unfinished run in {self.opts.output} "
                  "(use --resume to continue it instead)", flush=True)
        self.storage.delete(self.work)
        for name in (*DATASETS, HITS_TABLE):
            self.storage.delete(f"{self.out}/{name}")
        self.storage.mkdirs(f"{self.work}/groups")
        self.storage.write_text_atomic(plan_path, json.dumps(
            {"fingerprint": fp, "work_format": WORK_FORMAT, "config": self.config(),
             "inputs": [f.__dict__ for f in files]}, indent=1))

    # ---- counting -------------------------------------------------------------------
    def _spread_for(self, group: list[InputFile]) -> int:
        """Count tasks to spread a group's lines over, or 0. Spreading writes and reads the
        decompressed text once more (counting/spread.py), so by default only when more than
        half the cores would otherwise idle (fewer files than half the cores) and the group
        is big enough for that to shorten the run: under SPREAD_MIN_BYTES on disk the split
        job costs more than it saves (docs/performance.md)."""
        parallel = max(1, self.spark.sparkContext.defaultParallelism)
        if self.opts.spread is not None:
            return self.opts.spread
        if sum(f.size for f in group) < SPREAD_MIN_BYTES:
            return 0
        return 2 * parallel if 2 * len(group) <= parallel else 0

    def _task_counter(self, paths: dict[int, str]):
        """items of a group -> partial batches, for one task (picklable: no `self`)."""
        return _file_counter(self.rules, self.opts.on_bad_record, paths, limit=self.opts.limit,
                             hits=self.opts.hits)

    def _count_tasks(self, group: list, paths: dict[int, str], base: str):
        """The RDD of a group's count tasks; each yields one TaskResult as a dict."""
        sc = self.spark.sparkContext
        if self.opts.limit:        # a dry run: one task, the files in their listed order
            return sc.parallelize([group], 1).mapPartitions(_spilling(self._task_counter(paths), base))
        spread = self._spread_for(group)
        if not spread:
            bins = balanced_bins(group, TASKS_PER_CORE * max(1, sc.defaultParallelism))
            return sc.parallelize(bins, len(bins)).mapPartitions(
                _spilling(self._task_counter(paths), base))
        # A split job first: each file decompressed once into pieces (counting/spread.py).
        on_bad, text_field = self.opts.on_bad_record, self.rules.text_field
        pieces = sc.parallelize(group, len(group)).mapPartitions(
            _splitter(f"{base}/split", text_field, on_bad)).collect()
        bins = balanced_bins(pieces, spread)
        return sc.parallelize(bins, len(bins)).mapPartitions(
            _spilling(_file_counter(self.rules, on_bad, paths, pieces=True, hits=self.opts.hits), base))

    # ---- reducing and committing ----------------------------------------------------
    bucketed = False     # True: kinds are u@<step bucket> etc. and the tables get step_bucket

    def _reducers(self, rows: int) -> int:
        """Reduce tasks: one for a small result, else one per core or per REDUCE_ROWS."""
        if rows < ONE_REDUCER_ROWS:
            return 1
        parallel = max(1, self.spark.sparkContext.defaultParallelism)
        return max(parallel, math.ceil(rows / REDUCE_ROWS))

    def _reduce(self, results: list[TaskResult]) -> list[dict[str, Any]]:
        """Sum every run by key range and write the tables under _work/final. The ranges
        come from the runs' index keys in the task results (also those of resumed groups),
        so each reduce task gets about as many rows; only the run names travel to them."""
        final = f"{self.work}/final"
        self.storage.delete(final)
        runs = [run for result in results for run in result.runs]
        ranges = key_ranges(results, self._reducers(sum(rows for _, _, rows in runs)))
        sc = self.spark.sparkContext
        return sc.parallelize(range(len(ranges)), len(ranges)).mapPartitions(
            _reducer(runs, ranges, self.rules, final, self.bucketed)).collect()

    def _commit_tables(self) -> None:
        for name in DATASETS + ((HITS_TABLE,) if self.opts.hits else ()):
            self.storage.delete(f"{self.out}/{name}")
            self.storage.rename(f"{self.work}/final/{name}", f"{self.out}/{name}")

    def _hit_merge(self) -> HitMerge:
        """The driver's merge of the tasks' hit lists (a training-order job lists sequences)."""
        return HitMerge(self.opts.hits, self.rules.unit == SENTENCE_UNIT)

    def _write_hits(self, merged: HitMerge | None, paths: dict[int, str]) -> dict[str, Any]:
        """The hits table written under _work/final by one executor task (the driver imports
        no pyarrow): {"hits": its rows}, or nothing without --hits."""
        if merged is None:
            return {}
        merged.check()
        rows, final = merged.rows(paths), f"{self.work}/final/{HITS_TABLE}"
        sc = self.spark.sparkContext
        written = sc.parallelize([final], 1).map(_hits_writer(rows, merged.optional)).collect()[0]
        return {HITS_TABLE: written}

    def _statistics(self, results: list[TaskResult], reduced: list[dict[str, Any]],
                    files: list[InputFile]) -> dict[str, Any]:
        """Totals, per-file statistics and the skip report, from the tasks' statistics rows
        (a few per file and subset, at most 20 example lines per task, file and reason) and
        the reduce tasks' row and occurrence counts."""
        by_kind: dict[str, list[int]] = {}       # kind -> [distinct rows, occurrences]
        sizes = dict.fromkeys(DATASETS, 0)
        for part in reduced:
            for kind, (rows, n) in part["kinds"].items():
                base = kind.split("@", 1)[0]
                entry = by_kind.setdefault(base, [0, 0])
                entry[0] += rows
                entry[1] += n
            for name, rows in part["rows"].items():
                sizes[name] += rows
        stat_rows: dict[tuple[str, int | None], int] = {}
        for result in results:
            for slot, n in result.stats.items():
                stat_rows[slot] = stat_rows.get(slot, 0) + n
        per_file: dict[int, dict[str, int]] = {f.index: {} for f in files}
        by_index = {f.index: f.path for f in files}
        subsets: dict[str, int] = {}
        skipped: dict[str, dict[str, Any]] = {}
        for (kind, key), n in sorted(stat_rows.items(), key=lambda item: (item[0][0], item[0][1] or 0)):
            name, *args = kind.split(kinds.SEP)
            if name in (kinds.LINES, kinds.BYTES, kinds.DOCS, kinds.TOKENS):
                per_file[int(args[0])][name] = int(n)
            elif name == kinds.SUBSET:
                subsets[kind.split(kinds.SEP, 1)[1]] = int(n)      # a name may hold a tab
            else:
                entry = skipped.setdefault(by_index[int(args[0])], {}).setdefault(
                    args[1], {"count": 0, "first_lines": []})
                if name == kinds.SKIPS:
                    entry["count"] = int(n)
                elif key and len(entry["first_lines"]) < kinds.SKIP_EXAMPLES:
                    entry["first_lines"].append(int(key))
        occurrences = {name: by_kind.get(kind, [0, 0])[1] for name, (kind, _) in LAYOUT.items()}
        return {
            "sizes": sizes,
            "totals": {
                "files": len(files),
                "documents": sum(v.get(kinds.DOCS, 0) for v in per_file.values()),
                "lines": sum(v.get(kinds.LINES, 0) for v in per_file.values()),
                "text_bytes": sum(v.get(kinds.BYTES, 0) for v in per_file.values()),
                "input_bytes": sum(f.size for f in files),
                "tokens": sum(v.get(kinds.TOKENS, 0) for v in per_file.values()),
                "term_occurrences": occurrences["unigrams"],
                "distinct_terms": sizes["unigrams"],
                "distinct_pairs": sizes["pairs"],
                "pair_occurrences": occurrences["pairs"],
                "distinct_triples": sizes["triples"],
                "triple_occurrences": occurrences["triples"],
                "skipped_records": sum(v["count"] for d in skipped.values() for v in d.values()),
                **self._unit_total(by_kind, per_file),
            },
            "per_file": per_file,
            "subsets": subsets,
            "skipped": skipped,
            **({"subset_totals": self._subset_totals(reduced, subsets, per_file)}
               if self.rules.by_subset else {}),
        }

    @staticmethod
    def _subset_totals(reduced: list[dict[str, Any]], subsets: dict[str, int],
                       per_file: dict[int, dict[str, int]]) -> dict[str, dict[str, int]]:
        """A count by subset's totals per subset: documents, and distinct terms, pairs and
        triples with their occurrences (the reduce's sums of the labelled kinds, `u@<subset>`
        ...; the records without a subset are kinds.NO_SUBSET's)."""
        documents = {name: n for name, n in subsets.items() if name != kinds.NO_SUBSET}
        documents[kinds.NO_SUBSET] = sum(v.get(kinds.DOCS, 0) for v in per_file.values()) - sum(documents.values())
        names = {"unigrams": "terms", "pairs": "pairs", "triples": "triples"}
        fields = {kind: (f"distinct_{names[table]}", f"{names[table][:-1]}_occurrences")
                  for table, (kind, _) in LAYOUT.items()}
        zero = {f: 0 for pair in fields.values() for f in pair}
        out = {name: {"documents": n, **zero} for name, n in documents.items()}
        for part in reduced:
            for kind, (rows, n) in part["kinds"].items():
                base, _, label = kind.partition(kinds.LABEL)
                if base in fields:
                    entry = out.setdefault(label, {"documents": 0, **zero})
                    entry[fields[base][0]] += rows
                    entry[fields[base][1]] += n
        if not any(out[kinds.NO_SUBSET].values()):
            del out[kinds.NO_SUBSET]        # every record had a subset
        return dict(sorted(out.items()))

    def _unit_total(self, by_kind: dict[str, list[int]], per_file: dict[int, dict[str, int]]) -> dict[str, int]:
        """Under a unit other than the window, `units`: the units counted (the documents, or
        the sentences or sequences the count tasks report, kind n); a window count: none."""
        if not self.rules.by_unit:
            return {}
        if self.rules.unit == "document":
            return {"units": sum(v.get(kinds.DOCS, 0) for v in per_file.values())}
        return {"units": by_kind.get(kinds.UNIT_COUNT, [0, 0])[1]}

    # ---- the run --------------------------------------------------------------------
    def manifest_extra(self) -> dict[str, Any]:
        """Extra top-level manifest fields of a subclass (the training-order job)."""
        return {}

    def _count_groups(self, groups: list[list], paths: dict[int, str],
                      watcher: "_ProgressThread") -> tuple[list[TaskResult], int]:
        """Count every group not done yet; (all task results, groups counted this run).
        A group is done once its results file exists: a resume skips it."""
        done = {n for n in self.storage.list_names(f"{self.work}/groups")
                if n.endswith(".json") and not n.startswith(".")}
        results: list[TaskResult] = []
        redone = 0
        self.hit_merge = self._hit_merge() if self.opts.hits else None
        for number, group in enumerate(groups):
            name = f"g{number:05d}"
            marker = f"{self.work}/groups/{name}.json"
            group_bytes = sum(f.size for f in group)
            if f"{name}.json" in done:
                collected = json.loads(self.storage.read_text(marker))
            else:
                watcher.group_bytes = group_bytes
                watcher.phase = f"counting group {number + 1}/{len(groups)}"
                base = f"{self.work}/exchange/{name}"
                self.storage.delete(base)
                collected = self._count_tasks(group, paths, base).collect()
                self.storage.delete(f"{base}/split")       # pieces of spread files, if any
                self.storage.write_text_atomic(marker, json.dumps(collected))
                redone += 1
            group_results = [TaskResult.from_json(c) for c in collected]
            if self.hit_merge is not None:       # hit rows out of the statistics, merged
                self.hit_merge.absorb(group_results)
            results.extend(group_results)
            watcher.files_done += len(group)
            watcher.bytes_done += group_bytes
            watcher.group_bytes = 0
        return results, redone

    def run(self) -> dict[str, Any]:
        """Count, commit and return the manifest (or the existing one if already done):
        plan, count tasks (their sums go to run files: the exchange), reduce, atomic commit."""
        files, groups = self.plan()
        fp = fingerprint(self.config(), files)
        existing = self._check_output(fp)
        if existing is not None:
            print(f"{self.opts.output} already holds this result (same inputs and settings); "
                  "nothing to do.", flush=True)
            return existing
        self._prepare_work(fp, files)
        with self._progress(files) as watcher, _bad_input_named():
            results, redone = self._count_groups(groups, {f.index: f.path for f in files}, watcher)
            check_unchanged(files)          # read as listed, or nothing is committed
            watcher.reducing()
            reduced = self._reduce(results)
            stats = self._statistics(results, reduced, files)
            refuse_mostly_skipped(stats["totals"]["documents"], stats["skipped"],
                                  self.opts.max_skipped_share)
            stats["sizes"].update(self._write_hits(self.hit_merge, {f.index: f.path for f in files}))
            self._commit_tables()
        return self._commit_manifest(files, groups, fp, stats, redone)

    @contextmanager
    def _progress(self, files: list[InputFile]):
        """The progress thread of this run, stopped however the run ends."""
        watcher = _ProgressThread(self.spark, len(files), sum(f.size for f in files),
                                  self.opts.progress_interval)
        watcher.start()
        try:
            yield watcher
        finally:
            watcher.stop()

    def _file_records(self) -> dict[str, dict[str, Any]] | None:
        """The output's per-file records (bytes, sha256, rows), taken by one executor task:
        reading Parquet footers needs pyarrow, which the driver of a count never imports
        (docs/performance.md, the driver's start-up)."""
        sc = self.spark.sparkContext
        return sc.parallelize([str(self.out)], 1).map(dataset_records).collect()[0]

    def _commit_manifest(self, files: list[InputFile], groups: list[list], fp: str,
                         stats: dict[str, Any], redone: int) -> dict[str, Any]:
        """The manifest written last (the commit point), the work directory removed."""
        config = self.config()
        elapsed = time.monotonic() - self.t0
        totals = stats["totals"]
        totals["elapsed_s"] = round(elapsed, 3)
        totals["mb_per_s"] = round(totals["input_bytes"] / 1e6 / elapsed, 3) if elapsed else None
        totals["record_mb_per_s"] = round(totals["text_bytes"] / 1e6 / elapsed, 3) if elapsed else None
        inputs = [{"path": f.path, "size": f.size, "mtime": f.mtime, **{
            k: stats["per_file"][f.index].get(k, 0) for k in (kinds.LINES, kinds.DOCS,
                                                             kinds.TOKENS, kinds.BYTES)}}
                  for f in files]
        manifest = build_manifest("count_terms", config, inputs, totals, self.started,
                                  plan_fingerprint=fp, subsets=stats["subsets"], skipped=stats["skipped"],
                                  groups={"count": len(groups), "counted_this_run": redone},
                                  outputs={n: {"rows": rows} for n, rows in stats["sizes"].items()},
                                  files=self._file_records(),     # readers check them
                                  **{k: stats[k] for k in ("subset_totals",) if k in stats},
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
    limit = manifest.get("config", {}).get("limit")
    if limit:
        lines.insert(0, f"dry run: the first {limit:,} records only (count --limit {limit}); "
                        "not a full count")
    if "subset_totals" in manifest:
        lines.append(f"  by subset: {len(manifest['subset_totals']):,} subsets (rows are per term and "
                     "subset; each subset's totals: _manifest.json subset_totals)")
    for path, reasons in sorted(manifest.get("skipped", {}).items()):
        for reason, info in sorted(reasons.items()):
            lines.append(f"    {path}: {info['count']} x {reason} (lines {info['first_lines'][:5]})")
    return "\n".join(lines)
