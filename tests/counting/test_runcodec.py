"""The run files' row layout (freqgap.counting.exchange.runcodec): exact for any int64 keys and counts,
either writer read by either reader, compact where compiled, damage refused."""

from __future__ import annotations

import numpy as np
import pytest

from freqgap.counting.exchange import runcodec
from freqgap.counting.engines import runcodec_compiled

WRITERS = {"numpy": runcodec.encode, "numba": runcodec_compiled.encode}
READERS = {"numpy": runcodec.decode, "numba": runcodec_compiled.decode}


def _run(rng, n, wide=True):
    """n strictly increasing keys and counts: over the whole int64 range (every length
    code, wrap-around differences) or small ones (real text's shape)."""
    if wide:
        keys = np.unique(rng.integers(-(1 << 63), (1 << 63) - 1, n, dtype=np.int64, endpoint=True))
        counts = rng.integers(-(1 << 63), (1 << 63) - 1, keys.size, dtype=np.int64, endpoint=True)
        counts[::3] = rng.integers(-3, 300, counts[::3].size)
    else:
        keys = np.cumsum(rng.integers(1, 1 << 16, n)).astype(np.int64)
        counts = np.maximum(1, rng.geometric(0.6, n)).astype(np.int64)
    return keys, counts


def _by_hand(keys, counts, step):
    """The layout written out from its description, one value at a time (the module
    docstring), as the reference both writers' rows are read against."""
    out, offsets = bytearray(), []
    for first in range(0, keys.size, step):
        offsets.append(len(out))
        rows = min(step, keys.size - first)
        values = []
        for i in range(first, first + rows):
            delta = 0 if i == first else (int(keys[i]) - int(keys[i - 1])) % (1 << 64)
            c = int(counts[i])
            values += [delta, ((c << 1) ^ (c >> 63)) % (1 << 64)]
        codes = [0 if v < 1 << 8 else 1 if v < 1 << 16 else 2 if v < 1 << 32 else 3 for v in values]
        control = bytearray((len(values) + 3) // 4)
        for j, code in enumerate(codes):
            control[j // 4] |= code << (2 * (j % 4))
        out += control
        for v, code in zip(values, codes):
            out += v.to_bytes(1 << code, "little")
    offsets.append(len(out))
    return np.frombuffer(bytes(out), np.uint8), np.array(offsets, np.int64)


@pytest.mark.parametrize("n,step", [(0, 4), (1, 4), (8, 4), (11, 4), (300, 7), (5000, 4096)])
def test_the_compiled_writer_writes_the_layout_as_described(n, step):
    keys, counts = _run(np.random.default_rng(n), n)
    data, offsets = runcodec_compiled.encode(keys, counts, step)
    want_data, want_offsets = _by_hand(keys, counts, step)
    assert np.array_equal(offsets, want_offsets) and np.array_equal(data, want_data)


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("wide", [True, False])
def test_every_reader_reads_every_writer_exactly_whole_or_by_blocks(writer, reader, wide):
    rng = np.random.default_rng(7)
    for n, step in ((0, 4), (1, 4), (11, 4), (12, 4), (999, 16), (3 * 4096 + 5, 4096)):
        keys, counts = _run(rng, n, wide)
        n = keys.size
        data, offsets = WRITERS[writer](keys, counts, step)
        got = READERS[reader](data, offsets, keys[::step], n, step)
        assert np.array_equal(got[0], keys) and np.array_equal(got[1], counts)
        for b0, b1 in ((1, 2), (0, 1), (1, -(-n // step))):          # some blocks, as a reducer reads
            if b1 <= b0 or b1 > -(-n // step):
                continue
            rows = min(n, b1 * step) - b0 * step
            got = READERS[reader](data[offsets[b0]:offsets[b1]], offsets[b0:b1 + 1], keys[b0 * step:b1 * step:step],
                                  rows, step)
            assert np.array_equal(got[0], keys[b0 * step:b0 * step + rows])
            assert np.array_equal(got[1], counts[b0 * step:b0 * step + rows])


def test_the_compiled_writer_is_compact_on_small_differences():
    keys, counts = _run(np.random.default_rng(1), 100_000, wide=False)
    data, _ = runcodec_compiled.encode(keys, counts, 4096)
    assert data.size / keys.size < 4.0             # 1-2 bytes a difference, 1 a count, 1/2 control
    assert runcodec.encode(keys, counts, 4096)[0].size / keys.size == pytest.approx(16.5, abs=0.01)


@pytest.mark.parametrize("reader", READERS)
def test_damaged_blocks_are_refused(reader):
    keys, counts = _run(np.random.default_rng(3), 40, wide=False)
    data, offsets = runcodec_compiled.encode(keys, counts, 16)
    decode = READERS[reader]
    bad = data.copy()
    bad[offsets[1]] ^= 0b11                        # block 1's first length code changed
    with pytest.raises(runcodec.CorruptRunError):
        decode(bad, offsets, keys[::16], keys.size, 16)
    with pytest.raises(runcodec.CorruptRunError):  # offsets that do not match the bytes
        decode(data[:-1], offsets, keys[::16], keys.size, 16)
    with pytest.raises(runcodec.CorruptRunError):  # rows that do not match the blocks
        decode(data, offsets, keys[::16], keys.size + 16, 16)
