"""Input files' lines, streamed (what to read: `inputs`, the driver's listing).

Lines are streamed with bounded memory whatever the file size: a compressed shard is read
in 1 MiB blocks and only the current decompressed block (and a line running on past its
end) is held. Truncated and corrupt compressed files
raise `BadInputError` instead of ending early in silence (python-zstandard's stream reader
would return a short stream for a truncated file, so frames are checked explicitly).
"""

from __future__ import annotations

import zlib
from typing import Iterator

import numpy as np
import zstandard

from freqgap.counting.inputs import BadInputError, arrow_fs, local_path

BLOCK = 1 << 20


def _open_binary(path: str, seekable: bool = False):
    """The file's bytes as stored. A remote file is opened with compression=None: pyarrow's
    default ('detect') would already decompress a .zst or .gz by its name, and the readers
    here decompress (and check the frames) themselves. Seekable: a random-access file (what
    a Parquet reader needs) instead of a stream."""
    local = local_path(path)
    if local is None:
        fs, inner = arrow_fs(path)
        return fs.open_input_file(inner) if seekable else fs.open_input_stream(inner, compression=None)
    return open(local, "rb")


def _framed_blocks(raw, path: str, new_decoder, errors, name: str) -> Iterator[bytes]:
    """Decompressed blocks of a stream of concatenated frames (zstd frames, gzip members).

    A stream that ends inside a frame is truncated: an error, never a short result.
    """
    dobj = new_decoder()
    pending = False   # inside a frame that has not ended yet
    while True:
        block = raw.read(BLOCK)
        if not block:
            break
        while block:
            try:
                out = dobj.decompress(block)
            except errors as exc:
                raise BadInputError(path, f"corrupt {name} data: {exc}") from exc
            pending = True
            if out:
                yield out
            if dobj.eof:
                pending = False
                block = dobj.unused_data
                dobj = new_decoder()
            else:
                block = b""
    if pending:
        raise BadInputError(path, f"truncated {name} file: the last frame does not end")


ZSTD_WRITE_SIZE = 8 << 20   # the decompressor's output step: a block's output in one piece


def _zstd_blocks(raw, path: str) -> Iterator[bytes]:
    return _framed_blocks(raw, path, lambda: zstandard.ZstdDecompressor().decompressobj(write_size=ZSTD_WRITE_SIZE),
                          zstandard.ZstdError, "zstd")


def _gzip_blocks(raw, path: str) -> Iterator[bytes]:
    return _framed_blocks(raw, path, lambda: zlib.decompressobj(wbits=47), zlib.error, "gzip")


def _plain_blocks(raw, path: str) -> Iterator[bytes]:
    while block := raw.read(BLOCK):
        yield block


def newline_count(data: bytes) -> int:
    """Newlines in data: compiled 8 bytes at a time where numba imports (3x numpy's
    compare-and-count, which is 1.5x bytes.count); imported on first use, not by the
    driver."""
    global _count_byte
    if _count_byte is None:
        try:
            from freqgap.counting.engines import count_byte as _count_byte
        except ImportError:
            _count_byte = lambda a, b: np.count_nonzero(a == b)  # noqa: E731
    return int(_count_byte(np.frombuffer(data, np.uint8), 10))


_count_byte = None


def iter_line_blocks(path: str) -> Iterator[tuple[int, bytes | memoryview]]:
    """(1-based number of the first line, whole lines joined by b"\\n") of a JSON Lines file:
    each decompressed block cut after its last newline, so no line is split and the
    consumer splits (and parses) a block at once instead of line by line.

    The lines are a bytes-like object: a view of the decompressed block. A line that runs on
    from the blocks before comes first, alone, as a joined copy of its own. Why: slicing the
    block, or joining the line's start to the whole block, copied every decompressed byte
    once more (`bytes(...)` where an API needs bytes)."""
    if path.endswith(".zst"):
        blocks = _zstd_blocks
    elif path.endswith(".gz"):
        blocks = _gzip_blocks
    else:
        blocks = _plain_blocks
    try:
        raw = _open_binary(path)
    except OSError as exc:
        raise BadInputError(path, f"cannot open: {exc}") from exc
    number = 0
    with raw:
        pieces: list[bytes] = []     # the start of a line that goes on in the next block
        for block in blocks(raw, path):
            cut = block.rfind(b"\n")
            if cut < 0:
                pieces.append(block)
                continue
            view, start = memoryview(block), 0
            if pieces:                              # the line that ran on: joined alone
                first = block.find(b"\n")
                yield number + 1, b"".join(pieces + [view[:first]])
                number += 1
                start = first + 1
            if start <= cut:
                whole = view[start:cut]
                yield number + 1, whole
                number += newline_count(whole) + 1
            pieces = [block[cut + 1:]] if cut + 1 < len(block) else []
        tail = b"".join(pieces)
        if tail:
            yield number + 1, tail
            number += newline_count(tail) + 1
    if number == 0:
        raise BadInputError(path, "empty file: no records")


def iter_lines(path: str) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, line bytes without the newline) of a JSON Lines file."""
    for first, block in iter_line_blocks(path):
        for k, line in enumerate(bytes(block).split(b"\n")):
            yield first + k, line


def iter_parquet_texts(path: str, column: str, batch_rows: int = 2048) -> Iterator[tuple[int, object]]:
    """(1-based row number, text value) of a Parquet file's text column, streamed by row group."""
    import pyarrow.parquet as pq

    try:
        local = local_path(path)
        handle = pq.ParquetFile(local if local is not None else _open_binary(path, seekable=True))
    except Exception as exc:  # pyarrow raises several types for a non-Parquet file
        raise BadInputError(path, f"not a readable Parquet file: {exc}") from exc
    if column not in handle.schema_arrow.names:
        raise BadInputError(path, f"Parquet file has no column {column!r} "
                                  f"(columns: {handle.schema_arrow.names})")
    number = 0
    for batch in handle.iter_batches(batch_size=batch_rows, columns=[column]):
        for value in batch.column(0).to_pylist():
            number += 1
            yield number, value
    if number == 0:
        raise BadInputError(path, "empty file: no records")
