"""The run file's compact rows (`runcodec`) in numba: one pass each way, each value one
unaligned 8-byte store or load (`words`), in its fewest bytes.

Why: numpy's writer can only afford the widest case (every value in 8 bytes); here a row
costs a few nanoseconds either way, and a value's place follows from the lengths in its
block's control area alone, so no step waits for the data bytes before it. Both readers
read both writers' bytes to the same rows (tests).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from freqgap.counting.exchange.runcodec import CorruptRunError, checked_blocks
from freqgap.counting.engines.words import load_u64, store_u64

_SLACK = 16                    # bytes past the end that 8-byte stores or loads may touch
_MASKS = np.array([0xFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF], np.uint64)


@njit(cache=True, inline="always")
def _code(v):
    """Length code of v: 0, 1, 2, 3 for 1, 2, 4, 8 bytes."""
    return (np.int64(v >= np.uint64(1 << 8)) + np.int64(v >= np.uint64(1 << 16))
            + np.int64(v >= np.uint64(1 << 32)))


@njit(cache=True, inline="always")
def _zigzag(c):
    """A count as the layout's unsigned value: 0, -1, 1, -2, … as 0, 1, 2, 3, …"""
    return np.uint64((c << 1) ^ (c >> 63))


@njit(cache=True, inline="always")
def _control_bytes(rows):
    """runcodec.control_bytes of one block, compiled."""
    return (2 * rows + 3) // 4


@njit(cache=True)
def _encode(keys, counts, step):
    """Two passes: the blocks' sizes, then the bytes into an array of exactly that size
    (a few bytes a row: from the heap, not pages mapped afresh for a worst case). Both
    passes run over each block as slices, whose indices numba knows are not negative, so no
    load or store tests for a negative index and LLVM vectorises the sizes' loop
    (docs/performance.md)."""
    n = keys.shape[0]
    blocks = (n + step - 1) // step
    offsets = np.empty(blocks + 1, np.int64)
    o = 0
    for b in range(blocks):
        first = b * step
        rows = min(step, n - first)
        offsets[b] = o
        k = keys[first:first + rows]      # slices: indices from 0, so no negative-index test
        c = counts[first:first + rows]
        # the block's first key is its index key: difference 0, one byte
        o += _control_bytes(rows) + 1 + (np.int64(1) << _code(_zigzag(c[0])))
        for r in range(1, rows):
            o += ((np.int64(1) << _code(np.uint64(k[r]) - np.uint64(k[r - 1])))
                  + (np.int64(1) << _code(_zigzag(c[r]))))
    offsets[blocks] = o
    out = np.empty(o + _SLACK, np.uint8)
    for b in range(blocks):
        first = b * step
        rows = min(step, n - first)
        k = keys[first:first + rows]
        c = counts[first:first + rows]
        o = offsets[b] + _control_bytes(rows)
        control = out[offsets[b]:o]
        control[:] = 0
        prev = np.uint64(k[0])
        for r in range(rows):
            key = np.uint64(k[r])
            delta = key - prev
            z = _zigzag(c[r])
            prev = key
            cd = _code(delta)
            cz = _code(z)
            j = 2 * r
            control[j >> 2] |= np.uint8((cd << (2 * (j & 3))) | (cz << (2 * ((j + 1) & 3))))
            store_u64(out, o, delta)
            o += np.int64(1) << cd
            store_u64(out, o, z)
            o += np.int64(1) << cz
    return out[:offsets[blocks]], offsets


def encode(keys: np.ndarray, counts: np.ndarray, step: int) -> tuple[np.ndarray, np.ndarray]:
    """runcodec.encode, compiled."""
    return _encode(keys.astype(np.int64, copy=False), counts.astype(np.int64, copy=False), step)


@njit(cache=True)
def _decode(data, offsets, first_keys, sizes, keys, counts):
    """0 if each block's lengths fill its bytes exactly, else 1 (and no load beyond the
    block's end and its 16 bytes of slack: a row is at most 16 bytes)."""
    i = 0
    for b in range(sizes.shape[0]):
        rows = sizes[b]
        control = offsets[b]
        end = offsets[b + 1]
        o = control + _control_bytes(rows)
        prev = np.uint64(first_keys[b])
        for r in range(rows):
            if o > end:
                return 1
            j = 2 * r
            bits = np.int64(data[control + (j >> 2)]) >> (2 * (j & 3))
            cd = bits & 3
            cz = (bits >> 2) & 3
            prev = prev + (load_u64(data, o) & _MASKS[cd])
            o += np.int64(1) << cd
            z = load_u64(data, o) & _MASKS[cz]
            o += np.int64(1) << cz
            keys[i] = np.int64(prev)
            counts[i] = np.int64(z >> np.uint64(1)) ^ -np.int64(z & np.uint64(1))
            i += 1
        if o != end:
            return 1
    return 0


def decode(data: np.ndarray, offsets: np.ndarray, first_keys: np.ndarray, rows: int,
           step: int) -> tuple[np.ndarray, np.ndarray]:
    """runcodec.decode, compiled (the bytes are copied once, with room for 8-byte loads)."""
    offsets, sizes = checked_blocks(data.size, offsets, first_keys, rows, step)
    padded = np.empty(data.size + _SLACK, np.uint8)
    padded[:data.size] = data
    padded[data.size:] = 0
    keys = np.empty(rows, np.int64)
    counts = np.empty(rows, np.int64)
    if _decode(padded, offsets, first_keys.astype(np.int64, copy=False), sizes, keys, counts):
        raise CorruptRunError("a block's lengths do not fill its bytes")
    return keys, counts
