"""PySpark's worker daemon, with the counting code loaded once before it forks the workers.

Why: every Python worker otherwise imports numpy, pyarrow, zstandard and freqgap.counting
and loads numba's cached machine code itself (~1 CPU-s each); forked from a daemon that did
it once, each worker starts with all of it in place (copy-on-write). Spark runs it as
`python -m freqgap.counting.worker_daemon` (`spark.python.daemon.module`): get_spark() sets
that in local mode only, where this package is on the workers' path before any task runs
(a cluster's executors see the shipped zip only once a task starts).
"""

from __future__ import annotations

import gc
import os
import sys


def preload() -> None:
    """Import the task code and run it once on one record (numba loads its cached code)."""
    from freqgap.counting.partials import count_lines
    from freqgap.counting.rules import TermRules

    record = b'{"text": "5 hours 10 days 5 7", "meta": {"pile_set_name": "warm-up"}}'
    for _ in count_lines([(0, 1, record, False, None)], TermRules(), "fail", {0: "warm-up"}):
        pass
    # The workers' gc.collect() after each task would otherwise walk, and so copy, every
    # object inherited here: frozen objects are never collected (the pre-fork idiom).
    gc.collect()
    gc.freeze()


def main() -> None:
    try:
        preload()
    except Exception:      # noqa: BLE001 - only a head start: each worker imports what it needs
        pass
    from pyspark import daemon

    try:
        daemon.manager()
    except SystemExit as stop:       # its shutdown: skip tearing down the preloaded heap
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(stop.code if isinstance(stop.code, int) else 1)


if __name__ == "__main__":
    main()
