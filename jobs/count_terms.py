"""spark-submit jobs/count_terms.py [options] — exact term counts (SPEC §2). See --help."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout too

from freqgap.counting.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
