"""python jobs/simulate.py [options]: Zipf vs uniform corpus, the gap caused by frequency.

A thin shim: the same as `freqgap simulate [options]` (freqgap/cli/simulate.py).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout too

from freqgap.cli import job_main  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    return job_main("simulate", argv)


if __name__ == "__main__":
    sys.exit(main())
