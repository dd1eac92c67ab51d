"""A key column's terms as dictionary indices: the distinct term ids once, an int32 index
per row and term (the final tables' term columns, `final_tables.decode_table`).

Why a step of its own: at W = 10 the reduce turns 2 M real-text triple keys into three
columns, and in numpy that is eleven passes over the rows (split, mark, gather each column);
`term_indices_compiled` does it in two (numba), and this is the fallback where numba is
missing. Both give the same arrays (tests).
"""

from __future__ import annotations

import numpy as np

from freqgap.counting.codec import MASK, TermCodec


def term_indices(keys: np.ndarray, order: int) -> tuple[np.ndarray, np.ndarray]:
    """(distinct term ids, sorted; int32 indices into them, shape (order, rows)) of the
    `order` terms packed in each key, first term first. Ids are below 2**BITS, so a lookup
    table finds them without sorting the rows."""
    ids = TermCodec.split(keys, order)
    present = np.zeros(MASK + 1, dtype=bool)
    for column in ids:
        present[column] = True
    distinct = np.flatnonzero(present)
    position = np.zeros(MASK + 1, dtype=np.int32)
    position[distinct] = np.arange(distinct.size, dtype=np.int32)
    out = np.empty((order, keys.shape[0]), np.int32)
    for row, column in zip(out, ids):
        np.take(position, column, out=row)
    return distinct, out
