"""python jobs/import_lm_eval.py SAMPLES… [options]: lm-evaluation-harness logs as predictions.

A thin shim: the same as `freqgap import-lm-eval [options]` (freqgap/cli/import_lm_eval.py).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout too

from freqgap.cli import job_main  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    return job_main("import-lm-eval", argv)


if __name__ == "__main__":
    sys.exit(main())
