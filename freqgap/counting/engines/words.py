"""Unaligned 8- and 32-byte loads, stores and compares on uint8 arrays for the compiled
passes (numba).

Why: the JSON reader and the token pass look at many bytes per step, at any byte offset:
8 as one uint64 ("SWAR": a few integer operations test all 8 bytes at once), or 32 as one
LLVM vector, compared against a byte pattern in one instruction and turned into a bit
mask (AVX2's vpcmpeqb and vpmovmskb on x86; LLVM lowers the same IR on other targets).
numba has neither of its own; these emit LLVM loads and stores with alignment 1. No bounds
check: callers keep i + 8 (i + 32) within the array.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.cpython.unsafe.numbers import trailing_zeros  # index of the lowest set bit, 64 for 0
from numba.extending import intrinsic

from freqgap.runtime.numba_cache import load_cached_code_lazily

# Every module of compiled code imports this one: their cached code loads without numba's
# compiler being built first (numba_cache.py).
load_cached_code_lazily()

__all__ = ["FNV_OFFSET", "HIGH", "LOW7", "ONES", "count_bits", "count_byte", "copy32", "count_high_bits",
           "equal_bytes", "fnv1a_step", "hash_lower", "lower", "json_special_mask32", "load_u16", "load_u64", "space_mask32",
           "store_u64", "trailing_zeros"]

# SWAR constants: the high bit, the low 7 bits and 1 in every byte.
HIGH = np.uint64(0x8080808080808080)
LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
ONES = np.uint64(0x0101010101010101)

# FNV-1a (64-bit), the compiled passes' hash of a byte string: the vocabulary's table
# (compiled.py) and the subset names' tally (jsonscan.py).
FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


@njit(cache=True, inline="always")
def fnv1a_step(h, byte):
    """The hash h with one more byte hashed in."""
    return (h ^ np.uint64(byte)) * _FNV_PRIME


@njit(cache=True)
def lower(b):
    """An ASCII upper-case letter's byte lower-cased, any other byte as it is."""
    return b + 32 if 65 <= b <= 90 else b


@njit(cache=True, inline="always")
def char_at(data, i):
    """(code point, length in bytes) of the UTF-8 character starting at i (valid UTF-8)."""
    b = np.int64(data[i])
    if b < 0xE0:
        return ((b & 0x1F) << 6) | (data[i + 1] & 0x3F), 2
    if b < 0xF0:
        return ((b & 0x0F) << 12) | ((np.int64(data[i + 1]) & 0x3F) << 6) | (data[i + 2] & 0x3F), 3
    return (((b & 0x07) << 18) | ((np.int64(data[i + 1]) & 0x3F) << 12)
            | ((np.int64(data[i + 2]) & 0x3F) << 6) | (data[i + 3] & 0x3F)), 4


@njit(cache=True)
def hash_lower(data, s, e):
    """FNV-1a of data[s:e] lower-cased (ASCII): the key of the vocabulary's table
    (compiled.py)."""
    h = FNV_OFFSET
    for i in range(s, e):
        h = fnv1a_step(h, lower(data[i]))
    return h


def _pointer(context, builder, signature, args, pointee, at=0):
    """A `pointee *` to byte args[at + 1] of the uint8 array args[at]."""
    ary = context.make_array(signature.args[at])(context, builder, args[at])
    index = context.cast(builder, args[at + 1], signature.args[at + 1], types.intp)
    return builder.bitcast(builder.gep(ary.data, [index]), pointee.as_pointer())


def _is_uint8_array(arr, i) -> bool:
    return isinstance(arr, types.Array) and arr.dtype == types.uint8 and isinstance(i, types.Integer)


@intrinsic
def load_u64(typingctx, arr, i):
    """arr[i:i + 8] as a little-endian uint64."""
    if not _is_uint8_array(arr, i):
        return None

    def codegen(context, builder, signature, args):
        return builder.load(_pointer(context, builder, signature, args, ir.IntType(64)), align=1)
    return types.uint64(arr, i), codegen


@intrinsic
def load_u16(typingctx, arr, i):
    """arr[i] | arr[i + 1] << 8 (two bytes in one load)."""
    if not _is_uint8_array(arr, i):
        return None

    def codegen(context, builder, signature, args):
        value = builder.load(_pointer(context, builder, signature, args, ir.IntType(16)), align=1)
        return builder.zext(value, ir.IntType(64))
    return types.int64(arr, i), codegen


@intrinsic
def store_u64(typingctx, arr, i, v):
    """arr[i:i + 8] = the little-endian bytes of v."""
    if not _is_uint8_array(arr, i):
        return None

    def codegen(context, builder, signature, args):
        value = context.cast(builder, args[2], signature.args[2], types.uint64)
        builder.store(value, _pointer(context, builder, signature, args, ir.IntType(64)), align=1)
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


# 32 bytes at a time as LLVM vectors.
_I8, _I32 = ir.IntType(8), ir.IntType(32)
_V32 = ir.VectorType(_I8, 32)


def _load32(context, builder, signature, args, at=0):
    """The 32 bytes of array args[at] from byte args[at + 1], as a <32 x i8> vector."""
    return builder.load(_pointer(context, builder, signature, args, _V32, at), align=1)


def _splat(byte: int):
    return ir.Constant(_V32, [ir.Constant(_I8, byte)] * 32)


def _mask(builder, lanes):
    """<32 x i1> -> the 32 bits as a uint64 (bit k: lane k)."""
    return builder.zext(builder.bitcast(lanes, _I32), ir.IntType(64))


@intrinsic
def space_mask32(typingctx, arr, i):
    """Bit k set where arr[i + k] is an ASCII space (k < 32)."""
    if not _is_uint8_array(arr, i):
        return None

    def codegen(context, builder, signature, args):
        v = _load32(context, builder, signature, args)
        return _mask(builder, builder.icmp_unsigned("==", v, _splat(0x20)))
    return types.uint64(arr, i), codegen


@intrinsic
def json_special_mask32(typingctx, arr, i):
    """Bit k set where arr[i + k] (k < 32) is not a byte a JSON string holds as itself: a
    control character, '"', '\\\\' or a non-ASCII byte."""
    if not _is_uint8_array(arr, i):
        return None

    def codegen(context, builder, signature, args):
        v = _load32(context, builder, signature, args)
        low = builder.icmp_unsigned("<", v, _splat(0x20))
        high = builder.icmp_unsigned(">=", v, _splat(0x80))
        quote = builder.icmp_unsigned("==", v, _splat(0x22))
        backslash = builder.icmp_unsigned("==", v, _splat(0x5C))
        return _mask(builder, builder.or_(builder.or_(low, high), builder.or_(quote, backslash)))
    return types.uint64(arr, i), codegen


@intrinsic
def copy32(typingctx, dst, j, src, i):
    """dst[j:j + 32] = src[i:i + 32] (one unaligned vector load and store)."""
    if not (_is_uint8_array(dst, j) and _is_uint8_array(src, i)):
        return None

    def codegen(context, builder, signature, args):
        builder.store(_load32(context, builder, signature, args, at=2),
                      _pointer(context, builder, signature, args, _V32), align=1)
        return context.get_dummy_value()
    return types.void(dst, j, src, i), codegen


@intrinsic
def count_bits(typingctx, x):
    """How many bits of the uint64 x are set (one popcnt)."""
    if not (isinstance(x, types.Integer) and x.bitwidth == 64):
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return types.int64(x), codegen
