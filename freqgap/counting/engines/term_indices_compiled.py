"""`term_indices` compiled (numba): two passes over the keys instead of numpy's eleven.

Why: at large windows the reduce's dictionary columns are a good part of what the window
adds to the reduce besides the Parquet write (docs/performance.md). The
lookup tables (a flag and a position per possible id: 2 MB and 8 MB) are kept per process
and only their used entries touched and reset, so a call costs its rows, not 2**21 entries.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from freqgap.counting.codec import BITS, MASK

_seen = np.zeros(MASK + 1, np.uint8)           # all zero between calls
_position = np.empty(MASK + 1, np.int32)       # read only where just written


@njit(cache=True)
def _term_indices(keys, order, seen, position):
    n = keys.shape[0]
    found = np.empty(min(n * order, seen.shape[0]), np.int64)    # only `count` entries touched
    count = 0
    for i in range(n):
        k = keys[i]
        for c in range(order):
            t = (k >> (BITS * (order - 1 - c))) & MASK
            if not seen[t]:
                seen[t] = 1
                found[count] = t
                count += 1
    distinct = np.sort(found[:count])
    for j in range(count):
        position[distinct[j]] = j
        seen[distinct[j]] = 0
    out = np.empty((order, n), np.int32)
    for i in range(n):
        k = keys[i]
        for c in range(order):
            out[c, i] = position[(k >> (BITS * (order - 1 - c))) & MASK]
    return distinct, out


def term_indices(keys: np.ndarray, order: int) -> tuple[np.ndarray, np.ndarray]:
    """term_indices.term_indices, compiled."""
    return _term_indices(np.ascontiguousarray(keys, dtype=np.int64), order, _seen, _position)
