"""Unaligned 8-byte loads and stores on uint8 arrays for the compiled passes (numba).

Why: the JSON reader and the token pass look at 8 bytes per step as one uint64 ("SWAR":
a few integer operations test all 8 bytes at once), at any byte offset. numba has no
unaligned word access of its own; these emit one LLVM load/store with alignment 1 (a
plain `mov` on x86 and ARM64). No bounds check: callers keep i + 8 within the array.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.cpython.unsafe.numbers import trailing_zeros  # index of the lowest set bit, 64 for 0
from numba.extending import intrinsic

__all__ = ["HIGH", "LOW7", "ONES", "count_byte", "load_u16", "load_u64", "store_u64", "equal_bytes", "count_high_bits",
           "trailing_zeros"]

# SWAR constants: the high bit, the low 7 bits and 1 in every byte.
HIGH = np.uint64(0x8080808080808080)
LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
ONES = np.uint64(0x0101010101010101)


def _word_pointer(context, builder, signature, args, bits=64):
    ary = context.make_array(signature.args[0])(context, builder, args[0])
    index = context.cast(builder, args[1], signature.args[1], types.intp)
    return builder.bitcast(builder.gep(ary.data, [index]), ir.IntType(bits).as_pointer())


@intrinsic
def load_u64(typingctx, arr, i):
    """arr[i:i + 8] as a little-endian uint64."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.uint8 and isinstance(i, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        return builder.load(_word_pointer(context, builder, signature, args), align=1)
    return types.uint64(arr, i), codegen


@intrinsic
def load_u16(typingctx, arr, i):
    """arr[i] | arr[i + 1] << 8 (two bytes in one load)."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.uint8 and isinstance(i, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        value = builder.load(_word_pointer(context, builder, signature, args, 16), align=1)
        return builder.zext(value, ir.IntType(64))
    return types.int64(arr, i), codegen


@intrinsic
def store_u64(typingctx, arr, i, v):
    """arr[i:i + 8] = the little-endian bytes of v."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.uint8 and isinstance(i, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        value = context.cast(builder, args[2], signature.args[2], types.uint64)
        builder.store(value, _word_pointer(context, builder, signature, args), align=1)
        return context.get_dummy_value()
    return types.void(arr, i, v), codegen


@njit(cache=True, inline="always")
def equal_bytes(x, pattern):
    """The high bit of each byte of x that equals the byte of `pattern` (an ASCII byte
    repeated 8 times). Exact for any x: the low 7 bits are compared without a carry
    crossing bytes, and bytes >= 0x80 never match."""
    return ~(((x & LOW7) ^ pattern) + LOW7) & ~x & HIGH


@njit(cache=True, inline="always")
def count_high_bits(bits):
    """How many bytes of `bits` have their high bit set (bits: high bits only)."""
    return np.int64(((bits >> np.uint64(7)) * ONES) >> np.uint64(56))


@njit(cache=True)
def count_byte(data, byte):
    """How many bytes of data (uint8) equal `byte` (< 0x80), 8 at a time."""
    n = data.shape[0]
    pattern = np.uint64(byte) * ONES
    count = 0
    i = 0
    while i + 8 <= n:
        count += count_high_bits(equal_bytes(load_u64(data, i), pattern))
        i += 8
    while i < n:
        count += data[i] == byte
        i += 1
    return count
