"""The reduce's dictionary columns (`term_indices`, numpy and compiled) against their
definition: the distinct ids of every term in the keys, sorted, and per row and term the
index of its id among them."""

from __future__ import annotations

import numpy as np
import pytest

from freqgap.counting.engines import term_indices, term_indices_compiled
from freqgap.counting.codec import MASK, TermCodec
from freqgap.counting.engines import get_engine

INDEXERS = {"numpy": term_indices.term_indices, "numba": term_indices_compiled.term_indices}


def _keys(rng: np.random.Generator, order: int, n: int) -> np.ndarray:
    ids = [rng.choice(np.array([0, 1, 7, 1_111_109, 1_111_110, MASK - 1, MASK]), n)
           if i == 0 else rng.integers(0, 3000, n) for i in range(order)]
    return np.unique(TermCodec.triple_keys(*ids) if order == 3 else
                     TermCodec.pair_keys(*ids) if order == 2 else ids[0])


@pytest.mark.parametrize("engine", sorted(INDEXERS))
@pytest.mark.parametrize("order", [1, 2, 3])
def test_indices_point_at_each_rows_terms_among_the_sorted_distinct_ids(engine, order):
    rng = np.random.default_rng(order)
    for n in (0, 1, 5_000):                   # calls in a row: the compiled tables reset
        keys = _keys(rng, order, n)
        distinct, indices = INDEXERS[engine](keys, order)
        ids = TermCodec.split(keys, order)
        assert distinct.tolist() == sorted({int(v) for column in ids for v in column.tolist()})
        assert indices.dtype == np.int32 and indices.shape == (order, keys.size)
        for column, index in zip(ids, indices):
            assert np.array_equal(distinct[index], column)


def test_both_indexers_give_the_same_arrays_and_the_engine_picks_them():
    keys = _keys(np.random.default_rng(3), 3, 20_000)
    (d1, i1), (d2, i2) = (INDEXERS[e](keys, 3) for e in ("numpy", "numba"))
    assert np.array_equal(d1, d2) and np.array_equal(i1, i2)
    assert get_engine("numpy").term_indices is term_indices.term_indices
    assert get_engine("numba").term_indices is term_indices_compiled.term_indices
