"""The counts picture reads the Parquet through DuckDB and orders terms by frequency."""

from __future__ import annotations

from freqgap.counting.job import run_count
from freqgap.analysis.counts import number_frequencies, plot_counts, word_frequencies
from tests.counting.corpus_utils import write_jsonl


def test_count_report(spark, tmp_path):
    write_jsonl(tmp_path / "in.jsonl", ["5 5 5 12 12 7 hours days day"])
    run_count([str(tmp_path / "in.jsonl")], str(tmp_path / "out"), spark=spark)
    assert number_frequencies(tmp_path / "out") == [("5", 3), ("12", 2), ("7", 1)]
    assert word_frequencies(tmp_path / "out") == [("day", 2), ("hour", 1)]
    png = plot_counts(tmp_path / "out", tmp_path / "counts.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
