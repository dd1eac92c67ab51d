"""Listed phrases in the numba engine: the leftmost-longest phrase pass over a batch's
tokens, in compiled passes (the rules and tables: phrases.py).

Why compiled: a list of 100,000 phrases built from a text's own word n-grams makes most
tokens components, so the numpy pass's per-length gathers and sorted searches would cost
more than the whole single-token scan. Why by hashes of tokens, not component ids: most
tokens start no phrase, so looking every token up in a table of components would be work
spent on tokens no phrase goes through. The passes, each a loop the processor can keep
busy (few branches it cannot predict, cache misses that overlap):
1. `_token_hashes`: each token's bounds and a hash of its lower-cased bytes, the hash a
   component of the same bytes has; tokens whose lower case needs Python are set aside
   (their hash: their component's, found by Python's str.lower()).
2. `_candidates`: the tokens whose hash and the next one's, two's or three's pass the bit
   filters of listed two-, three- and four-token phrases (and longer ones' first four):
   few do, and nearly all of those start a phrase.
3. `_longest_at`: from each candidate, the longest listed phrase by walking a cuckoo
   table of token-hash sequences (phrases and their prefixes), then the phrase's tokens'
   bytes compared with its components' (a hash alone could err, never a count).
4. `_leftmost_longest`: the phrases found merged with the single-token terms.
Only runs when the rules list phrases: the default scan is untouched.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from freqgap.config import ConfigError
from freqgap.counting.engines.phrases import HASH_MULTIPLIER, PhraseTable, next_draw, phrase_table, sequence_hashes
from freqgap.counting.engines.words import (HIGH, LOW7, ONES, char_at as _char_at, count_bits, load_u64,
                                            lower as _lower, space_mask32)
from freqgap.counting.rule_tables import PUNCT_BYTES
from freqgap.counting.rules import MAX_TERM_TOKENS, TermRules

_PUNCT = PUNCT_BYTES
_PHRASE, _PREFIX = 1, 2            # what an entry of the sequence table is (bits)
# A slot of the sequence table, one 64-bit word: the sequence's length (7 bits: at most
# rules.MAX_TERM_TOKENS), a bucket's spill mark (bit 7 of its first slot), its kind (2 bits), its
# phrase's record + 1 (`_RECORD_BITS`) and a tag, the top bits of its mixed hash; an empty
# slot is 0 but for the mark. A bucket is `_SLOTS` slots, one cache line.
_SLOTS = 8
_SPILL = np.uint64(0x80)
_RECORD_BITS = 27
_TAG_SHIFT = np.uint64(10 + _RECORD_BITS)
_KEY_MASK = np.uint64(((1 << 64) - 1) >> (10 + _RECORD_BITS) << (10 + _RECORD_BITS) | 0x7F)
_RECORD_MASK = np.uint64((1 << _RECORD_BITS) - 1)
if MAX_TERM_TOKENS > 0x7F:
    raise ImportError(f"rules.MAX_TERM_TOKENS = {MAX_TERM_TOKENS}: the phrase table's slots hold lengths "
                      "of up to 127 tokens")
FILTER_BITS = 20                    # a bit filter's size: 2^20 bits, 128 KB, in L2
_BLOCK = 64                         # candidates whose sequence-table slots are read ahead
_LOW32 = np.uint64(0xFFFFFFFF)
_NOT_RARE, _NO_COMPONENT = -1, -2   # `rare_cid` of a token not set aside; of one no component
# the mask of a packed uint64's first n bytes, n = 0..8
_FIRST_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(9)], np.uint64)
_GE_A = np.uint64(0x80 - 0x41) * ONES     # + a byte's low 7 bits: high bit set from 'A' up
_GT_Z = np.uint64(0x80 - 0x5B) * ONES     # ... from the byte after 'Z' up


@njit(cache=True, inline="always")
def _filter_bits(h):
    """(word, mask) of a token-hash sequence's hash in a bit filter: one 64-bit word and
    three bits of it (a Bloom filter whose bits share one word: one load a test, and far
    fewer false candidates than one bit would give). The hash's own upper bits serve: a
    sequence hash is a product of mixed token hashes, whose upper bits depend on all of
    theirs."""
    x = h
    one = np.uint64(1)
    mask = (one << ((x >> np.uint64(30)) & np.uint64(63))) | (one << ((x >> np.uint64(36)) & np.uint64(63))) \
        | (one << ((x >> np.uint64(42)) & np.uint64(63)))
    return np.int64(x >> np.uint64(64 - (FILTER_BITS - 6))), mask


@njit(cache=True, inline="always")
def _lower8(w):
    """The ASCII upper-case letters of 8 packed bytes lower-cased (no carry crosses bytes;
    bytes >= 0x80 stay as they are)."""
    low = w & LOW7
    upper = (low + _GE_A) & ~(low + _GT_Z) & ~w & HIGH
    return w | (upper >> np.uint64(2))


@njit(cache=True, inline="always")
def _mix(x):
    """A 64-bit mix: every input bit reaches the top bits (the tag) and the low ones (the slot)."""
    x = x * np.uint64(0x9E3779B97F4A7C15)
    x ^= x >> np.uint64(29)
    return x * np.uint64(0xBF58476D1CE4E5B9)


@njit(cache=True, inline="always")
def _seq_key(h, length, mask):
    """(home bucket, key) of (sequence hash, length) in the sequence table: the key is a
    slot's length and tag bits. The hash is mixed first (a sequence hash's low bits depend
    only on its tokens' low bits)."""
    x = _mix(h ^ np.uint64(length))
    return np.int64(x & np.uint64(mask)), (x >> _TAG_SHIFT << _TAG_SHIFT) | np.uint64(length)


@njit(cache=True, inline="always")
def _first16(data, s, n):
    """The first 8 and the next 8 of the n bytes of data from s, packed, zero beyond n
    (data must hold 15 bytes more than s + n: whole words are read)."""
    r0 = load_u64(data, s) & _FIRST_BYTES[min(max(n, 0), 8)]
    r1 = load_u64(data, s + 8) & _FIRST_BYTES[min(max(n - 8, 0), 8)]
    return r0, r1


@njit(cache=True, inline="always")
def _token_key(data, s, e, seed):
    """(hash, non-ASCII) of data[s:e]: the hash of its bytes with ASCII letters
    lower-cased (a component's hash is that of its own bytes) and whether any byte is >= 0x80, from
    the same loads. Reads whole 8-byte words: data must hold 15 bytes more than e. Tokens
    of up to 16 bytes (nearly all) take no branch."""
    n = max(e - s, 0)
    r0, r1 = _first16(data, s, n)
    high = (r0 | r1) & HIGH
    h = (_lower8(r0) * np.uint64(0x9E3779B97F4A7C15)) ^ (_lower8(r1) * np.uint64(0xC2B2AE3D27D4EB4F)) \
        ^ (np.uint64(n) * np.uint64(0x165667B19E3779F9)) ^ seed
    h ^= h >> np.uint64(32)
    h *= np.uint64(0xBF58476D1CE4E5B9)           # three multiplies, two of them side by side
    k = s + 16
    while k < e:
        r = load_u64(data, k) & _FIRST_BYTES[min(e - k, 8)]
        high |= r & HIGH
        h = _mix(h ^ _lower8(r))
        k += 8
    return h, high != 0


@njit(cache=True, inline="always")
def token_hash(data, s, e, seed):
    """`_token_key`'s hash alone."""
    return _token_key(data, s, e, seed)[0]


_SPARE = 8                          # slots after the last token's in t_start, t_end (`_token_bounds`)


@njit(cache=True)
def _token_hashes(data, n_bytes, strip, seed, changes, t_start, t_end, th, rare):
    """The tokens of the spaced buffer and their hashes; returns (how many tokens, how many
    rare), -1 tokens where there are more than the arrays hold. t_start, t_end: each
    token's bounds (`_token_bounds`). th[t]: `token_hash` of token t (strip-punct's
    characters stripped, when on), equal to a component's hash where its lower case is the
    component. A token holding a character that str.lower() changes and that is not ASCII
    (`changes`, by code point; any beyond it) is listed in `rare` as (token, start, end)
    for Python's str.lower(); every other token's lower case is its bytes with ASCII
    letters lowered, the bytes `_token_key` hashes."""
    n_tok = _token_bounds(data, n_bytes, t_start, t_end)
    if n_tok < 0:
        return -1, 0
    n_changes = changes.shape[0]
    n_rare = 0
    for t in range(n_tok):
        ts = t_start[t]
        te = t_end[t]
        if strip:
            ts, te = _stripped(data, ts, te)
        h, high = _token_key(data, ts, te, seed)
        th[t] = h
        if high and _python_lowers(data, ts, te, changes, n_changes):
            rare[n_rare, 0] = t
            rare[n_rare, 1] = ts
            rare[n_rare, 2] = te
            n_rare += 1
    return n_tok, n_rare


@njit(cache=True)
def _token_bounds(data, n_bytes, t_start, t_end):
    """(start, end) of every token of the spaced buffer (only 0x20 separates; PAD spaces
    follow), from 32-byte space masks: a start is a non-space after a space, an end a
    space after a non-space. Returns how many; -1 where there are more than the arrays
    hold less their `_SPARE` slots. A block's first eight starts and ends are written
    whether it holds them or not (into the slots after the last, overwritten next): no
    branch depends on how many tokens a block holds, only a block of more than eight."""
    carry = np.uint64(1)                # the byte before the buffer counts as a space
    n_start = 0
    n_end = 0
    room = t_start.shape[0] - _SPARE
    stop = np.uint64(1) << np.uint64(32)      # trailing_zeros of an emptied mask: 32
    for base in range(0, n_bytes + 1, 32):     # the last token's end: byte n_bytes at most
        space = space_mask32(data, base)
        before = ((space << np.uint64(1)) | carry) & _LOW32
        carry = space >> np.uint64(31)
        starts = ~space & before & _LOW32
        ends = space & ~before & _LOW32
        n_s = count_bits(starts)
        n_e = count_bits(ends)
        if n_start + n_s > room or n_end + n_e > room:
            return -1
        for r in range(_SPARE):
            t_start[n_start + r] = base + trailing_zeros(starts | stop)
            starts &= starts - np.uint64(1)
            t_end[n_end + r] = base + trailing_zeros(ends | stop)
            ends &= ends - np.uint64(1)
        k = n_start + _SPARE
        while starts:
            t_start[k] = base + trailing_zeros(starts)
            starts &= starts - np.uint64(1)
            k += 1
        k = n_end + _SPARE
        while ends:
            t_end[k] = base + trailing_zeros(ends)
            ends &= ends - np.uint64(1)
            k += 1
        n_start += n_s
        n_end += n_e
    return n_start if n_start == n_end else -1


@njit(cache=True, inline="always")
def _python_lowers(data, ts, te, changes, n_changes):
    """Whether data[ts:te] holds a non-ASCII character that str.lower() changes (or one
    beyond `changes`): its lower case is then Python's to make."""
    k = ts
    while k < te:
        if data[k] < 128:
            k += 1
            continue
        cp, width = _char_at(data, k)
        if cp >= n_changes or changes[cp]:
            return True
        k += width
    return False


@njit(cache=True, inline="always")
def _stripped(data, ts, te):
    """A token's bounds with strip-punct's leading and trailing characters stripped."""
    while ts < te and _PUNCT[data[ts]]:
        ts += 1
    while te > ts and _PUNCT[data[te - 1]]:
        te -= 1
    return ts, te


@njit(cache=True)
def _same_bytes(data, ts, te, comp_bytes, fs, fe):
    """Whether data[ts:te], ASCII letters lower-cased, equal comp_bytes[fs:fe]."""
    if fe - fs != te - ts:
        return False
    for k in range(te - ts):
        if _lower(data[ts + k]) != comp_bytes[fs + k]:
            return False
    return True


@njit(cache=True)
def _is_phrase(p, i, n, p_rec, data, t_start, t_end, strip, comp_w, comp_bytes, comp_off, rare_cid):
    """Whether tokens i .. i + n - 1 are the components of the phrase whose record is at
    p_rec[p] (its code, then its ids): each token's bytes, ASCII letters lower-cased,
    against one row of `comp_w` (the component's first 16 bytes and its length) without a
    branch, a token of more than 16 bytes byte by byte (`_same_bytes`); a token set aside
    for Python (`rare_cid`) by the component Python's str.lower() made of it. A called
    function, not inlined: inlined into the walk's loop it made every walk slower."""
    good = True
    for q in range(n):
        t = i + q
        f = p_rec[p + 1 + q]
        ts, te = t_start[t], t_end[t]
        if strip:
            ts, te = _stripped(data, ts, te)
        k = te - ts
        r0, r1 = _first16(data, ts, k)
        same = (_lower8(r0) == comp_w[f, 0]) & (_lower8(r1) == comp_w[f, 1]) & (np.uint64(k) == comp_w[f, 2])
        if k > 16:
            same = _same_bytes(data, ts, te, comp_bytes, comp_off[f], comp_off[f + 1])
        if rare_cid[t] != _NOT_RARE:
            same = rare_cid[t] == f
        good &= same
    return good


@njit(cache=True)
def component_words(comp_bytes, comp_off):
    """`_verify`'s rows: each component's first 8 bytes, next 8 (packed, zero
    beyond its end) and its length; 32 bytes, half a cache line (comp_bytes ends in 16
    spare bytes)."""
    n = comp_off.shape[0] - 1
    words = np.zeros((n, 4), np.uint64)
    for f in range(n):
        n = comp_off[f + 1] - comp_off[f]
        words[f, 0], words[f, 1] = _first16(comp_bytes, comp_off[f], n)
        words[f, 2] = n
    return words


@njit(cache=True, inline="always")
def _has_bit(filters, k, h):
    """Whether filter k holds sequence hash h (`_filter_bits`), as 0 or 1 (1 may err)."""
    word, mask = _filter_bits(h)
    return np.int64((filters[k, word] & mask) == mask)


@njit(cache=True, inline="always")
def _is_candidate(th, i, end, m, filters):
    """Whether token i may start a listed phrase, as 0 or 1: the hashes of it and the next
    one (before the document's end) pass the filter of two-token phrases, or of it and the
    next two that of three-token phrases, or of it and the next three that of four-token
    phrases and the first four tokens of longer ones (`filters`, in that order). Few
    tokens of text do, and a walk from one costs as much as many of these tests: a filter
    of the first three tokens of longer phrases let through many times the tokens that
    start one. No branch on the filters: a mispredicted branch per token cost more than
    the loads."""
    one = np.uint64(1)
    last = th.shape[0] - 1
    h2 = (th[i] + one) * m + th[i + 1] + one
    h3 = h2 * m + th[min(i + 2, last)] + one
    h4 = h3 * m + th[min(i + 3, last)] + one
    return (np.int64(i + 1 < end) & _has_bit(filters, 0, h2)) | (np.int64(i + 2 < end) & _has_bit(filters, 1, h3)) \
        | (np.int64(i + 3 < end) & _has_bit(filters, 2, h4))


@njit(cache=True)
def _candidates(th, first_tok, multiplier, filters, cand):
    """The tokens at which `_is_candidate` holds, in order; returns how many."""
    m = np.uint64(multiplier)
    n = 0
    d = 0
    for i in range(th.shape[0] - 1):
        while first_tok[d + 1] <= i:
            d += 1
        cand[n] = i
        n += _is_candidate(th, i, first_tok[d + 1], m, filters)
    return n


@njit(cache=True, inline="always")
def _seq_info(table, h, length, mask):
    """The sequence table's slot of (hash h, length), 0 if absent: the slots of its home
    bucket, compared without a branch, and of the buckets after it only while a bucket's
    spill mark is set (an entry found it full: `_insert_sequences`), which few are:
    nearly every lookup reads one cache line and takes no branch it cannot predict."""
    b, key = _seq_key(h, length, mask)
    while True:
        info = np.uint64(0)
        for k in range(_SLOTS):
            e = table[b, k]
            info = e if (e & _KEY_MASK) == key else info
        if info != 0 or not (table[b, 0] & _SPILL):
            return info
        b = (b + 1) & mask


@njit(cache=True)
def _longest_at(th, cand, n_cand, first_tok, multiplier, longest, table, p_rec, best, best_code,
                data, t_start, t_end, strip, comp_w, comp_bytes, comp_off, rare_cid):
    """best[c], best_code[c]: the longest listed phrase starting at candidate cand[c] (0,
    -1: none), a block of candidates at a time: walked by hashes, then its tokens' bytes
    compared with its components' (`_is_phrase`); where they differ (another sequence of
    the same hash) the candidate is walked again comparing at each phrase met. Each
    candidate's walk is independent of the others': the sequence table's slots of a block
    (their first two, three and four tokens) are read first, with no branch on what they
    hold, and so are the records of the phrases found, so that their cache misses overlap
    instead of waiting one by one."""
    mask = table.shape[0] - 1
    m = np.uint64(multiplier)
    last = th.shape[0] - 1
    one = np.uint64(1)
    touched = np.uint64(0)
    d0 = 0
    for b0 in range(0, n_cand, _BLOCK):
        b1 = min(b0 + _BLOCK, n_cand)
        for c in range(b0, b1):
            i = cand[c]
            h = th[i] + one
            for length in range(2, 5):
                h = h * m + th[min(i + length - 1, last)] + one
                touched ^= table[_seq_key(h, length, mask)[0], 0]
        d = d0
        for c in range(b0, b1):
            i = cand[c]
            while first_tok[d + 1] <= i:
                d += 1
            best[c], best_code[c] = _walk(th, i, first_tok[d + 1], m, longest, table, mask, p_rec,
                                          data, t_start, t_end, strip, comp_w, comp_bytes, comp_off, rare_cid, False)
        for c in range(b0, b1):         # the records of the phrases found: their lines first
            touched ^= np.uint64(p_rec[max(best_code[c], 0)])
        d = d0
        for c in range(b0, b1):
            i = cand[c]
            while first_tok[d + 1] <= i:
                d += 1
            p = best_code[c]
            if best[c] and not _is_phrase(p, i, best[c], p_rec, data, t_start, t_end, strip, comp_w, comp_bytes,
                                          comp_off, rare_cid):
                best[c], p = _walk(th, i, first_tok[d + 1], m, longest, table, mask, p_rec,
                                   data, t_start, t_end, strip, comp_w, comp_bytes, comp_off, rare_cid, True)
            best_code[c] = p_rec[p] if best[c] else -1
        d0 = d
    return touched


@njit(cache=True, inline="always")
def _walk(th, i, end, m, longest, table, mask, p_rec, data, t_start, t_end, strip, comp_w, comp_bytes, comp_off,
          rare_cid, checked):
    """(length, record) of the longest listed phrase whose token hashes start at token i
    and end before `end` (0, -1: none), its tokens compared with its components
    (`_is_phrase`) at each phrase met where `checked`; else of the longest whose hash
    matches, for the caller to compare (the records of a block's phrases are read
    together, not one miss per step)."""
    one = np.uint64(1)
    h = th[i] + one
    length = 1
    k = i + 1
    found = 0
    record = -1
    while k < end and length < longest:
        h = h * m + th[k] + one
        length += 1
        info = _seq_info(table, h, length, mask)
        kind = (info >> np.uint64(8)) & np.uint64(3)
        if kind & np.uint64(_PHRASE):
            p = np.int64((info >> np.uint64(10)) & _RECORD_MASK) - 1    # its record in p_rec: code, ids
            if not checked or _is_phrase(p, i, length, p_rec, data, t_start, t_end, strip, comp_w, comp_bytes,
                                         comp_off, rare_cid):
                found = length
                record = p
        if not (kind & np.uint64(_PREFIX)):
            break
        k += 1
    return found, record


@njit(cache=True)
def _leftmost_longest(cand, n_cand, best, best_code, first_tok, s_doc, s_pos, s_code, o_doc, o_pos, o_code):
    """The terms of the batch in order: at each position not inside a taken phrase, the
    longest listed phrase starting there (`best`), else its single-token term (s_*: the
    single-token finder's (doc, pos, code), in order). Writes o_*; returns how many."""
    n_docs = first_tok.shape[0] - 1
    j = 0
    n_out = 0
    covered = 0                      # the first token after the last taken phrase
    d = 0
    for c in range(n_cand):
        if best[c] == 0:
            continue
        i = cand[c]
        if i < covered:
            continue
        j, n_out = _singles_before(i, covered, j, n_out, first_tok, s_doc, s_pos, s_code, o_doc, o_pos, o_code)
        while d < n_docs and first_tok[d + 1] <= i:
            d += 1
        o_doc[n_out] = d
        o_pos[n_out] = i - first_tok[d]
        o_code[n_out] = best_code[c]
        n_out += 1
        covered = i + best[c]
    return _singles_before(first_tok[-1], covered, j, n_out, first_tok, s_doc, s_pos, s_code, o_doc, o_pos, o_code)[1]


@njit(cache=True)
def _singles_before(limit, covered, j, n_out, first_tok, s_doc, s_pos, s_code, o_doc, o_pos, o_code):
    """The single-token terms from the j-th on that start before token `limit`, copied to
    o_* from n_out on unless inside a taken phrase (before `covered`); returns (j, n_out)
    after them."""
    while j < s_doc.shape[0] and first_tok[s_doc[j]] + s_pos[j] < limit:
        if first_tok[s_doc[j]] + s_pos[j] >= covered:
            o_doc[n_out] = s_doc[j]
            o_pos[n_out] = s_pos[j]
            o_code[n_out] = s_code[j]
            n_out += 1
        j += 1
    return j, n_out


@njit(cache=True)
def _component_hashes(comp_bytes, comp_off, seed):
    """`token_hash` of every component (comp_bytes ends in 16 spare bytes: whole words)."""
    out = np.empty(comp_off.shape[0] - 1, np.uint64)
    for f in range(out.shape[0]):
        out[f] = token_hash(comp_bytes, comp_off[f], comp_off[f + 1], seed)
    return out


@lru_cache(maxsize=1)
def lower_changes() -> np.ndarray:
    """For each code point of the Basic Multilingual Plane, whether str.lower() changes it
    (or it is a surrogate, never in valid UTF-8); code points beyond go through Python."""
    return np.array([0xD800 <= c < 0xE000 or chr(c).lower() != chr(c) for c in range(0x10000)], np.bool_)


class CompiledPhrases:
    """The compiled passes' tables of one rule set (built once per process and rules)."""

    multiplier = HASH_MULTIPLIER          # of the token-hash sequences (`sequence_hashes`)

    def __init__(self, rules: TermRules, codec) -> None:
        table: PhraseTable = phrase_table(rules)
        self.table = table
        self.strip = bool(rules.strip_chars)
        # every component by its id; tokens that str.lower() may change go through Python
        comps = sorted((i, c.encode()) for c, i in table.components.items())
        self.comp_off = np.zeros(len(comps) + 1, np.int64)
        self.comp_off[1:] = np.cumsum([len(c) for _, c in comps])
        self.comp_bytes = np.concatenate((np.frombuffer(b"".join(c for _, c in comps) or b"\0", np.uint8),
                                          np.zeros(16, np.uint8)))         # 16 spare: whole words
        self.comp_w = component_words(self.comp_bytes, self.comp_off)
        self.changes = lower_changes()
        self._scratch = np.empty(0, np.int64)
        self._rare_cid = np.zeros(0, np.int64)
        self._sequences(table, codec)

    def _sequence_hashes(self, table: PhraseTable, seed: np.uint64) -> tuple[np.ndarray, dict, dict]:
        """(the components' hashes, {length: the phrases' token-hash sequence hashes, in
        `table.rows` order}, {length: the hashes of the first `length` tokens of every
        longer phrase}) under token-hash seed `seed`."""
        comp_hash = _component_hashes(self.comp_bytes, self.comp_off, seed)
        rows = {n: comp_hash[table.rows[n]] for n in table.lengths}
        hashes = {n: sequence_hashes(r, self.multiplier) for n, r in rows.items()}
        prefixes: dict[int, list[np.ndarray]] = {}
        for n, r in rows.items():
            for prefix in range(2, n):
                prefixes.setdefault(prefix, []).append(sequence_hashes(r[:, :prefix], self.multiplier))
        return comp_hash, hashes, {n: np.unique(np.concatenate(v)) for n, v in prefixes.items()}

    def _sequences(self, table: PhraseTable, codec) -> None:
        """The table of (hash, length) -> phrase and/or prefix of a longer phrase, under a
        token-hash seed with which no two phrases share a slot's key."""
        lengths = [length for length in table.lengths for _ in table.names[length]]
        # each phrase's record, one place for the walk's one read: its code, then its ids
        rec_off = np.zeros(len(lengths), np.int64)
        rec_off[1:] = np.cumsum(np.array(lengths[:-1], np.int64) + 1)
        self.p_rec = np.zeros(len(lengths) + sum(lengths) + 1, np.int64)
        if self.p_rec.shape[0] >= 1 << _RECORD_BITS:
            raise ConfigError(f"{len(lengths):,} listed phrases of {sum(lengths):,} words in all: the numba "
                              f"engine holds phrases of up to {(1 << _RECORD_BITS) - len(lengths) - 2:,} words "
                              "in all; split the term list into runs or use FREQGAP_ENGINE=numpy")
        is_id = np.ones(self.p_rec.shape[0] - 1, np.bool_)
        is_id[rec_off] = False
        self.p_rec[:-1][is_id] = np.concatenate([table.rows[n].ravel() for n in table.lengths] or [np.zeros(0, np.int64)])
        self.p_rec[rec_off] = codec.encode([name for n in table.lengths for name in table.names[n]])
        seed = 0
        while True:
            self.seed = np.uint64(seed)
            self.comp_hash, hashes, prefixes = self._sequence_hashes(table, self.seed)
            # entries: every phrase (kind _PHRASE, its record) and every prefix (kind _PREFIX)
            e_len = np.concatenate([np.full(hashes[n].shape[0], n, np.int64) for n in table.lengths]
                                   + [np.full(h.shape[0], n, np.int64) for n, h in prefixes.items()])
            e_hash = np.concatenate([hashes[n] for n in table.lengths] + list(prefixes.values()))
            e_info = np.full(e_len.shape[0], _PREFIX << 8, np.uint64)
            e_info[:len(lengths)] = (_PHRASE << 8) | ((rec_off.astype(np.uint64) + 1) << 10)
            self.table_slots = _empty_buckets(1 << max(1, (2 * e_len.shape[0] // _SLOTS).bit_length()))
            if _insert_sequences(e_hash, e_len, e_info, self.table_slots):   # (at most half full)
                break
            seed = next_draw(seed)
        # the candidates' filters: two-, three-, four-token phrases and longer ones' first four
        self.filters = np.zeros((3, 1 << (FILTER_BITS - 6)), np.uint64)
        for k, held in enumerate(([hashes.get(2)], [hashes.get(3)], [hashes.get(4), prefixes.get(4)])):
            _fill_filter(np.concatenate([np.zeros(0, np.uint64)] + [h for h in held if h is not None]),
                         self.filters[k])

    def apply(self, data: np.ndarray, n_bytes: int, first_tok: np.ndarray, doc, pos, code):
        """(doc, pos, code) of the batch's terms with the listed phrases taken in place of
        the single-token terms (doc, pos, code: the single-token finder's, in order)."""
        n_tok = int(first_tok[-1])
        room = doc.shape[0] + n_tok // 2 + 1
        need = 7 * n_tok + 1 + 3 * room + 2 * (n_tok + _SPARE)
        if self._scratch.shape[0] < need:    # kept between chunks: fresh pages cost more
            self._scratch = np.empty(2 * need, np.int64)
        th = self._scratch[:n_tok].view(np.uint64)
        rare = self._scratch[n_tok:4 * n_tok].reshape(n_tok, 3)
        cand = self._scratch[4 * n_tok:5 * n_tok + 1]
        best = self._scratch[5 * n_tok + 1:6 * n_tok + 1]
        best_code = self._scratch[6 * n_tok + 1:7 * n_tok + 1]
        out = self._scratch[7 * n_tok + 1:7 * n_tok + 1 + 3 * room].reshape(3, room)
        bounds = self._scratch[7 * n_tok + 1 + 3 * room:need].reshape(2, n_tok + _SPARE)
        t_start, t_end = bounds[0], bounds[1]
        found, n_rare = _token_hashes(data, n_bytes, self.strip, self.seed, self.changes, t_start, t_end, th, rare)
        if found != n_tok:
            raise AssertionError("the phrase pass and the finder disagree on the tokens")
        if self._rare_cid.shape[0] < n_tok:
            self._rare_cid = np.full(2 * n_tok, _NOT_RARE, np.int64)
        rare_tokens = rare[:n_rare, 0].copy()
        try:
            if n_rare:           # (reset below: no pass over all tokens)
                components = self.table.components
                for t, s, e in rare[:n_rare].tolist():
                    f = components.get(data[s:e].tobytes().decode("utf-8").lower(), _NO_COMPONENT)
                    self._rare_cid[t] = f
                    th[t] = self.comp_hash[f] if f >= 0 else 0
            n_cand = _candidates(th, first_tok, self.multiplier, self.filters, cand)
            _longest_at(th, cand, n_cand, first_tok, self.multiplier, self.table.longest,
                        self.table_slots, self.p_rec, best, best_code,
                        data, t_start, t_end, self.strip, self.comp_w, self.comp_bytes, self.comp_off, self._rare_cid)
        finally:
            self._rare_cid[rare_tokens] = _NOT_RARE
        n = _leftmost_longest(cand, n_cand, best, best_code, first_tok, doc, pos, code,
                              out[0], out[1], out[2])
        return out[0, :n].copy(), out[1, :n].copy(), out[2, :n].copy()


def _empty_buckets(n: int) -> np.ndarray:
    """n empty buckets of the sequence table, each aligned to a cache line."""
    raw = np.zeros((n + 1) * _SLOTS, np.uint64)
    skip = (-raw.ctypes.data % 64) // 8
    return raw[skip:skip + n * _SLOTS].reshape(n, _SLOTS)


@njit(cache=True)
def _insert_sequences(e_hash, e_len, e_info, table):
    """The entries (their kind and record: e_info) into the sequence table: each into the
    first free slot of its home bucket or, where that is full, of the buckets after it,
    marking each full bucket passed (`_seq_info` reads on while a bucket is marked). An
    entry whose key is met again (a prefix that is also a phrase) gains the kind and the
    record of the other. False where two phrases meet under one key (the caller takes
    another seed)."""
    mask = table.shape[0] - 1
    for i in range(e_hash.shape[0]):
        b, key = _seq_key(e_hash[i], e_len[i], mask)
        entry = key | e_info[i]
        at = b
        met = False
        while not met:
            for k in range(_SLOTS):
                e = table[at, k]
                if (e & _KEY_MASK) == key and not met:
                    if ((e >> np.uint64(10)) & _RECORD_MASK) and ((entry >> np.uint64(10)) & _RECORD_MASK):
                        return False
                    table[at, k] = e | entry
                    met = True
            if not (table[at, 0] & _SPILL):
                break
            at = (at + 1) & mask
        at = b
        while not met:
            for k in range(_SLOTS):
                if (table[at, k] & ~_SPILL) == 0 and not met:
                    table[at, k] |= entry
                    met = True
            if not met:
                table[at, 0] |= _SPILL
                at = (at + 1) & mask
    return True


@njit(cache=True)
def _fill_filter(hashes, bits):
    """A filter's bits (`_filter_bits`) of the token-hash sequences given."""
    for i in range(hashes.shape[0]):
        word, mask = _filter_bits(hashes[i])
        bits[word] |= mask
