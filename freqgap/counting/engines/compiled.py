"""The term finder as one compiled pass over the batch's UTF-8 bytes (numba).

Why numba: the numpy finder touches every byte a dozen times (masks, sorts, gathers); a
single pass that finds token starts 8 bytes at a time, applies the number rule and looks
words up in a hash table only where a token may be a term touches each byte about once.
numba is a wheel (llvmlite bundled, no compiler on the user's machine); where it is
missing, `freqgap.counting.engines` falls back to the numpy finder, which gives the same
result. Compiled code is cached on disk (`cache=True`, also from the zip shipped to
executors), so the JIT cost is paid once per machine, not per task.

Same semantics as `TermRules.term_of` on `text.split()`: Python's 29 whitespace characters
split tokens (the JSON reader writes each as spaces, `_spaced_copy` does it for other
texts); non-ASCII tokens that may be vocabulary words go back to Python's own `str.lower()`
(the Kelvin sign lower-cases to `k`), as in the numpy finder.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyarrow as pa
from numba import njit

from freqgap.counting.codec import BITS, codec_for
from freqgap.counting.engines.jsonscan import PAD, Utf8Batch
from freqgap.counting.engines.phrases_compiled import CompiledPhrases
from freqgap.counting.engines.words import char_at as _char_at, count_bits, hash_lower as _hash_lower, load_u16, lower as _lower, space_mask32, trailing_zeros
from freqgap.counting.rule_tables import (DIGIT_BYTES, DIGIT_FIRST, DIGIT_LAST, LOWER_TO_ASCII_CODEPOINTS,
                                          PUNCT_BYTES, WHITESPACE_BYTES, WHITESPACE_CODEPOINTS)
from freqgap.counting.rules import MAX_DIGITS, TermRules
from freqgap.counting.engines.tokenize import TermOccurrences, _texts_to_buffer

# The rules' tables as this module's globals (numba compiles them in as constants).
_WS = WHITESPACE_BYTES
_PUNCT = PUNCT_BYTES
_WS_CP = WHITESPACE_CODEPOINTS
_LOWER_ASCII_CP = LOWER_TO_ASCII_CODEPOINTS
_D0, _D9 = DIGIT_FIRST, DIGIT_LAST


@njit(cache=True)
def _spaced_copy(data, out):
    """Texts that did not come through the JSON reader as its buffer: each whitespace
    character (Python's 29) written as spaces of its UTF-8 length, the rest copied, then
    PAD spaces (out: len(data) + PAD bytes; the texts' offsets are unchanged)."""
    n = data.shape[0]
    i = 0
    while i < n:
        b = data[i]
        if b < 0xC0:
            out[i] = 32 if _WS[b] else b
            i += 1
            continue
        cp, width = _char_at(data, i)
        space = cp < _WS_CP.shape[0] and _WS_CP[cp]
        for k in range(width):
            out[i + k] = 32 if space else data[i + k]
        i += width
    for k in range(PAD):
        out[n + k] = 32


_LOW32 = np.uint64(0xFFFFFFFF)
BLOCK_BYTES = 32768         # a block's candidates are looked at while it is in L1/L2


@njit(cache=True, inline="always")
def _below(bit):
    """The bits of a 32-bit mask below `bit` (0 <= bit <= 32)."""
    return (np.uint64(1) << np.uint64(bit)) - np.uint64(1)


class ScanRules(NamedTuple):
    """A finder's rules as `_spaced_scan` reads them (built once per finder and rule set)."""

    prefix_class: np.ndarray     # classes of a token's first two bytes (`_prefix_classes`)
    cand_digits: int             # length filters of candidates (off under strip-punct)
    cand_min: int
    cand_max: int
    lower_ascii: np.ndarray      # non-ASCII code points whose lower case is ASCII
    any_high_forms: bool         # a vocabulary form holds non-ASCII characters
    punct: np.ndarray            # what strip-punct strips, by byte
    strip: bool
    max_digits: int              # the digit cap
    bases: np.ndarray            # number ids' bases by length (codec)
    form_bytes: np.ndarray       # the ASCII forms' bytes, their offsets and codes
    form_off: np.ndarray
    form_code: np.ndarray
    htab: np.ndarray             # open-addressing table of the forms, and its mask
    hmask: int
    min_len: int                 # the forms' shortest and longest length
    max_len: int
    initials: np.ndarray         # first bytes of forms, either case
    max_rare: int                # longest non-ASCII token that may be a form


class ScanOut(NamedTuple):
    """Where `_spaced_scan` writes (kept by the finder between chunks)."""

    first_tok: np.ndarray        # first token of each text; the last entry: all tokens
    cand_at: np.ndarray          # a block's candidate starts and token numbers
    cand_tok: np.ndarray
    o_doc: np.ndarray            # (doc, pos, code) of term tokens
    o_pos: np.ndarray
    o_code: np.ndarray
    rare: np.ndarray             # (doc, pos, start, end) of non-ASCII maybe-words


@njit(cache=True)
def _spaced_scan(data, n_bytes, offsets, rules, out):
    """(doc, pos, code) of the term tokens of a Utf8Batch, and (doc, pos, start, end) of
    the non-ASCII ones that may be a vocabulary word (decided in Python: only if each
    non-ASCII character lower-cases to ASCII, lower_ascii, or the vocabulary has non-ASCII
    forms). Fills first_tok (first token of each text; the last entry: all tokens).
    Returns (n_out, n_rare).

    The buffer's only whitespace byte is 0x20 and PAD spaces follow it, so 32 bytes at a
    time (vector compares, words.py) give every token start as one bit of a mask (a
    non-space byte after a space): no branch per byte, no array of token bounds, and the
    tokens are counted with popcounts (8 bytes at a time as one uint64 took 1.5x as long on
    real text; a second mask of the starts that may begin a term, by the forms' first
    letters, saved no more than it cost). Per block of BLOCK_BYTES: (1) the tokens whose
    first two bytes have a prefix class (`_prefix_classes`); (2) those tokens, while the
    block is in cache: their end is the next space, non-ASCII shows in their bytes, then
    the length filter, the number rule (strict or strip-punct) and the hash table of the
    lower-cased ASCII forms. The candidate code is written out here, not called: as a
    numba function it was much slower. `rules` is a ScanRules, `out` a ScanOut."""
    prefix_class, cand_digits, cand_min, cand_max = rules.prefix_class, rules.cand_digits, rules.cand_min, rules.cand_max
    lower_ascii, any_high_forms, punct, strip = rules.lower_ascii, rules.any_high_forms, rules.punct, rules.strip
    max_digits, bases, form_bytes, form_off = rules.max_digits, rules.bases, rules.form_bytes, rules.form_off
    form_code, htab, hmask, min_len, max_len = rules.form_code, rules.htab, rules.hmask, rules.min_len, rules.max_len
    initials, max_rare = rules.initials, rules.max_rare
    first_tok, cand_at, cand_tok, rare = out.first_tok, out.cand_at, out.cand_tok, out.rare
    o_doc, o_pos, o_code = out.o_doc, out.o_pos, out.o_code
    n_docs = offsets.shape[0]
    n_words = (n_bytes + 31) >> 5
    words_per_block = BLOCK_BYTES >> 5
    tok = np.int64(0)
    carry = np.uint64(1)                # the byte before the buffer counts as a space
    filled = 0                          # first_tok[:filled] is known
    d = 0
    n_out = 0
    n_rare = 0
    for block in range(0, n_words, words_per_block):
        nc = 0
        for w in range(block, min(block + words_per_block, n_words)):
            base = w << 5
            space = space_mask32(data, base)
            starts = ~space & ((space << np.uint64(1)) | carry) & _LOW32
            carry = space >> np.uint64(31)
            while filled < n_docs and offsets[filled] < base + 32:
                first_tok[filled] = tok + count_bits(starts & _below(offsets[filled] - base))
                filled += 1
            s = starts
            while s:
                bit = trailing_zeros(s)
                i = base + bit
                if prefix_class[load_u16(data, i)]:
                    cand_at[nc] = i
                    cand_tok[nc] = tok + count_bits(starts & _below(bit))
                    nc += 1
                s &= s - np.uint64(1)
            tok += count_bits(starts)
        for q in range(nc):
            k = cand_tok[q]
            ts = cand_at[q]
            te = ts
            high = 0
            while data[te] != 32:
                high |= data[te] >> 7
                te += 1
            c = prefix_class[load_u16(data, ts)]
            length = te - ts
            if not (((c & 1) and length <= cand_digits) or ((c & 2) and cand_min <= length <= cand_max)
                    or (c & 4) or high):
                continue
            while d + 1 < filled and first_tok[d + 1] <= k:   # a text not yet begun: later
                d += 1
            pos = k - first_tok[d]
            if strip:
                while ts < te and punct[data[ts]]:
                    ts += 1
                while te > ts and punct[data[te - 1]]:
                    te -= 1
            length = te - ts
            if length <= 0:
                continue
            if high:
                if length > max_rare:
                    continue
                maybe_word = True
                if not any_high_forms:
                    i = ts
                    while i < te and maybe_word:
                        if data[i] < 128:
                            i += 1
                            continue
                        cp, width = _char_at(data, i)
                        maybe_word = False
                        for c in lower_ascii:
                            if cp == c:
                                maybe_word = True
                        i += width
                if maybe_word:
                    rare[n_rare, 0] = d
                    rare[n_rare, 1] = pos
                    rare[n_rare, 2] = ts
                    rare[n_rare, 3] = te
                    n_rare += 1
                continue
            code = -1
            b0 = data[ts]
            if _D0 <= b0 <= _D9 and length <= max_digits:
                value = 0
                for i in range(ts, te):
                    c = data[i]
                    if c < _D0 or c > _D9:
                        value = -1
                        break
                    value = value * 10 + (c - _D0)
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
                        for i in range(length):
                            if _lower(data[ts + i]) != form_bytes[fs + i]:
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
    while filled < n_docs:
        first_tok[filled] = tok
        filled += 1
    return n_out, n_rare


@njit(cache=True)
def _runs_into(keys, uniq, counts):
    """The distinct keys of sorted keys and their counts written into `uniq`, `counts` (room
    for every key); returns how many. One pass without a branch per key (about half of a
    chunk's window keys repeat one before them: a branch on it mispredicts). The key before
    and the running count are kept in registers: read back from `counts[m]`, each step
    waited on the store of the step before (docs/performance.md)."""
    n = keys.shape[0]
    if n == 0:
        return 0
    last = keys[0]
    count = np.int64(1)
    uniq[0] = last
    counts[0] = 1
    m = 0
    for i in range(1, n):
        key = keys[i]
        new = np.int64(key != last)
        last = key
        m += new
        count = count * (1 - new) + 1
        uniq[m] = key
        counts[m] = count
    return m + 1


def _sized_to_rows(room: int, fill, *runs) -> tuple[np.ndarray, np.ndarray]:
    """(keys, counts) that `fill(*runs, keys, counts)` writes into arrays with `room` rows and
    returns the rows of, shrunk in place to those rows (`resize`: malloc gives the tail back,
    nothing is copied). Why: returned as slices, the results kept whole blocks of
    ever-changing sizes alive in KeySums' stack, which fragmented malloc's heap, so a reused
    worker mapped fresh pages for its merges run after run (6-28 K page faults a 157 MB
    real-text file at W = 10 with W = 5 and W = 10 runs alternating; 13 shrunk)."""
    keys = np.empty(room, np.int64)
    counts = np.empty(room, np.int64)
    m = fill(*runs, keys, counts)
    keys.resize(m, refcheck=False)
    counts.resize(m, refcheck=False)
    return keys, counts


def runs(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct keys, counts) of sorted keys, each array exactly its rows (`_sized_to_rows`)."""
    return _sized_to_rows(keys.shape[0], _runs_into, keys)


@njit(cache=True)
def _merge_into(k1, c1, k2, c2, keys, counts):
    """Two runs of sorted distinct keys with counts merged into `keys`, `counts` (room for
    both runs), equal keys summed; returns the rows written. No branch on which key is
    smaller (it mispredicts about every other step): both runs' heads are compared, the
    smaller key written, and each run advances by its comparison."""
    n1 = k1.shape[0]
    n2 = k2.shape[0]
    i = 0
    j = 0
    m = 0
    while i < n1 and j < n2:
        a = k1[i]
        b = k2[j]
        take1 = np.int64(a <= b)
        take2 = np.int64(b <= a)
        keys[m] = min(a, b)
        counts[m] = c1[i] * take1 + c2[j] * take2
        i += take1
        j += take2
        m += 1
    while i < n1:
        keys[m] = k1[i]
        counts[m] = c1[i]
        i += 1
        m += 1
    while j < n2:
        keys[m] = k2[j]
        counts[m] = c2[j]
        j += 1
        m += 1
    return m


def merge_sums(k1: np.ndarray, c1: np.ndarray, k2: np.ndarray, c2: np.ndarray):
    """Two runs of sorted distinct keys with counts as one, equal keys summed: one linear
    pass (KeySums, exchange.sum_runs; numpy would sort the concatenation).

    The result is merged into arrays with room for both runs and shrunk to its rows
    (`_sized_to_rows`). Counting the rows first doubled the merge's CPU, and a per-process
    scratch copied out cost a fresh process the scratch's pages."""
    return _sized_to_rows(k1.shape[0] + k2.shape[0], _merge_into, k1, c1, k2, c2)


@njit(cache=True)
def _descents(keys):
    """How many keys are smaller than the one before (ascending runs - 1): what `_sort_keys`
    picks its sort by. A pass of its own over the keys `_window_keys` made."""
    d = 0
    for i in range(1, keys.shape[0]):
        d += keys[i] < keys[i - 1]
    return d


@njit(cache=True)
def _window_keys(doc, pos, rank, gid, window, bits, want_triples):
    """Packed codec keys of every position pair (and triple) within the window, terms in a
    key ordered as strings (by `rank`), each term's codec id in `bits` bits; and how many
    keys of each are smaller than the one made before (`_descents`, for `_sort_keys`).

    First, two pointers find end[i], one past the last term of i's document within i's
    window, so the keys are counted exactly (m later terms: m pairs, m(m - 1)/2 triples) and
    the loops run over known ranges: no test of document and distance per key, and arrays
    of the keys' size (the bound W - 1 and (W - 1)(W - 2)/2 per term left most of a chunk's
    arrays unused and out of cache). Each term is packed as its rank above its codec id, so
    min and max order a key's terms as strings and a mask gives the ids, with no lookup of
    them per key (15 % of this pass at W = 10). The loops run over slices (a term's later
    terms, the keys' place in the output): numba tests an index for a negative value on every
    load and store unless it can tell it is not, which it can for an index counted from 0 in
    a slice and not for one from i + 1 in the whole array. The descents are counted
    afterwards, by `_descents`: carried from key to key inside these loops, the count tied
    each store to the comparison before it (docs/performance.md)."""
    n = doc.shape[0]
    end = np.empty(n, np.int64)
    packed = np.empty(n, np.int64)
    e = 0
    n_pairs = 0
    n_triples = 0
    for i in range(n):
        packed[i] = (rank[i] << bits) | gid[rank[i]]
        e = max(e, i + 1)
        while e < n and doc[e] == doc[i] and pos[e] - pos[i] < window:
            e += 1
        end[i] = e
        later = e - i - 1
        n_pairs += later
        n_triples += later * (later - 1) // 2
    mask = (np.int64(1) << bits) - 1
    pairs = np.empty(n_pairs, np.int64)
    triples = np.empty(n_triples if want_triples else 0, np.int64)
    p = 0
    t = 0
    for i in range(n):
        a = packed[i]
        later = packed[i + 1:end[i]]      # slices: indices from 0, no test for a negative one
        m = later.shape[0]
        pair_out = pairs[p:p + m]
        p += m
        for q in range(m):
            b = later[q]
            lo = min(a, b)
            hi = max(a, b)
            pair_out[q] = ((lo & mask) << bits) | (hi & mask)
            if want_triples:
                third = later[q + 1:]
                triple_out = triples[t:t + third.shape[0]]
                t += third.shape[0]
                for r in range(third.shape[0]):
                    c = third[r]
                    x = min(lo, c)                 # lo <= hi: sorted without a branch
                    z = max(hi, c)
                    y = lo + hi + c - x - z
                    triple_out[r] = ((x & mask) << (2 * bits)) | ((y & mask) << bits) | (z & mask)
    return pairs, triples, _descents(pairs), _descents(triples)


LONG_RUNS = 16     # mean length of the ascending runs from which timsort beats quicksort


def _sort_keys(keys: np.ndarray, descents: int) -> None:
    """Sort a chunk's keys in place (np.unique would copy, mask and diff): with numpy's
    timsort where they were made in long ascending runs, else its quicksort. Real text's
    dense runs of numbers (tables, listings) make triples in long ascending runs, where
    timsort wins; on keys in no order (the generated corpus, most pairs) quicksort is many
    times faster. LONG_RUNS is where the two cross (measured: docs/performance.md)."""
    long_runs = keys.size >= LONG_RUNS * (descents + 1)
    keys.sort(kind="stable" if long_runs else "quicksort")


class CompiledFinder:
    """The compiled finder's tables for one set of rules (built once per worker process and
    rule set: count_lines leases it from task_reuse.FINDERS)."""

    def __init__(self, rules: TermRules) -> None:
        self.rules = rules
        self.codec = codec_for(rules)
        forms = rules.word_forms
        ascii_forms = sorted(f for f in forms if f.isascii())
        encoded = [f.encode() for f in ascii_forms]
        self.form_off = np.zeros(len(encoded) + 1, np.int64)
        self.form_off[1:] = np.cumsum([len(f) for f in encoded])
        self.form_bytes = np.frombuffer(b"".join(encoded) or b"\0", np.uint8).copy()
        self.form_code = self.codec.encode([forms[f] for f in ascii_forms])
        size = 1 << max(4, (2 * len(encoded)).bit_length())
        self.htab = np.full(size, -1, np.int64)
        for index in range(len(encoded)):           # hashed as the scan hashes a token
            slot = int(_hash_lower(self.form_bytes, self.form_off[index], self.form_off[index + 1])) & (size - 1)
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
        # classes of a possible term's first two bytes (`_prefix_classes`)
        self.prefix_class = self._prefix_classes(encoded, bool(rules.strip_chars))
        strip = bool(rules.strip_chars)       # stripping shortens: no length filter
        self._scan_rules = ScanRules(
            self.prefix_class, *((1 << 62, 0, 1 << 62) if strip else (rules.number_digits, self.min_len, self.max_len)),
            _LOWER_ASCII_CP, self.any_high_forms, _PUNCT, strip, rules.number_digits, self.bases,
            self.form_bytes, self.form_off, self.form_code, self.htab, self.htab.shape[0] - 1,
            self.min_len, self.max_len, self.initials, self.max_rare)
        self._found = np.empty((3, 0), np.int64)       # (doc, pos, code) of a chunk's terms
        self._rare = np.empty((0, 4), np.int64)
        self._block_cand = np.empty((2, BLOCK_BYTES // 2 + 16), np.int64)   # a start per 2 bytes at most
        self._present = np.zeros(self.codec.word_base + len(self.codec.words), np.bool_)
        self._rank = np.empty(self._present.shape[0], np.int64)
        self._word_order = self._word_orders()
        # `_string_order` of each code met so far (`_known`); untouched pages cost nothing
        self._known = np.zeros(self._present.shape[0], np.bool_)
        self._order = np.empty(self._present.shape[0], np.int64)
        # listed phrases: a pass after the scan (phrases_compiled.py)
        self._phrases = CompiledPhrases(rules, self.codec) if rules.phrases else None

    @staticmethod
    def _prefix_classes(forms: list[bytes], strip: bool) -> np.ndarray:
        """Classes of a token's first two bytes (index b1 << 8 | b0) for `_spaced_scan`: 1
        a digit first, 2 the start of a form (either case of each ASCII letter, as `_lower`
        folds), 4 punctuation first under strip-punct, 8 a non-ASCII byte among them (an
        ASCII character lower-cases to ASCII, so a token whose first two characters are
        ASCII and start no form in either case can't lower-case to a form)."""
        table = np.zeros((256, 256), np.uint8)
        table[DIGIT_BYTES, :] |= 1
        table[128:, :] |= 8
        table[:, 128:] |= 8
        if strip:
            table[_PUNCT, :] |= 4
        cases = lambda b: {b, ord(chr(b).upper()), ord(chr(b).lower())} & set(range(128))  # noqa: E731
        for f in forms:
            for b0 in cases(f[0]):
                if len(f) == 1:
                    table[b0, :] |= 2
                else:
                    for b1 in cases(f[1]):
                        table[b0, b1] |= 2
        return np.ascontiguousarray(table.T).reshape(-1)    # index b1 << 8 | b0: `load_u16`

    def _spaced(self, texts: list[str] | pa.Array | Utf8Batch) -> Utf8Batch:
        """The texts as the JSON reader's buffer (only 0x20 as whitespace, PAD spaces after)."""
        if isinstance(texts, Utf8Batch):
            return texts
        data, offsets = _texts_to_buffer(texts)
        out = np.empty(data.shape[0] + PAD, np.uint8)
        _spaced_copy(data, out)
        return Utf8Batch(out, offsets)

    def scan(self, texts: list[str] | pa.Array | Utf8Batch):
        """(doc, pos, codec id) of every term token, in order, and tokens per document."""
        data, offsets = self._spaced(texts)
        n_bytes = int(offsets[-1])
        need = n_bytes // 2 + 16                 # a token start needs a space before it
        if self._found.shape[1] < need:          # kept between chunks: fresh pages cost more
            self._found = np.empty((3, max(need, 2 * self._found.shape[1])), np.int64)
            self._rare = np.empty((self._found.shape[1], 4), np.int64)
        doc, pos, code = self._found
        first_tok = np.empty(offsets.shape[0], np.int64)
        n_out, n_rare = _spaced_scan(data, n_bytes, offsets, self._scan_rules,
                                     ScanOut(first_tok, self._block_cand[0], self._block_cand[1],
                                             doc, pos, code, self._rare))
        doc, pos, code = doc[:n_out].copy(), pos[:n_out].copy(), code[:n_out].copy()
        tokens = np.diff(first_tok)
        if n_rare:
            raw = data.tobytes()
            hits = [(d, p, term) for d, p, s, e in self._rare[:n_rare].tolist()
                    if (term := self.forms.get(raw[s:e].decode("utf-8").lower())) is not None]
            if hits:
                doc = np.concatenate((doc, np.array([h[0] for h in hits], np.int64)))
                pos = np.concatenate((pos, np.array([h[1] for h in hits], np.int64)))
                code = np.concatenate((code, self.codec.encode([h[2] for h in hits])))
                order = np.lexsort((pos, doc))
                doc, pos, code = doc[order], pos[order], code[order]
        if self._phrases is not None:
            doc, pos, code = self._phrases.apply(data, n_bytes, first_tok, doc, pos, code)
        return doc, pos, code, tokens

    def window_keys(self, occ: TermOccurrences, gid: np.ndarray):
        """(pair keys, counts), (triple keys, counts) in codec keys (freqgap.counting.codec),
        in one compiled pass: O(occurrences), not O(terms x W^2) array passes."""
        pairs, triples, pair_descents, triple_descents = _window_keys(
            occ.doc, occ.pos, occ.term_id, gid, self.rules.window, BITS, self.rules.max_order >= 3)
        _sort_keys(pairs, pair_descents)
        _sort_keys(triples, triple_descents)
        return runs(pairs), runs(triples)

    def __call__(self, texts) -> TermOccurrences:
        return self.find_terms(texts)

    def find_terms(self, texts: list[str] | pa.Array, names: bool = True) -> TermOccurrences:
        """The numpy finder's result: term ids index `terms`, sorted as strings (`terms` is
        left empty with names=False: the codes, `term_codes`, are all chunk_keys needs)."""
        doc, pos, code, tokens = self.scan(texts)
        # Distinct codes without a sort: codes are < 2^BITS (freqgap.counting.codec). The
        # tables are kept between chunks and only their used entries reset.
        present, rank = self._present, self._rank
        present[code] = True
        uniq = np.flatnonzero(present)
        present[uniq] = False
        uniq = uniq[np.argsort(self._string_order(uniq), kind="stable")]
        rank[uniq] = np.arange(uniq.shape[0])
        terms = self.codec.decode(uniq).to_pylist() if names else []
        return TermOccurrences(doc, pos, rank[code], terms, tokens, uniq)

    def _string_order(self, codes: np.ndarray) -> np.ndarray:
        """`_string_order_of` the codes, each computed once per finder and then looked up: a
        chunk's few thousand distinct terms are mostly those of the chunk before, and the
        digit-by-digit pass cost 0.5 ms a chunk (3 % of a real-text file's task code)."""
        new = codes[~self._known[codes]]
        if new.size:
            self._order[new] = self._string_order_of(new)
            self._known[new] = True
        return self._order[codes]

    def _string_order_of(self, codes: np.ndarray) -> np.ndarray:
        """Integers that order term codes as their terms order as strings, without making
        the strings. A number of digits d_0..d_(L-1) (L <= 6) is sum (d_i + 1) 11^(5-i) (a
        shorter prefix first, as in string order), shifted left 21 bits; a word is placed
        just after the greatest digit string below it, by its rank among the words."""
        out = np.empty(codes.shape[0], np.int64)
        numbers = codes < self.codec.word_base
        c = codes[numbers]
        length = np.searchsorted(self.bases, c, side="right") - 1
        value = c - self.bases[length]
        key = np.zeros(c.shape[0], np.int64)
        for i in range(self.rules.max_digits):
            digit = (value // 10 ** np.maximum(length - 1 - i, 0)) % 10
            key += np.where(i < length, digit + 1, 0) * 11 ** (MAX_DIGITS - 1 - i)
        out[numbers] = key << BITS
        out[~numbers] = self._word_order[codes[~numbers] - self.codec.word_base]
        return out

    def _word_orders(self) -> np.ndarray:
        """`_string_order_of` each vocabulary word (codec order: sorted words)."""
        out = np.empty(len(self.codec.words), np.int64)
        for index, word in enumerate(self.codec.words):
            below = ""                    # the greatest digit string (<= max_digits) below word
            for i, ch in enumerate(word[:self.rules.max_digits]):
                if "0" <= ch <= "9":
                    below += ch
                    continue
                if ch > "9":
                    below += "9" * (self.rules.max_digits - i)
                break
            key = -1
            if below:
                key = sum((int(d) + 1) * 11 ** (MAX_DIGITS - 1 - i) for i, d in enumerate(below))
            out[index] = (key << BITS) + 1 + index
        return out
