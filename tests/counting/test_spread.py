"""Pieces of a spread file: the same lines, numbered as in the file, whatever the piece size."""

from __future__ import annotations

import gzip

import pytest
import zstandard

from freqgap.counting import partials, spread
from freqgap.counting.inputs import InputFile


def _lines(rows):
    """(file, line number, line) of every line of some line rows."""
    out = []
    for fidx, first, payload, is_text, error in rows:
        if error is not None or is_text:
            out.append((fidx, first, payload, error))
            continue
        out.extend((fidx, first + k, line, None) for k, line in enumerate(bytes(payload).split(b"\n")))
    return out


@pytest.mark.parametrize("piece_bytes", [1, 7, 100, 1 << 20])
def test_pieces_give_the_files_lines_and_numbers(tmp_path, monkeypatch, piece_bytes):
    monkeypatch.setattr(spread, "PIECE_BYTES", piece_bytes)
    text = b"".join(b'{"text": "line %d with 5 hours"}\n' % i if i % 7 else b"\n" for i in range(3000))
    a, b = tmp_path / "a.jsonl.zst", tmp_path / "b.jsonl.gz"
    a.write_bytes(zstandard.ZstdCompressor().compress(text))
    b.write_bytes(gzip.compress(text[:-1]))                      # no final newline
    files = [InputFile(0, str(a), a.stat().st_size, 0), InputFile(1, str(b), b.stat().st_size, 0)]
    pieces = spread.split_files(files, (tmp_path / "split").as_uri(), "text", "fail")
    assert len(pieces) > 2 or piece_bytes > len(text)
    got = _lines(spread.piece_rows(reversed(pieces), "text", "fail"))
    want = _lines(partials.line_rows(files, "text", "fail"))
    assert sorted(got) == sorted(want)
    assert sum(p.size for p in pieces) == 2 * len(text)


def test_a_damaged_file_in_skip_mode_travels_as_its_error_row(tmp_path):
    good = zstandard.ZstdCompressor().compress(b'{"text": "1 2 3"}\n' * 1000)
    bad = tmp_path / "bad.jsonl.zst"
    bad.write_bytes(good[: len(good) // 2])
    f = InputFile(3, str(bad), bad.stat().st_size, 0)
    pieces = spread.split_files([f], (tmp_path / "split").as_uri(), "text", "skip")
    assert [p.row for p in pieces if p.row] == list(
        r for r in partials.line_rows([f], "text", "skip") if r[4] is not None)
    with pytest.raises(partials.BadInputError, match="truncated zstd"):
        spread.split_files([f], (tmp_path / "split2").as_uri(), "text", "fail")


def test_parquet_files_are_counted_whole(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"text": ["5 hours", "x"]}), path)
    f = InputFile(0, str(path), path.stat().st_size, 0)
    pieces = spread.split_files([f], (tmp_path / "split").as_uri(), "text", "fail")
    assert pieces == [spread.Piece(f.size, whole=f)]
    assert list(spread.piece_rows(pieces, "text", "fail")) == list(partials.line_rows([f], "text", "fail"))
