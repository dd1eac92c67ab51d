"""The compiled passes' word and vector primitives (counting/engines/words.py) against numpy, at
every offset and on every byte value: the JSON reader and the token pass trust their masks."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from freqgap.counting.engines.words import count_bits, copy32, json_special_mask32, space_mask32


@njit
def _masks(data, i):
    return space_mask32(data, i), json_special_mask32(data, i)


@njit
def _copy(dst, j, src, i):
    copy32(dst, j, src, i)


@njit
def _popcount(x):
    return count_bits(x)


def _bits(flags: np.ndarray) -> int:
    return int(sum(1 << k for k in np.flatnonzero(flags)))


@pytest.mark.parametrize("seed", range(4))
def test_32_byte_masks_equal_the_byte_by_byte_rules(seed):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, 4096).astype(np.uint8)
    data[rng.integers(0, data.size, 600)] = 0x20          # dense in the bytes that matter
    data[rng.integers(0, data.size, 200)] = 0x22
    data[rng.integers(0, data.size, 200)] = 0x5C
    data[:256] = np.arange(256)                             # every byte value, at several offsets
    for i in range(0, data.size - 32, 7):
        window = data[i:i + 32]
        space, special = _masks(data, i)
        assert space == _bits(window == 0x20)
        assert special == _bits((window < 0x20) | (window >= 0x80) | (window == 0x22) | (window == 0x5C))


def test_copy32_writes_exactly_32_bytes_at_any_offset():
    src = np.arange(100, dtype=np.uint8)
    for i in range(0, 60, 5):
        for j in range(0, 40, 3):
            dst = np.zeros(80, np.uint8)
            _copy(dst, j, src, i)
            assert (dst[j:j + 32] == src[i:i + 32]).all()
            assert not dst[:j].any() and not dst[j + 32:].any()


def test_count_bits():
    for x in (0, 1, 0xFFFFFFFF, 0x8000000000000001, 0xFFFFFFFFFFFFFFFF, 0x0123456789ABCDEF):
        assert _popcount(np.uint64(x)) == bin(x).count("1")
