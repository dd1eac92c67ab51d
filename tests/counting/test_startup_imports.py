"""What a cold count loads before it counts: nothing heavy that counting does not use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("pandas", "duckdb", "polars", "matplotlib", "torch", "transformers", "scipy", "IPython")
# What the workers need and the driver of a plain count does not (counting/job.py's docstring).
TASK_CODE = ("numpy", "pyarrow", "zstandard", "numba")


_PRINT_TOP_MODULES = "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"


def _output_lines(script: str, timeout: int = 120) -> list[str]:
    """The stdout lines of `script` run in a fresh Python with this checkout on its path."""
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.splitlines()


def _top_modules(code: str) -> set[str]:
    return set(_output_lines(f"import sys\n{code}\n{_PRINT_TOP_MODULES}")[-1].split())


def test_the_count_driver_imports_nothing_heavy():
    loaded = _top_modules("import jobs.count_terms, freqgap.cli.count, freqgap.counting.job, "
                          "freqgap.spark_session")
    assert not loaded & set(HEAVY + TASK_CODE), loaded & set(HEAVY + TASK_CODE)


def test_the_worker_preload_imports_only_the_task_code():
    """No pandas either: pyarrow's `pa.array`/`to_numpy` would import it (counting/arrow_arrays.py)."""
    loaded = _top_modules("from freqgap.runtime.worker_daemon import preload; preload()")
    assert {"numpy", "pyarrow", "zstandard"} <= loaded
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def test_the_worker_preload_leaves_pyarrow_compute_to_the_numpy_path():
    """The compiled path never calls pyarrow.compute; importing it cost the daemon
    0.03-0.06 CPU-s of every cold run (counting/partials.py, tokenize.py, exchange.py)."""
    code = ("import sys\nfrom freqgap.runtime.worker_daemon import preload; preload()\n"
            "from freqgap.counting import engines\n"
            "print(engines.engine_name(), 'pyarrow.compute' in sys.modules)")
    engine, loaded = _output_lines(code)[-1].split()
    if engine == "numba":
        assert loaded == "False"


_COUNT_IN_A_SESSION = """
import json, os, sys, tempfile
from freqgap.spark_session import get_spark
from freqgap.counting.job import run_count
from freqgap.counting.rules import TermRules
d = tempfile.mkdtemp()
with open(os.path.join(d, "a.jsonl"), "w") as f:
    for i in range(300):
        f.write(json.dumps({"text": f"{i} apples and {i + 1} pears 12 3 plus 7 hours"}) + "\\n")
spark = get_spark(master="local[1]")
manifest = run_count([os.path.join(d, "a.jsonl")], os.path.join(d, "out"), rules=TermRules(),
                     spark=spark, progress_interval=3600)
assert manifest["totals"]["documents"] == 300, manifest["totals"]
# local[1] reuses its one Python worker: this task runs where the count and reduce ran.
worker = spark.sparkContext.parallelize([0], 1).map(
    lambda _: sorted({m.split(".")[0] for m in sys.modules})).collect()[0]
spark.stop()
"""


def test_a_count_loads_no_pandas_in_the_driver_or_the_worker():
    """A whole count (tasks, run files, reduce, Parquet) in a fresh local session: neither the
    driver (PySpark's numpy converters: spark_session._numpy_converters_without_pandas) nor
    the worker (arrow_arrays) imports pandas, 0.3-0.5 CPU-s each of a cold run; and the
    driver none of the task code (numpy, pyarrow, zstandard, numba: 0.2-0.25 CPU-s)."""
    lines = _output_lines(_COUNT_IN_A_SESSION + "print(' '.join(worker))\n" + _PRINT_TOP_MODULES,
                          timeout=300)
    worker, driver = (set(line.split()) for line in lines[-2:])
    assert {"freqgap", "numpy", "pyarrow", "zstandard"} <= worker
    assert {"freqgap", "pyspark", "py4j"} <= driver
    assert "pandas" not in worker and "pandas" not in driver, (worker | driver) & {"pandas"}
    assert not driver & set(TASK_CODE), driver & set(TASK_CODE)
