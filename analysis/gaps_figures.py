"""The gaps figures and the Table-2-like summary (README, "What `make demo` prints";
docs/gaps.md): drawn again from a finished gaps result with the settings its manifest
recorded, into a directory of their own (the result itself is left as it was).

    python analysis/gaps_figures.py [RESULTS_DIR] [OUT_DIR]     # results -> out/reports/gaps
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from freqgap.errors import FreqgapError  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    results = Path(args[0] if args else "results")
    out = Path(args[1] if len(args) > 1 else "out/reports/gaps")
    try:
        import pandas as pd

        from freqgap.analysis.gaps import draw_all, summary_text
        from freqgap.manifest import read_manifest

        opts = read_manifest(results, stage="gaps")["config"]
        per_key = pd.read_parquet(results / "per_key.parquet")
        gaps = pd.read_parquet(results / "gaps.parquet")
    except FreqgapError as exc:
        print(f"gaps_figures: error: {exc}; `make demo` or `freqgap gaps` writes it", file=sys.stderr)
        return 2
    plots = draw_all(per_key, gaps, out, opts["plots"], opts["tables"], opts["task_labels"])
    print(summary_text(gaps, opts["tables"], opts["task_labels"], opts["binning"], opts["bin_percent"],
                       opts["boot_level"], results, plots, reference=opts["paper_reference"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
