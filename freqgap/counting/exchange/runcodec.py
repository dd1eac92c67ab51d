"""A run file's rows, compact: blocks of byte-aligned integers with 2-bit lengths. The
readers and numpy's writer; `runcodec_compiled` is the compiled (numba) writer and reader.

Why: a run file held 16 bytes a row (an int64 key and an int64 count). Its keys are strictly
increasing, so a key is stored as its difference from the one before, and counts are small:
each value in 1, 2, 4 or 8 bytes, its length in 2 bits of a control area (the "stream VByte"
layout of Lemire et al.: a value's place follows from the lengths alone, so decoding has no
chain of byte tests). Real text at W = 10 (313 MB of Debian documentation): 4.6 M rows,
74 MB as int64, about 4 bytes a row this way. Every byte of a run goes to the page cache
(or, on a cluster, to the work directory's shared storage) and is read back by a reducer.

A block holds `step` rows (the last maybe fewer), 2 values a row: the key's difference from
the row before as uint64 (modular arithmetic: exact for any increasing int64 keys; 0 at a
block's first row, whose key is the block's index key) and the count zigzag-encoded (exact
for any int64). The block is its control area, ceil(values / 4) bytes (value j's length code
in bits 2(j mod 4) of byte j // 4: 0, 1, 2, 3 for 1, 2, 4, 8 bytes), then the values'
little-endian bytes. Blocks start at byte offsets of their own, so a reducer decodes only
the blocks that hold its key range. numpy's writer gives every value 8 bytes (code 3), the
layout's widest case: any reader reads what either writer wrote.
"""

from __future__ import annotations

import numpy as np


class CorruptRunError(ValueError):
    """Bytes that are not the blocks their offsets say: a damaged run file."""


def control_bytes(rows):
    """Bytes of a block's control area (2 values a row, 4 lengths a byte); of an int or an array."""
    return (2 * rows + 3) // 4


def block_rows(rows: int, step: int) -> np.ndarray:
    """Rows of each block of a run of `rows` rows."""
    sizes = np.full(-(-rows // step), step, np.int64)
    if sizes.size:
        sizes[-1] = rows - step * (sizes.size - 1)
    return sizes


def checked_blocks(size: int, offsets: np.ndarray, first_keys: np.ndarray, rows: int,
                   step: int) -> tuple[np.ndarray, np.ndarray]:
    """(the offsets from the first block's start, each block's rows) of `size` bytes of
    blocks; CorruptRunError if offsets, index keys, rows and bytes disagree."""
    offsets = offsets.astype(np.int64) - int(offsets[0])
    sizes = block_rows(rows, step)
    if sizes.size != first_keys.size or offsets.size != sizes.size + 1 or offsets[-1] != size:
        raise CorruptRunError("block offsets and rows disagree")
    if np.any(np.diff(offsets) < control_bytes(sizes)):
        raise CorruptRunError("a block shorter than its control area")
    return offsets, sizes


def _values(keys: np.ndarray, counts: np.ndarray, step: int) -> np.ndarray:
    """The rows' values in order: key differences (0 at each block's first row) and zigzag counts."""
    k = keys.astype(np.int64, copy=False).view(np.uint64)
    c = counts.astype(np.int64, copy=False)
    values = np.empty(2 * k.size, np.uint64)
    delta = values[0::2]
    delta[0:1] = 0
    np.subtract(k[1:], k[:-1], out=delta[1:])
    delta[::step] = 0
    values[1::2] = ((c << 1) ^ (c >> 63)).view(np.uint64)
    return values


def _layout(codes: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(byte offset of each block and the end, each value's first data byte) for values of
    the given length codes in blocks of `sizes` rows."""
    lengths = np.left_shift(1, codes.astype(np.int64))
    block_of = np.repeat(np.arange(sizes.size), 2 * sizes)
    control = control_bytes(sizes)
    data_bytes = np.bincount(block_of, weights=lengths, minlength=sizes.size).astype(np.int64)
    offsets = np.zeros(sizes.size + 1, np.int64)
    np.cumsum(data_bytes + control, out=offsets[1:])
    ends = np.cumsum(lengths)
    before = np.zeros(sizes.size, np.int64)          # data bytes of the blocks before
    np.cumsum(data_bytes[:-1], out=before[1:])
    starts = ends - lengths - (before - offsets[:-1] - control)[block_of]
    return offsets, starts


def _control_positions(offsets: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The bytes of every block's control area (each at its block's start)."""
    control = control_bytes(sizes)
    return np.repeat(offsets[:-1], control) + _ranks(control)


def _without(data: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """A mask of data's bytes, False at `positions`."""
    keep = np.ones(data.size, bool)
    keep[positions] = False
    return keep


def _ranks(sizes: np.ndarray) -> np.ndarray:
    """0, 1, …, size - 1 for each size, concatenated."""
    ends = np.cumsum(sizes)
    return np.arange(int(ends[-1]) if ends.size else 0) - np.repeat(ends - sizes, sizes)


def _padded_codes(sizes: np.ndarray) -> np.ndarray:
    """Where each value's code sits among its block's control bytes' 4 slots, blocks after
    one another (a block's last control byte may have unused slots)."""
    control = control_bytes(sizes)
    return np.repeat(4 * (np.cumsum(control) - control), 2 * sizes) + _ranks(2 * sizes)


def _by_length(codes: np.ndarray, starts: np.ndarray):
    """(the values' indices, their byte positions (values x length)) per length code."""
    for code in range(4):
        which = np.flatnonzero(codes == code)
        if which.size:
            yield which, starts[which][:, None] + np.arange(1 << code)


def encode(keys: np.ndarray, counts: np.ndarray, step: int) -> tuple[np.ndarray, np.ndarray]:
    """(bytes, byte offset of each block start and the end) of a run's rows, every value in
    8 bytes: the layout's widest case, valid for every reader. numpy's scatter of values by
    length took 150-350 ns a row, more than it saves; the compiled encoder writes each value
    in its fewest bytes."""
    values = _values(keys, counts, step)
    sizes = block_rows(keys.size, step)
    control = control_bytes(sizes)
    offsets = np.zeros(sizes.size + 1, np.int64)
    np.cumsum(control + 16 * sizes, out=offsets[1:])
    out = np.full(int(offsets[-1]), 0xFF, np.uint8)      # control bytes: every length code 3
    out[_without(out, _control_positions(offsets, sizes))] = values.astype("<u8", copy=False).view(np.uint8)
    return out, offsets


def decode(data: np.ndarray, offsets: np.ndarray, first_keys: np.ndarray, rows: int,
           step: int) -> tuple[np.ndarray, np.ndarray]:
    """(keys, counts) of whole blocks: `data` holds them from the first's start, `offsets`
    their starts and the end (as in the file), `first_keys` their index keys, `rows` their
    rows (`step` a block, the last maybe fewer). CorruptRunError if the bytes disagree."""
    data = np.asarray(data, np.uint8)
    offsets, sizes = checked_blocks(data.size, offsets, first_keys, rows, step)
    control = control_bytes(sizes)
    control_at = _control_positions(offsets, sizes)
    packed = data[control_at]
    if (packed == 0xFF).all() and np.array_equal(np.diff(offsets), control + 16 * sizes):
        # every value in 8 bytes (numpy's encoder): the bytes but the control areas
        values = data[_without(data, control_at)].view("<u8").astype(np.uint64, copy=False)
    else:
        slots = ((packed[:, None] >> np.array([0, 2, 4, 6], np.uint8)) & 3).reshape(-1)
        codes = slots[_padded_codes(sizes)]
        found, starts = _layout(codes, sizes)
        if not np.array_equal(found, offsets):
            raise CorruptRunError("a block's lengths do not fill its bytes")
        little = np.zeros((codes.size, 8), np.uint8)
        for which, at in _by_length(codes, starts):
            little[which, :at.shape[1]] = data[at]
        values = little.view("<u8").reshape(-1).astype(np.uint64, copy=False)
    deltas, z = values[0::2], values[1::2]
    counts = ((z >> np.uint64(1)) ^ (np.uint64(0) - (z & np.uint64(1)))).view(np.int64)
    row_block = np.repeat(np.arange(sizes.size), sizes)
    running = np.cumsum(deltas, dtype=np.uint64)
    before = running[::step] - deltas[::step]                 # the sum before each block
    keys = first_keys.astype(np.int64).view(np.uint64)[row_block] + running - before[row_block]
    return keys.view(np.int64), counts
