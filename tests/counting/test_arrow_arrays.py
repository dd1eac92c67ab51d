"""arrow_arrays builds the very arrays pa.array builds (without importing pandas)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from freqgap.counting import arrow_arrays


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint16", "uint64", "float64"])
def test_numeric_equals_pa_array(dtype):
    values = (np.arange(-5, 20) % 7).astype(dtype)
    for sliced in (values, values[3:17], values[::2]):
        made = arrow_arrays.numeric(sliced)
        made.validate(full=True)
        assert made.equals(pa.array(sliced))
        assert arrow_arrays.to_numpy(made).tolist() == sliced.tolist()


def test_numeric_refuses_what_it_cannot_copy_exactly():
    for bad in (np.array([True, False]), np.array(["a"]), np.zeros((2, 2))):
        with pytest.raises(TypeError):
            arrow_arrays.numeric(bad)


def test_int64_of_lists_with_and_without_nulls():
    for values in ([], [1, 2, 3], [None, 5, None, -7, 2**62], [None] * 9, list(range(20)) + [None]):
        made = arrow_arrays.int64(values)
        made.validate(full=True)
        assert made.equals(pa.array(values, pa.int64())), values
        assert made.null_count == values.count(None)


def test_strings_equal_pa_array():
    for values in ([], ["a"], ["", "números", "x" * 1000, "", "日本語 ok"], ["kind@3@bad line"] * 50):
        made = arrow_arrays.strings(values)
        made.validate(full=True)
        assert made.equals(pa.array(values, pa.string())), values


def test_to_numpy_of_a_slice_and_refusals():
    array = pa.array(np.arange(10, dtype=np.int64)).slice(3, 4)
    assert arrow_arrays.to_numpy(array).tolist() == [3, 4, 5, 6]
    with pytest.raises(TypeError):
        arrow_arrays.to_numpy(pa.array([1, None], pa.int64()))
    with pytest.raises(TypeError):
        arrow_arrays.to_numpy(pa.array(["a"]))


def test_check_utf8():
    arrow_arrays.check_utf8("plain and ümlaut ✓".encode())
    arrow_arrays.check_utf8(b"")
    for bad in (b"\xff", b"ok \xc3", b"\xed\xa0\x80"):      # stray byte, cut sequence, a surrogate
        with pytest.raises(pa.ArrowInvalid):
            arrow_arrays.check_utf8(bad)
