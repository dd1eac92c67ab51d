"""Counting a JSON Lines corpus by training position from an order file.

The order file (Parquet, or JSON Lines with one object per row) maps document pieces to
steps: `file` (the corpus file, as the trainer read it), `line` (1-based line number),
`step`, and optionally `char_start`, `char_end` (a range of the document's text in Python
characters; default the whole text). The project's trainer writes it as
`<model>/data_order/pieces.parquet`. Each row is one document of its own for counting (no
window crosses a piece), in the bucket of its step (order_source.py's rule). An optional
`text_sha256` (the trainer writes it) is the sha256 of the document's text: a corpus whose
line was edited, moved or shifted by an added line is refused, not counted at wrong steps.

Spark tasks are pieces of one corpus file, in line order; a task streams its file and
keeps the lines it needs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa

from freqgap.counting import arrow_arrays, kinds, partials
from freqgap.counting.codec import codec_for
from freqgap.counting.order_source import (OrderInputError, bucket_kind, buckets_of_steps,
                                           stat_batch)
from freqgap.counting.records import RecordError, parse_record
from freqgap.counting.rules import TermRules
from freqgap.counting.inputs import BadInputError
from freqgap.counting.sources import iter_lines

REQUIRED = ("file", "line", "step")
INTEGER_COLUMNS = ("line", "step", "char_start", "char_end")
DIGEST = "text_sha256"
ROWS_PER_SPLIT = 20_000


@dataclass(frozen=True)
class FileSplit:
    """Rows lo..hi-1 (sorted by line) of the order file's rows for corpus file `path`."""

    index: int
    path: str
    order_file: str
    lo: int
    hi: int
    size: int


def read_order_file(path: str):
    """The order file as an Arrow table with int64 line/step/char columns, checked."""
    import pyarrow.compute as pc
    import pyarrow.json as pajson
    import pyarrow.parquet as pq

    if not os.path.isfile(path):
        raise OrderInputError(f"--order-file {path}: not found")
    try:
        table = pq.read_table(path) if path.endswith(".parquet") else pajson.read_json(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise OrderInputError(f"{path}: not a readable order file ({str(exc)[:160]}); give a "
                              "Parquet or JSON Lines file of file, line, step rows") from None
    missing = [c for c in REQUIRED if c not in table.column_names]
    if missing:
        raise OrderInputError(f"{path}: order file lacks column(s) {missing} (needs file, line, "
                              "step; optional char_start, char_end)")
    if not len(table):
        raise OrderInputError(f"{path}: the order file holds no rows")
    if ("char_start" in table.column_names) != ("char_end" in table.column_names):
        raise OrderInputError(f"{path}: char_start and char_end come together (a text range); "
                              "give both or neither")
    cols = {"file": table.column("file").cast(pa.string())}
    for name in INTEGER_COLUMNS:
        if name in table.column_names:
            if not pa.types.is_integer(table.column(name).type):
                raise OrderInputError(f"{path}: column {name} is {table.column(name).type}, "
                                      "integers expected")
            cols[name] = table.column(name).cast(pa.int64())
    if DIGEST in table.column_names:
        cols[DIGEST] = table.column(DIGEST).cast(pa.string())
    out = pa.table(cols)
    for name in cols:
        if out.column(name).null_count:
            raise OrderInputError(f"{path}: column {name} has nulls")
    for name in ("line", "step", "char_start", "char_end"):
        if name in cols and pc.min(out.column(name)).as_py() < 0:
            raise OrderInputError(f"{path}: column {name} has negative values")
    return out


def plan_file_splits(order_file: str, table, seqs_edges: Sequence[int],
                     first_index: int) -> tuple[list[FileSplit], list[str], int]:
    """Splits per corpus file (rows sorted by file, line), the corpus files, and the number
    of rows left out because their step is at or after the last edge."""
    import pyarrow.compute as pc

    keep = pc.less(table.column("step"), int(seqs_edges[-1]))
    left_out = len(table) - pc.sum(keep).as_py() if len(table) else 0
    files = sorted(set(table.column("file").to_pylist()))
    splits: list[FileSplit] = []
    for i, f in enumerate(files):
        if not os.path.isfile(f):
            raise OrderInputError(f"{order_file}: corpus file {f} not found (paths are as the "
                                  "trainer read them; run from the same directory)")
        n = pc.sum(pc.and_(keep, pc.equal(table.column("file"), f))).as_py() or 0
        size = os.path.getsize(f)
        for lo in range(0, n, ROWS_PER_SPLIT):
            splits.append(FileSplit(first_index + i, f, order_file, lo, min(n, lo + ROWS_PER_SPLIT),
                                    size * (min(n, lo + ROWS_PER_SPLIT) - lo) // max(1, n)))
    return splits, files, left_out


def _rows_of(split: FileSplit, edges: Sequence[int]):
    """The split's order rows (line, bucket, char range) sorted by line."""
    import pyarrow.compute as pc

    table = read_order_file(split.order_file)
    mask = pc.and_(pc.equal(table.column("file"), split.path),
                   pc.less(table.column("step"), int(edges[-1])))
    t = table.filter(mask)
    order = np.lexsort((np.arange(len(t)), t.column("line").to_numpy()))
    t = t.take(arrow_arrays.numeric(order))[split.lo:split.hi]
    lines = t.column("line").to_numpy()
    buckets = buckets_of_steps(t.column("step").to_numpy(), edges)
    starts = t.column("char_start").to_numpy(zero_copy_only=False) if "char_start" in t.column_names else None
    ends = t.column("char_end").to_numpy(zero_copy_only=False) if "char_end" in t.column_names else None
    digests = t.column(DIGEST).to_pylist() if DIGEST in t.column_names else None
    return lines, buckets, starts, ends, digests


def pieces_of_split(split: FileSplit, rules: TermRules, edges: Sequence[int]
                    ) -> Iterator[tuple[str, int]]:
    """(text piece, bucket) of every row of the split, streaming the corpus file once."""
    import hashlib

    lines, buckets, starts, ends, digests = _rows_of(split, edges)
    if not len(lines):
        return
    j, last = 0, int(lines[-1])
    for number, raw in iter_lines(split.path):
        if number < lines[j]:
            continue
        if number > last:
            break
        try:
            text, _ = parse_record(raw, rules.text_field, None)
        except RecordError as exc:
            raise BadInputError(split.path, str(exc), number) from None
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest() if digests else None
        while j < len(lines) and lines[j] == number:
            a = 0 if starts is None else int(starts[j])
            b = len(text) if ends is None else int(ends[j])
            if digests and digests[j] != digest:
                raise BadInputError(split.path, f"not the text {split.order_file} recorded "
                                    "for this line (its sha256 differs: the corpus was edited, "
                                    "or lines moved); count the corpus the model trained on",
                                    number)
            if not 0 <= a <= b <= len(text):
                raise BadInputError(split.path, f"char range [{a}, {b}) of {split.order_file} "
                                    f"outside the text ({len(text)} characters)", number)
            yield text[a:b], int(buckets[j])
            j += 1
        if j >= len(lines):
            break
    if j < len(lines):
        raise BadInputError(split.path, f"no line {int(lines[j])} (or it is blank), but "
                            f"{split.order_file} points at it; the order file belongs to "
                            "another corpus")


def count_file_splits(splits: Iterable[FileSplit], rules: TermRules,
                      edges: Sequence[int]) -> Iterator[pa.RecordBatch]:
    """Partial counts (u@b, p@b, t@b) and per-file statistics of some splits."""
    codec = codec_for(rules)
    sums = partials.KeySums()
    for split in splits:
        st = {kinds.LINES: 0, kinds.BYTES: 0, kinds.DOCS: 0, kinds.TOKENS: 0}
        by_bucket: dict[int, list[str]] = {}
        size = 0

        def flush():
            for bucket, group in by_bucket.items():
                parts, tokens = partials.chunk_keys(group, rules, codec)
                st[kinds.TOKENS] += int(np.asarray(tokens).sum())
                yield from sums.add({bucket_kind(k, bucket): v for k, v in parts.items()})
            by_bucket.clear()

        for text, bucket in pieces_of_split(split, rules, edges):
            st[kinds.LINES] += 1
            st[kinds.DOCS] += 1
            n = len(text.encode("utf-8"))
            st[kinds.BYTES] += n
            by_bucket.setdefault(bucket, []).append(text)
            size += n
            if size >= partials.COUNT_CHUNK_BYTES:
                yield from flush()
                size = 0
        yield from flush()
        yield stat_batch(split.index, st)
    yield from sums.drain()
