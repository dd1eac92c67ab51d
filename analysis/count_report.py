"""The counts picture (README, docs/counting.md): `out/reports/counts.png` and the most
frequent number terms of a counting run, made by `freqgap count-report`.

    python analysis/count_report.py [COUNTS_DIR] [OUT_PNG]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from freqgap.cli import main as freqgap  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    return freqgap(["count-report", "--counts", args[0] if args else "out/counts",
                    "--out", args[1] if len(args) > 1 else "out/reports/counts.png"])


if __name__ == "__main__":
    sys.exit(main())
