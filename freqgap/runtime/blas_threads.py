"""No OpenBLAS thread pool in the counting processes, which do no linear algebra.

Why: numpy's bundled OpenBLAS starts a thread per core when numpy is imported, and each
spins for a while before it sleeps, in every process that imports numpy (measured:
docs/performance.md). A cold count pays it in the driver and in the worker daemon; the count's code never calls
BLAS. OpenBLAS reads `OPENBLAS_NUM_THREADS` once, when numpy loads it, so this must run
before that: `freqgap count` calls it first (cli/count.py), and conf/spark sets the same
variable for the Python workers (`spark.executorEnv.OPENBLAS_NUM_THREADS`). Only there:
a notebook that imports freqgap keeps numpy's threads for its own linear algebra.
"""

from __future__ import annotations

import os
import sys

from freqgap.runtime import enabled as runtime_enabled

VARIABLE = "OPENBLAS_NUM_THREADS"


def single_threaded_blas() -> bool:
    """Set OPENBLAS_NUM_THREADS=1 unless the user set it or numpy is already imported (then
    it would have no effect). True when set here."""
    if VARIABLE in os.environ or "numpy" in sys.modules or not runtime_enabled():
        return False
    os.environ[VARIABLE] = "1"
    return True
