"""python jobs/make_instances.py [options]: task instances and prompts (SPEC §3).

A thin shim: the same as `freqgap instances [options]` (freqgap/cli/instances.py).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout too

from freqgap.cli import job_main  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    return job_main("instances", argv)


if __name__ == "__main__":
    sys.exit(main())
