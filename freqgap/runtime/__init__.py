"""The runtime wing: what only makes Spark start or run faster, never what it counts.

Class-data-sharing archives of the driver and launcher JVMs (jvm_cds, launcher_cds), the
Spark-Python wrapper (spark_python, spark-python.sh), the spark-env hook (spark_env), PySpark
imported from the installed package (pyspark_path), one BLAS thread per worker
(blas_threads), a worker daemon with the counting code preloaded (worker_daemon), per-process
pools of the engines' working arrays (task_reuse), numpy's sort selection (numpy_sorts) and
numba's cache loading (numba_cache). Why each exists and what it saves: docs/performance.md.

One switch turns all of it off, back to stock PySpark: FREQGAP_RUNTIME=stock (see
docs/engines.md). Counts are identical either way (tests/counting/test_runtime_switch.py).
"""

from __future__ import annotations

import os

RUNTIME_ENV = "FREQGAP_RUNTIME"
RUNTIMES = ("fast", "stock")


def enabled() -> bool:
    """False when FREQGAP_RUNTIME=stock: every piece of this wing stands aside."""
    value = os.environ.get(RUNTIME_ENV, "fast").strip().lower() or "fast"
    if value not in RUNTIMES:
        from freqgap.config import ConfigError

        raise ConfigError(f"{RUNTIME_ENV}={value!r}: expected one of {', '.join(RUNTIMES)}")
    return value == "fast"
