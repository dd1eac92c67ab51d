"""python jobs/gaps.py [options]: the performance gap Δ (SPEC §5).

A thin shim: the same as `freqgap gaps [options]` (freqgap/cli/gaps.py).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout too

from freqgap.cli import job_main  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    return job_main("gaps", argv)


if __name__ == "__main__":
    sys.exit(main())
