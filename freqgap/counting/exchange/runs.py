"""Partial counts between the job's two Python stages, through files instead of the JVM.

Why: summing partial counts in Spark moved every (kind, key, n) row through the JVM
(Arrow transfer, shuffle, merge, cache and three decode-and-write passes, ~4 us a row):
three quarters of a warm run's CPU on real text. Here a count task writes its partial sums
as *run files*, one per kind, rows sorted by key (a task's sums already are), with an index
of every INDEX_STEP-th key; the task hands the driver the same index keys, and the driver
cuts the key space into one range per reduce task at weighted quantiles of them, so every
reducer gets about as many rows whatever the keys' distribution. A reduce task reads its key
range from every run (a few ranged reads per run, found by the index) and merges the sorted
slices into exact sums (freqgap.counting.exchange.final_tables). The JVM only schedules tasks and
carries one small result per task.

A run file, keys strictly increasing, B = ceil(rows / INDEX_STEP) blocks of INDEX_STEP rows:

    MAGIC, rows, INDEX_STEP, index[B], offsets[B + 1]     (little-endian int64)
    the rows, block by block, compact (freqgap.counting.exchange.runcodec: 3-4 bytes a row of real text)

with index[i] = keys[i * INDEX_STEP] and block i's bytes at offsets[i]:offsets[i + 1] of the
rows (until work format 2: int64 keys[rows], counts[rows], 16 bytes a row). Files are read
and written through pyarrow.fs, so the exchange works alike on a local disk, a shared file
system and an object store (`inputs.arrow_fs`).
"""

from __future__ import annotations

import uuid
from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa

from freqgap.counting import arrow_arrays
from freqgap.counting.engines import get_engine
from freqgap.counting.inputs import arrow_fs, join
from freqgap.counting.kinds import is_count_kind
from freqgap.counting.partials import sum_by_key
from freqgap.counting.exchange.runcodec import CorruptRunError
from freqgap.counting.exchange.task_results import INDEX_STEP, TaskResult

MAGIC = 0x33584746            # "FGX3"
_HEAD = 3                     # MAGIC, rows, INDEX_STEP
_PREFETCH = 8192              # index keys and offsets read with the header in one ranged read
SPILL_ROWS = 8_000_000        # a task writes a run of a kind when this many rows are pending


def _ascending(keys: np.ndarray) -> bool:
    """Strictly increasing keys: distinct and sorted, a run as it is written."""
    return bool(np.all(keys[1:] > keys[:-1]))


def _all_equal(strings: pa.Array, value: str) -> bool:
    """Every string of a string array without nulls is `value` (byte compares in numpy: a
    task's count batches are a million rows of one kind; Arrow's compare took 4 ms each)."""
    if strings.null_count:
        return False
    if isinstance(strings, pa.DictionaryArray) and len(strings.dictionary) == 1:
        return strings.dictionary[0].as_py() == value        # partials._count_batch's
    if not isinstance(strings, pa.StringArray):
        import pyarrow.compute as pc   # rare here; its import is not free (partials.py)

        return bool(pc.all(pc.equal(strings, value)).as_py())
    want = np.frombuffer(value.encode(), np.uint8)
    n, size = len(strings), want.size
    _, offsets, data = strings.buffers()
    offsets = np.frombuffer(offsets, np.int32)[strings.offset:strings.offset + n + 1]
    if offsets[-1] - offsets[0] != n * size or not np.all(np.diff(offsets) == size):
        return False
    if not size:
        return True
    chars = np.frombuffer(data, np.uint8)[offsets[0]:offsets[-1]].reshape(n, size)
    return bool(np.all(chars == want))


def sum_runs(parts: Sequence[tuple[np.ndarray, np.ndarray]],
             engine: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact sums of runs of strictly increasing keys with their counts: one run of
    strictly increasing keys (the engine's `sum_runs`: compiled linear merges, or one numpy
    sort of the concatenation; both give the same arrays)."""
    parts = [(k, c) for k, c in parts if k.size]
    if len(parts) <= 1:
        return parts[0] if parts else (np.empty(0, np.int64), np.empty(0, np.int64))
    return get_engine(engine).sum_runs(parts)


def write_run(uri: str, keys: np.ndarray, counts: np.ndarray) -> list[int]:
    """Write one run file and return its index keys. Keys not strictly increasing (not a
    task's sums) are summed first."""
    return write_parts(uri, [(keys, counts)])[1]


def write_parts(uri: str, parts: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[int, list[int]]:
    """Write the run file of `parts` (keys, counts), one after the other, and return its
    rows and index keys. Parts that are not together one strictly increasing run (batches of
    one kind from several drains of a task's sums, or any other input) are summed first;
    those that are (one run handed over in pieces) are joined as they are."""
    parts = [(np.ascontiguousarray(k, dtype=np.int64), np.ascontiguousarray(c, dtype=np.int64))
             for k, c in parts if len(k)]
    in_order = [_ascending(k) for k, _ in parts]
    if not all(in_order) or any(a[0][-1] >= b[0][0] for a, b in zip(parts, parts[1:])):
        parts = [sum_runs([p if ok else sum_by_key(*p) for p, ok in zip(parts, in_order)])]
    if len(parts) > 1:
        parts = [(np.concatenate([k for k, _ in parts]), np.concatenate([c for _, c in parts]))]
    keys, counts = parts[0] if parts else (np.empty(0, np.int64), np.empty(0, np.int64))
    data, offsets = get_engine().encode_run(keys, counts, INDEX_STEP)
    index = keys[::INDEX_STEP]
    fs, path = arrow_fs(uri)
    header = np.concatenate(([MAGIC, keys.size, INDEX_STEP], index, offsets)).astype("<i8")
    with fs.open_output_stream(path, compression=None) as out:
        out.write(header)
        out.write(data)
    return int(keys.size), index.tolist()


class RunFileError(RuntimeError):
    """A run file that is not what its writer wrote: the work directory was tampered with."""


def _read(f, uri: str, n: int, at: int) -> bytes:
    """n bytes at byte `at` of an open run file."""
    data = f.read_at(n, at)
    if len(data) != n:
        raise RunFileError(f"{uri}: truncated run file")
    return data


def read_run(uri: str, lo: int | None = None, hi: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(keys, counts) of the keys in [lo, hi) of a run file (None: unbounded), by ranged
    reads: the header with the index and block offsets, then the bytes of the blocks that
    can hold [lo, hi), decoded and trimmed exactly."""
    fs, path = arrow_fs(uri)
    with fs.open_input_file(path) as f:
        size = f.size()
        head = np.frombuffer(f.read_at(min(size // 8, _HEAD + _PREFETCH) * 8, 0), dtype="<i8")
        if head.size < _HEAD or head[0] != MAGIC or head[2] < 1 or head[1] < 0:
            raise RunFileError(f"{uri}: not a freqgap run file of this version")
        rows, step = int(head[1]), int(head[2])
        blocks = -(-rows // step)
        words = _HEAD + 2 * blocks + 1                  # the header's int64 words
        if head.size < words:
            head = np.frombuffer(_read(f, uri, 8 * words, 0), dtype="<i8")
        index, offsets = head[_HEAD:_HEAD + blocks], head[_HEAD + blocks:words]
        if size != 8 * words + int(offsets[-1]):
            raise RunFileError(f"{uri}: truncated run file")
        # The first key >= lo is in block j - 1 or j for j = the first index key >= lo; the
        # keys below hi are in the blocks whose index key is below hi.
        first = 0 if lo is None else max(0, int(np.searchsorted(index, lo)) - 1)
        last = blocks if hi is None else int(np.searchsorted(index, hi))
        if last <= first:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        data = _read(f, uri, int(offsets[last] - offsets[first]), 8 * words + int(offsets[first]))
    try:
        keys, counts = get_engine().decode_run(np.frombuffer(data, np.uint8), offsets[first:last + 1],
                                      index[first:last], min(rows, last * step) - first * step, step)
    except CorruptRunError as exc:
        raise RunFileError(f"{uri}: damaged run file ({exc})") from None
    start = 0 if lo is None else int(np.searchsorted(keys, lo))
    stop = keys.size if hi is None else int(np.searchsorted(keys, hi))
    return keys[start:stop], counts[start:stop]


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
        if not made_dir:
            fs, path = arrow_fs(attempt)
            fs.create_dir(path, recursive=True)
            made_dir = True
        uri = join(attempt, f"{len(result.runs):05d}.run")
        run_rows, index = write_parts(uri, pending.pop(kind))
        result.index.append(index)
        result.runs.append((uri, kind, run_rows))

    for batch in batches:
        if batch.num_rows == 0:
            continue
        kinds = batch.column(0)
        first = kinds[0].as_py()
        if is_count_kind(first) and _all_equal(kinds, first):
            keys = arrow_arrays.to_numpy(batch.column(1)).astype(np.int64, copy=False)
            counts = arrow_arrays.to_numpy(batch.column(2)).astype(np.int64, copy=False)
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
