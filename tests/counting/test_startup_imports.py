"""What a cold count loads before it counts: nothing heavy that counting does not use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("pandas", "duckdb", "polars", "matplotlib", "torch", "transformers", "scipy", "IPython")


def _top_modules(code: str) -> set[str]:
    script = f"import sys\n{code}\nprint(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))\n"
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return set(proc.stdout.split())


def test_the_count_driver_imports_nothing_heavy():
    loaded = _top_modules("import jobs.count_terms, freqgap.cli.count, freqgap.counting.job, "
                          "freqgap.spark_session")
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def test_the_worker_preload_imports_only_the_task_code():
    """pandas does load here: pyarrow's `pa.array(ndarray)` asks pandas whether the array is
    a Series first (~0.3 CPU-s a worker, paid once by the preloading daemon)."""
    loaded = _top_modules("from freqgap.counting.worker_daemon import preload; preload()")
    assert {"numpy", "pyarrow", "zstandard"} <= loaded
    heavy = set(HEAVY) - {"pandas"}
    assert not loaded & heavy, loaded & heavy
