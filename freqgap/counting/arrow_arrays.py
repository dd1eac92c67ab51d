"""Arrow arrays from numpy arrays and Python lists, built without pyarrow's pandas check.

Why: `pa.array(...)`, given anything (a list included), first asks pandas whether its
argument is a pandas object, and so imports pandas, a costly import in the worker daemon and
in the driver of every cold count, for objects that are never pandas objects here. These
build the same arrays from their buffers (`tests/counting/test_arrow_arrays.py` compares
them with `pa.array`; `test_startup_imports.py` checks that counting loads no pandas).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa


def numeric(values: np.ndarray) -> pa.Array:
    """A null-free Arrow array of a 1-d numeric numpy array, of its dtype (zero-copy when
    contiguous)."""
    array = np.ascontiguousarray(values)
    if array.ndim != 1 or array.dtype.kind not in "iuf":
        raise TypeError(f"arrow_arrays.numeric: a 1-d int/uint/float array, not {array.dtype} "
                        f"of {array.ndim} dimensions")
    return pa.Array.from_buffers(pa.from_numpy_dtype(array.dtype), array.shape[0],
                                 [None, pa.py_buffer(array)])


def int64(values: Sequence[int | None] | np.ndarray) -> pa.Array:
    """An int64 Arrow array of integers, a None as a null."""
    if isinstance(values, np.ndarray):
        return numeric(values.astype(np.int64, copy=False))
    present = np.fromiter((v is not None for v in values), dtype=bool, count=len(values))
    data = np.fromiter((0 if v is None else v for v in values), dtype=np.int64, count=len(values))
    if present.all():
        return numeric(data)
    validity = pa.py_buffer(np.packbits(present, bitorder="little"))
    return pa.Array.from_buffers(pa.int64(), len(values), [validity, pa.py_buffer(data)],
                                 null_count=int(len(values) - present.sum()))


def strings(values: Sequence[str]) -> pa.StringArray:
    """A null-free Arrow string array of Python strings."""
    encoded = [value.encode("utf-8") for value in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return pa.StringArray.from_buffers(len(encoded), pa.py_buffer(offsets),
                                       pa.py_buffer(b"".join(encoded)))


def check_utf8(data: bytes) -> None:
    """Raise pa.ArrowInvalid unless `data` is valid UTF-8 (Arrow's own check: its JSON
    reader does not validate)."""
    offsets = np.array([0, len(data)], dtype=np.int64)
    pa.LargeStringArray.from_buffers(1, pa.py_buffer(offsets), pa.py_buffer(data)).validate(full=True)


_NUMPY_TYPES = {pa.from_numpy_dtype(np.dtype(t)): np.dtype(t) for t in
                ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float32", "float64")}


def to_numpy(array: pa.Array) -> np.ndarray:
    """A read-only numpy view of a null-free numeric Arrow array (what
    `to_numpy(zero_copy_only=False)` gives for one)."""
    dtype = _NUMPY_TYPES.get(array.type)
    if dtype is None or array.null_count:
        raise TypeError(f"arrow_arrays.to_numpy: a null-free numeric array, not {array.type} "
                        f"with {array.null_count} nulls")
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array),
                         offset=array.offset * dtype.itemsize)
