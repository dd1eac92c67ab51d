"""The counting job's reduce step: exact sums of a key range over every run file
(freqgap.counting.exchange.runs), decoded to term strings and written as the final Parquet tables.

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
from freqgap.counting import arrow_arrays
from freqgap.counting.exchange import runs as exchange
from freqgap.counting.inputs import arrow_fs, join
from freqgap.counting.codec import TermCodec, codec_for
from freqgap.counting.engines import get_engine
from freqgap.counting.kinds import LABEL, LAYOUT, UNIT_DOCS
from freqgap.counting.rules import TermRules

ROWS_PER_OUTPUT_FILE = 5_000_000
ROWS_PER_ROW_GROUP = 2_000_000      # at most; a file's row groups are of even size (row_groups)


def decode_table(codec: TermCodec, name: str, keys: np.ndarray, counts: np.ndarray,
                 step_buckets: np.ndarray | None = None, engine: str | None = None,
                 documents: np.ndarray | None = None,
                 subsets: tuple[np.ndarray, list[str]] | None = None) -> pa.Table:
    """int64 keys -> the dataset's columns (contract order, counts last), each term column
    dictionary-encoded: the distinct terms once, an int32 index per row.

    Why dictionaries: each distinct term is decoded once (a key range of a million triples
    holds a few ten thousand), and Parquet's writer stores a dictionary array's indices as
    they are, where a string column is first materialised (a take) and then written value
    by value. `_write` stores no Arrow schema, so
    readers get the contract's plain string columns back. The indices:
    the engine's `term_indices` (compiled, or numpy's). `subsets`: (index of each row's
    subset, the subsets' names), the `subset` column of a count by subset."""
    order = LAYOUT[name][1]
    distinct, indices = get_engine(engine).term_indices(keys, order)
    terms = codec.decode(distinct)
    columns = [pa.DictionaryArray.from_arrays(arrow_arrays.numeric(row), terms) for row in indices]
    if order == 1:                                  # a unigram's key is its term's id
        columns.append(pa.DictionaryArray.from_arrays(
            arrow_arrays.numeric((keys >= codec.word_base).astype(np.int8)),
            arrow_arrays.strings(["number", "word"])))
    optional: tuple[str, ...] = ()
    if subsets is not None:          # counts by subset (counting/subsets.py)
        columns.append(pa.DictionaryArray.from_arrays(arrow_arrays.numeric(subsets[0]),
                                                      arrow_arrays.strings(subsets[1])))
        optional = ("subset",)
    if step_buckets is not None:     # counts by training position (counting/order_source.py)
        columns.append(arrow_arrays.int64(step_buckets))
        optional += ("step_bucket",)
    if documents is not None:        # the document unit's documents per term (SPEC §2)
        columns.append(arrow_arrays.int64(documents))
        optional += ("documents",)
    columns.append(arrow_arrays.int64(counts))
    contract = CONTRACT[name].schema(optional)
    return pa.Table.from_arrays(columns, schema=pa.schema(
        [field.with_type(column.type) for field, column in zip(contract, columns)]))


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


def row_groups(rows: int, most: int) -> int:
    """Rows per row group for a file of `rows`: as few groups as hold at most `most` rows,
    of even size. Why: every row group repeats each term column's dictionary (all distinct
    terms of the key range, ~56 K for 313 MB of real text), so a short tail group costs
    nearly as much to write as a full one (docs/performance.md)."""
    groups = max(1, -(-rows // most))
    return max(1, -(-rows // groups))


def _write(table: pa.Table, directory: str, stem: str, rows_per_file: int) -> int:
    """Parquet files of at most rows_per_file rows, each written to a hidden name then moved."""
    fs, path = arrow_fs(directory)
    fs.create_dir(path, recursive=True)
    files = 0
    for start in range(0, max(1, table.num_rows), rows_per_file):
        name = f"{stem}-{files:03d}.parquet"
        tmp = f"{path}/.{name}.tmp"
        # The term columns go in as dictionary arrays (decode_table), written as Parquet
        # dictionary pages and RLE indices without a string per row. No Arrow schema
        # in the file, so every reader gets plain string columns (the contract's types), not
        # dictionaries. Min/max statistics only for the integer columns: those of the term
        # columns were 40 % of the write's CPU, and key order is not string order, so they
        # would hardly ever let a reader skip a row group. The columns are REQUIRED (the
        # contract's: no nulls), so no definition levels are encoded, and the integer columns
        # are delta-encoded instead of dictionary-encoded (no hash table of every count;
        # what each choice saves: docs/performance.md).
        integers = [f.name for f in table.schema if pa.types.is_integer(f.type)]
        chunk = table.slice(start, rows_per_file)
        pq.write_table(chunk, tmp, filesystem=fs, store_schema=False,
                       row_group_size=row_groups(chunk.num_rows, ROWS_PER_ROW_GROUP),
                       use_dictionary=[f.name for f in table.schema if f.name not in integers],
                       column_encoding={name: "DELTA_BINARY_PACKED" for name in integers},
                       write_statistics=integers)
        fs.move(tmp, f"{path}/{name}")
        files += 1
    return files


def reduce_range(runs: Sequence[tuple[str, str, int]], lo: int | None, hi: int | None, part: int,
                 rules: TermRules, final: str, bucketed: bool,
                 rows_per_file: int = ROWS_PER_OUTPUT_FILE, engine: str | None = None) -> dict[str, Any]:
    """Sum keys [lo, hi) (task_results.key_ranges), write part `part` of every dataset under
    `final`/<dataset>/ and return {"kinds": {kind: [distinct rows, occurrences]}, "rows":
    {dataset: rows}}. Part 0 writes a file even when empty, so every dataset has its schema
    on disk."""
    codec = codec_for(rules)
    summed = _sum_kinds(runs, lo, hi, engine)
    out: dict[str, Any] = {"kinds": {k: [int(v[0].size), int(v[1].sum())] for k, v in summed.items()},
                           "rows": {}}
    rows_of = _subset_rows if rules.by_subset else _table_rows
    for name, (base, _) in LAYOUT.items():
        keys, counts, labels = rows_of(summed, base, bucketed)
        documents = None
        if name == "unigrams" and rules.with_documents:
            doc_keys, documents, doc_labels = rows_of(summed, UNIT_DOCS, bucketed)
            if not (np.array_equal(doc_keys, keys) and _same_labels(doc_labels, labels)):
                raise RuntimeError("the documents per term do not match the terms counted")
        out["rows"][name] = int(keys.size)
        if keys.size or part == 0:
            table = (decode_table(codec, name, keys, counts, None, engine, documents, labels)
                     if rules.by_subset else
                     decode_table(codec, name, keys, counts, labels, engine, documents))
            _write(table, join(final, name), f"part-{part:05d}", rows_per_file)
    return out


def _table_rows(summed: dict[str, tuple], base: str, bucketed: bool) -> tuple:
    """(keys, counts, step buckets or None) of one kind's sums (u, or u@<bucket> ... when
    bucketed: ordered by key, then bucket)."""
    kinds = sorted(k for k in summed if k.split("@", 1)[0] == base)
    if len(kinds) == 1:                        # a table of one kind: its sums as they are
        keys, counts = summed[kinds[0]]
    elif kinds:
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
    return keys, counts, buckets


def _subset_rows(summed: dict[str, tuple], base: str, bucketed: bool) -> tuple:
    """(keys, counts, (subset index of each row, subset names)) of one kind's sums by subset
    (u@<subset> ...: ordered by key, then subset name)."""
    if bucketed:
        raise ValueError("counts by subset are not counts by training position")
    kinds = sorted(k for k in summed if k.split(LABEL, 1)[0] == base)   # so in name order
    names = [k.split(LABEL, 1)[1] for k in kinds]
    if not kinds:
        empty = np.empty(0, np.int64)
        return empty, empty, (np.empty(0, np.int32), names)
    keys = np.concatenate([summed[k][0] for k in kinds])
    counts = np.concatenate([summed[k][1] for k in kinds])
    index = np.repeat(np.arange(len(kinds), dtype=np.int32), [summed[k][0].size for k in kinds])
    order = np.lexsort((index, keys))
    return keys[order], counts[order], (index[order], names)


def _same_labels(a, b) -> bool:
    """Equal step buckets, or equal subsets (index arrays and names), or both None."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return np.array_equal(a[0], b[0]) and a[1] == b[1]
    return np.array_equal(a, b)
