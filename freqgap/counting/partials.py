"""The two worker-side steps of the counting job, as Arrow batch iterators.

`read_lines`  : input files -> line batches (file index, line number, raw bytes).
`count_lines` : line batches -> partial counts (kind, t1, t2, t3, n), to be summed by key.

They run inside Spark's `mapInArrow`, but are plain functions over Arrow batches, so the
unit tests call them directly. Statistics and skipped records travel in the same partial
table under their own `kind`, so one exact sum gives counts, totals and skip reports.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Iterator

import numpy as np
import pyarrow as pa

from freqgap.counting.records import RecordError, check_text, parse_record
from freqgap.counting.rules import TermRules
from freqgap.counting.sources import BadInputError, InputFile, iter_lines, iter_parquet_texts
from freqgap.counting.tokenize import find_terms
from freqgap.counting.windows import pair_counts, triple_counts, unigram_counts

FILE_ERROR_LINE = 0   # line number used for errors that concern a whole file
LINES_SCHEMA = pa.schema([("file", pa.int32()), ("line", pa.int64()), ("payload", pa.binary()),
                          ("is_text", pa.bool_()), ("error", pa.string())])
PARTIAL_SCHEMA = pa.schema([("kind", pa.string()), ("t1", pa.string()), ("t2", pa.string()),
                            ("t3", pa.string()), ("n", pa.int64())])
# kinds of partial rows
UNIGRAM, PAIR, TRIPLE = "u", "p", "t"
DOCS, TOKENS, LINES, BYTES, SUBSET, SKIP = "docs", "tokens", "lines", "bytes", "subset", "skip"
LINE_BATCH_BYTES = 8 << 20
LINE_BATCH_ROWS = 4096
COUNT_CHUNK_BYTES = 8 << 20


def _lines_batch(rows: list[tuple[int, int, bytes, bool, str | None]]) -> pa.RecordBatch:
    cols = list(zip(*rows))
    return pa.RecordBatch.from_arrays([pa.array(c, type=f.type) for c, f in zip(cols, LINES_SCHEMA)],
                                      schema=LINES_SCHEMA)


LineRow = tuple  # (file index, line number, payload bytes, is_text, error or None)


def line_rows(files: Iterable[InputFile], text_field: str, on_bad: str) -> Iterator[LineRow]:
    """Every line of every file, streamed, as plain tuples.

    A file-level failure (unreadable, truncated, empty) raises in `fail` mode; in `skip`
    mode it becomes one error row, and the lines read before it are kept.
    """
    for f in files:
        source = (((n, v, True) for n, v in iter_parquet_texts(f.path, text_field)) if f.is_parquet
                  else ((n, v, False) for n, v in iter_lines(f.path)))
        try:
            for number, value, is_text in source:
                if is_text:
                    try:
                        value = check_text(value, text_field).encode("utf-8")
                    except RecordError as exc:
                        if on_bad == "fail":
                            raise BadInputError(f.path, str(exc), number) from None
                        yield (f.index, number, b"", True, exc.reason)
                        continue
                yield (f.index, number, value, is_text, None)
        except BadInputError as exc:
            if on_bad == "fail":
                raise
            yield (f.index, FILE_ERROR_LINE, b"", False, exc.reason)


def read_lines(files: Iterable[InputFile], text_field: str, on_bad: str) -> Iterator[pa.RecordBatch]:
    """`line_rows` as Arrow batches of bounded size (for spreading lines over all cores)."""
    rows: list[LineRow] = []
    size = 0
    for row in line_rows(files, text_field, on_bad):
        rows.append(row)
        size += len(row[2])
        if size >= LINE_BATCH_BYTES or len(rows) >= LINE_BATCH_ROWS:
            yield _lines_batch(rows)
            rows, size = [], 0
    if rows:
        yield _lines_batch(rows)


def rows_of(batches: Iterable[pa.RecordBatch]) -> Iterator[LineRow]:
    """Arrow line batches back to tuples."""
    for batch in batches:
        cols = batch.to_pydict()
        yield from zip(cols["file"], cols["line"], cols["payload"], cols["is_text"], cols["error"])


class _Accumulator:
    """Collects the texts of one chunk, and the statistics of a task as plain counters."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.size = 0
        self.stats: Counter[tuple[str, str, str | None, str | None]] = Counter()
        self.per_file: dict[int, list[int]] = {}   # file -> [lines, bytes, docs]
        self.subsets: Counter[str] = Counter()

    def file_stats(self, fidx: int) -> list[int]:
        stats = self.per_file.get(fidx)
        if stats is None:
            stats = self.per_file[fidx] = [0, 0, 0]
        return stats

    def finish(self) -> Counter:
        for fidx, (lines, size, docs) in self.per_file.items():
            key = str(fidx)
            self.stats[(LINES, key, None, None)] += lines
            self.stats[(BYTES, key, None, None)] += size
            self.stats[(DOCS, key, None, None)] += docs
        for subset, docs in self.subsets.items():
            self.stats[(SUBSET, subset, None, None)] += docs
        return self.stats


def _stat_rows(stats: Counter) -> pa.RecordBatch:
    keys = list(stats)
    return _partial_batch([k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys],
                          [k[3] for k in keys], np.array([stats[k] for k in keys], dtype=np.int64))


def _partial_batch(kind, t1, t2, t3, n) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array(kind, pa.string()), pa.array(t1, pa.string()), pa.array(t2, pa.string()),
         pa.array(t3, pa.string()), pa.array(n, pa.int64())], schema=PARTIAL_SCHEMA)


def count_texts(texts: list[str], rules: TermRules) -> tuple[list[pa.RecordBatch], int]:
    """Partial unigram/pair/triple counts of a list of texts, and their token total."""
    occ = find_terms(texts, rules)
    terms = pa.array(occ.terms, pa.string())
    out = []
    ids, counts = unigram_counts(occ)
    if ids.size:
        out.append(_partial_batch(pa.array([UNIGRAM] * ids.size), terms.take(pa.array(ids)),
                                  pa.nulls(ids.size, pa.string()), pa.nulls(ids.size, pa.string()), counts))
    if rules.max_order >= 2:
        keys, counts = pair_counts(occ, rules.window)
        if counts.size:
            out.append(_partial_batch(pa.array([PAIR] * counts.size), terms.take(pa.array(keys[:, 0])),
                                      terms.take(pa.array(keys[:, 1])), pa.nulls(counts.size, pa.string()),
                                      counts))
    if rules.max_order >= 3:
        keys, counts = triple_counts(occ, rules.window)
        if counts.size:
            out.append(_partial_batch(pa.array([TRIPLE] * counts.size), terms.take(pa.array(keys[:, 0])),
                                      terms.take(pa.array(keys[:, 1])), terms.take(pa.array(keys[:, 2])),
                                      counts))
    return out, int(occ.tokens_per_doc.sum())


def count_lines(rows: Iterable[LineRow], rules: TermRules, on_bad: str,
                paths: dict[int, str]) -> Iterator[pa.RecordBatch]:
    """Parse, tokenise and count lines into partial counts (summed later by key)."""
    acc = _Accumulator()
    text_field, subset_field = rules.text_field, rules.subset_field

    def flush() -> Iterator[pa.RecordBatch]:
        if acc.texts:
            parts, tokens = count_texts(acc.texts, rules)
            acc.stats[(TOKENS, "", None, None)] += tokens
            acc.texts, acc.size = [], 0
            yield from parts

    current, stats = None, None
    for fidx, number, payload, is_text, error in rows:
        if fidx != current:
            current, stats = fidx, acc.file_stats(fidx)
        if error is not None:
            acc.stats[(SKIP, str(fidx), error, str(number))] += 1
            if number != FILE_ERROR_LINE:
                stats[0] += 1
            continue
        stats[0] += 1
        stats[1] += len(payload)
        if is_text:
            text, subset = payload.decode("utf-8"), None
        elif not payload.strip():
            acc.stats[(SKIP, str(fidx), "blank line", str(number))] += 1
            continue
        else:
            try:
                text, subset = parse_record(payload, text_field, subset_field)
            except RecordError as exc:
                if on_bad == "fail":
                    raise BadInputError(paths.get(fidx, f"file #{fidx}"), str(exc), number) from None
                acc.stats[(SKIP, str(fidx), exc.reason, str(number))] += 1
                continue
        stats[2] += 1
        if subset is not None:
            acc.subsets[subset] += 1
        acc.texts.append(text)
        acc.size += len(payload)
        if acc.size >= COUNT_CHUNK_BYTES:
            yield from flush()
    yield from flush()
    stats_rows = acc.finish()
    if stats_rows:
        yield _stat_rows(stats_rows)
