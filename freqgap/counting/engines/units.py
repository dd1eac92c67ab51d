"""Co-occurrence by document (SPEC §2, the document unit): each pair of distinct terms a
document holds counts once, and each term counts the documents that hold it.

Why one module for both engines: the keys are made from the finder's occurrences (document,
term rank in string order, codec id), which both engines produce, so the rule is written
once. Pairs are made for slices of at most PAIRS_PER_SLICE and summed slice by slice, so a
chunk's memory follows its distinct pairs, not the pairs made; a document with more than
`rules.max_unit_terms` distinct terms (and no pair list) is refused before any pair is made.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from freqgap.counting.codec import BITS, TermCodec
from freqgap.counting.engines.tokenize import TermOccurrences
from freqgap.counting.engines.windows import unigram_counts
from freqgap.counting.kinds import PAIR, UNIGRAM, UNIT_DOCS
from freqgap.counting.partials import sum_by_key
from freqgap.counting.rules import TermRules, UnitTooLarge

PAIRS_PER_SLICE = 1 << 22
Keys = tuple[np.ndarray, np.ndarray]


def _distinct(occ: TermOccurrences) -> tuple[np.ndarray, np.ndarray]:
    """(document, term rank) of each distinct term of each document, by document then rank."""
    if not occ.term_id.size:
        empty = np.zeros(0, np.int64)
        return empty, empty
    v = int(occ.term_id.max()) + 1
    key = np.unique(occ.doc.astype(np.int64) * v + occ.term_id)
    return key // v, key % v


def _term_documents(rank: np.ndarray, gid: np.ndarray) -> Keys:
    """(codec ids, documents) of the terms held, from _distinct's ranks."""
    ids, counts = np.unique(rank, return_counts=True)
    return gid[ids], counts


def term_documents(occ: TermOccurrences, gid: np.ndarray) -> Keys:
    """The documents holding each term of a chunk (kind d): the unigrams' `documents`, of
    the document unit and of a window count with doc_freq alike."""
    return _term_documents(_distinct(occ)[1], gid)


def _all_pairs(doc: np.ndarray, code: np.ndarray) -> Keys:
    """Summed keys of every pair of distinct terms within each document (code: the codec id
    of each entry; entries of a document in string order, so the first is the smaller)."""
    n = doc.size
    if n < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = np.flatnonzero(np.concatenate(([True], doc[1:] != doc[:-1])))
    ends = np.repeat(np.append(starts[1:], n), np.diff(np.append(starts, n)))
    after = ends - np.arange(n) - 1                # partners after each entry in its document
    done = np.concatenate(([0], np.cumsum(after)))
    parts, lo = [], 0
    while lo < n:
        hi = max(lo + 1, int(np.searchsorted(done, done[lo] + PAIRS_PER_SLICE, "right")) - 1)
        a = after[lo:hi]
        total = int(a.sum())
        if total:
            left = np.repeat(np.arange(lo, hi), a)
            right = left + 1 + (np.arange(total) - np.repeat(np.cumsum(a) - a, a))
            parts.append(sum_by_key(TermCodec.pair_keys(code[left], code[right]),
                                    np.ones(total, np.int64)))
        lo = hi
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return sum_by_key(np.concatenate([k for k, _ in parts]), np.concatenate([c for _, c in parts]))


@lru_cache(maxsize=4)
def listed_keys(rules: TermRules) -> np.ndarray:
    """The sorted pair keys of `rules.pairs` (each pair sorted as strings, as keys are)."""
    codec = TermCodec(rules)
    if not rules.pairs:
        return np.zeros(0, np.int64)
    a = codec.encode([p[0] for p in rules.pairs])
    b = codec.encode([p[1] for p in rules.pairs])
    return np.unique(TermCodec.pair_keys(a, b))


def _listed_pairs(doc: np.ndarray, code: np.ndarray, listed: np.ndarray) -> Keys:
    """Summed keys of the listed pairs both of whose terms a document holds: each entry
    (document, a) is joined to the listed pairs (a, b), then (document, b) is looked up."""
    if not listed.size or doc.size < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    first, second = TermCodec.split(listed, 2)
    order = np.argsort(first, kind="stable")
    first, second, listed = first[order], second[order], listed[order]
    lo = np.searchsorted(first, code, "left")
    hi = np.searchsorted(first, code, "right")
    width = hi - lo
    total = int(width.sum())
    if not total:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    entry = np.repeat(np.arange(doc.size), width)
    at = np.repeat(lo, width) + (np.arange(total) - np.repeat(np.cumsum(width) - width, width))
    held = np.sort((doc << BITS) | code)
    want = (doc[entry] << BITS) | second[at]
    found = np.searchsorted(held, want)
    hit = found < held.size
    hit[hit] = held[found[hit]] == want[hit]
    keys = listed[at[hit]]
    return sum_by_key(keys, np.ones(keys.size, np.int64))


def document_keys(occ: TermOccurrences, gid: np.ndarray, rules: TermRules) -> dict[str, Keys]:
    """{kind: (keys, counts)} of a chunk under the document unit: occurrences (u), documents
    holding each term (d) and, with max_order >= 2, documents holding each pair (p)."""
    ids, counts = unigram_counts(occ)
    out = {UNIGRAM: (gid[ids], counts)}
    doc, rank = _distinct(occ)
    out[UNIT_DOCS] = _term_documents(rank, gid)
    if rules.max_order < 2:
        return out
    if rules.pairs:
        out[PAIR] = _listed_pairs(doc, gid[rank], listed_keys(rules))
        return out
    if doc.size:
        starts = np.flatnonzero(np.concatenate(([True], doc[1:] != doc[:-1])))
        sizes = np.diff(np.append(starts, doc.size))
        big = np.flatnonzero(sizes > rules.max_unit_terms)
        if big.size:
            raise UnitTooLarge(int(doc[starts[big[0]]]), int(sizes[big[0]]), rules.max_unit_terms)
    out[PAIR] = _all_pairs(doc, gid[rank])
    return out
