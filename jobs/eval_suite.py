"""python jobs/eval_suite.py {neqa,tinad,quantifiers} [options]: negation and quantifier suites.

A thin shim: the same as `freqgap suite [options]` (freqgap/cli/suite.py).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout too

from freqgap.cli import job_main  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    return job_main("suite", argv)


if __name__ == "__main__":
    sys.exit(main())
