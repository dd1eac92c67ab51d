"""`freqgap count-report`: the counts report as an installed subcommand (issue 40, item 2),
not only the checkout script analysis/count_report.py."""

from __future__ import annotations

from freqgap.cli import main
from tests.instances.counts_fixture import write_counts


def test_count_report_prints_the_top_numbers_and_writes_the_plot(tmp_path, capsys):
    counts = write_counts(tmp_path / "counts", {"5": 30, "12": 20, "7": 10, "hour": 4, "day": 0},
                          {("5", "hour"): 2})
    png = tmp_path / "reports" / "counts.png"
    assert main(["count-report", "--counts", str(counts), "--out", str(png), "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert "most frequent number terms: 5 (30), 12 (20)\n" in out and f"plot: {png}" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_count_report_of_no_counts_is_one_line(tmp_path, capsys):
    assert main(["count-report", "--counts", str(tmp_path / "nothing")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
