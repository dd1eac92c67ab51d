"""python jobs/predict.py [options]: few-shot predictions of a causal LM (SPEC §4).

A thin shim: the same as `freqgap predict [options]` (freqgap/cli/predict.py).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout too

from freqgap.cli import job_main  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    return job_main("predict", argv)


if __name__ == "__main__":
    sys.exit(main())
