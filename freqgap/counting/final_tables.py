"""The counting job's reduce step: exact sums of a key range over every run file
(freqgap.counting.exchange), decoded to term strings and written as the final Parquet tables.

One reduce task per key range; a key lives in exactly one range, so the tables' files are
disjoint, their union is the exact sum over every count task, group and resume, and part
numbers follow key order (each table is sorted by key across its files).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from freqgap.contract import DATASETS as CONTRACT
from freqgap.counting import arrow_arrays, exchange
from freqgap.counting.sources import arrow_fs
from freqgap.counting.codec import MASK, TermCodec
from freqgap.counting.partials import PAIR, TRIPLE, UNIGRAM
from freqgap.counting.rules import TermRules

DATASETS = ("unigrams", "pairs", "triples")
# dataset -> (partial kind, number of terms in a key)
LAYOUT = {"unigrams": (UNIGRAM, 1), "pairs": (PAIR, 2), "triples": (TRIPLE, 3)}
ROWS_PER_OUTPUT_FILE = 5_000_000


def decode_table(codec: TermCodec, name: str, keys: np.ndarray, counts: np.ndarray,
                 step_buckets: np.ndarray | None = None) -> pa.Table:
    """int64 keys -> the dataset's string columns (contract order), counts last."""
    order = LAYOUT[name][1]
    ids = TermCodec.split(keys, order)
    # Each distinct term is decoded once and taken per row: a bucket range of a million
    # triples holds a few ten thousand distinct terms (decoding was half the reduce's CPU).
    # Ids are below 2**BITS, so a lookup table finds them without sorting.
    present = np.zeros(MASK + 1, dtype=bool)
    for column in ids:
        present[column] = True
    distinct = np.flatnonzero(present)
    position = np.zeros(MASK + 1, dtype=np.int32)
    position[distinct] = np.arange(distinct.size, dtype=np.int32)
    terms = codec.decode(distinct)
    columns = [terms.take(arrow_arrays.numeric(position[column])) for column in ids]
    if order == 1:
        columns.append(arrow_arrays.strings(["number", "word"]).take(
            arrow_arrays.numeric((ids[0] >= codec.word_base).astype(np.int8))))
    optional = ()
    if step_buckets is not None:     # counts by training position (counting/order_source.py)
        columns.append(arrow_arrays.int64(step_buckets))
        optional = ("step_bucket",)
    columns.append(arrow_arrays.int64(counts))
    return pa.Table.from_arrays(columns, schema=CONTRACT[name].schema(optional))


def _sum_kinds(runs: Sequence[tuple[str, str, int]], lo: int | None, hi: int | None,
               engine: str | None = None) -> dict[str, tuple]:
    """{kind: (sorted distinct keys, exact counts)} of keys [lo, hi) over all runs: each
    run's slice is sorted, so the sum is a merge (exchange.sum_runs), not a sort."""
    parts: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    for uri, kind, rows in runs:
        if rows:
            keys, counts = exchange.read_run(uri, lo, hi)
            if keys.size:
                parts.setdefault(kind, []).append((keys, counts))
    return {kind: exchange.sum_runs(p, engine) for kind, p in parts.items()}


def _write(table: pa.Table, directory: str, stem: str, rows_per_file: int) -> int:
    """Parquet files of at most rows_per_file rows, each written to a hidden name then moved."""
    fs, path = arrow_fs(directory)
    fs.create_dir(path, recursive=True)
    files = 0
    for start in range(0, max(1, table.num_rows), rows_per_file):
        name = f"{stem}-{files:03d}.parquet"
        tmp = f"{path}/.{name}.tmp"
        # Plain encoding: rows sorted by key repeat their leading terms in long runs, which
        # snappy packs better than a dictionary would (a real-text triples file: 1.11 MB
        # instead of 1.78 MB, written in half the CPU time). Min/max statistics only for the
        # integer columns: those of the term columns were 40 % of the write's CPU (2.1 M
        # real-text triples: 0.24 -> 0.14 CPU-s), and key order is not string order, so they
        # would hardly ever let a reader skip a row group.
        pq.write_table(table.slice(start, rows_per_file), tmp, filesystem=fs, use_dictionary=False,
                       write_statistics=[f.name for f in table.schema if pa.types.is_integer(f.type)])
        fs.move(tmp, f"{path}/{name}")
        files += 1
    return files


def reduce_range(runs: Sequence[tuple[str, str, int]], lo: int | None, hi: int | None, part: int,
                 rules: TermRules, final: str, bucketed: bool,
                 rows_per_file: int = ROWS_PER_OUTPUT_FILE, engine: str | None = None) -> dict[str, Any]:
    """Sum keys [lo, hi) (exchange.key_ranges), write part `part` of every dataset under
    `final`/<dataset>/ and return {"kinds": {kind: [distinct rows, occurrences]}, "rows":
    {dataset: rows}}. Part 0 writes a file even when empty, so every dataset has its schema
    on disk."""
    codec = TermCodec(rules)
    summed = _sum_kinds(runs, lo, hi, engine)
    out: dict[str, Any] = {"kinds": {k: [int(v[0].size), int(v[1].sum())] for k, v in summed.items()},
                           "rows": {}}
    for name, (base, _) in LAYOUT.items():
        kinds = sorted(k for k in summed if k.split("@", 1)[0] == base)
        if kinds:
            keys = np.concatenate([summed[k][0] for k in kinds])
            counts = np.concatenate([summed[k][1] for k in kinds])
        else:
            keys = counts = np.empty(0, np.int64)
        buckets = None
        if bucketed:
            buckets = np.concatenate([np.full(summed[k][0].size, int(k.split("@", 1)[1]), np.int64)
                                      for k in kinds]) if kinds else np.empty(0, np.int64)
            order = np.lexsort((buckets, keys))
            keys, counts, buckets = keys[order], counts[order], buckets[order]
        out["rows"][name] = int(keys.size)
        if keys.size or part == 0:
            _write(decode_table(codec, name, keys, counts, buckets),
                   exchange.join(final, name), f"part-{part:05d}", rows_per_file)
    return out
