"""The runtime wing: what only makes Spark start or run faster, never what it counts.

Class-data-sharing archives of the driver and launcher JVMs (jvm_cds, launcher_cds), the
Spark-Python wrapper (spark_python, spark-python.sh), the spark-env hook (spark_env), PySpark
imported from the installed package (pyspark_path), one BLAS thread per worker
(blas_threads), a worker daemon with the counting code preloaded (worker_daemon), per-process
pools of the engines' working arrays (task_reuse), numpy's sort selection (numpy_sorts) and
numba's cache loading (numba_cache). Why each exists and what it saves: docs/performance.md.

One switch turns all of it off, back to stock PySpark: `runtime: stock` in
conf/spark/runtime.yaml, or FREQGAP_RUNTIME=stock, which overrides it (docs/engines.md).
Counts are identical either way (tests/counting/test_runtime_switch.py).
"""

from __future__ import annotations

import os

RUNTIME_ENV = "FREQGAP_RUNTIME"
RUNTIMES = ("fast", "stock")
CONF_NAME = "spark/runtime"          # conf/spark/runtime.yaml, key `runtime`


def enabled() -> bool:
    """False when the runtime is `stock`: every piece of this wing stands aside."""
    value = configured("runtime", RUNTIME_ENV, "fast")
    if value not in RUNTIMES:
        from freqgap.config import ConfigError

        raise ConfigError(f"runtime {value!r} ({RUNTIME_ENV} or conf/spark/runtime.yaml): "
                          f"expected one of {', '.join(RUNTIMES)}")
    return value == "fast"


def configured(key: str, env: str, default: str) -> str:
    """A setting of how the count runs (conf/spark/runtime.yaml's `key`), lower-cased; the
    environment variable `env` overrides it. Read once per process tree: the file's value is
    put in the environment, so the workers (and, through get_spark, the executors) follow it
    without reading the file again."""
    value = os.environ.get(env)
    if value is None:
        value = os.environ[env] = _from_file(key, default)
    return value.strip().lower() or default


def _from_file(key: str, default: str) -> str:
    """conf/spark/runtime.yaml's `key` (`default` where the file or key is missing)."""
    from freqgap.config import load_yaml
    from freqgap.paths import conf_file

    path = conf_file(CONF_NAME)
    return str(load_yaml(path).get(key, default)) if path.exists() else default
