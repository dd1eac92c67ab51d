"""spark-submit jobs/count_terms.py [options]: exact term counts (SPEC §2).

A thin shim: the same as `freqgap count [options]` (freqgap/cli/count.py). Under
spark-submit the package is shipped to the executors by freqgap.spark_session; on a cluster:
  spark-submit --master spark://HOST:7077 jobs/count_terms.py --input s3a://… --out s3a://…
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout too

from freqgap.cli import job_main  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    return job_main("count", argv)


if __name__ == "__main__":
    sys.exit(main())
