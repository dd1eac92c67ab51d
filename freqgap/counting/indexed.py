"""The Megatron / GPT-NeoX "mmap" indexed dataset (`PREFIX.idx` + `PREFIX.bin`), read with
numpy.memmap and written by the project's own writer (no GPT-NeoX code).

Why here: Pythia's pre-shuffled training data is published in this format, one entry per
2,049-token training sequence in the order the sequences were consumed, so counting it by
entry index is counting by training step. The demo trainer writes its own data order in
the same format, so one reader serves both.

`.idx` layout (little-endian):
    magic     b"MMIDIDX\\x00\\x00"           9 bytes
    version   uint64 = 1
    dtype     uint8 code (1 uint8, 2 int8, 3 int16, 4 int32, 5 int64, 6 float64, 7 float32, 8 uint16)
    count     uint64, number of entries (sequences)
    doc_count uint64, length of the document index
    sizes     int32[count]       tokens per entry
    pointers  int64[count]       byte offset of each entry in `.bin`
    doc_idx   int64[doc_count]   entry index where each Megatron "document" starts (0, ..., count)
`.bin` is the entries' token ids back to back, in `dtype`.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Iterable

import numpy as np

from freqgap.errors import FreqgapError

MAGIC = b"MMIDIDX\x00\x00"
VERSION = 1
DTYPES = {1: np.uint8, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64, 6: np.float64,
          7: np.float32, 8: np.uint16}
_HEADER = len(MAGIC) + 8 + 1 + 8 + 8


class IndexedFormatError(FreqgapError):
    """A `.idx`/`.bin` pair that does not follow the format; the message names the file."""


def prefix_of(path: str | os.PathLike) -> str:
    """`document` for `document`, `document.idx` or `document.bin`."""
    text = str(path)
    return text[:-4] if text.endswith((".idx", ".bin")) else text


def dtype_code(dtype) -> int:
    for code, dt in DTYPES.items():
        if np.dtype(dt) == np.dtype(dtype):
            return code
    raise IndexedFormatError(f"dtype {dtype} has no code in the indexed format (have {list(DTYPES.values())})")


class IndexedDataset:
    """Read-only view of `PREFIX.idx`/`PREFIX.bin`; entries are read lazily from the memmap."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.prefix = prefix_of(path)
        self.idx_path, self.bin_path = self.prefix + ".idx", self.prefix + ".bin"
        for p in (self.idx_path, self.bin_path):
            if not os.path.isfile(p):
                raise IndexedFormatError(f"{p}: not found (an indexed dataset is PREFIX.idx + PREFIX.bin)")
        with open(self.idx_path, "rb") as f:
            head = f.read(_HEADER)
        if len(head) < _HEADER or head[:len(MAGIC)] != MAGIC:
            raise IndexedFormatError(f"{self.idx_path}: not a Megatron mmap index (magic "
                                     f"{head[:len(MAGIC)]!r}, expected {MAGIC!r})")
        version, code, count, doc_count = struct.unpack("<QBQQ", head[len(MAGIC):])
        if version != VERSION:
            raise IndexedFormatError(f"{self.idx_path}: index version {version}, only {VERSION} is known")
        if code not in DTYPES:
            raise IndexedFormatError(f"{self.idx_path}: unknown dtype code {code}")
        self.dtype = np.dtype(DTYPES[code])
        expected = _HEADER + 4 * count + 8 * count + 8 * doc_count
        size = os.path.getsize(self.idx_path)
        if size != expected:
            raise IndexedFormatError(f"{self.idx_path}: {size} bytes, but its header "
                                     f"({count} entries, {doc_count} document starts) needs {expected}")
        index = np.memmap(self.idx_path, mode="r", dtype=np.uint8)
        self.sizes = index[_HEADER:_HEADER + 4 * count].view(np.int32)
        self.pointers = index[_HEADER + 4 * count:_HEADER + 12 * count].view(np.int64)
        self.doc_idx = index[_HEADER + 12 * count:].view(np.int64)
        bin_size = os.path.getsize(self.bin_path)
        if bin_size % self.dtype.itemsize:
            raise IndexedFormatError(f"{self.bin_path}: {bin_size} bytes, not a multiple of its "
                                     f"{self.dtype.name} token size {self.dtype.itemsize} "
                                     "(truncated or not this index's .bin)")
        self.tokens = np.memmap(self.bin_path, mode="r", dtype=self.dtype) \
            if bin_size else np.zeros(0, self.dtype)
        self._check_entries(bin_size)

    def _check_entries(self, bin_size: int) -> None:
        """Every entry lies within the `.bin`, aligned, of size >= 0 (vectorised: a pass
        over the index, not the tokens); otherwise entries would be dropped or garbled."""
        sizes = self.sizes.astype(np.int64)
        ends = self.pointers + sizes * self.dtype.itemsize
        bad = np.flatnonzero((sizes < 0) | (self.pointers < 0) | (ends > bin_size)
                             | (self.pointers % self.dtype.itemsize != 0))
        if bad.size:
            i = int(bad[0])
            raise IndexedFormatError(
                f"{self.bin_path}: {bin_size} bytes, but entry {i} of {self.idx_path} (size "
                f"{int(sizes[i])}, pointer {int(self.pointers[i])}) lies outside it or is "
                f"misaligned; {bad.size} such entries (truncated download, or not this "
                "index's .bin?)")

    def check_token_ids(self, ids: np.ndarray, vocab_size: int, entry: int) -> None:
        """Refuse token ids outside the tokenizer's vocabulary (another tokenizer's data,
        or a garbled `.bin`): decoding would drop or replace them silently."""
        if ids.size and (int(ids.max()) >= vocab_size or int(ids.min()) < 0):
            from freqgap.counting.inputs import BadInputError    # reported from a worker

            wrong = int(ids.max()) if int(ids.max()) >= vocab_size else int(ids.min())
            raise BadInputError(self.bin_path, f"entry {entry} holds token id {wrong}, outside "
                                f"the tokenizer's vocabulary of {vocab_size}; pass the "
                                "tokenizer this data was made with")

    def __len__(self) -> int:
        return int(self.sizes.shape[0])

    def __getitem__(self, i: int) -> np.ndarray:
        start = int(self.pointers[i]) // self.dtype.itemsize
        return self.tokens[start:start + int(self.sizes[i])]

    def entries(self, lo: int, hi: int) -> Iterable[tuple[int, np.ndarray]]:
        """(entry index, token ids) for entries lo..hi-1."""
        for i in range(lo, hi):
            yield i, self[i]


def write_indexed(path: str | os.PathLike, entries: Iterable[np.ndarray], dtype=np.uint16,
                  doc_idx: list[int] | None = None) -> str:
    """Write entries (1-d token arrays) as PREFIX.bin/.idx; returns the prefix.

    `doc_idx` defaults to one Megatron document per entry (0, 1, ..., count), as in Pythia's
    pre-shuffled files. Both files are written under temporary names and renamed.
    """
    prefix = prefix_of(path)
    Path(prefix).parent.mkdir(parents=True, exist_ok=True)
    dt = np.dtype(dtype)
    code = dtype_code(dt)
    sizes: list[int] = []
    tmp_bin, tmp_idx = prefix + ".bin.tmp", prefix + ".idx.tmp"
    info = np.iinfo(dt) if dt.kind in "iu" else None
    with open(tmp_bin, "wb") as out:
        for entry in entries:
            arr = np.asarray(entry)
            if info is not None and arr.size and (arr.min() < info.min or arr.max() > info.max):
                raise IndexedFormatError(f"{prefix}.bin: token id out of range for {dt}")
            out.write(arr.astype(dt, copy=False).tobytes())
            sizes.append(int(arr.size))
    sizes_a = np.asarray(sizes, dtype=np.int32)
    pointers = np.zeros(len(sizes), dtype=np.int64)
    if len(sizes) > 1:
        pointers[1:] = np.cumsum(sizes_a[:-1].astype(np.int64)) * dt.itemsize
    docs = np.asarray(doc_idx if doc_idx is not None else range(len(sizes) + 1), dtype=np.int64)
    with open(tmp_idx, "wb") as out:
        out.write(MAGIC)
        out.write(struct.pack("<QBQQ", VERSION, code, len(sizes), len(docs)))
        out.write(sizes_a.tobytes())
        out.write(pointers.tobytes())
        out.write(docs.tobytes())
    os.replace(tmp_bin, prefix + ".bin")
    os.replace(tmp_idx, prefix + ".idx")
    return prefix
