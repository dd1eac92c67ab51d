"""The worker-side steps of a count task.

`line_rows`   : input files -> line rows (file index, first line number, whole lines).
`count_lines` : line rows -> Arrow batches of partial counts (kind, key, n), to be summed
                by (kind, key) (counting/exchange.py writes them to run files).

They run inside Spark's Python tasks, but are plain functions, so the unit tests call them
directly. The rows' kinds (counts, statistics, skipped records): `freqgap.counting.kinds`;
their keys: `freqgap.counting.codec`.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.json as pajson

from freqgap.counting import arrow_arrays, subsets
from freqgap.counting.codec import TermCodec, codec_for
from freqgap.counting.engines import get_engine
from freqgap.counting.records import RecordError, check_text, parse_record
from freqgap.counting.rules import TermRules, UnitTooLarge
from freqgap.counting.inputs import BadInputError, InputFile
from freqgap.counting.kinds import (BYTES, DOCS, LINES, PAIR, SEP, SKIP_EXAMPLES, SKIP_LINE, SKIPS,
                                    SUBSET, TOKENS, TRIPLE, UNIGRAM)
from freqgap.counting.sources import iter_line_blocks, iter_parquet_texts, newline_count

FILE_ERROR_LINE = 0   # line number used for errors that concern a whole file
PARTIAL_SCHEMA = pa.schema([("kind", pa.string()), ("key", pa.int64()), ("n", pa.int64())])
COUNT_BATCH_SCHEMA = pa.schema([("kind", pa.dictionary(pa.int8(), pa.string())), ("key", pa.int64()),
                                ("n", pa.int64())])
COUNT_CHUNK_BYTES = 8 << 20
ALONE_BYTES = COUNT_CHUNK_BYTES // 2   # a row this big is a chunk of its own: joining it copies it
COMPACT_ROWS = 2_000_000      # sum a task's pending keys when this many have piled up
EMIT_ROWS = 4_000_000         # and hand them over when that many remain after summing


LineRow = tuple  # (file index, (first) line number, payload bytes, is_text, error or None)


def line_rows(files: Iterable[InputFile], text_field: str, on_bad: str) -> Iterator[LineRow]:
    """Every line of every file, streamed, as plain tuples: a JSON Lines row holds one or
    more whole lines joined by newlines (a decompressed block: sources.iter_line_blocks),
    numbered by its first line; a Parquet row holds one text.

    A file-level failure (unreadable, truncated, empty) raises in `fail` mode; in `skip`
    mode it becomes one error row, and the lines read before it are kept.
    """
    for f in files:
        index = f.index
        try:
            if not f.is_parquet:
                for number, value in iter_line_blocks(f.path):
                    yield (index, number, value, False, None)
                continue
            for number, value in iter_parquet_texts(f.path, text_field):
                try:
                    yield (index, number, check_text(value, text_field).encode("utf-8"), True, None)
                except RecordError as exc:
                    if on_bad == "fail":
                        raise BadInputError(f.path, str(exc), number) from None
                    yield (index, number, b"", True, exc.reason)
        except BadInputError as exc:
            if on_bad == "fail":
                raise
            yield (index, FILE_ERROR_LINE, b"", False, exc.reason)


class _Accumulator:
    """Collects the texts of one chunk, and the statistics of a task as plain counters."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.text_files: list[int] = []
        self.text_lines: list[int] = []
        self.size = 0
        self.per_file: dict[int, list[int]] = {}   # file -> [lines, bytes, docs, tokens]
        self.subsets: Counter[str] = Counter()
        self.skips: dict[tuple[int, str], list] = {}   # (file, reason) -> [count, first lines]

    def file_stats(self, fidx: int) -> list[int]:
        stats = self.per_file.get(fidx)
        if stats is None:
            stats = self.per_file[fidx] = [0, 0, 0, 0]
        return stats

    def skip(self, fidx: int, reason: str, line: int) -> None:
        entry = self.skips.setdefault((fidx, reason), [0, []])
        entry[0] += 1
        if len(entry[1]) < SKIP_EXAMPLES:
            entry[1].append(line)

    def stat_rows(self, extra: tuple[list, list, list] = ([], [], [])) -> pa.RecordBatch:
        """The task's statistics as partial rows (a few per file, at most 20 per skip reason),
        then `extra` rows (kinds, keys, counts: the hit lists', freqgap.counting.engines.hit_scan)."""
        kinds, keys, counts = (list(column) for column in extra)
        for fidx, values in self.per_file.items():
            for name, value in zip((LINES, BYTES, DOCS, TOKENS), values):
                kinds.append(f"{name}{SEP}{fidx}")
                keys.append(None)
                counts.append(value)
        for subset, docs in self.subsets.items():
            kinds.append(f"{SUBSET}{SEP}{subset}")
            keys.append(None)
            counts.append(docs)
        for (fidx, reason), (count, lines) in self.skips.items():
            kinds.append(f"{SKIPS}{SEP}{fidx}{SEP}{reason}")
            keys.append(None)
            counts.append(count)
            for line in lines:
                kinds.append(f"{SKIP_LINE}{SEP}{fidx}{SEP}{reason}")
                keys.append(line)
                counts.append(1)
        return pa.RecordBatch.from_arrays([arrow_arrays.strings(kinds), arrow_arrays.int64(keys),
                                           arrow_arrays.int64(counts)], schema=PARTIAL_SCHEMA)


def _count_batch(kind: str, keys: np.ndarray, counts: np.ndarray) -> pa.RecordBatch:
    """Count rows of one kind, the kind column dictionary-encoded (one entry, int8 indices):
    a million rows carry no million strings (no cast to strings, no check that they are all
    one kind: docs/performance.md)."""
    kinds = pa.DictionaryArray.from_arrays(arrow_arrays.numeric(np.zeros(keys.shape[0], dtype=np.int8)),
                                           arrow_arrays.strings([kind]))
    return pa.RecordBatch.from_arrays([kinds, arrow_arrays.numeric(keys), arrow_arrays.numeric(counts)],
                                      schema=COUNT_BATCH_SCHEMA)


def sum_by_key(keys: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact int64 sums of `counts` per distinct key (keys returned sorted)."""
    if not keys.size:
        return keys, counts
    order = np.argsort(keys)          # any order of equal keys gives the same exact sums
    keys, counts = keys[order], counts[order]
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    return keys[starts], np.add.reduceat(counts, starts)


def chunk_keys(texts: list[str], rules: TermRules, codec: TermCodec,
               finder=None, engine: str | None = None) -> tuple[dict, np.ndarray]:
    """{kind: (int64 keys, counts)} of one chunk of texts, and the tokens of each text, by
    the engine in use (`engine` names another); `finder` is that engine's, when the caller
    holds one (its tables are then not built again)."""
    return get_engine(engine).chunk_keys(texts, rules, codec, finder)


class KeySums:
    """A task's pending partial counts per kind, summed before they go to Spark, so each
    task hands over (about) its distinct keys rather than every chunk's.

    Each kind is a stack of runs of sorted distinct keys; a run is merged into the one below
    while that one is at most twice its size (as in a merge sort), so summing a task's N
    keys costs N log N in linear merges, not repeated sorts of everything pending."""

    def __init__(self, merge=None) -> None:
        self.runs: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
        self.rows = 0
        self.threshold = COMPACT_ROWS
        self.merge = merge or get_engine().merge

    def add(self, parts: dict[str, tuple[np.ndarray, np.ndarray]]) -> Iterator[pa.RecordBatch]:
        for kind, (keys, counts) in parts.items():
            if not keys.size:
                continue
            counts = counts.astype(np.int64, copy=False)
            if keys.size > 1 and not (keys[1:] > keys[:-1]).all():
                keys, counts = sum_by_key(keys, counts)
            stack = self.runs.setdefault(kind, [])
            stack.append((keys, counts))
            self.rows += keys.size
            while len(stack) > 1 and stack[-2][0].size <= 2 * stack[-1][0].size:
                self._merge_top(stack)
        if self.rows >= self.threshold:
            self._compact()
            if self.rows >= EMIT_ROWS:
                yield from self.drain()
            self.threshold = max(COMPACT_ROWS, 2 * self.rows)

    def _merge_top(self, stack: list) -> None:
        k2, c2 = stack.pop()
        k1, c1 = stack.pop()
        keys, counts = self.merge(k1, c1, k2, c2)
        self.rows += keys.size - k1.size - k2.size
        stack.append((keys, counts))

    def _compact(self) -> None:
        for stack in self.runs.values():
            while len(stack) > 1:
                self._merge_top(stack)

    def drain(self) -> Iterator[pa.RecordBatch]:
        """Each kind's sums as one batch (no copy: the run files' writer takes them whole; in
        slices of a million rows, a legacy of handing them to the JVM, they were joined again
        there)."""
        self._compact()
        for kind, stack in self.runs.items():
            yield _count_batch(kind, *stack[0])
        self.runs, self.rows, self.threshold = {}, 0, COMPACT_ROWS


_JSON_SPACE = b" \t\r\n"
_BLANK_START = (b"", b" ", b"\t", b"\r", b"\n")
BLANK_LINE = "blank line"


def _is_blank(line: bytes) -> bool:
    return line[:1] in _BLANK_START and not line.strip(_JSON_SPACE)


class _ArrowChunk:
    """Raw JSON records of one chunk (one line each), parsed together by Arrow's C++ JSON
    reader: the numpy engine's reader.

    Any record Arrow rejects or reads as null (bad JSON, a missing or non-string text,
    duplicate keys, a lone surrogate) sends the whole chunk to the per-record Python path,
    which names the bad record exactly: the fast path never decides what is an error.
    """

    def __init__(self, rules: TermRules) -> None:
        self.rules = rules
        self.payloads: list[bytes] = []
        self.where: list[tuple[int, int]] = []     # (file, line) of each payload
        self.size = 0
        self.fast = "." not in rules.text_field and rules.subset_field in (None, "meta.pile_set_name")
        fields = [(rules.text_field, pa.string())]
        if rules.subset_field:
            fields.append(("meta", pa.struct([("pile_set_name", pa.string())])))
        self.options = (pajson.ReadOptions(use_threads=False, block_size=1 << 30),
                        pajson.ParseOptions(explicit_schema=pa.schema(fields),
                                            unexpected_field_behavior="ignore"))

    def add(self, fidx: int, number: int, payload: bytes) -> None:
        self.payloads.append(payload)
        self.where.append((fidx, number))
        self.size += len(payload)

    def fast_texts(self, text_field: str):
        """(Arrow texts, {subset: documents}, each text's subset as Arrow's reader gave it or
        None), or None when the chunk needs the Python path."""
        parsed = self.arrow_texts(text_field)
        if parsed is None:
            return None
        texts, subsets = parsed
        import pyarrow.compute as pc   # the numpy path's only: a costly import, which
        # the compiled path (every worker forked from the daemon) would otherwise pay for nothing

        counts = {} if subsets is None else {item["values"]: item["counts"] for item in
                                             pc.value_counts(subsets).to_pylist()
                                             if item["values"] is not None}
        return texts, counts, subsets

    def arrow_texts(self, text_field: str):
        """(texts, subsets) as Arrow arrays, or None when the chunk needs the Python path."""
        if not self.fast:
            return None
        data = b"\n".join(self.payloads)
        if b"\\ud" in data or b"\\uD" in data:     # possible lone surrogates: Python decides
            return None
        try:
            # Arrow's JSON reader does not validate UTF-8: a binary->string cast does.
            arrow_arrays.check_utf8(data)
            table = pajson.read_json(pa.BufferReader(data), *self.options)
        except (pa.ArrowInvalid, UnicodeDecodeError, ValueError):
            return None
        if table.num_rows != len(self.payloads):
            return None
        texts = table.column(text_field)
        if texts.null_count:
            return None
        import pyarrow.compute as pc

        subsets = (pc.struct_field(table.column("meta"), "pile_set_name")
                   if "meta" in table.column_names else None)
        return texts, subsets

    def clear(self) -> None:
        self.payloads, self.where, self.size = [], [], 0


class _BlockChunk:
    """Rows of whole lines (line_rows' blocks) of one chunk, for the compiled reader: the
    lines are found and parsed in one buffer, never one Python object per line."""

    def __init__(self, scratch: dict) -> None:
        self.payloads: list[bytes] = []
        self.where: list[tuple[int, int]] = []     # (file, first line) of each row
        self.size = 0
        self.scratch = scratch                     # the reader's arrays, kept between chunks

    def add(self, fidx: int, number: int, payload: bytes) -> None:
        self.payloads.append(payload)
        self.where.append((fidx, number))
        self.size += len(payload)

    def buffer(self) -> np.ndarray:
        """The rows joined by newlines (one buffer of lines; a single row is not copied)."""
        joined = self.payloads[0] if len(self.payloads) == 1 else b"\n".join(self.payloads)
        return np.frombuffer(joined, np.uint8)

    def numbering(self, starts: np.ndarray):
        """(file of each line, its number, lines per row) from where the lines start."""
        row_len = np.fromiter((len(p) for p in self.payloads), np.int64, len(self.payloads))
        row_start = np.cumsum(row_len + 1) - row_len - 1
        first = np.searchsorted(starts, row_start)          # each row's first line
        per_row = np.diff(np.append(first, starts.shape[0]))
        row_of = np.repeat(np.arange(len(self.payloads)), per_row)
        where = np.array(self.where, np.int64).reshape(-1, 2)
        return where[row_of, 0], where[row_of, 1] + np.arange(starts.shape[0]) - first[row_of], per_row

    def clear(self) -> None:
        self.payloads, self.where, self.size = [], [], 0


def _row_parts(number: int, payload: bytes, size: int) -> Iterator[tuple[int, bytes]]:
    """A row of whole lines as parts of about `size` bytes cut at newlines, with their first
    line numbers (a row over twice `size`, e.g. a highly compressed block, would make a
    chunk's arrays, ~20 bytes per byte, grow with it)."""
    if len(payload) <= 2 * size:
        yield number, payload
        return
    payload = bytes(payload)                    # a view (sources.iter_line_blocks) has no find
    start = 0
    while True:
        cut = payload.find(b"\n", start + size)
        if cut < 0:
            yield number, payload[start:]           # (b"" after a final newline: an empty line)
            return
        part = payload[start:cut]
        yield number, part
        number += newline_count(part) + 1
        start = cut + 1


def count_lines(rows: Iterable[LineRow], rules: TermRules, on_bad: str,
                paths: dict[int, str], engine: str | None = None,
                hits=None) -> Iterator[pa.RecordBatch]:
    """Parse, tokenise and count lines into partial counts (summed later by key). A row's
    payload is one or more whole lines joined by newlines (line_rows), or a Parquet text.
    The engine's finder and JSON reader arrays are leased for the task (`Engine.leased`).
    `hits` (freqgap.counting.hits.HitSettings, or None) adds the task's hit lists."""
    chosen = get_engine(engine)
    with chosen.leased(rules) as (finder, scratch):
        yield from _CountTask(chosen, rules, on_bad, paths, finder, scratch, hits).run(rows)


class _CountTask:
    """One count task's steps: rows in, chunks of texts counted, statistics and sums out.

    An engine that reads JSON itself (`Engine.reads_json`) gets whole blocks of lines
    (`_BlockChunk`, `flush_blocks`); otherwise lines go one by one to Arrow's reader
    (`_ArrowChunk`, `flush_json`). Parquet texts arrive as strings (`flush_text`)."""

    def __init__(self, engine, rules: TermRules, on_bad: str, paths: dict[int, str],
                 finder, scratch: dict | None, hits=None) -> None:
        self.engine, self.rules, self.on_bad, self.paths = engine, rules, on_bad, paths
        self.finder = finder
        self.hits = None
        if hits is not None:       # only then: the default count never imports hit_scan
            from freqgap.counting.engines import load_hit_scan

            self.hits = load_hit_scan().TaskHits(hits, rules)
        self.acc = _Accumulator()
        self.sums = KeySums(engine.merge)
        self.codec = codec_for(rules)
        self.blocks = engine.reads_json and not rules.pythia_windows   # its reader rewrites whitespace
        self.chunk = _BlockChunk(scratch) if self.blocks else _ArrowChunk(rules)

    def run(self, rows: Iterable[LineRow]) -> Iterator[pa.RecordBatch]:
        acc = self.acc
        current, stats = None, None
        for fidx, number, payload, is_text, error in rows:
            if fidx != current:
                current, stats = fidx, acc.file_stats(fidx)
            if error is not None:
                acc.skip(fidx, error, number)
                if number != FILE_ERROR_LINE:
                    stats[0] += 1
            elif is_text:
                yield from self.add_text(fidx, number, payload, stats)
            elif self.blocks:
                yield from self.add_block(fidx, number, payload)
            else:
                yield from self.add_lines(fidx, number, payload, stats)
        yield from (self.flush_blocks() if self.blocks else self.flush_json())
        yield from self.flush_text()
        yield from self.sums.drain()
        yield acc.stat_rows(self.hits.rows() if self.hits else ([], [], []))

    def add_text(self, fidx: int, number: int, payload: bytes, stats: list[int]) -> Iterator[pa.RecordBatch]:
        """A Parquet text column's value: already a string."""
        acc = self.acc
        stats[0] += 1
        stats[1] += len(payload)
        stats[2] += 1
        acc.texts.append(payload.decode("utf-8"))
        acc.text_files.append(fidx)
        acc.text_lines.append(number)
        acc.size += len(payload)
        if acc.size >= COUNT_CHUNK_BYTES:
            yield from self.flush_text()

    def add_block(self, fidx: int, number: int, payload: bytes) -> Iterator[pa.RecordBatch]:
        """A row of whole lines, for the engine's own JSON reader."""
        chunk = self.chunk
        for first, part in _row_parts(number, payload, COUNT_CHUNK_BYTES):
            alone = len(part) >= ALONE_BYTES    # a big block is a chunk of its own: no join
            if alone or (chunk.size and chunk.size + len(part) > COUNT_CHUNK_BYTES):
                yield from self.flush_blocks()
            chunk.add(fidx, first, part)
            if alone or chunk.size >= COUNT_CHUNK_BYTES:
                yield from self.flush_blocks()

    def add_lines(self, fidx: int, number: int, payload: bytes, stats: list[int]) -> Iterator[pa.RecordBatch]:
        """A row of whole lines, split into lines for Arrow's JSON reader."""
        for k, line in enumerate(bytes(payload).split(b"\n")):
            stats[0] += 1
            stats[1] += len(line)
            if _is_blank(line):
                self.acc.skip(fidx, BLANK_LINE, number + k)
                continue
            stats[2] += 1                          # a document unless parsing says otherwise
            self.chunk.add(fidx, number + k, line)
            if self.chunk.size >= COUNT_CHUNK_BYTES:
                yield from self.flush_json()

    def count(self, texts, files, lines, names=None) -> Iterator[pa.RecordBatch]:
        """A chunk's texts counted, their tokens added to their files' statistics; a text
        the document unit refuses is named by its file and line (`lines`). With hit lists
        the chunk's terms are found once more, names and all, for them (before the count:
        a finder may reuse its arrays). Counts by subset: `names` holds each text's subset
        (None: none), and each subset's texts are counted on their own (counting/subsets.py)."""
        if self.hits is not None:
            self.hits.add(self.finder(texts), texts, files, lines)
        if names is None:
            yield from self.count_group(texts, files, lines)
            return
        files, lines = np.asarray(files), np.asarray(lines)
        for name, index in subsets.groups(names):
            yield from self.count_group(subsets.take(texts, index), files[index], lines[index], name)

    def count_group(self, texts, files, lines, subset: str | None = None) -> Iterator[pa.RecordBatch]:
        """count's step for one group of texts (all of a chunk's, or one subset's: its kinds
        labelled)."""
        try:
            parts, tokens = self.engine.chunk_keys(texts, self.rules, self.codec, self.finder)
        except UnitTooLarge as exc:
            raise BadInputError(self.paths.get(int(files[exc.doc]), f"file #{files[exc.doc]}"),
                                exc.reason, int(lines[exc.doc])) from None
        files_arr = np.asarray(files)
        for fidx in np.unique(files_arr).tolist():
            self.acc.file_stats(fidx)[3] += int(tokens[files_arr == fidx].sum())
        yield from self.sums.add(parts if subset is None else subsets.labelled(parts, subset))

    def parse_each(self, records) -> tuple[list[str], list[int], list[int], list[str | None]]:
        """The Python path, record by record: (texts, files, lines, subsets); names or skips
        a bad record (each was counted as a document when added)."""
        acc = self.acc
        texts, files, lines, names = [], [], [], []
        for fidx, number, payload in records:
            try:
                text, subset = parse_record(payload, self.rules.text_field, self.rules.subset_field)
            except RecordError as exc:
                if self.on_bad == "fail":
                    raise BadInputError(self.paths.get(fidx, f"file #{fidx}"), str(exc), number) from None
                acc.skip(fidx, exc.reason, number)
                acc.file_stats(fidx)[2] -= 1
                continue
            if subset is not None:
                acc.subsets[subset] += 1
            texts.append(text)
            files.append(fidx)
            lines.append(number)
            names.append(subset)
        return texts, files, lines, names

    def flush_json(self) -> Iterator[pa.RecordBatch]:
        """A chunk of single lines (blank ones already left out) through Arrow's reader."""
        chunk = self.chunk
        if not chunk.payloads:
            return
        parsed = chunk.fast_texts(self.rules.text_field)
        if parsed is not None:
            texts, counts, per_text = parsed
            files = [fidx for fidx, _ in chunk.where]
            lines = [number for _, number in chunk.where]
            names = subsets.arrow_names(per_text, len(texts))
            self.acc.subsets.update(counts)
        else:
            texts, files, lines, names = self.parse_each(
                (fidx, number, payload) for (fidx, number), payload in zip(chunk.where, chunk.payloads))
        chunk.clear()
        if len(texts):
            yield from self.count(texts, files, lines, names if self.rules.by_subset else None)

    def flush_blocks(self) -> Iterator[pa.RecordBatch]:
        """A chunk of rows of whole lines through the engine's JSON reader."""
        chunk, acc = self.chunk, self.acc
        if not chunk.payloads:
            return
        buf = chunk.buffer()
        by_subset = self.rules.by_subset
        parsed = self.engine.extract_records(buf, self.rules.text_field, self.rules.subset_field,
                                             chunk.scratch, per_text=by_subset)
        names = None
        if parsed is not None:
            texts, counts, blank, starts = parsed[:4]
            names = parsed[4] if by_subset else None
        else:
            newlines = np.flatnonzero(buf == 10)
            starts = np.concatenate(([0], newlines + 1))
        line_file, line_no, per_row = chunk.numbering(starts)
        self.block_stats(per_row)
        if parsed is not None:
            acc.subsets.update(counts)
            files, lines = line_file[blank == 0], line_no[blank == 0]
            for i in np.flatnonzero(blank).tolist():
                acc.skip(int(line_file[i]), BLANK_LINE, int(line_no[i]))
                acc.file_stats(int(line_file[i]))[2] -= 1
        else:
            texts, files, lines, names = self.parse_each(self.block_records(buf, starts, line_file, line_no))
            names = names if by_subset else None
        chunk.clear()
        if len(texts):
            yield from self.count(texts, files, lines, names)

    def block_stats(self, per_row: np.ndarray) -> None:
        """Lines, bytes and documents of a block chunk's rows (less blank and skipped lines,
        taken off as they are found)."""
        for (fidx, _), payload, n_lines in zip(self.chunk.where, self.chunk.payloads, per_row.tolist()):
            stats = self.acc.file_stats(fidx)
            stats[0] += n_lines
            stats[1] += len(payload) - (n_lines - 1)
            stats[2] += n_lines

    def block_records(self, buf, starts, line_file, line_no) -> list[tuple[int, int, bytes]]:
        """A block chunk's lines for the Python path, blank ones skipped."""
        records = []
        ends = np.append(starts[1:] - 1, buf.shape[0])
        for fidx, number, s, e in zip(line_file.tolist(), line_no.tolist(), starts.tolist(), ends.tolist()):
            line = buf[s:e].tobytes()
            if _is_blank(line):
                self.acc.skip(fidx, BLANK_LINE, number)
                self.acc.file_stats(fidx)[2] -= 1
            else:
                records.append((fidx, number, line))
        return records

    def flush_text(self) -> Iterator[pa.RecordBatch]:
        acc = self.acc
        if acc.texts:
            texts, files, lines = acc.texts, acc.text_files, acc.text_lines
            acc.texts, acc.text_files, acc.text_lines, acc.size = [], [], [], 0
            yield from self.count(texts, files, lines, [None] * len(texts) if self.rules.by_subset else None)
