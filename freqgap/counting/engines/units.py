"""Co-occurrence by unit (SPEC §2: sentence, document, sequence): each pair (triple) of
distinct terms a unit holds counts once, and each term counts the units that hold it.

Why one module for both engines: the keys are made from the finder's occurrences (unit,
term rank in string order, codec id), which both engines produce, so the rule is written
once; a unit is the occurrence's document, its sentence (engines/sentences.py) or its
training sequence (the caller's `units` of each text). Pairs and triples are made for
slices of at most PAIRS_PER_SLICE and summed slice by slice, so a chunk's memory follows
its distinct keys, not the keys made; a unit with more than `rules.unit_term_limit`
distinct terms (and no pair list) is refused before any pair is made.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from freqgap.counting.codec import BITS, TermCodec, codec_for
from freqgap.counting.engines.tokenize import TermOccurrences
from freqgap.counting.engines.windows import unigram_counts
from freqgap.counting.kinds import PAIR, TRIPLE, UNIGRAM, UNIT_COUNT, UNIT_DOCS
from freqgap.counting.partials import sum_by_key
from freqgap.counting.rules import SENTENCE_UNIT, TermRules, UnitTooLarge

PAIRS_PER_SLICE = 1 << 22
Keys = tuple[np.ndarray, np.ndarray]
_EMPTY = np.zeros(0, np.int64)


def _distinct(unit: np.ndarray, term_id: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(unit, term rank) of each distinct term of each unit, by unit then rank."""
    if not term_id.size:
        return _EMPTY, _EMPTY
    v = int(term_id.max()) + 1
    key = np.unique(unit.astype(np.int64) * v + term_id)
    return key // v, key % v


def _term_documents(rank: np.ndarray, gid: np.ndarray) -> Keys:
    """(codec ids, units) of the terms held, from _distinct's ranks."""
    ids, counts = np.unique(rank, return_counts=True)
    return gid[ids], counts


def term_documents(occ: TermOccurrences, gid: np.ndarray) -> Keys:
    """The documents holding each term of a chunk (kind d): the unigrams' `documents`, of
    the document unit and of a window count with doc_freq alike."""
    return _term_documents(_distinct(occ.doc, occ.term_id)[1], gid)


def _spans(first: np.ndarray, width: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, value): for each i, the values first[i] .. first[i] + width[i] - 1."""
    owner = np.repeat(np.arange(width.size), width)
    value = np.repeat(first - (np.cumsum(width) - width), width) + np.arange(owner.size)
    return owner, value


def _slices(cost: np.ndarray):
    """Consecutive entry ranges whose summed cost is at most PAIRS_PER_SLICE (or one entry)."""
    done = np.concatenate(([0], np.cumsum(cost)))
    lo, n = 0, cost.size
    while lo < n:
        hi = max(lo + 1, int(np.searchsorted(done, done[lo] + PAIRS_PER_SLICE, "right")) - 1)
        yield lo, hi
        lo = hi


def _all_combinations(unit: np.ndarray, code: np.ndarray, order: int) -> Keys:
    """Summed keys of every pair (order 2) or triple (order 3) of distinct terms within each
    unit (code: the codec id of each entry; entries of a unit in string order, so the keys'
    terms come sorted)."""
    n = unit.size
    if n < order:
        return _EMPTY, _EMPTY
    starts = np.flatnonzero(np.concatenate(([True], unit[1:] != unit[:-1])))
    ends = np.repeat(np.append(starts[1:], n), np.diff(np.append(starts, n)))
    after = ends - np.arange(n) - 1                # partners after each entry in its unit
    cost = after if order == 2 else 1 + after + after * (after - 1) // 2
    parts = []
    for lo, hi in _slices(cost):
        entry = np.arange(lo, hi)
        owner, second = _spans(entry + 1, after[lo:hi])
        first = entry[owner]
        if order == 2:
            keys = TermCodec.pair_keys(code[first], code[second])
        else:
            owner, third = _spans(second + 1, after[second])
            keys = TermCodec.triple_keys(code[first[owner]], code[second[owner]], code[third])
        if keys.size:
            parts.append(sum_by_key(keys, np.ones(keys.size, np.int64)))
    if not parts:
        return _EMPTY, _EMPTY
    return sum_by_key(np.concatenate([k for k, _ in parts]), np.concatenate([c for _, c in parts]))


@lru_cache(maxsize=8)
def listed_keys(rules: TermRules, order: int = 2) -> np.ndarray:
    """The sorted keys of the pairs (order 2) or triples (order 3) of `rules.pairs` (each
    sorted as strings, as keys are)."""
    rows = [p for p in rules.pairs if len(p) == order]
    if not rows:
        return _EMPTY
    codec = codec_for(rules)
    codes = [codec.encode([row[i] for row in rows]) for i in range(order)]
    return np.unique(TermCodec.pair_keys(*codes) if order == 2 else TermCodec.triple_keys(*codes))


def _listed(unit: np.ndarray, code: np.ndarray, listed: np.ndarray, order: int) -> Keys:
    """Summed keys of the listed pairs (triples) all of whose terms a unit holds: each entry
    (unit, a) is joined to the listed keys starting with a, then (unit, b) (and (unit, c))
    are looked up."""
    if not listed.size or unit.size < order:
        return _EMPTY, _EMPTY
    terms = TermCodec.split(listed, order)
    by_first = np.argsort(terms[0], kind="stable")
    terms, listed = [t[by_first] for t in terms], listed[by_first]
    lo = np.searchsorted(terms[0], code, "left")
    entry, at = _spans(lo, np.searchsorted(terms[0], code, "right") - lo)
    held = np.sort((unit << BITS) | code)
    hit = np.ones(at.size, bool)
    for other in terms[1:]:
        want = (unit[entry] << BITS) | other[at]
        found = np.minimum(np.searchsorted(held, want), held.size - 1)
        hit &= held[found] == want
    keys = listed[at[hit]]
    return sum_by_key(keys, np.ones(keys.size, np.int64))


def _check_sizes(unit: np.ndarray, occ_unit: np.ndarray, occ: TermOccurrences, rules: TermRules) -> None:
    """Refuse the first unit holding more than rules.unit_term_limit distinct terms, naming
    the document it lies in (the caller names its file and line)."""
    if not unit.size:
        return
    starts = np.flatnonzero(np.concatenate(([True], unit[1:] != unit[:-1])))
    sizes = np.diff(np.append(starts, unit.size))
    big = np.flatnonzero(sizes > rules.unit_term_limit)
    if big.size:
        first = int(np.flatnonzero(occ_unit == unit[starts[big[0]]])[0])
        raise UnitTooLarge(int(occ.doc[first]), int(sizes[big[0]]), rules)


def unit_keys(occ: TermOccurrences, gid: np.ndarray, rules: TermRules, texts=None,
              units: np.ndarray | None = None) -> dict[str, Keys]:
    """{kind: (keys, counts)} of a chunk under a unit other than the window: occurrences
    (u), units holding each term (d), with max_order >= 2 units holding each pair (p), with
    max_order 3 each triple (t) (with a pair list: the listed ones); under the sentence
    unit also the chunk's number of sentences (n, key 0). The unit of an occurrence is its document, its sentence
    (from `texts`) or `units[document]` (the training sequence of each text)."""
    ids, counts = unigram_counts(occ)
    out = {UNIGRAM: (gid[ids], counts)}
    occ_unit = occ.doc
    if rules.unit == SENTENCE_UNIT:
        from freqgap.counting.engines.sentences import sentence_units

        occ_unit, sentences = sentence_units(texts, occ)
        out[UNIT_COUNT] = (np.zeros(1, np.int64), np.array([sentences], np.int64))
    elif units is not None:
        occ_unit = np.asarray(units, np.int64)[occ.doc]
    unit, rank = _distinct(occ_unit, occ.term_id)
    out[UNIT_DOCS] = _term_documents(rank, gid)
    if rules.max_order < 2:
        return out
    code = gid[rank]
    if rules.pairs:
        out[PAIR] = _listed(unit, code, listed_keys(rules, 2), 2)
        if rules.max_order >= 3:
            out[TRIPLE] = _listed(unit, code, listed_keys(rules, 3), 3)
        return out
    _check_sizes(unit, occ_unit, occ, rules)
    out[PAIR] = _all_combinations(unit, code, 2)
    if rules.max_order >= 3:
        out[TRIPLE] = _all_combinations(unit, code, 3)
    return out
