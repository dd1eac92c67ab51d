"""Listed phrases in the numba engine: the component ids of a batch's tokens and the
leftmost-longest phrase pass, each one compiled pass (the rules and tables: phrases.py).

Why compiled: a list of 100,000 phrases built from a text's own word n-grams makes most
tokens components, so the numpy pass's per-length gathers and sorted searches would cost
more than the whole single-token scan. Here each token is hashed once into an
open-addressing table of the components, and each run of components is extended token by
token while its id sequence is a prefix of a listed phrase, one table probe per step.
Only runs when the rules list phrases: the default scan is untouched.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

from freqgap.counting.engines.phrases import PhraseTable, phrase_table
from freqgap.counting.engines.words import (FNV_OFFSET, char_at as _char_at, fnv1a_step, hash_lower as _hash_lower,
                                            lower as _lower)
from freqgap.counting.rule_tables import PUNCT_BYTES
from freqgap.counting.rules import TermRules

_PUNCT = PUNCT_BYTES
_PHRASE, _PREFIX = 1, 2            # what an entry of the sequence table is (bits)
PAIR_BITS = 22                      # the pair filter's size: 2^22 bits, 512 KB, in L2/L3


@njit(cache=True, inline="always")
def _pair_bit(h):
    """The pair filter's bit of a 2-id sequence hash (its top bits after a multiply)."""
    return np.int64((h * np.uint64(0xD6E8FEB86659FD93)) >> np.uint64(64 - PAIR_BITS))


@njit(cache=True, inline="always")
def _slot(h, length, mask):
    """The first slot of (sequence hash, length) in the sequence table."""
    x = h ^ (np.uint64(length) * np.uint64(0x9E3779B97F4A7C15))
    x ^= x >> np.uint64(31)
    return np.int64(x & np.uint64(mask))


@njit(cache=True)
def _component_scan(data, n_bytes, strip, comp_bytes, comp_off, htab, min_len, max_len, changes, cid, rare):
    """cid[t] = the component id of token t of the spaced buffer (only 0x20 separates; PAD
    spaces follow), -1 if none. A token holding a character that str.lower() changes and
    that is not ASCII (`changes`, by code point; any beyond it) is listed in `rare` as
    (token, start, end) for Python's str.lower(); returns how many. Every other token's
    lower case is its bytes with ASCII letters lowered, looked up in `htab`, whose entries
    are a component id below the top 24 bits of its hash (`_entry`): only a slot whose bits
    agree has its bytes compared. Without strip-punct the hash is made while the token's
    end is sought: one walk over its bytes."""
    hmask = htab.shape[0] - 1
    n_changes = changes.shape[0]
    n_rare = 0
    tok = 0
    i = 0
    while i < n_bytes:
        if data[i] == 32:
            i += 1
            continue
        ts = i
        high = 0
        h = FNV_OFFSET
        while data[i] != 32:
            high |= data[i]
            h = fnv1a_step(h, _lower(data[i]))
            i += 1
        te = i
        cid[tok] = -1
        tok += 1
        if strip:
            start = ts
            while ts < te and _PUNCT[data[ts]]:
                ts += 1
            while te > ts and _PUNCT[data[te - 1]]:
                te -= 1
            if ts != start or te != i:
                h = _hash_lower(data, ts, te)
        length = te - ts
        if length <= 0:
            continue
        if high >= 128:
            k = ts
            to_python = False
            while k < te:
                if data[k] < 128:
                    k += 1
                    continue
                cp, width = _char_at(data, k)
                if cp >= n_changes or changes[cp]:
                    to_python = True
                    break
                k += width
            if to_python:
                rare[n_rare, 0] = tok - 1
                rare[n_rare, 1] = ts
                rare[n_rare, 2] = te
                n_rare += 1
                continue
        if length < min_len or length > max_len:     # (lower() may change a length: after)
            continue
        tag = np.int64(h >> np.uint64(40))
        slot = np.int64(h & np.uint64(hmask))
        while htab[slot] >= 0:
            entry = htab[slot]
            if (entry >> 32) == tag:
                f = entry & 0xFFFFFFFF
                fs = comp_off[f]
                if comp_off[f + 1] - fs == length:
                    same = True
                    for k in range(length):
                        if _lower(data[ts + k]) != comp_bytes[fs + k]:
                            same = False
                            break
                    if same:
                        cid[tok - 1] = f
                        break
            slot = (slot + 1) & hmask
    return n_rare


@njit(cache=True)
def _phrase_pass(cid, first_tok, s_doc, s_pos, s_code, multiplier, longest, pairs, table, p_off, p_ids, p_code, o_doc, o_pos, o_code):
    """The terms of the batch in order: at each position not inside a taken phrase, the
    longest listed phrase starting there, else its single-token term (s_*: the single-token
    finder's (doc, pos, code), in order). Writes o_*; returns how many.

    Why the pair filter (`pairs`, a bit per hashed pair of ids that begins a listed phrase):
    most tokens of text are components, and a probe of the sequence table, far larger than
    the caches, cost a miss per token; a run is only probed where its first two ids pass.
    `table` (`_pack`): a slot is 16 bytes, (hash, length | kind << 8 | (phrase + 1) << 16),
    so a probe reads one cache line."""
    n_tok = cid.shape[0]
    n_docs = first_tok.shape[0] - 1
    mask = table.shape[0] - 1
    m = np.uint64(multiplier)
    n_single = s_doc.shape[0]
    j = 0
    n_out = 0
    d = 0
    i = 0
    while i < n_tok:
        while d < n_docs and first_tok[d + 1] <= i:
            d += 1
        best = 0
        best_code = -1
        if cid[i] >= 0:
            h = np.uint64(cid[i] + 1)
            length = 1
            k = i + 1
            doc_end = first_tok[d + 1]
            if k < doc_end and cid[k] >= 0:
                bit = _pair_bit(h * m + np.uint64(cid[k] + 1))
                if not (pairs[bit >> 6] >> np.uint64(bit & 63)) & np.uint64(1):
                    k = doc_end              # no listed phrase begins with this pair
            while k < doc_end and cid[k] >= 0 and length < longest:
                h = h * m + np.uint64(cid[k] + 1)
                length += 1
                slot = _slot(h, length, mask)
                kind = 0
                info = 0
                while table[slot, 1] != 0:
                    info = np.int64(table[slot, 1])
                    if (info & 255) == length and table[slot, 0] == h:
                        kind = (info >> 8) & 255
                        break
                    slot = (slot + 1) & mask
                if kind == 0:
                    break
                if kind & 1:
                    p = (info >> 16) - 1
                    ps = p_off[p]
                    same = True
                    for q in range(length):
                        if p_ids[ps + q] != cid[i + q]:
                            same = False
                            break
                    if same:
                        best = length
                        best_code = p_code[p]
                if not (kind & 2):
                    break
                k += 1
        while j < n_single and first_tok[s_doc[j]] + s_pos[j] < i:
            j += 1                       # inside a taken phrase
        if best:
            o_doc[n_out] = d
            o_pos[n_out] = i - first_tok[d]
            o_code[n_out] = best_code
            n_out += 1
            i += best
            continue
        if j < n_single and first_tok[s_doc[j]] + s_pos[j] == i:
            o_doc[n_out] = s_doc[j]
            o_pos[n_out] = s_pos[j]
            o_code[n_out] = s_code[j]
            n_out += 1
            j += 1
        i += 1
    return n_out


def _entry(h: int, component: int) -> int:
    """A component's entry of `_component_scan`'s table: the top 24 bits of its hash above
    its id."""
    return ((h >> 40) << 32) | component


@lru_cache(maxsize=1)
def lower_changes() -> np.ndarray:
    """For each code point of the Basic Multilingual Plane, whether str.lower() changes it
    (or it is a surrogate, never in valid UTF-8); code points beyond go through Python."""
    return np.array([0xD800 <= c < 0xE000 or chr(c).lower() != chr(c) for c in range(0x10000)], np.bool_)


class CompiledPhrases:
    """The compiled passes' tables of one rule set (built once per process and rules)."""

    def __init__(self, rules: TermRules, codec) -> None:
        table: PhraseTable = phrase_table(rules)
        self.table = table
        self.strip = bool(rules.strip_chars)
        # every component by its id; tokens that str.lower() may change go through Python
        comps = sorted((i, c.encode()) for c, i in table.components.items())
        self.comp_off = np.zeros(len(comps) + 1, np.int64)
        self.comp_off[1:] = np.cumsum([len(c) for _, c in comps])
        self.comp_bytes = np.frombuffer(b"".join(c for _, c in comps) or b"\0", np.uint8).copy()
        size = 1 << max(4, (2 * len(comps)).bit_length())
        self.htab = np.full(size, -1, np.int64)
        for i, _ in comps:
            h = int(_hash_lower(self.comp_bytes, self.comp_off[i], self.comp_off[i + 1]))
            slot = h & (size - 1)
            while self.htab[slot] >= 0:
                slot = (slot + 1) & (size - 1)
            self.htab[slot] = _entry(h, i)
        byte_lengths = [len(c) for _, c in comps]
        self.min_len, self.max_len = (min(byte_lengths), max(byte_lengths)) if comps else (1, 0)
        self.changes = lower_changes()
        self._scratch = np.empty(0, np.int64)
        self._sequences(table, codec)

    def _sequences(self, table: PhraseTable, codec) -> None:
        """The table of (hash, length) -> phrase and/or prefix of a longer phrase."""
        lengths = [length for length in table.lengths for _ in table.names[length]]
        self.p_off = np.zeros(len(lengths) + 1, np.int64)
        self.p_off[1:] = np.cumsum(lengths)
        self.p_ids = np.concatenate([table.rows[n].ravel() for n in table.lengths] or [np.zeros(1, np.int64)])
        self.p_code = codec.encode([name for n in table.lengths for name in table.names[n]])
        # entries: every phrase (kind _PHRASE, its row) and every prefix (kind _PREFIX)
        e_len = np.concatenate([np.full(table.hashes[n].shape[0], n, np.int64) for n in table.lengths]
                               + [np.full(h.shape[0], n, np.int64) for n, h in table.prefixes.items()])
        e_hash = np.concatenate([table.hashes[n] for n in table.lengths] + list(table.prefixes.values()))
        n_phrases = len(lengths)
        e_kind = np.where(np.arange(e_len.shape[0]) < n_phrases, _PHRASE, _PREFIX).astype(np.int64)
        e_phrase = np.where(e_kind == _PHRASE, np.arange(e_len.shape[0]), -1).astype(np.int64)
        size = 1 << max(4, (2 * e_len.shape[0]).bit_length())
        t_hash = np.zeros(size, np.uint64)
        t_len = np.zeros(size, np.int64)
        t_kind = np.zeros(size, np.int64)
        t_phrase = np.full(size, -1, np.int64)
        _insert(e_hash, e_len, e_kind, e_phrase, t_hash, t_len, t_kind, t_phrase)
        self.table_slots = _pack(t_hash, t_len, t_kind, t_phrase)
        self.pairs = np.zeros(1 << (PAIR_BITS - 6), np.uint64)
        _fill_pairs(e_hash[e_len == 2], self.pairs)

    def apply(self, data: np.ndarray, n_bytes: int, first_tok: np.ndarray, doc, pos, code):
        """(doc, pos, code) of the batch's terms with the listed phrases taken in place of
        the single-token terms (doc, pos, code: the single-token finder's, in order)."""
        n_tok = int(first_tok[-1])
        room = doc.shape[0] + n_tok // 2 + 1
        if self._scratch.shape[0] < 7 * n_tok + 3 * room:    # kept between chunks: fresh pages cost more
            self._scratch = np.empty(2 * (7 * n_tok + 3 * room), np.int64)
        cid = self._scratch[:n_tok]
        rare = self._scratch[n_tok:4 * n_tok].reshape(n_tok, 3)
        out = self._scratch[4 * n_tok:4 * n_tok + 3 * room].reshape(3, room)
        n_rare = _component_scan(data, n_bytes, self.strip, self.comp_bytes, self.comp_off, self.htab,
                                 self.min_len, self.max_len, self.changes, cid, rare)
        if n_rare:
            components = self.table.components
            for t, s, e in rare[:n_rare].tolist():
                cid[t] = components.get(data[s:e].tobytes().decode("utf-8").lower(), -1)
        n = _phrase_pass(cid, first_tok, doc, pos, code, self.table.multiplier, self.table.longest,
                         self.pairs, self.table_slots, self.p_off, self.p_ids,
                         self.p_code, out[0], out[1], out[2])
        return out[0, :n].copy(), out[1, :n].copy(), out[2, :n].copy()


@njit(cache=True)
def _insert(e_hash, e_len, e_kind, e_phrase, t_hash, t_len, t_kind, t_phrase):
    """The entries into the sequence table by linear probing; an entry met again (a prefix
    that is also a phrase) gains the kind and the phrase of the other."""
    mask = t_hash.shape[0] - 1
    for i in range(e_hash.shape[0]):
        slot = _slot(e_hash[i], e_len[i], mask)
        while t_len[slot] > 0 and not (t_len[slot] == e_len[i] and t_hash[slot] == e_hash[i]):
            slot = (slot + 1) & mask
        t_hash[slot] = e_hash[i]
        t_len[slot] = e_len[i]
        t_kind[slot] |= e_kind[i]
        if e_phrase[i] >= 0:
            t_phrase[slot] = e_phrase[i]


@njit(cache=True)
def _fill_pairs(hashes, pairs):
    """The pair filter's bits of the 2-id sequences that are or begin a listed phrase."""
    for i in range(hashes.shape[0]):
        bit = _pair_bit(hashes[i])
        pairs[bit >> 6] |= np.uint64(1) << np.uint64(bit & 63)


def _pack(t_hash: np.ndarray, t_len: np.ndarray, t_kind: np.ndarray, t_phrase: np.ndarray) -> np.ndarray:
    """The sequence table as (size, 2) uint64 slots for `_phrase_pass`: (hash, length |
    kind << 8 | (phrase + 1) << 16); an empty slot's second word is 0 (lengths are >= 1)."""
    packed = np.zeros((t_hash.shape[0], 2), np.uint64)
    packed[:, 0] = t_hash
    info = t_len | (t_kind << 8) | ((t_phrase + 1) << 16)
    packed[:, 1] = np.where(t_len > 0, info, 0).astype(np.uint64)
    return packed
