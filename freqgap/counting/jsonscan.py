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

MAX_DEPTH = 512


class Utf8Batch(NamedTuple):
    """Texts as the finder's buffer: UTF-8 bytes, each text followed by one space; offsets."""

    data: np.ndarray
    offsets: np.ndarray

    def __len__(self) -> int:
        return self.offsets.shape[0] - 1


@njit(cache=True, inline="always")
def _ws(buf, p, end):
    while p < end and (buf[p] == 32 or buf[p] == 9 or buf[p] == 10 or buf[p] == 13):
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


# 1 for a byte that a JSON string holds as itself: ASCII from 0x20 except '"' and '\\'.
_PLAIN = np.zeros(256, np.uint8)
_PLAIN[32:128] = 1
_PLAIN[[34, 92]] = 0


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


@njit(cache=True)
def _string(buf, p, end, out, o):
    """Parse the string at p (an opening quote), checking its UTF-8 as Python's decoder
    does (the only place a valid record holds non-ASCII bytes). Writes the decoded UTF-8 to
    out[o:] when o >= 0. Returns (position after the closing quote, new o, had escapes) or
    p = -1. Plain bytes take a tight copy loop: this is most of the reader's time."""
    p += 1
    escaped = False
    while p < end:
        if o >= 0:
            # 8 bytes a step: all copied, then advanced to the first that is not plain
            # (no branch per byte; out stays ahead of nothing: o <= p, so out[o + 7] fits).
            while p + 8 <= end:
                f = 8
                for k in range(7, -1, -1):
                    c = buf[p + k]
                    out[o + k] = c
                    f = k if _PLAIN[c] == 0 else f
                p += f
                o += f
                if f < 8:
                    break
            while p < end and _PLAIN[buf[p]]:
                out[o] = buf[p]
                o += 1
                p += 1
        else:
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
            if e == 117:
                if p + 5 >= end:
                    return -1, o, escaped
                cp = _hex4(buf, p + 2)
                if cp < 0 or 0xD800 <= cp <= 0xDFFF:
                    return -1, o, escaped
                if o >= 0:
                    if cp < 0x80:
                        out[o] = cp
                        o += 1
                    elif cp < 0x800:
                        out[o] = 0xC0 | (cp >> 6)
                        out[o + 1] = 0x80 | (cp & 0x3F)
                        o += 2
                    else:
                        out[o] = 0xE0 | (cp >> 12)
                        out[o + 1] = 0x80 | ((cp >> 6) & 0x3F)
                        out[o + 2] = 0x80 | (cp & 0x3F)
                        o += 3
                p += 6
                continue
            if e == 34 or e == 92 or e == 47:
                v = e
            elif e == 98:
                v = 8
            elif e == 102:
                v = 12
            elif e == 110:
                v = 10
            elif e == 114:
                v = 13
            elif e == 116:
                v = 9
            else:
                return -1, o, escaped
            if o >= 0:
                out[o] = v
                o += 1
            p += 2
            continue
        return -1, o, escaped            # a control character
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
def _skip_name(buf, p, end, dummy):
    """Skip an object member's `"name":` at p (not decoded): the position after the colon,
    or -1 where the bytes are not a name and a colon."""
    if p >= end or buf[p] != 34:
        return -1
    p, _, _ = _string(buf, p, end, dummy, -1)
    if p < 0:
        return -1
    p = _ws(buf, p, end)
    if p >= end or buf[p] != 58:
        return -1
    return p + 1


@njit(cache=True)
def _value(buf, p, end, stack, t, f, n):
    """Skip (and validate) one JSON value at p; the position after it, or -1."""
    dummy = np.empty(0, np.uint8)
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
                    p = _skip_name(buf, p, end, dummy)
                    if p < 0:
                        return -1
                continue
        elif c == 34:
            p, _, _ = _string(buf, p, end, dummy, -1)
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
                    p = _skip_name(buf, p, end, dummy)
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
    q, o2, escaped = _string(buf, p, end, out, -1)
    if q < 0 or not escaped:
        return q, False, p + 1, q - 1
    q, o2, escaped = _string(buf, p, end, out, o)
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


@njit(cache=True)
def _extract(buf, starts, ends, text_key, meta_key, subset_key, out, out_off, sub_s, sub_e,
             stack, t, f, n):
    """Texts of records [starts[i], ends[i]) into out (each + a space), subset slices into
    sub_s/sub_e (-1: none). Returns the index of the first record outside the plain case,
    or -1 when all are plain."""
    o = 0
    for i in range(starts.shape[0]):
        p = starts[i]
        end = ends[i]
        sub_s[i] = -1
        sub_e[i] = -1
        p = _ws(buf, p, end)
        if p >= end or buf[p] != 123:
            return i
        p = _ws(buf, p + 1, end)
        have_text = False
        have_meta = False
        if p < end and buf[p] == 125:
            return i                                   # {}: no text
        while True:
            p, in_out, ks, ke = _member(buf, p, end, out, o)
            if p < 0:
                return i
            if _key_is(buf, out, in_out, ks, ke, text_key):
                if have_text or buf[p] != 34:
                    return i
                have_text = True
                p, o, _ = _string(buf, p, end, out, o)
                if p < 0:
                    return i
                out[o] = 32
                o += 1
                out_off[i + 1] = o
            elif meta_key.shape[0] and _key_is(buf, out, in_out, ks, ke, meta_key):
                if have_meta:
                    return i
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
                                return i
                            if _key_is(buf, out, m_out, ms, me, subset_key):
                                if have_name:
                                    return i
                                have_name = True
                                if buf[q] == 34:
                                    vs = q
                                    q, _, escaped = _string(buf, q, end, out, -1)
                                    if q < 0:
                                        return i
                                    sub_s[i] = vs          # the JSON string, quotes included
                                    sub_e[i] = q
                                else:
                                    q = _value(buf, q, end, stack, t, f, n)
                            else:
                                q = _value(buf, q, end, stack, t, f, n)
                            if q < 0:
                                return i
                            q = _ws(buf, q, end)
                            if q < end and buf[q] == 44:
                                q = _ws(buf, q + 1, end)
                                continue
                            if q < end and buf[q] == 125:
                                p = q + 1
                                break
                            return i
                else:
                    p = _value(buf, p, end, stack, t, f, n)
            else:
                p = _value(buf, p, end, stack, t, f, n)
            if p < 0:
                return i
            p = _ws(buf, p, end)
            if p < end and buf[p] == 44:
                p = _ws(buf, p + 1, end)
                continue
            if p < end and buf[p] == 125:
                p += 1
                break
            return i
        if not have_text or _ws(buf, p, end) != end:
            return i
    return -1


def extract_texts(payloads: list[bytes], text_field: str, subset_field: str | None):
    """(Utf8Batch of the texts, {subset: documents}) of JSON records, or None when any record
    is outside the plain case (the caller then takes the Python path)."""
    if "." in text_field or subset_field not in (None, "meta.pile_set_name"):
        return None
    joined = b"\n".join(payloads)
    buf = np.frombuffer(joined, np.uint8)
    lengths = np.fromiter((len(p) for p in payloads), np.int64, len(payloads))
    ends = np.cumsum(lengths + 1) - 1
    starts = ends - lengths
    out = np.empty(buf.shape[0] + len(payloads) + 1, np.uint8)
    out_off = np.zeros(len(payloads) + 1, np.int64)
    sub_s = np.empty(len(payloads), np.int64)
    sub_e = np.empty(len(payloads), np.int64)
    meta = np.frombuffer(b"meta" if subset_field else b"", np.uint8).copy()
    bad = _extract(buf, starts, ends, np.frombuffer(text_field.encode(), np.uint8).copy(), meta,
                   np.frombuffer(b"pile_set_name", np.uint8).copy(), out, out_off, sub_s, sub_e,
                   np.empty(MAX_DEPTH, np.uint8), _TRUE, _FALSE, _NULL)
    if bad >= 0:
        return None
    subsets: dict[str, int] = {}
    if subset_field:
        for s, e in zip(sub_s.tolist(), sub_e.tolist()):
            if s >= 0:
                raw = joined[s:e]
                name = json.loads(raw) if b"\\" in raw else raw[1:-1].decode("utf-8")
                subsets[name] = subsets.get(name, 0) + 1
    return Utf8Batch(out[:out_off[-1]], out_off), subsets
