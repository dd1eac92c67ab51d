"""Input files: listing (files, directories, globs) and streaming their lines.

Lines are streamed with bounded memory whatever the file size: a compressed shard is read
in 1 MiB blocks and only the current decompressed block (and a line running on past its
end) is held. Truncated and corrupt compressed files
raise `BadInputError` instead of ending early in silence (python-zstandard's stream reader
would return a short stream for a truncated file, so frames are checked explicitly).
"""

from __future__ import annotations

import fnmatch
import glob
import os
import zlib
from dataclasses import dataclass
from typing import Iterator
from urllib.parse import urlparse

import numpy as np
import zstandard

from freqgap.errors import FreqgapError

BLOCK = 1 << 20
JSONL_SUFFIXES = (".jsonl", ".json", ".jsonl.zst", ".json.zst", ".jsonl.gz", ".json.gz", ".zst", ".gz")
PARQUET_SUFFIXES = (".parquet",)


class BadInputError(FreqgapError):
    """A bad input file or record; the message names the file and, where known, the line."""

    def __init__(self, path: str, reason: str, line: int | None = None) -> None:
        self.path, self.reason, self.line = path, reason, line
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {reason}")


@dataclass(frozen=True)
class InputFile:
    """One input file as planned by the driver."""

    index: int
    path: str
    size: int
    mtime: int

    @property
    def is_parquet(self) -> bool:
        return self.path.endswith(PARQUET_SUFFIXES)


def _is_remote(path: str) -> bool:
    scheme = urlparse(path).scheme
    return len(scheme) > 1 and scheme != "file"


def arrow_fs(path: str):
    """(pyarrow file system, path inside it) of a local path, file:// URI or remote URI;
    s3a:// and s3n:// (Hadoop's names) are s3:// to Arrow. The one way the job's Python
    side opens files: inputs, run files, pieces and the final tables."""
    import pyarrow.fs as pafs

    if not _is_remote(path):
        return pafs.LocalFileSystem(), _local_path(path)
    for alias in ("s3a://", "s3n://"):
        if path.startswith(alias):
            path = "s3://" + path[len(alias):]
    return pafs.FileSystem.from_uri(path)


def _local_path(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


def local_path(path: str) -> str | None:
    """The local file system path that a local path or file:// URI names (as `arrow_fs`
    and `storage.qualify` read it: no percent-decoding), or None for a remote URI."""
    return None if _is_remote(path) else _local_path(path)


def _is_data_file(name: str) -> bool:
    base = os.path.basename(name)
    return (not base.startswith((".", "_"))) and base.endswith(JSONL_SUFFIXES + PARQUET_SUFFIXES)


def list_inputs(specs: list[str]) -> list[InputFile]:
    """Expand files, directories (recursively) and globs into a sorted, de-duplicated list.

    Sorting by path makes the plan independent of the order inputs were given in. An
    input that matches nothing is an error, never an empty count.
    """
    found: dict[str, tuple[int, int]] = {}
    for spec in specs:
        matched = _expand_remote(spec) if _is_remote(spec) else _expand_local(spec)
        if not matched:
            raise BadInputError(spec, "input matches no file (check the path or glob)")
        found.update(matched)
    return [InputFile(i, p, size, mtime) for i, (p, (size, mtime)) in enumerate(sorted(found.items()))]


def _expand_local(spec: str) -> dict[str, tuple[int, int]]:
    spec = _local_path(spec)
    paths = sorted(glob.glob(spec, recursive=True)) if glob.has_magic(spec) else [spec]
    out: dict[str, tuple[int, int]] = {}
    for p in paths:
        if os.path.isdir(p):
            for root, _dirs, files in os.walk(p):
                for name in files:
                    if _is_data_file(name):
                        full = os.path.abspath(os.path.join(root, name))
                        st = os.stat(full)
                        out[full] = (st.st_size, int(st.st_mtime))
        elif os.path.isfile(p):
            st = os.stat(p)
            out[os.path.abspath(p)] = (st.st_size, int(st.st_mtime))
    return out


def _expand_remote(spec: str) -> dict[str, tuple[int, int]]:
    import pyarrow.fs as pafs

    fs, inner = arrow_fs(spec)
    scheme = spec.split("://", 1)[0]
    magic = glob.has_magic(inner)
    base = inner.split("*", 1)[0].rsplit("/", 1)[0] if magic else inner
    info = fs.get_file_info(base)
    if info.type == pafs.FileType.NotFound:
        return {}
    if info.type == pafs.FileType.File and not magic:
        infos = [info]
    else:
        infos = [i for i in fs.get_file_info(pafs.FileSelector(base, recursive=True))
                 if i.type == pafs.FileType.File and _is_data_file(i.path)]
        if magic:
            infos = [i for i in infos if fnmatch.fnmatch(i.path, inner)]
    return {f"{scheme}://{i.path}": (i.size, int(i.mtime.timestamp()) if i.mtime else 0) for i in infos}


def _open_binary(path: str):
    if _is_remote(path):
        fs, inner = arrow_fs(path)
        return fs.open_input_stream(inner)
    return open(_local_path(path), "rb")


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
            from freqgap.counting.words import count_byte as _count_byte
        except ImportError:
            _count_byte = lambda a, b: np.count_nonzero(a == b)  # noqa: E731
    return int(_count_byte(np.frombuffer(data, np.uint8), 10))


_count_byte = None


def iter_line_blocks(path: str) -> Iterator[tuple[int, bytes]]:
    """(1-based number of the first line, whole lines joined by b"\\n") of a JSON Lines file:
    each decompressed block cut after its last newline, so no line is split and the
    consumer splits (and parses) a block at once instead of line by line."""
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
            whole = b"".join(pieces + [memoryview(block)[:cut]]) if pieces else block[:cut]   # one copy
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
        for k, line in enumerate(block.split(b"\n")):
            yield first + k, line


def iter_parquet_texts(path: str, column: str, batch_rows: int = 2048) -> Iterator[tuple[int, object]]:
    """(1-based row number, text value) of a Parquet file's text column, streamed by row group."""
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(_open_binary(path) if _is_remote(path) else _local_path(path))
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
