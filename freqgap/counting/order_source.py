"""Counting by training position: ranges of training sequences -> partial counts per step bucket.

A training-order input is an indexed dataset (freqgap.counting.indexed) whose entry i is the
i-th training sequence; with B sequences per optimizer step, entry i is consumed at step
t = i // B. Checkpoint `stepN` holds the weights after N steps, i.e. it has seen steps
0..N-1, so a sequence of step t falls in the bucket c = the smallest edge with c > t, and
ω as of checkpoint s is the sum of the counts of every bucket <= s. Sequences of steps at
or after the last edge are seen by no checkpoint and are not read.

A document here is the text between end-of-document (EOD) tokens inside one sequence: a
window never crosses an EOD token nor a sequence boundary (the two halves of a document
split over two sequences are seen at different steps). Each piece is decoded with the
model's tokenizer (special tokens dropped) and counted by the ordinary SPEC §2 rules.

Partial counts travel with kind `u@<bucket>` (and p@, t@), so the job's one exact sum by
(kind, key) also sums per bucket.

Under the sequence unit (SPEC §2) a unit is one training sequence: every piece of a sequence
shares it (engines/units.py gets each piece's sequence), and `n@<bucket>` counts the
sequences read per bucket (manifest totals.units).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa

from freqgap.counting import arrow_arrays, kinds, partials
from freqgap.counting.codec import TermCodec, codec_for
from freqgap.counting.indexed import IndexedDataset
from freqgap.counting.engines import get_engine
from freqgap.counting.inputs import BadInputError
from freqgap.counting.rules import SEQUENCE_UNIT, TermRules, UnitTooLarge
from freqgap.errors import FreqgapError

BUCKET_SEP = "@"
ENTRIES_PER_CHUNK = 512


class OrderInputError(FreqgapError):
    """A training-order input or setting the user must fix; the message names it."""


def bucket_kind(kind: str, bucket: int) -> str:
    return f"{kind}{BUCKET_SEP}{bucket}"


def check_edges(edges: Sequence[int], where: str) -> list[int]:
    """Edges as a strictly increasing list of non-negative ints, or an error naming `where`
    and the first step out of place (each bucket is the steps from one edge to the next)."""
    if not isinstance(edges, (list, tuple)) or not edges:
        raise OrderInputError(f"{where}: bucket edges must be a non-empty list of steps, "
                              f"got {edges!r}")
    for i, e in enumerate(edges):
        if not isinstance(e, (int, np.integer)) or isinstance(e, bool) or e < 0:
            raise OrderInputError(f"{where}: bucket edge {e!r} is not an integer step >= 0")
        if i and e <= edges[i - 1]:
            raise OrderInputError(f"{where}: bucket edges out of order ({edges[i - 1]} then "
                                  f"{e}); give them strictly increasing")
    return [int(e) for e in edges]


def buckets_of_steps(steps: np.ndarray, edges: Sequence[int]) -> np.ndarray:
    """Bucket of each step: the smallest edge > step; -1 when step >= the last edge."""
    e = np.asarray(edges, dtype=np.int64)
    pos = np.searchsorted(e, steps, side="right")
    return np.where(pos < e.size, e[np.minimum(pos, e.size - 1)], -1)


@dataclass(frozen=True)
class Split:
    """Entries lo..hi-1 of input file `index` (an indexed dataset prefix); `size` in bytes."""

    index: int
    path: str
    lo: int
    hi: int
    size: int


def plan_splits(index: int, path: str, entries: int, seqs_per_step: int, edges: Sequence[int],
                target_bytes: int) -> tuple[list[Split], int]:
    """Ranges of about target_bytes of the entries some checkpoint sees; and the number of
    entries left out because they come at or after the last edge."""
    data = IndexedDataset(path)
    used = min(entries, int(edges[-1]) * seqs_per_step)
    splits: list[Split] = []
    lo = 0
    item = data.dtype.itemsize
    while lo < used:
        start_byte = int(data.pointers[lo])
        # the first entry whose end passes start + target, at least one entry per split
        limit = start_byte + target_bytes
        hi = int(np.searchsorted(data.pointers[lo:used], limit, side="left")) + lo
        hi = max(hi, lo + 1)
        end_byte = int(data.pointers[hi - 1]) + int(data.sizes[hi - 1]) * item
        splits.append(Split(index, path, lo, hi, end_byte - start_byte))
        lo = hi
    return splits, entries - used


def _tokenizer_file(tokenizer_class, path: str):
    """The tokenizer in `path`, or one line saying the file is not one."""
    try:
        return tokenizer_class.from_file(path)
    except Exception as exc:      # tokenizers raises a bare Exception for a bad file
        raise OrderInputError(f"--tokenizer {path}: not a tokenizer.json of the tokenizers "
                              f"library ({str(exc).splitlines()[0][:120]}); give the model's "
                              "directory or its tokenizer.json") from None


def load_tokenizer(spec: str):
    """A `tokenizers.Tokenizer` from a directory holding tokenizer.json, the file itself, or
    a Hugging Face model name already in the local cache (never downloaded)."""
    from tokenizers import Tokenizer

    candidates = [spec, os.path.join(spec, "tokenizer.json")]
    for c in candidates:
        if os.path.isfile(c):
            return _tokenizer_file(Tokenizer, c), c
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(spec, "tokenizer.json")
    except Exception:           # not a valid repo id: reported below
        cached = None
    if isinstance(cached, str) and os.path.isfile(cached):
        return _tokenizer_file(Tokenizer, cached), cached
    raise OrderInputError(f"--tokenizer {spec}: no tokenizer.json there and not in the Hugging "
                          "Face cache; give the model's directory (e.g. the local snapshot of "
                          "EleutherAI/pythia-70m) or its tokenizer.json")


def eod_id_of(tokenizer, token: str) -> int:
    tid = tokenizer.token_to_id(token)
    if tid is None:
        raise OrderInputError(f"--eod-token {token!r}: not in the tokenizer's vocabulary")
    return int(tid)


def entry_pieces(tokens: np.ndarray, eod: int) -> list[np.ndarray]:
    """The non-empty runs of tokens between EOD tokens of one sequence."""
    cuts = np.flatnonzero(tokens == eod)
    bounds = np.concatenate(([-1], cuts, [tokens.size]))
    return [tokens[a + 1:b] for a, b in zip(bounds[:-1], bounds[1:]) if b - a > 1]


def decoded_pieces(data: IndexedDataset, lo: int, hi: int, tokenizer, eod: int,
                   seqs_per_step: int, edges: Sequence[int]
                   ) -> Iterator[tuple[list[str], list[int], int, list[int], np.ndarray]]:
    """(texts, bucket of each text, entries read, entry (sequence) of each text, bucket of
    each entry read) per chunk of entries lo..hi-1."""
    vocab_size = tokenizer.get_vocab_size(with_added_tokens=True)
    for start in range(lo, hi, ENTRIES_PER_CHUNK):
        stop = min(hi, start + ENTRIES_PER_CHUNK)
        pieces: list[list[int]] = []
        buckets: list[int] = []
        seqs: list[int] = []
        entry_buckets = buckets_of_steps(np.arange(start, stop) // seqs_per_step, edges)
        for i in range(start, stop):
            bucket = int(entry_buckets[i - start])
            if bucket < 0:
                continue
            tokens = np.asarray(data[i], dtype=np.int64)
            data.check_token_ids(tokens, vocab_size, i)
            for piece in entry_pieces(tokens, eod):
                pieces.append(piece.tolist())
                buckets.append(bucket)
                seqs.append(i)
        texts = tokenizer.decode_batch(pieces, skip_special_tokens=True) if pieces else []
        yield texts, buckets, stop - start, seqs, entry_buckets[entry_buckets >= 0]


def stat_batch(fidx: int, values: dict[str, int]) -> pa.RecordBatch:
    labels = [f"{name}{kinds.SEP}{fidx}" for name in values]
    return pa.RecordBatch.from_arrays(
        [arrow_arrays.strings(labels), pa.nulls(len(labels), pa.int64()),
         arrow_arrays.int64(list(values.values()))], schema=partials.PARTIAL_SCHEMA)


def _group_keys(texts: list[str], seqs: list[int], rules: TermRules, codec: TermCodec,
                data: IndexedDataset) -> tuple[dict, np.ndarray]:
    """The chunk keys of one bucket's pieces; under the sequence unit each piece's unit is
    its sequence, and a sequence with too many distinct terms is refused by entry."""
    if rules.unit != SEQUENCE_UNIT:
        return partials.chunk_keys(texts, rules, codec)
    try:
        return get_engine().chunk_keys(texts, rules, codec, None, np.asarray(seqs, np.int64))
    except UnitTooLarge as exc:
        raise BadInputError(data.bin_path, f"entry {seqs[exc.doc]}: {exc.reason}") from None


def _task_hits(hits, rules: TermRules):
    """The task's hit lists (engines/hit_scan.py) and a term finder for them, or None: the
    default count never imports hit_scan."""
    if hits is None:
        return None, None
    from freqgap.counting.engines import load_hit_scan

    return load_hit_scan().TaskHits(hits, rules), get_engine().finder(rules)


def count_splits(splits: Iterable[Split], rules: TermRules, tokenizer_file: str, eod: int,
                 seqs_per_step: int, edges: Sequence[int], hits=None) -> Iterator[pa.RecordBatch]:
    """Partial counts (kinds u@b, p@b, t@b) and per-file statistics of some splits; with
    `hits` (freqgap.counting.hits.HitSettings) the task's hit lists, each listed unit a
    training sequence named by its entry index (over all buckets: the choice of the listed
    ones depends on the entries alone, not on the splits).

    Statistics: `lines` = sequences read, `docs` = EOD-delimited pieces, `tokens` =
    whitespace tokens of the decoded pieces, `bytes` = their UTF-8 bytes.
    """
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(tokenizer_file)
    codec = codec_for(rules)
    task_hits, finder = _task_hits(hits, rules)
    sums = partials.KeySums()
    stats: dict[int, dict[str, int]] = {}
    for split in splits:
        data = IndexedDataset(split.path)
        st = stats.setdefault(split.index, {kinds.LINES: 0, kinds.BYTES: 0,
                                            kinds.DOCS: 0, kinds.TOKENS: 0})
        for texts, buckets, n_entries, seqs, read in decoded_pieces(
                data, split.lo, split.hi, tokenizer, eod, seqs_per_step, edges):
            st[kinds.LINES] += n_entries
            st[kinds.DOCS] += len(texts)
            st[kinds.BYTES] += sum(len(t.encode("utf-8")) for t in texts)
            by_bucket: dict[int, tuple[list[str], list[int]]] = {}
            for text, bucket, seq in zip(texts, buckets, seqs):
                group = by_bucket.setdefault(bucket, ([], []))
                group[0].append(text)
                group[1].append(seq)
            if task_hits is not None and texts:
                task_hits.add(finder(texts), texts, [split.index] * len(texts), seqs,
                              seqs if rules.unit == SEQUENCE_UNIT else None)
            for bucket, (group, group_seqs) in by_bucket.items():
                parts, tokens = _group_keys(group, group_seqs, rules, codec, data)
                st[kinds.TOKENS] += int(np.asarray(tokens).sum())
                yield from sums.add({bucket_kind(k, bucket): v for k, v in parts.items()})
            if rules.unit == SEQUENCE_UNIT:        # the sequences read, per bucket
                for bucket, n in zip(*np.unique(read, return_counts=True)):
                    yield from sums.add({bucket_kind(kinds.UNIT_COUNT, int(bucket)):
                                         (np.zeros(1, np.int64), np.array([n], np.int64))})
    yield from sums.drain()
    for fidx, values in stats.items():
        yield stat_batch(fidx, values)
    if task_hits is not None:
        labels, keys, counts = task_hits.rows()
        yield pa.RecordBatch.from_arrays([arrow_arrays.strings(labels), arrow_arrays.int64(keys),
                                          arrow_arrays.int64(counts)], schema=partials.PARTIAL_SCHEMA)
