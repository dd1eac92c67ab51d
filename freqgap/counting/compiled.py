"""The term finder as one compiled pass over the batch's UTF-8 bytes (numba).

Why numba: the numpy finder touches every byte a dozen times (masks, sorts, gathers); a
single loop that splits, applies the number rule and looks words up in a hash table touches
each byte once, about 2.5x faster on real text. numba is a wheel (llvmlite bundled, no
compiler on the user's machine); where it is missing, `freqgap.counting.engine` falls back
to the numpy finder, which gives the same result. Compiled code is cached on disk
(`cache=True`, also from the zip shipped to executors), so the JIT cost (a few CPU-seconds)
is paid once per machine, not per task.

Same semantics as `TermRules.term_of` on `text.split()`: Python's 29 whitespace characters
split tokens; non-ASCII tokens that may be vocabulary words go back to Python's own
`str.lower()` (the Kelvin sign lower-cases to `k`), as in the numpy finder.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from numba import njit

from freqgap.counting.codec import BITS, TermCodec
from freqgap.counting.jsonscan import Utf8Batch
from freqgap.counting.rules import ASCII_WHITESPACE, NON_ASCII_WHITESPACE, STRIP_PUNCTUATION, TermRules
from freqgap.counting.tokenize import TermOccurrences, _texts_to_buffer


def _table(chars: str) -> np.ndarray:
    table = np.zeros(256, dtype=np.bool_)
    for c in chars:
        table[ord(c)] = True
    return table


_WS = _table(ASCII_WHITESPACE)
_PUNCT = _table(STRIP_PUNCTUATION)
# Non-ASCII whitespace by code point (all are <= U+3000), and the non-ASCII characters whose
# str.lower() is ASCII (only the Kelvin sign, 'k'; a test checks every code point): a token
# with any other non-ASCII character can never equal an ASCII vocabulary form.
_WS_CP = np.zeros(max(map(ord, NON_ASCII_WHITESPACE)) + 1, dtype=np.bool_)
_WS_CP[[ord(c) for c in NON_ASCII_WHITESPACE]] = True
LOWER_TO_ASCII = "\u212a"
_LOWER_ASCII_CP = np.array([ord(c) for c in LOWER_TO_ASCII], np.int64)
_FNV_OFFSET, _FNV_PRIME = 14695981039346656037, 1099511628211


@njit(cache=True, inline="always")
def _char_at(data, i):
    """(code point, length in bytes) of the UTF-8 character starting at i (valid UTF-8)."""
    b = np.int64(data[i])
    if b < 0xE0:
        return ((b & 0x1F) << 6) | (data[i + 1] & 0x3F), 2
    if b < 0xF0:
        return ((b & 0x0F) << 12) | ((np.int64(data[i + 1]) & 0x3F) << 6) | (data[i + 2] & 0x3F), 3
    return (((b & 0x07) << 18) | ((np.int64(data[i + 1]) & 0x3F) << 12)
            | ((np.int64(data[i + 2]) & 0x3F) << 6) | (data[i + 3] & 0x3F)), 4


@njit(cache=True)
def _lower(b):
    return b + 32 if 65 <= b <= 90 else b


@njit(cache=True)
def _hash_lower(data, s, e):
    h = np.uint64(14695981039346656037)
    for i in range(s, e):
        h = (h ^ np.uint64(_lower(data[i]))) * np.uint64(1099511628211)
    return h


@njit(cache=True)
def _scan(data, offsets, d0, o_doc, o_pos, o_code, n_out, rare, n_rare, tokens,
          ws, ws_cp, lower_ascii, any_high_forms, punct, strip, max_digits, bases,
          form_bytes, form_off, form_code, htab, hmask, min_len, max_len, initials, max_rare):
    """Fill (doc, pos, code) of ASCII term tokens, tokens per doc, and (doc, pos, start, end)
    of non-ASCII tokens that may be a vocabulary word (decided in Python), from doc d0
    on. Stops before a document that might not fit the outputs and returns (next doc,
    n_out, n_rare); the caller grows them and calls again. (Outputs are never reassigned
    in here: reassigning arrays in a loop costs an atomic reference count per iteration.)"""
    n_docs = offsets.shape[0] - 1
    for d in range(d0, n_docs):
        i = offsets[d]
        end = offsets[d + 1]
        worst = (end - i + 1) // 2 + 1
        if n_out + worst > o_doc.shape[0] or n_rare + worst > rare.shape[0]:
            return d, n_out, n_rare
        pos = 0
        while i < end:
            b = data[i]
            if b < 128:
                if ws[b]:
                    i += 1
                    continue
            else:
                cp, width = _char_at(data, i)
                if cp < ws_cp.shape[0] and ws_cp[cp]:
                    i += width
                    continue
            s = i
            high = False           # holds a non-ASCII character
            maybe_word = True      # ... and each of them lower-cases to ASCII
            while i < end:
                b = data[i]
                if b < 128:
                    if ws[b]:
                        break
                    i += 1
                else:
                    cp, width = _char_at(data, i)
                    if cp < ws_cp.shape[0] and ws_cp[cp]:
                        break
                    high = True
                    if maybe_word:
                        maybe_word = False
                        for c in lower_ascii:
                            if cp == c:
                                maybe_word = True
                    i += width
            ts = s
            te = i
            if strip:
                while ts < te and punct[data[ts]]:
                    ts += 1
                while te > ts and punct[data[te - 1]]:
                    te -= 1
            length = te - ts
            if length > 0:
                if high:
                    if length <= max_rare and (maybe_word or any_high_forms):
                        rare[n_rare, 0] = d
                        rare[n_rare, 1] = pos
                        rare[n_rare, 2] = ts
                        rare[n_rare, 3] = te
                        n_rare += 1
                else:
                    code = -1
                    b0 = data[ts]
                    if 48 <= b0 <= 57 and length <= max_digits:
                        value = 0
                        for k in range(ts, te):
                            c = data[k]
                            if c < 48 or c > 57:
                                value = -1
                                break
                            value = value * 10 + (c - 48)
                        if value >= 0:
                            code = bases[length] + value
                    if code < 0 and min_len <= length <= max_len and initials[b0]:
                        h = _hash_lower(data, ts, te)
                        slot = np.int64(h & np.uint64(hmask))
                        while htab[slot] >= 0:
                            f = htab[slot]
                            fs = form_off[f]
                            if form_off[f + 1] - fs == length:
                                same = True
                                for k in range(length):
                                    if _lower(data[ts + k]) != form_bytes[fs + k]:
                                        same = False
                                        break
                                if same:
                                    code = form_code[f]
                                    break
                            slot = (slot + 1) & hmask
                    if code >= 0:
                        o_doc[n_out] = d
                        o_pos[n_out] = pos
                        o_code[n_out] = code
                        n_out += 1
            pos += 1
        tokens[d] = pos
    return n_docs, n_out, n_rare


def _grown(a: np.ndarray, used: int, need: int) -> np.ndarray:
    out = np.empty((max(2 * a.shape[0], used + need),) + a.shape[1:], a.dtype)
    out[:used] = a[:used]
    return out


@njit(cache=True)
def _window_keys(doc, pos, rank, gid, window, bits, want_triples):
    """Packed codec keys of every position pair (and triple) within the window: terms in a
    key ordered as strings (by `rank`), each term's codec id in `bits` bits."""
    n = doc.shape[0]
    n_pairs = 0
    n_triples = 0
    for i in range(n):
        j = i + 1
        while j < n and doc[j] == doc[i] and pos[j] - pos[i] < window:
            n_pairs += 1
            if want_triples:
                k = j + 1
                while k < n and doc[k] == doc[i] and pos[k] - pos[i] < window:
                    n_triples += 1
                    k += 1
            j += 1
    pairs = np.empty(n_pairs, np.int64)
    triples = np.empty(n_triples, np.int64)
    p = 0
    t = 0
    for i in range(n):
        a = rank[i]
        j = i + 1
        while j < n and doc[j] == doc[i] and pos[j] - pos[i] < window:
            b = rank[j]
            lo, hi = (a, b) if a <= b else (b, a)
            pairs[p] = (gid[lo] << bits) | gid[hi]
            p += 1
            if want_triples:
                k = j + 1
                while k < n and doc[k] == doc[i] and pos[k] - pos[i] < window:
                    c = rank[k]
                    x, y, z = lo, hi, c
                    if z < y:
                        y, z = z, y
                        if y < x:
                            x, y = y, x
                    triples[t] = (gid[x] << (2 * bits)) | (gid[y] << bits) | gid[z]
                    t += 1
                    k += 1
            j += 1
    return pairs, triples


class CompiledFinder:
    """The compiled finder's tables for one set of rules (built once per task)."""

    def __init__(self, rules: TermRules) -> None:
        self.rules = rules
        self.codec = TermCodec(rules)
        forms = rules.word_forms
        ascii_forms = sorted(f for f in forms if f.isascii())
        encoded = [f.encode() for f in ascii_forms]
        self.form_off = np.zeros(len(encoded) + 1, np.int64)
        self.form_off[1:] = np.cumsum([len(f) for f in encoded])
        self.form_bytes = np.frombuffer(b"".join(encoded) or b"\0", np.uint8).copy()
        self.form_code = self.codec.encode([forms[f] for f in ascii_forms])
        size = 1 << max(4, (2 * len(encoded)).bit_length())
        self.htab = np.full(size, -1, np.int64)
        for index, f in enumerate(encoded):
            h = _FNV_OFFSET
            for byte in f:
                h = (h ^ byte) * _FNV_PRIME & 0xFFFFFFFFFFFFFFFF
            slot = h & (size - 1)
            while self.htab[slot] >= 0:
                slot = (slot + 1) & (size - 1)
            self.htab[slot] = index
        lengths = [len(f) for f in encoded]
        self.min_len, self.max_len = (min(lengths), max(lengths)) if lengths else (1, 0)
        self.initials = np.zeros(256, np.bool_)
        for f in encoded:
            self.initials[f[0]] = True
            self.initials[ord(chr(f[0]).upper())] = True
        self.max_rare = 4 * max((len(f) for f in forms), default=0)
        self.any_high_forms = any(not f.isascii() for f in forms)
        self.forms = forms
        self.bases = self.codec.bases

    def scan(self, texts: list[str] | pa.Array | Utf8Batch):
        """(doc, pos, codec id) of every term token, in order, and tokens per document."""
        data, offsets = texts if isinstance(texts, Utf8Batch) else _texts_to_buffer(texts)
        r = self.rules
        n_docs = offsets.shape[0] - 1
        cap = data.shape[0] // 32 + 1024
        o_doc, o_pos, o_code = (np.empty(cap, np.int64) for _ in range(3))
        rare = np.empty((cap, 4), np.int64)
        tokens = np.zeros(n_docs, np.int64)
        d, n_out, n_rare = 0, 0, 0
        while True:
            d, n_out, n_rare = _scan(
                data, offsets, d, o_doc, o_pos, o_code, n_out, rare, n_rare, tokens,
                _WS, _WS_CP, _LOWER_ASCII_CP, self.any_high_forms, _PUNCT,
                r.number_rule == "strip-punct", r.max_digits,
                self.bases, self.form_bytes, self.form_off, self.form_code, self.htab,
                self.htab.shape[0] - 1, self.min_len, self.max_len, self.initials, self.max_rare)
            if d == n_docs:
                break
            need = (int(offsets[d + 1] - offsets[d]) + 1) // 2 + 1
            o_doc, o_pos, o_code = (_grown(a, n_out, need) for a in (o_doc, o_pos, o_code))
            rare = _grown(rare, n_rare, need)
        doc, pos, code, rare = o_doc[:n_out], o_pos[:n_out], o_code[:n_out], rare[:n_rare]
        if rare.shape[0]:
            raw = data.tobytes()
            hits = [(d, p, term) for d, p, s, e in rare.tolist()
                    if (term := self.forms.get(raw[s:e].decode("utf-8").lower())) is not None]
            if hits:
                doc = np.concatenate((doc, np.array([h[0] for h in hits], np.int64)))
                pos = np.concatenate((pos, np.array([h[1] for h in hits], np.int64)))
                code = np.concatenate((code, self.codec.encode([h[2] for h in hits])))
                order = np.lexsort((pos, doc))
                doc, pos, code = doc[order], pos[order], code[order]
        return doc, pos, code, tokens

    def window_keys(self, occ: TermOccurrences, gid: np.ndarray):
        """(pair keys, counts), (triple keys, counts) in codec keys (freqgap.counting.codec),
        in one compiled pass: O(occurrences), not O(terms x W^2) array passes."""
        pairs, triples = _window_keys(occ.doc, occ.pos, occ.term_id, gid, self.rules.window,
                                      BITS, self.rules.max_order >= 3)
        return np.unique(pairs, return_counts=True), np.unique(triples, return_counts=True)

    def __call__(self, texts) -> TermOccurrences:
        return self.find_terms(texts)

    def find_terms(self, texts: list[str] | pa.Array) -> TermOccurrences:
        """The numpy finder's result: term ids index `terms`, sorted as strings."""
        doc, pos, code, tokens = self.scan(texts)
        # Distinct codes without a sort: codes are < 2^21 (freqgap.counting.codec).
        present = np.zeros(self.codec.word_base + len(self.codec.words), np.bool_)
        present[code] = True
        uniq = np.flatnonzero(present)
        names = self.codec.decode(uniq).to_pylist()
        order = sorted(range(len(names)), key=names.__getitem__)
        rank = np.empty(present.shape[0], np.int64)
        rank[uniq[order]] = np.arange(len(names))
        return TermOccurrences(doc, pos, rank[code], [names[i] for i in order], tokens)
