"""Compiled JSON Lines reader for the common record: one validating pass that writes each
record's text straight into the term finder's UTF-8 buffer (numba).

Why: with the compiled finder, Arrow's JSON reader (plus its UTF-8 check and the copy into
the finder's buffer) became half of the task code. This pass parses each record by the
JSON grammar (RFC 8259: objects, arrays, strings with their escapes, numbers, literals),
checks UTF-8 as Python's decoder does, and takes the top-level text field and
`meta.pile_set_name` (its escapes decoded by Python's json). It never decides what is an error: anything outside the plain case
(a missing or non-string text, duplicate text or meta keys, \\u surrogates, NaN, control
characters, invalid UTF-8, nesting deeper than 512) sends the whole chunk to the Python path
(`freqgap.counting.records`), which names the bad record, as the Arrow path did.
"""

from __future__ import annotations

import json
from typing import NamedTuple

import numpy as np
from numba import njit

from freqgap.counting.rule_tables import WHITESPACE_BYTES, WHITESPACE_CODEPOINTS
from freqgap.counting.engines.words import (FNV_OFFSET, HIGH, LOW7, copy32, equal_bytes, fnv1a_step, json_special_mask32,
                                   load_u64, store_u64, trailing_zeros)

MAX_DEPTH = 512
PAD = 40        # spaces after a Utf8Batch's texts (32-byte loads from its last byte, and 2 more)


class Utf8Batch(NamedTuple):
    """Texts as the compiled finder's buffer: UTF-8 bytes, each text followed by one space,
    every whitespace character written as spaces of its UTF-8 length (tokens split the
    same), so byte 0x20 is its only whitespace; PAD more spaces after the last text (passes
    that read 32 bytes at a time may read past it). Text i is data[offsets[i]:offsets[i + 1]]."""

    data: np.ndarray
    offsets: np.ndarray

    def __len__(self) -> int:
        return self.offsets.shape[0] - 1

    def take(self, index: np.ndarray) -> "Utf8Batch":
        """Texts `index` (in that order) as a batch of their own (counts by subset)."""
        index = np.asarray(index, np.int64)
        lengths = self.offsets[index + 1] - self.offsets[index]
        offsets = np.zeros(index.shape[0] + 1, self.offsets.dtype)
        np.cumsum(lengths, out=offsets[1:])
        data = np.full(int(offsets[-1]) + PAD, 32, np.uint8)
        _gather(self.data, self.offsets, index, data)
        return Utf8Batch(data, offsets)


@njit(cache=True)
def _gather(data, offsets, index, out):
    """The texts `index` of a batch's data, one after the other, into out."""
    o = 0
    for k in range(index.shape[0]):
        s = offsets[index[k]]
        e = offsets[index[k] + 1]
        out[o:o + e - s] = data[s:e]
        o += e - s


@njit(cache=True, inline="always")
def _ws(buf, p, end):
    """Skip JSON whitespace but the newline: records are lines, a newline ends one (a raw
    newline inside a record would split it into two bad lines)."""
    while p < end and (buf[p] == 32 or buf[p] == 9 or buf[p] == 13):
        p += 1
    return p


@njit(cache=True)
def _hex4(buf, p):
    v = 0
    for k in range(4):
        c = buf[p + k]
        if 48 <= c <= 57:
            d = c - 48
        elif 97 <= c <= 102:
            d = c - 87
        elif 65 <= c <= 70:
            d = c - 55
        else:
            return -1
        v = v * 16 + d
    return v


_WS_CP = WHITESPACE_CODEPOINTS      # Python's non-ASCII whitespace, by code point
# 1 for a byte that a JSON string holds as itself: ASCII from 0x20 except '"' and '\\'.
_PLAIN = np.zeros(256, np.uint8)
_PLAIN[32:128] = 1
_PLAIN[[34, 92]] = 0
_ASCII_WS = WHITESPACE_BYTES        # and its ASCII whitespace, by byte
# Byte patterns for `_first_special`: adding 0x60 sets the high bit of bytes >= 0x20.
_CONTROL = np.uint64(0x6060606060606060)
_QUOTES = np.uint64(0x2222222222222222)
_BACKSLASHES = np.uint64(0x5C5C5C5C5C5C5C5C)


@njit(cache=True)
def _utf8_char(buf, p, end):
    """Length of the UTF-8 character at p (a byte >= 0x80) that Python's strict decoder
    accepts within buf[:end], or 0."""
    b = buf[p]
    if 0xC2 <= b <= 0xDF:
        n, lo, hi = 1, 0x80, 0xBF
    elif 0xE0 <= b <= 0xEF:
        n = 2
        lo = 0xA0 if b == 0xE0 else 0x80
        hi = 0x9F if b == 0xED else 0xBF
    elif 0xF0 <= b <= 0xF4:
        n = 3
        lo = 0x90 if b == 0xF0 else 0x80
        hi = 0x8F if b == 0xF4 else 0xBF
    else:
        return 0
    if p + n >= end:
        return 0
    c = buf[p + 1]
    if c < lo or c > hi:
        return 0
    for k in range(2, n + 1):
        if not 0x80 <= buf[p + k] <= 0xBF:
            return 0
    return n + 1


@njit(cache=True, inline="always")
def _put(out, o, cp, mark):
    """Write code point cp >= 0x80 as UTF-8 at out[o:]; with `mark`, non-ASCII whitespace
    as as many ASCII spaces (same length: tokens split the same). Returns the new o."""
    width = 2 if cp < 0x800 else (3 if cp < 0x10000 else 4)
    if mark:
        if cp < _WS_CP.shape[0] and _WS_CP[cp]:
            for k in range(width):
                out[o + k] = 32
            return o + width
    if width == 2:
        out[o] = 0xC0 | (cp >> 6)
    elif width == 3:
        out[o] = 0xE0 | (cp >> 12)
        out[o + 1] = 0x80 | ((cp >> 6) & 0x3F)
    else:
        out[o] = 0xF0 | (cp >> 18)
        out[o + 1] = 0x80 | ((cp >> 12) & 0x3F)
        out[o + 2] = 0x80 | ((cp >> 6) & 0x3F)
    out[o + width - 1] = 0x80 | (cp & 0x3F)
    return o + width


@njit(cache=True, inline="always")
def _first_special(x):
    """8 bytes of a JSON string as a uint64 -> index of the first byte that is not plain
    (a control character, '"', '\\' or non-ASCII), or 8: a few integer operations for
    all 8 (see words.py)."""
    low = x & LOW7
    special = (x | ~(low + _CONTROL) | equal_bytes(x, _QUOTES) | equal_bytes(x, _BACKSLASHES)) & HIGH
    return trailing_zeros(special) >> 3


@njit(cache=True)
def _string(buf, p, end, out, o, mark):
    """Parse the string at p (an opening quote), checking its UTF-8 as Python's decoder
    does (the only place a valid record holds non-ASCII bytes). Writes the decoded UTF-8 to
    out[o:] when o >= 0; with `mark` (the text), every whitespace character as spaces (ASCII
    ones from escapes here, the others in `_put`: raw control characters are not JSON).
    Returns (position after the closing quote, new o, had escapes) or p = -1.
    Plain bytes go 8 at a time (one load, test and store): this is most of the reader's
    time."""
    p += 1
    escaped = False
    while p < end:
        if o >= 0:
            # out stays behind buf (o <= p), so a word stored at o always fits; 32 bytes at
            # a time while there are, then 8
            near_end = True                # fewer than 32 bytes left: 8 at a time
            while p + 32 <= end:
                m = json_special_mask32(buf, p)
                copy32(out, o, buf, p)
                if m:
                    f = trailing_zeros(m)
                    p += f
                    o += f
                    near_end = False
                    break
                p += 32
                o += 32
            while near_end and p + 8 <= end:
                x = load_u64(buf, p)
                store_u64(out, o, x)
                f = _first_special(x)
                p += f
                o += f
                if f < 8:
                    break
            while p < end and _PLAIN[buf[p]]:
                out[o] = buf[p]
                o += 1
                p += 1
        else:
            near_end = True
            while p + 32 <= end:
                m = json_special_mask32(buf, p)
                if m:
                    p += trailing_zeros(m)
                    near_end = False
                    break
                p += 32
            while near_end and p + 8 <= end:
                f = _first_special(load_u64(buf, p))
                p += f
                if f < 8:
                    break
            while p < end and _PLAIN[buf[p]]:
                p += 1
        if p >= end:
            return -1, o, escaped
        c = buf[p]
        if c == 34:
            return p + 1, o, escaped
        if c >= 128:
            width = _utf8_char(buf, p, end)
            if width == 0:
                return -1, o, escaped
            if o >= 0:
                if mark:
                    cp = np.int64(c) & (0x1F if width == 2 else (0x0F if width == 3 else 0x07))
                    for k in range(1, width):
                        cp = (cp << 6) | (buf[p + k] & 0x3F)
                    o = _put(out, o, cp, mark)
                else:
                    for k in range(width):
                        out[o + k] = buf[p + k]
                    o += width
            p += width
            continue
        if c == 92:
            escaped = True
            if p + 1 >= end:
                return -1, o, escaped
            e = buf[p + 1]
            if e == 110:                                   # \n, the usual one
                v = 10
            elif e == 117:
                if p + 5 >= end:
                    return -1, o, escaped
                cp = _hex4(buf, p + 2)
                if cp < 0 or 0xD800 <= cp <= 0xDFFF:
                    return -1, o, escaped
                if o >= 0:
                    if cp < 0x80:
                        out[o] = 32 if mark and _ASCII_WS[cp] else cp
                        o += 1
                    else:
                        o = _put(out, o, cp, mark)
                p += 6
                continue
            elif e == 34 or e == 92 or e == 47:
                v = e
            elif e == 98:
                v = 8
            elif e == 102:
                v = 12
            elif e == 114:
                v = 13
            elif e == 116:
                v = 9
            else:
                return -1, o, escaped
            if o >= 0:
                out[o] = 32 if mark and _ASCII_WS[v] else v
                o += 1
            p += 2
            continue
        return -1, o, escaped        # a control character
    return -1, o, escaped


@njit(cache=True)
def _number(buf, p, end):
    if p < end and buf[p] == 45:
        p += 1
    if p >= end:
        return -1
    if buf[p] == 48:
        p += 1
    elif 49 <= buf[p] <= 57:
        while p < end and 48 <= buf[p] <= 57:
            p += 1
    else:
        return -1
    if p < end and buf[p] == 46:
        p += 1
        if p >= end or not 48 <= buf[p] <= 57:
            return -1
        while p < end and 48 <= buf[p] <= 57:
            p += 1
    if p < end and (buf[p] == 101 or buf[p] == 69):
        p += 1
        if p < end and (buf[p] == 43 or buf[p] == 45):
            p += 1
        if p >= end or not 48 <= buf[p] <= 57:
            return -1
        while p < end and 48 <= buf[p] <= 57:
            p += 1
    return p


@njit(cache=True)
def _literal(buf, p, end, word):
    n = word.shape[0]
    if p + n > end:
        return -1
    for k in range(n):
        if buf[p + k] != word[k]:
            return -1
    return p + n


_TRUE = np.frombuffer(b"true", np.uint8).copy()
_FALSE = np.frombuffer(b"false", np.uint8).copy()
_NULL = np.frombuffer(b"null", np.uint8).copy()


@njit(cache=True)
def _skip_name(buf, p, end, out):
    """Skip an object member's `"name":` at p (not decoded): the position after the colon,
    or -1 where the bytes are not a name and a colon."""
    if p >= end or buf[p] != 34:
        return -1
    p, _, _ = _string(buf, p, end, out, -1, False)
    if p < 0:
        return -1
    p = _ws(buf, p, end)
    if p >= end or buf[p] != 58:
        return -1
    return p + 1


@njit(cache=True)
def _value(buf, p, end, stack, t, f, n, out):
    """Skip (and validate) one JSON value at p; the position after it, or -1."""
    depth = 0
    while True:
        # a value starts at p
        p = _ws(buf, p, end)
        if p >= end:
            return -1
        c = buf[p]
        if c == 123 or c == 91:
            close = 125 if c == 123 else 93
            p = _ws(buf, p + 1, end)
            if p < end and buf[p] == close:
                p += 1
            else:
                if depth == stack.shape[0]:
                    return -1
                stack[depth] = c
                depth += 1
                if c == 123:
                    p = _skip_name(buf, p, end, out)
                    if p < 0:
                        return -1
                continue
        elif c == 34:
            p, _, _ = _string(buf, p, end, out, -1, False)
        elif c == 116:
            p = _literal(buf, p, end, t)
        elif c == 102:
            p = _literal(buf, p, end, f)
        elif c == 110:
            p = _literal(buf, p, end, n)
        else:
            p = _number(buf, p, end)
        if p < 0:
            return -1
        # after a value: close containers or go on to the next member
        while True:
            if depth == 0:
                return p
            p = _ws(buf, p, end)
            if p >= end:
                return -1
            c = buf[p]
            top = stack[depth - 1]
            if c == 44:
                p = _ws(buf, p + 1, end)
                if top == 123:
                    p = _skip_name(buf, p, end, out)
                    if p < 0:
                        return -1
                break
            if (c == 125 and top == 123) or (c == 93 and top == 91):
                depth -= 1
                p += 1
                continue
            return -1


@njit(cache=True)
def _key_is(buf, out, in_out, s, e, word):
    """Whether the key at [s, e) of buf (of out where in_out) is `word`."""
    if e - s != word.shape[0]:
        return False
    for k in range(word.shape[0]):
        if (out[s + k] if in_out else buf[s + k]) != word[k]:
            return False
    return True


@njit(cache=True)
def _key(buf, p, end, out, o):
    """Parse a key at p: (position after it, whether its decoded bytes are in out, their
    bounds). An escaped key is decoded into out[o:] as scratch space (overwritten by later
    texts)."""
    q, o2, escaped = _string(buf, p, end, out, -1, False)
    if q < 0 or not escaped:
        return q, False, p + 1, q - 1
    q, o2, escaped = _string(buf, p, end, out, o, False)
    return q, True, o, o2


@njit(cache=True)
def _member(buf, p, end, out, o):
    """Parse `"key":` at p (an object member's name and colon): (position of its value,
    and the key as `_key` gives it), or position -1 where the bytes are not that."""
    if p >= end or buf[p] != 34:
        return -1, False, 0, 0
    p, in_out, ks, ke = _key(buf, p, end, out, o)
    if p < 0:
        return -1, False, 0, 0
    p = _ws(buf, p, end)
    if p >= end or buf[p] != 58:
        return -1, False, 0, 0
    p = _ws(buf, p + 1, end)
    if p >= end:
        return -1, False, 0, 0
    return p, in_out, ks, ke


@njit(cache=True, inline="always")
def _after_member(buf, p, end):
    """After an object member's value at p: (1, where the next member starts) after a comma,
    (0, just past the object) at its `}`, (-1, p) where the bytes are neither."""
    p = _ws(buf, p, end)
    if p < end and buf[p] == 44:
        return 1, _ws(buf, p + 1, end)
    if p < end and buf[p] == 125:
        return 0, p + 1
    return -1, p


@njit(cache=True)
def _extract(buf, text_key, meta_key, subset_key, out, out_off, starts, blank, sub_s,
             sub_e, stack, t, f, n):
    """Texts of the JSON records (lines) of buf into out (each + a space; out_off: per text;
    every whitespace character as spaces, see `_string`), subset slices into sub_s/sub_e
    (-1: none), blank[i] = 1 for a line of JSON whitespace only (it has no text), starts[i]:
    where line i starts. Returns (the index of the first record outside the plain case, or
    -1 when all are plain; lines; texts)."""
    o = 0
    nt = 0
    end = buf.shape[0]
    p = 0
    i = 0
    while True:
        starts[i] = p
        sub_s[i] = -1
        sub_e[i] = -1
        blank[i] = 0
        p = _ws(buf, p, end)
        if p >= end or buf[p] == 10:
            blank[i] = 1
            i += 1
            if p >= end:
                return -1, i, nt
            p += 1
            continue
        if buf[p] != 123:
            return i, i, nt
        p = _ws(buf, p + 1, end)
        have_text = False
        have_meta = False
        if p < end and buf[p] == 125:
            return i, i, nt                        # {}: no text
        while True:
            p, in_out, ks, ke = _member(buf, p, end, out, o)
            if p < 0:
                return i, i, nt
            if _key_is(buf, out, in_out, ks, ke, text_key):
                if have_text or buf[p] != 34:
                    return i, i, nt
                have_text = True
                p, o, _ = _string(buf, p, end, out, o, True)
                if p < 0:
                    return i, i, nt
                out[o] = 32
                o += 1
                out_off[nt + 1] = o
            elif meta_key.shape[0] and _key_is(buf, out, in_out, ks, ke, meta_key):
                if have_meta:
                    return i, i, nt
                have_meta = True
                if buf[p] == 123:
                    q = _ws(buf, p + 1, end)
                    if q < end and buf[q] == 125:
                        p = q + 1
                    else:
                        have_name = False
                        while True:
                            q, m_out, ms, me = _member(buf, q, end, out, o)
                            if q < 0:
                                return i, i, nt
                            if _key_is(buf, out, m_out, ms, me, subset_key):
                                if have_name:
                                    return i, i, nt
                                have_name = True
                                if buf[q] == 34:
                                    vs = q
                                    q, _, escaped = _string(buf, q, end, out, -1, False)
                                    if q < 0:
                                        return i, i, nt
                                    sub_s[i] = vs          # the JSON string, quotes included
                                    sub_e[i] = q
                                else:
                                    q = _value(buf, q, end, stack, t, f, n, out)
                            else:
                                q = _value(buf, q, end, stack, t, f, n, out)
                            if q < 0:
                                return i, i, nt
                            state, q = _after_member(buf, q, end)
                            if state == 1:
                                continue
                            if state == 0:
                                p = q
                                break
                            return i, i, nt
                else:
                    p = _value(buf, p, end, stack, t, f, n, out)
            else:
                p = _value(buf, p, end, stack, t, f, n, out)
            if p < 0:
                return i, i, nt
            state, p = _after_member(buf, p, end)
            if state == 1:
                continue
            if state == 0:
                break
            return i, i, nt
        p = _ws(buf, p, end)
        if not have_text or (p < end and buf[p] != 10):
            return i, i, nt
        nt += 1
        i += 1
        if p >= end:
            return -1, i, nt
        p += 1


@njit(cache=True)
def _distinct_slices(buf, starts, ends):
    """(start, end, count) of each distinct byte string among the slices (_slice_ids)."""
    first_s, first_e, counts, _ = _slice_ids(buf, starts, ends)
    return first_s, first_e, counts


@njit(cache=True)
def _slice_ids(buf, starts, ends):
    """(start, end, count) of each distinct byte string among the slices buf[starts[i]:ends[i]],
    in order of first appearance, and the distinct string of each slice: the subset names
    are tallied here, and only the distinct
    ones are decoded in Python. Why: in the Pile (and real text) the name changes almost every
    record, and a Python step per run of equal names made `extract_records` markedly
    slower (docs/performance.md). Slices are told apart by their
    bytes (an open-addressing table keyed by an FNV-1a hash, equal hashes compared byte by
    byte), so the tally is exact."""
    n = starts.shape[0]
    size = 16
    while size < 2 * n:
        size <<= 1
    mask = size - 1
    table = np.full(size, -1, np.int64)
    first = np.empty(n, np.int64)            # slice index of each distinct string's first use
    counts = np.zeros(n, np.int64)
    which = np.empty(n, np.int64)            # the distinct string of each slice
    found = 0
    for i in range(n):
        s = starts[i]
        e = ends[i]
        h = FNV_OFFSET
        for k in range(s, e):
            h = fnv1a_step(h, buf[k])
        slot = np.int64(h & np.uint64(mask))
        while True:
            d = table[slot]
            if d < 0:
                table[slot] = found
                first[found] = i
                counts[found] = 1
                which[i] = found
                found += 1
                break
            j = first[d]
            length = e - s
            if ends[j] - starts[j] == length:
                same = True
                for k in range(length):
                    if buf[starts[j] + k] != buf[s + k]:
                        same = False
                        break
                if same:
                    counts[d] += 1
                    which[i] = d
                    break
            slot = (slot + 1) & mask
    return starts[first[:found]], ends[first[:found]], counts[:found], which


def _scratch(scratch: dict | None, n: int):
    """The reader's output arrays for n bytes: new ones, or those kept in `scratch` (grown
    as needed; a fresh page costs more than the pass that fills it)."""
    if scratch is not None and scratch.get("n", -1) >= n:
        return scratch["arrays"]
    size = n if scratch is None else max(n, 2 * scratch.get("n", 0))
    arrays = (np.empty(size + PAD + 8, np.uint8),  # texts + spaces never outgrow the records
              np.empty(size // 8 + 2, np.int64),   # a record with a text takes at least 11 bytes
              np.empty(size + 1, np.uint8),        # (untouched pages cost nothing)
              *(np.empty(size + 1, np.int64) for _ in range(3)))
    if scratch is not None:
        scratch.update(n=size, arrays=arrays)
    return arrays


def extract_records(buf: np.ndarray, text_field: str, subset_field: str | None,
                    scratch: dict | None = None, per_text: bool = False):
    """(Utf8Batch of the texts, {subset: documents}, blank, starts) of the JSON Lines in buf
    (blank: a uint8 mask of the lines of JSON whitespace only, which have no text; starts:
    where each line starts), or None when any other line is outside the plain case (the
    caller then takes the Python path). With `scratch` (a dict kept by the caller), the
    arrays are reused: the result is valid until the next call with it. With `per_text`
    (counts by subset) a fifth item: each text's subset name (None: the record has none)."""
    if "." in text_field or subset_field not in (None, "meta.pile_set_name"):
        return None
    n = buf.shape[0]
    out, out_off, blank, starts, sub_s, sub_e = _scratch(scratch, n)
    out_off[0] = 0
    meta = np.frombuffer(b"meta" if subset_field else b"", np.uint8).copy()
    bad, n_lines, n_texts = _extract(
        buf, np.frombuffer(text_field.encode(), np.uint8).copy(), meta,
        np.frombuffer(b"pile_set_name", np.uint8).copy(), out, out_off, starts, blank, sub_s,
        sub_e, np.empty(MAX_DEPTH, np.uint8), _TRUE, _FALSE, _NULL)
    if bad >= 0:
        return None
    subsets: dict[str, int] = {}
    names: list[str] = []
    if subset_field:
        keep = sub_s[:n_lines] >= 0
        sub_s, sub_e = sub_s[:n_lines][keep], sub_e[:n_lines][keep]
        names_s, names_e, names_n, which = _slice_ids(buf, sub_s, sub_e)
        for s, e, count in zip(names_s.tolist(), names_e.tolist(), names_n.tolist()):
            raw = buf[s:e].tobytes()
            name = json.loads(raw) if b"\\" in raw else raw[1:-1].decode("utf-8")
            subsets[name] = subsets.get(name, 0) + count
            names.append(name)
    out_off = out_off[:n_texts + 1]
    n_bytes = int(out_off[-1])
    out[n_bytes:n_bytes + PAD] = 32
    batch = Utf8Batch(out[:n_bytes + PAD], out_off)
    if not per_text:
        return batch, subsets, blank[:n_lines], starts[:n_lines]
    line_name = np.full(n_lines, None, object)
    if subset_field and names:
        line_name[np.flatnonzero(keep)] = np.asarray(names, object)[which]
    return batch, subsets, blank[:n_lines], starts[:n_lines], line_name[blank[:n_lines] == 0]


def extract_texts(payloads: list[bytes], text_field: str, subset_field: str | None):
    """(Utf8Batch of the texts, {subset: documents}) of JSON records, or None when any record
    is outside the plain case (a blank one too: the caller then takes the Python path)."""
    got = extract_records(np.frombuffer(b"\n".join(payloads), np.uint8), text_field, subset_field)
    if got is None or got[2].any() or got[2].shape[0] != len(payloads):
        return None
    return got[0], got[1]
