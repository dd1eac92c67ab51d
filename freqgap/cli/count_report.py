"""counts/ → a picture and the top number terms of what `freqgap count` counted.

Example: freqgap count-report --counts out/counts --out out/reports/counts.png
(the installed command for what was the checkout script analysis/count_report.py).
"""

from __future__ import annotations

import argparse

from freqgap.cli.common import positive_int


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--counts", default="out/counts", metavar="DIR",
                   help="counts directory of `freqgap count` (with _manifest.json)")
    p.add_argument("--out", default="out/reports/counts.png", metavar="PNG",
                   help="the plot: rank-frequency of number terms, counts of vocabulary words")
    p.add_argument("--top", type=positive_int, default=10, metavar="N",
                   help="how many of the most frequent number terms to print")


def run(args: argparse.Namespace) -> int:
    from freqgap.analysis.counts import number_frequencies, plot_counts

    top = number_frequencies(args.counts, limit=args.top)
    print("most frequent number terms: " + ", ".join(f"{t} ({c:,})" for t, c in top))
    print(f"plot: {plot_counts(args.counts, args.out)}")
    return 0
