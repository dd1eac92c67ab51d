"""Exact windowed co-occurrence counts from term positions (SPEC §2).

A pair is two positions i < j of the same document with j - i < W; a triple, i < j < k
with k - i < W. Each position pair or triple counts once. Because term positions are
sorted, every pair is found by comparing each term with the next W - 1 terms, so the work is
O(terms x W) (O(terms x W^2) for triples), independent of document length.
"""

from __future__ import annotations

import numpy as np

from freqgap.counting.engines.tokenize import TermOccurrences

_MAX_CUBE_TERMS = 2_000_000  # ids up to this fit a*V^2 + b*V + c in int64


def unigram_counts(occ: TermOccurrences) -> tuple[np.ndarray, np.ndarray]:
    """(term ids, counts) of single positions."""
    counts = np.bincount(occ.term_id, minlength=len(occ.terms))
    ids = np.flatnonzero(counts)
    return ids, counts[ids]


def _in_window(occ: TermOccurrences, offset: int, window: int) -> np.ndarray:
    """Indices i such that terms i and i+offset are in one document within the window."""
    n = occ.term_id.shape[0]
    if offset >= n:
        return np.zeros(0, dtype=np.int64)
    same_doc = occ.doc[offset:] == occ.doc[:n - offset]
    close = (occ.pos[offset:] - occ.pos[:n - offset]) < window
    return np.flatnonzero(same_doc & close)


def pair_counts(occ: TermOccurrences, window: int) -> tuple[np.ndarray, np.ndarray]:
    """(n x 2 sorted term-id pairs, counts) of all position pairs within the window."""
    v = max(len(occ.terms), 1)
    keys = []
    for d in range(1, window):
        i = _in_window(occ, d, window)
        if i.size:
            a, b = occ.term_id[i], occ.term_id[i + d]
            keys.append(np.minimum(a, b) * v + np.maximum(a, b))
    if not keys:
        return np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.int64)
    uniq, counts = np.unique(np.concatenate(keys), return_counts=True)
    return np.stack([uniq // v, uniq % v], axis=1), counts


def triple_counts(occ: TermOccurrences, window: int) -> tuple[np.ndarray, np.ndarray]:
    """(n x 3 sorted term-id triples, counts) of all position triples within the window."""
    v = max(len(occ.terms), 1)
    if v > _MAX_CUBE_TERMS:
        raise ValueError(f"too many distinct terms in one batch ({v}); lower the batch size")
    rows = []
    for d2 in range(2, window):
        k_idx = _in_window(occ, d2, window)
        if not k_idx.size:
            continue
        for d1 in range(1, d2):
            rows.append(np.stack([occ.term_id[k_idx], occ.term_id[k_idx + d1],
                                  occ.term_id[k_idx + d2]], axis=1))
    if not rows:
        return np.zeros((0, 3), dtype=np.int64), np.zeros(0, dtype=np.int64)
    triples = np.sort(np.concatenate(rows), axis=1)
    keys = (triples[:, 0] * v + triples[:, 1]) * v + triples[:, 2]
    uniq, counts = np.unique(keys, return_counts=True)
    return np.stack([uniq // (v * v), (uniq // v) % v, uniq % v], axis=1), counts
