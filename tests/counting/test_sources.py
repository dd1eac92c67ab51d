"""Input listing and line streaming: formats, line numbers, truncation and corruption."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import given, settings, strategies as st
import zstandard

from freqgap.counting.inputs import BadInputError, list_inputs
from freqgap.counting.sources import iter_lines, iter_parquet_texts
from tests.counting.corpus_utils import write_jsonl


def test_formats_give_the_same_lines(tmp_path):
    texts = [f"doc {i} has {i * 7} hours" for i in range(500)]
    lines = {}
    for name in ("a.jsonl", "a.jsonl.zst", "a.jsonl.gz"):
        path = write_jsonl(tmp_path / name, texts)
        lines[name] = list(iter_lines(str(path)))
    assert lines["a.jsonl"] == lines["a.jsonl.zst"] == lines["a.jsonl.gz"]
    assert [n for n, _ in lines["a.jsonl"]] == list(range(1, 501))


def test_multi_frame_zstd_and_missing_final_newline(tmp_path):
    c = zstandard.ZstdCompressor()
    path = tmp_path / "m.jsonl.zst"
    path.write_bytes(c.compress(b'{"text": "1"}\n{"te') + c.compress(b'xt": "2"}\n{"text": "3"}'))
    assert [line for _, line in iter_lines(str(path))] == [b'{"text": "1"}', b'{"text": "2"}', b'{"text": "3"}']


def test_truncated_and_corrupt_compressed_files(tmp_path):
    texts = [f"number {i} " * 50 for i in range(3000)]
    good = write_jsonl(tmp_path / "g.jsonl.zst", texts).read_bytes()
    (tmp_path / "t.jsonl.zst").write_bytes(good[: len(good) // 2])
    with pytest.raises(BadInputError, match="t.jsonl.zst: truncated zstd"):
        list(iter_lines(str(tmp_path / "t.jsonl.zst")))
    (tmp_path / "c.jsonl.zst").write_bytes(b"\x28\xb5\x2f\xfd" + b"garbage" * 100)
    with pytest.raises(BadInputError, match="c.jsonl.zst: corrupt zstd"):
        list(iter_lines(str(tmp_path / "c.jsonl.zst")))
    gz = gzip.compress(b"".join(f'{{"text": "{t}"}}\n'.encode() for t in texts))
    (tmp_path / "t.jsonl.gz").write_bytes(gz[: len(gz) // 2])
    with pytest.raises(BadInputError, match="truncated gzip"):
        list(iter_lines(str(tmp_path / "t.jsonl.gz")))


def test_empty_file_and_empty_compressed_file(tmp_path):
    (tmp_path / "e.jsonl").write_bytes(b"")
    with pytest.raises(BadInputError, match="e.jsonl: empty file"):
        list(iter_lines(str(tmp_path / "e.jsonl")))
    (tmp_path / "e.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(b""))
    with pytest.raises(BadInputError, match="empty file"):
        list(iter_lines(str(tmp_path / "e.jsonl.zst")))


def test_listing_is_sorted_and_deduplicated(tmp_path):
    for name in ("b.jsonl", "a.jsonl.zst", "sub/c.jsonl.gz", "_manifest.json", "notes.txt"):
        write_jsonl(tmp_path / name, ["1"])
    files = list_inputs([str(tmp_path / "sub"), str(tmp_path), str(tmp_path / "*.jsonl")])
    assert [f.path.rsplit("/", 1)[1] for f in files] == ["a.jsonl.zst", "b.jsonl", "c.jsonl.gz"]
    assert [f.index for f in files] == [0, 1, 2]
    with pytest.raises(BadInputError, match="matches no file"):
        list_inputs([str(tmp_path / "nothing-*.jsonl.zst")])


def test_parquet_text_column(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"text": ["a 1", "b 2"], "id": [1, 2]}), tmp_path / "p.parquet")
    assert list(iter_parquet_texts(str(tmp_path / "p.parquet"), "text")) == [(1, "a 1"), (2, "b 2")]
    with pytest.raises(BadInputError, match="no column 'body'"):
        list(iter_parquet_texts(str(tmp_path / "p.parquet"), "body"))


@pytest.mark.parametrize("raw,expected", [
    (b'{"text": "5 hours"}', ("5 hours", None)),
    (b'  {"text": "a", "meta": {"pile_set_name": "FreeLaw"}}\r', ("a", "FreeLaw")),
    (b'{"doc": {"body": "x"}}', None),
])
def test_parse_record_accepts_pile_records(raw, expected):
    from freqgap.counting.records import RecordError, parse_record

    if expected is None:
        with pytest.raises(RecordError, match="missing text field"):
            parse_record(raw, "text", "meta.pile_set_name")
        assert parse_record(raw, "doc.body", None) == ("x", None)
    else:
        assert parse_record(raw, "text", "meta.pile_set_name") == expected


@pytest.mark.parametrize("raw,reason", [
    (b'{"text": "a"} {"text": "b"}', "not valid JSON"),
    (b'{"text": "bad \\ud800 surrogate"}', "lone surrogate"),
    (b'{"text": ["a"]}', "text field is not a string"),
    (b'"just a string"', "not a JSON object"),
    (b'\xff{"text": "a"}', "invalid UTF-8"),
])
def test_parse_record_names_the_reason(raw, reason):
    from freqgap.counting.records import RecordError, parse_record

    with pytest.raises(RecordError, match=reason):
        parse_record(raw, "text", "meta.pile_set_name")


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=70))
def test_newline_count_is_bytes_count(data):
    from freqgap.counting.sources import newline_count

    assert newline_count(data) == data.count(b"\n")


def test_blocks_are_views_of_whole_lines_numbered_as_the_file(tmp_path, monkeypatch):
    """iter_line_blocks hands out views of the decompressed blocks (no copy); joined, they
    are the file's lines with their numbers, whatever the block size."""
    from freqgap.counting import sources

    text = b"".join(b'{"text": "line %d"}\n' % i for i in range(40000))
    path = tmp_path / "v.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(text))
    monkeypatch.setattr(sources, "BLOCK", 997)           # many small reads, lines across blocks
    monkeypatch.setattr(sources, "ZSTD_WRITE_SIZE", 4099)
    blocks = list(sources.iter_line_blocks(str(path)))
    assert len(blocks) > 1 and any(isinstance(b, memoryview) for _, b in blocks)
    lines = [(first + k, line) for first, block in blocks for k, line in enumerate(bytes(block).split(b"\n"))]
    assert lines == list(enumerate(text.rstrip(b"\n").split(b"\n"), start=1))


def test_a_view_too_big_for_one_chunk_is_cut_as_bytes_are():
    from freqgap.counting.partials import _row_parts

    data = b"\n".join(b"x" * (i % 50) for i in range(5000))
    assert [(n, bytes(p)) for n, p in _row_parts(7, memoryview(data), 1000)] == list(_row_parts(7, data, 1000))
