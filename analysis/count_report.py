"""python analysis/count_report.py [COUNTS_DIR] [OUT_PNG]: the checkout's spelling of
`freqgap count-report --counts COUNTS_DIR --out OUT_PNG` (freqgap/cli/count_report.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from freqgap.cli import main  # noqa: E402

if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(["count-report", "--counts", args[0] if args else "out/counts",
                   "--out", args[1] if len(args) > 1 else "out/reports/counts.png"]))
