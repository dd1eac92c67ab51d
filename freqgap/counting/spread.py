"""Spreading a few big files over all cores: decompress once, count everywhere.

zstd and gzip are not splittable, so a group with fewer files than cores would leave cores
idle. A split task decompresses one file and writes its lines, cut after a newline, as
plain *pieces* of about PIECE_BYTES under the work directory; count tasks then read pieces
in size-balanced bins. Why files, not Spark's shuffle: moving the decompressed text through
the JVM (pickled, lz4-compressed, written, read) cost more than the whole count; writing
and reading a piece costs a memory copy each (docs/performance.md).

A piece keeps its file index and the number of its first line, so a bad record is still
named by the original file and line. Parquet inputs are not split (they are counted whole
by one task), and a file-level error in `skip` mode travels as its error row.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Iterable, Iterator

from freqgap.counting import partials
from freqgap.counting.inputs import InputFile, arrow_fs, join

PIECE_BYTES = 4 << 20


@dataclass(frozen=True)
class Piece:
    """A unit of counting work: a written piece of lines, a whole (Parquet) file, or an
    error row of a file that failed in `skip` mode."""

    size: int
    uri: str | None = None           # a written piece
    file: int = 0                    # its file index
    first_line: int = 0
    whole: InputFile | None = None   # a file counted whole
    row: tuple | None = None         # an error row


def _pieces_of(f: InputFile, base: str, text_field: str, on_bad: str) -> Iterator[Piece]:
    """Write `f`'s lines as pieces under base/<attempt>/ and describe them."""
    if f.is_parquet:
        yield Piece(f.size, whole=f)
        return
    attempt = join(base, uuid.uuid4().hex)
    fs, path = arrow_fs(attempt)
    made = False
    blocks: list[bytes] = []
    first = size = 0

    def write() -> Piece:
        nonlocal made
        if not made:
            fs.create_dir(path, recursive=True)
            made = True
        name = f"{path}/{f.index:06d}-{first:012d}.jsonl"
        with fs.open_output_stream(name, compression=None) as out:
            for i, block in enumerate(blocks):
                if i:
                    out.write(b"\n")
                out.write(block)
        return Piece(size, uri=join(attempt, name.rsplit("/", 1)[1]), file=f.index,
                     first_line=first)

    for row in partials.line_rows([f], text_field, on_bad):
        if row[4] is not None:                 # a file-level error, skip mode
            yield Piece(0, row=row)
            continue
        if not blocks:
            first = row[1]
        blocks.append(row[2])
        size += len(row[2]) + 1
        if size >= PIECE_BYTES:
            yield write()
            blocks, size = [], 0
    if blocks:
        yield write()


def split_files(files: Iterable[InputFile], base: str, text_field: str, on_bad: str) -> list[Piece]:
    """The split task: pieces of every file of the partition."""
    return [piece for f in files for piece in _pieces_of(f, base, text_field, on_bad)]


def piece_rows(pieces: Iterable[Piece], text_field: str, on_bad: str) -> Iterator[tuple]:
    """The line rows of some pieces, as `partials.line_rows` gives them for whole files:
    a piece is one row of whole lines, numbered by its first line."""
    for piece in pieces:
        if piece.row is not None:
            yield piece.row
        elif piece.whole is not None:
            yield from partials.line_rows([piece.whole], text_field, on_bad)
        else:
            fs, path = arrow_fs(piece.uri)
            with fs.open_input_stream(path) as stream:
                data = stream.read()
            yield (piece.file, piece.first_line, data, False, None)
