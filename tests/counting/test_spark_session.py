"""Spark settings from conf/spark, and a quiet JVM: a user error prints one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from freqgap.spark_session import SPARK_CONF_DIR, default_spark_conf, filter_jvm_stderr, read_spark_defaults

REPO = Path(__file__).resolve().parents[2]


def test_defaults_come_from_conf_spark():
    defaults = read_spark_defaults()
    assert defaults["spark.ui.enabled"] == "false"
    assert "-XX:TieredStopAtLevel=1" in defaults["spark.executor.extraJavaOptions"]
    quiet, verbose = default_spark_conf(), default_spark_conf(verbose=True)
    assert "-Dfreqgap.log.level=fatal" in quiet["spark.driver.extraJavaOptions"]
    assert "-Dfreqgap.log.level=info" in verbose["spark.driver.extraJavaOptions"]
    assert (SPARK_CONF_DIR / "log4j2.properties").as_uri() in quiet["spark.driver.extraJavaOptions"]
    assert quiet["spark.executorEnv.PYTHONSAFEPATH"] == "1"


def test_jvm_stderr_filter_keeps_real_errors():
    lines = [b"WARNING: Using incubator modules: jdk.incubator.vector\n",
             b"Traceback (most recent call last):\n", b'  File "daemon.py", line 1\n',
             b"ConnectionResetError: [Errno 104] Connection reset by peer\n",
             b"Traceback (most recent call last):\n", b'  File "x.py", line 2\n',
             b"ZeroDivisionError: division by zero\n", b"a real line\n",
             b"Traceback (most recent call last):\n", b'  File "cut.py", line 3\n']
    assert list(filter_jvm_stderr(iter(lines))) == lines[4:]


def test_a_bad_record_prints_one_line_and_no_spark_log(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "a 5 b"}\nnot json\n')
    script = ("import sys; from freqgap.spark_session import get_spark; "
              "from freqgap.counting.job import run_count, CountJobError\n"
              "spark = get_spark(master='local[1]')\n"
              "try:\n    run_count([sys.argv[1]], sys.argv[2], spark=spark)\n"
              "except CountJobError as e:\n    print(e, file=sys.stderr); sys.exit(2)\n")
    proc = subprocess.run([sys.executable, "-c", script, str(bad), str(tmp_path / "out")],
                          cwd=tmp_path, capture_output=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "SPARK_LOCAL_IP": "127.0.0.1",
                               "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable})
    assert proc.returncode == 2, proc.stderr.decode()
    err = proc.stderr.decode().splitlines()
    assert err == [err[0]] and err[0].startswith(f"bad input: {bad}:2: not valid JSON"), err
    assert not (tmp_path / "out" / "_manifest.json").exists()


def test_local_workers_import_this_package(spark):
    """Local mode: workers get this package's parent on PYTHONPATH (no zip: numba's cache
    beside the modules is then shared by every run)."""
    import freqgap

    parent = str(Path(freqgap.__file__).resolve().parent.parent)
    assert spark.sparkContext.environment["PYTHONPATH"].split(":")[0] == parent

    def where(_):
        import freqgap as f
        yield str(Path(f.__file__).resolve().parent.parent)

    assert set(spark.sparkContext.parallelize(range(2), 2).mapPartitions(where).collect()) == {parent}


def test_the_runtime_is_a_context_and_gives_a_session_on_demand(spark):
    """get_spark() starts no SparkSession (its JVM side costs ~1.4 CPU-s of a cold run and
    nothing here uses SQL); session() builds one over the same context, and get_spark()
    again returns the running context."""
    from pyspark.sql import SparkSession

    from freqgap.spark_session import SparkRuntime, get_spark

    assert isinstance(spark, SparkRuntime)
    again = get_spark()
    assert again.sparkContext is spark.sparkContext
    session = spark.session()
    assert isinstance(session, SparkSession)
    assert session.sparkContext is spark.sparkContext
    assert session.range(3).count() == 3


def test_numpy_values_still_convert_for_the_jvm(spark):
    """The swapped numpy converters (no pandas import) convert what PySpark's did."""
    import numpy as np
    from py4j import protocol

    from freqgap.spark_session import _numpy_converters_without_pandas

    _numpy_converters_without_pandas()          # idempotent
    names = [type(c).__name__ for c in protocol.INPUT_CONVERTER]
    assert names.count("NumpyArrayConverter") == 1 and names.count("NumpyScalarConverter") == 1
    jvm = spark.sparkContext._jvm
    assert jvm.java.lang.Math.abs(np.int64(-7)) == 7
    assert jvm.java.util.Arrays.toString(np.array([1, 2, 3], dtype=np.int32)) == "[1, 2, 3]"


_MMAPPED_BYTES_OF_A_24_MB_ARRAY = """
import ctypes
import numpy as np
class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                                                    "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Mallinfo2
before = libc.mallinfo2().hblkhd
kept = np.ones(24 << 20, np.uint8)
print(libc.mallinfo2().hblkhd - before)
"""


def _mmapped_bytes(env: dict[str, str]) -> int:
    import ctypes
    if not hasattr(ctypes.CDLL(None), "mallinfo2"):
        pytest.skip("not glibc >= 2.33: no mallinfo2 to see where malloc put an array")
    out = subprocess.run([sys.executable, "-c", _MMAPPED_BYTES_OF_A_24_MB_ARRAY], env=env, check=True,
                         capture_output=True, text=True)
    return int(out.stdout.split()[-1])


def test_workers_get_malloc_settings_that_keep_big_arrays_on_the_heap(spark):
    """conf/spark hands the Python workers glibc's malloc settings (spark.executorEnv), and
    glibc applies them: a 24 MB array comes from the heap, where freed memory is reused,
    instead of fresh pages mmap'ed (and page-faulted) for each chunk's arrays."""
    import os

    setting = read_spark_defaults()["spark.executorEnv.GLIBC_TUNABLES"]
    seen = spark.sparkContext.parallelize([0], 1).map(lambda _: os.environ.get("GLIBC_TUNABLES")).collect()
    assert seen == [setting]
    plain = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    assert _mmapped_bytes(plain) >= 24 << 20            # glibc's default: mmap'ed
    assert _mmapped_bytes({**plain, "GLIBC_TUNABLES": setting}) == 0


def test_workers_allocate_arrow_memory_with_that_same_malloc(spark):
    """conf/spark names Arrow's system allocator for the workers and Arrow uses it there
    (its mimalloc gave freed pages back between tasks: fresh zeroed pages every reduce)."""
    assert read_spark_defaults()["spark.executorEnv.ARROW_DEFAULT_MEMORY_POOL"] == "system"
    import os

    def pool(_):
        import pyarrow as pa
        return os.environ.get("ARROW_DEFAULT_MEMORY_POOL"), pa.default_memory_pool().backend_name
    assert spark.sparkContext.parallelize([0], 1).map(pool).collect() == [("system", "system")]


def test_workers_numpy_gives_no_huge_page_advice(spark):
    """conf/spark turns numpy's huge-page advice off for the workers, and numpy (imported
    by the daemon they are forked from) applies it: merges shrink their arrays in place,
    and with the advice a fresh worker zeroed whole 2 MB pages of the tails."""
    assert read_spark_defaults()["spark.executorEnv.NUMPY_MADVISE_HUGEPAGE"] == "0"

    def advice(_):
        import numpy._core.multiarray as multiarray
        return multiarray._get_madvise_hugepage()
    assert spark.sparkContext.parallelize([0], 1).map(advice).collect() == [False]


def test_workers_daemon_runs_numpy_without_a_blas_thread_pool(spark):
    """conf/spark sets OPENBLAS_NUM_THREADS=1 for the workers (freqgap/runtime/blas_threads.py): the
    daemon they are forked from imported numpy, and no OpenBLAS thread runs in it (those
    carry the process's own name; jemalloc's background thread, say, has its own)."""
    assert read_spark_defaults()["spark.executorEnv.OPENBLAS_NUM_THREADS"] == "1"
    import os

    def threads(_):
        import numpy  # noqa: F401 - imported by the daemon already; here for a plain daemon too
        daemon = f"/proc/{os.getppid()}"
        with open(f"{daemon}/comm") as f:
            main = f.read()
        names = []
        for task in os.listdir(f"{daemon}/task"):
            with open(f"{daemon}/task/{task}/comm") as f:
                names.append(f.read())
        return os.environ.get("OPENBLAS_NUM_THREADS"), names.count(main)
    assert spark.sparkContext.parallelize([0], 1).map(threads).collect() == [("1", 1)]


def test_a_clusters_package_zip_lives_until_the_driver_exits(tmp_path):
    """ship_package zips the package for a non-local master; the zip must exist while the
    context can still hand it to executors, and must not outlive the driver's Python."""
    script = """
import sys, zipfile
from types import SimpleNamespace
from freqgap.spark_session import ship_package

class Context:
    master = "spark://127.0.0.1:7077"
    environment = {}
    def addPyFile(self, path):
        self.path = path

sc = Context()
ship_package(SimpleNamespace(sparkContext=sc))
with zipfile.ZipFile(sc.path) as zf:
    assert "freqgap/spark_session.py" in zf.namelist()
print(sc.path)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO,
                          env={"TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin",
                               "PYTHONPATH": str(REPO)}, timeout=60)
    assert done.returncode == 0, done.stderr
    shipped = Path(done.stdout.strip())
    assert shipped.parent.parent == tmp_path
    assert not shipped.parent.exists()
    assert list(tmp_path.iterdir()) == []
