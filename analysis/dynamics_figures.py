"""The training-dynamics figures and table of the README ("Frequency over training time")
and docs/dynamics.md: Δ and accuracy against the step, accuracy against exposures, and the
per-checkpoint table, drawn again from a finished `freqgap dynamics gaps` result (`make
dynamics` writes results/dynamics) with the settings its manifest recorded.

    python analysis/dynamics_figures.py [RESULTS_DIR] [OUT_DIR] [TASK:DEF:K]
    # results/dynamics -> docs/img/dynamics_delta_over_steps.png, dynamics_accuracy_by_exposures.png
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from freqgap.errors import FreqgapError  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    results = Path(args[0] if args else "results/dynamics")
    out = Path(args[1] if len(args) > 1 else "docs/img")
    task, freq_def, k = (args[2] if len(args) > 2 else "mult:1:2").split(":")
    try:
        import pandas as pd

        from freqgap.analysis import dynamics
        from freqgap.dynamics.gaps import FILES
        from freqgap.manifest import read_manifest

        labels = read_manifest(results, stage="dynamics_gaps")["config"]["task_labels"]
        gaps = pd.read_parquet(results / FILES["gaps"])
        per_key = pd.read_parquet(results / FILES["per_key"])
    except FreqgapError as exc:
        print(f"dynamics_figures: error: {exc}; `make dynamics` writes it", file=sys.stderr)
        return 2
    print(dynamics.plot_over_steps(gaps, out / "dynamics_delta_over_steps.png", labels))
    print(dynamics.plot_exposures(per_key, out / "dynamics_accuracy_by_exposures.png", labels))
    print(dynamics.summary_text(gaps, task, freq_def, int(k), labels))
    return 0


if __name__ == "__main__":
    sys.exit(main())
