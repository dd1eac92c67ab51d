"""The Megatron/GPT-NeoX indexed format: the writer follows the layout byte for byte and the
reader gives back every entry; malformed files are refused naming the file."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from freqgap.counting.indexed import MAGIC, IndexedDataset, IndexedFormatError, write_indexed


def test_layout_byte_for_byte(tmp_path):
    entries = [np.array([5, 0, 7], np.uint16), np.array([65535], np.uint16), np.array([1, 2], np.uint16)]
    prefix = write_indexed(tmp_path / "document", entries)
    raw = (tmp_path / "document.idx").read_bytes()
    assert raw[:9] == MAGIC == b"MMIDIDX\x00\x00"
    version, code, count, docs = struct.unpack("<QBQQ", raw[9:34])
    assert (version, code, count, docs) == (1, 8, 3, 4)
    sizes = np.frombuffer(raw[34:46], np.int32)
    pointers = np.frombuffer(raw[46:70], np.int64)
    doc_idx = np.frombuffer(raw[70:], np.int64)
    assert sizes.tolist() == [3, 1, 2] and pointers.tolist() == [0, 6, 8]
    assert doc_idx.tolist() == [0, 1, 2, 3]
    assert (tmp_path / "document.bin").read_bytes() == np.concatenate(entries).tobytes()
    data = IndexedDataset(prefix + ".bin")
    assert len(data) == 3 and data.dtype == np.uint16
    assert [data[i].tolist() for i in range(3)] == [e.tolist() for e in entries]


def test_int32_entries_and_custom_doc_index(tmp_path):
    entries = [np.arange(10, dtype=np.int32) * 100_000, np.array([], np.int32), np.array([3], np.int32)]
    write_indexed(tmp_path / "x", entries, dtype=np.int32, doc_idx=[0, 2, 3])
    data = IndexedDataset(tmp_path / "x.idx")
    assert data.dtype == np.int32 and data.doc_idx.tolist() == [0, 2, 3]
    assert [data[i].tolist() for i in range(3)] == [e.tolist() for e in entries]


def test_bad_files_are_named(tmp_path):
    write_indexed(tmp_path / "d", [np.array([1, 2, 3], np.uint16)])
    idx = tmp_path / "d.idx"
    good = idx.read_bytes()
    idx.write_bytes(b"NOTANIDX\x00" + good[9:])
    with pytest.raises(IndexedFormatError, match="d.idx: not a Megatron mmap index"):
        IndexedDataset(tmp_path / "d")
    idx.write_bytes(good[:-3])
    with pytest.raises(IndexedFormatError, match="d.idx: .* bytes, but its header"):
        IndexedDataset(tmp_path / "d")
    idx.write_bytes(good)
    (tmp_path / "d.bin").write_bytes(b"\x01\x00")
    with pytest.raises(IndexedFormatError, match="d.bin: 2 bytes.*truncated"):
        IndexedDataset(tmp_path / "d")
    with pytest.raises(IndexedFormatError, match="missing.idx: not found"):
        IndexedDataset(tmp_path / "missing")
    with pytest.raises(IndexedFormatError, match="out of range"):
        write_indexed(tmp_path / "e", [np.array([70000])], dtype=np.uint16)
