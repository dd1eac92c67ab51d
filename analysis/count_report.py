"""python analysis/count_report.py [COUNTS_DIR] [OUT_PNG] — plot what the counting job counted."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from freqgap.analysis.counts import number_frequencies, plot_counts  # noqa: E402

if __name__ == "__main__":
    counts = sys.argv[1] if len(sys.argv) > 1 else "out/counts"
    out = sys.argv[2] if len(sys.argv) > 2 else "out/reports/counts.png"
    top = number_frequencies(counts, limit=10)
    print("most frequent number terms: " + ", ".join(f"{t} ({c:,})" for t, c in top))
    print(f"plot: {plot_counts(counts, out)}")
