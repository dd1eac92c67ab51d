"""Partial counts between the job's two Python stages, through files instead of the JVM.

Why: summing partial counts in Spark moved every (kind, key, n) row through the JVM
(Arrow transfer, shuffle, merge, cache and three decode-and-write passes, ~4 us a row):
three quarters of a warm run's CPU on real text. Here a count task writes its partial sums
as *run files*, one per kind, rows grouped by a hash of the key into FINE_BUCKETS buckets
with a header of bucket offsets; a reduce task reads its range of buckets from every run
(two ranged reads per run) and sums them exactly (freqgap.counting.final_tables). The JVM
only schedules tasks and carries one small result per task.

A run file, little-endian int64 throughout:

    MAGIC, rows, FINE_BUCKETS, offsets[FINE_BUCKETS + 1], keys[rows], counts[rows]

Files are read and written through pyarrow.fs, so the exchange works alike on a local
disk, a shared file system and an object store (`sources.arrow_fs`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from freqgap.counting.partials import COUNT_KINDS, sum_by_key
from freqgap.counting.sources import arrow_fs

MAGIC = 0x31584746            # "FGX1"
BUCKET_BITS = 11
FINE_BUCKETS = 1 << BUCKET_BITS
_HEADER = 3 + FINE_BUCKETS + 1
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
SPILL_ROWS = 8_000_000        # a task writes a run of a kind when this many rows are pending


def is_count_kind(kind: str) -> bool:
    """Count rows (u, p, t, or u@<bucket> ...) go to run files; the rest are statistics."""
    return kind.split("@", 1)[0] in COUNT_KINDS


def join(base: str, *names: str) -> str:
    return "/".join([base.rstrip("/"), *names])


def buckets_of(keys: np.ndarray) -> np.ndarray:
    """Fine bucket of each int64 key: the top bits of a multiplicative hash, so keys packed
    from small term ids still spread evenly."""
    return ((keys.astype(np.uint64) * _GOLDEN) >> np.uint64(64 - BUCKET_BITS)).astype(np.int64)


def bucket_ranges(reducers: int) -> list[tuple[int, int]]:
    """Fine-bucket range [lo, hi) of each of `reducers` reduce tasks."""
    edges = [FINE_BUCKETS * r // reducers for r in range(reducers + 1)]
    return list(zip(edges[:-1], edges[1:]))


def write_run(uri: str, keys: np.ndarray, counts: np.ndarray) -> None:
    """Write one run file: rows ordered by fine bucket, the offsets in the header."""
    fs, path = arrow_fs(uri)
    buckets = buckets_of(keys).astype(np.int16)
    order = np.argsort(buckets, kind="stable")       # a radix sort on 16-bit values
    offsets = np.searchsorted(buckets[order], np.arange(FINE_BUCKETS + 1), side="left")
    header = np.concatenate(([MAGIC, keys.size, FINE_BUCKETS], offsets)).astype("<i8")
    with fs.open_output_stream(path, compression=None) as out:
        out.write(header.tobytes())
        out.write(np.ascontiguousarray(keys[order], dtype="<i8").tobytes())
        out.write(np.ascontiguousarray(counts[order], dtype="<i8").tobytes())


class RunFileError(RuntimeError):
    """A run file that is not what its writer wrote: the work directory was tampered with."""


def read_run(uri: str, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """(keys, counts) of fine buckets [lo, hi) of a run file, by ranged reads."""
    fs, path = arrow_fs(uri)
    with fs.open_input_file(path) as f:
        header = np.frombuffer(f.read_at(8 * _HEADER, 0), dtype="<i8")
        if header.size != _HEADER or header[0] != MAGIC or header[2] != FINE_BUCKETS:
            raise RunFileError(f"{uri}: not a freqgap run file of this version")
        rows, offsets = int(header[1]), header[3:]
        start, stop = int(offsets[lo]), int(offsets[hi])
        n = stop - start
        if n == 0:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        base = 8 * _HEADER
        keys = np.frombuffer(f.read_at(8 * n, base + 8 * start), dtype="<i8")
        counts = np.frombuffer(f.read_at(8 * n, base + 8 * (rows + start)), dtype="<i8")
        if keys.size != n or counts.size != n:
            raise RunFileError(f"{uri}: truncated run file")
        return keys.astype(np.int64), counts.astype(np.int64)


def _ascending(keys: np.ndarray) -> bool:
    """Strictly increasing keys (a summed array handed over in slices) need no second sum."""
    return bool(np.all(keys[1:] > keys[:-1]))


@dataclass
class TaskResult:
    """What one count task hands the driver: where its runs are, and its statistics rows."""

    runs: list[tuple[str, str, int]] = field(default_factory=list)   # (uri, kind, rows)
    stats: dict[tuple[str, int | None], int] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"runs": [list(r) for r in self.runs],
                "stats": [[k, key, n] for (k, key), n in self.stats.items()]}

    @classmethod
    def from_json(cls, data: dict) -> "TaskResult":
        return cls([tuple(r) for r in data["runs"]],
                   {(k, key): n for k, key, n in data["stats"]})


def spill(batches: Iterable[pa.RecordBatch], base: str) -> TaskResult:
    """Consume a count task's partial batches (kind, key, n): count rows become run files
    under `base`/<a name unique to this attempt>/, statistics rows are summed and returned.
    A retried or speculative attempt writes elsewhere; only the collected result counts."""
    attempt = join(base, uuid.uuid4().hex)
    result = TaskResult()
    pending: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    rows = 0
    made_dir = False

    def flush(kind: str) -> None:
        nonlocal made_dir
        parts = pending.pop(kind)
        keys = np.concatenate([k for k, _ in parts])
        counts = np.concatenate([c for _, c in parts])
        if len(parts) > 1 and not _ascending(keys):   # batches of one kind repeat keys: sum
            keys, counts = sum_by_key(keys, counts)
        if not made_dir:
            fs, path = arrow_fs(attempt)
            fs.create_dir(path, recursive=True)
            made_dir = True
        uri = join(attempt, f"{len(result.runs):05d}.run")
        write_run(uri, keys, counts)
        result.runs.append((uri, kind, int(keys.size)))

    for batch in batches:
        if batch.num_rows == 0:
            continue
        kinds = batch.column(0)
        first = kinds[0].as_py()
        if is_count_kind(first) and pc.all(pc.equal(kinds, first)).as_py():
            keys = batch.column(1).to_numpy(zero_copy_only=False).astype(np.int64)
            counts = batch.column(2).to_numpy(zero_copy_only=False).astype(np.int64)
            pending.setdefault(first, []).append((keys, counts))
            rows += keys.size
        else:                                  # statistics: a few rows per file and task
            for kind, key, n in zip(*(batch.column(i).to_pylist() for i in range(3))):
                if is_count_kind(kind):
                    pending.setdefault(kind, []).append((np.array([key], np.int64),
                                                         np.array([n], np.int64)))
                    rows += 1
                else:
                    result.stats[(kind, key)] = result.stats.get((kind, key), 0) + n
        if rows >= SPILL_ROWS:
            for kind in list(pending):
                flush(kind)
            rows = 0
    for kind in list(pending):
        flush(kind)
    return result
