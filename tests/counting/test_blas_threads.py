"""The count's processes start numpy without OpenBLAS's thread pool (freqgap/runtime/blas_threads.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from freqgap.runtime import enabled as runtime_enabled

# A piece of the runtime wing, which FREQGAP_RUNTIME=stock turns off (test_runtime_switch.py).
pytestmark = pytest.mark.skipif(not runtime_enabled(), reason="the runtime wing is off (FREQGAP_RUNTIME=stock)")

REPO = Path(__file__).resolve().parents[2]


def _python(code: str, env: dict[str, str]) -> str:
    full = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    full.update(env, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True,
                          check=True, timeout=120).stdout.split()


THREADS = "import os; print(len(os.listdir('/proc/self/task')))"


def test_numpy_then_starts_no_blas_thread():
    code = ("from freqgap.runtime.blas_threads import single_threaded_blas; print(single_threaded_blas()); "
            "import numpy; numpy.ones((64, 64)) @ numpy.ones((64, 64)); " + THREADS)
    assert _python(code, {}) == ["True", "1"]
    if os.cpu_count() and os.cpu_count() > 1:       # the check would not see a pool of one
        assert _python("import numpy; " + THREADS, {}) != ["1"]


def test_the_users_setting_and_an_imported_numpy_are_left_alone():
    code = ("import os; from freqgap.runtime.blas_threads import single_threaded_blas; "
            "print(single_threaded_blas(), os.environ['OPENBLAS_NUM_THREADS'])")
    assert _python(code, {"OPENBLAS_NUM_THREADS": "3"}) == ["False", "3"]
    code = ("import os, numpy; from freqgap.runtime.blas_threads import single_threaded_blas; "
            "print(single_threaded_blas(), os.environ.get('OPENBLAS_NUM_THREADS'))")
    assert _python(code, {}) == ["False", "None"]


def test_freqgap_count_sets_it_before_it_imports_numpy(tmp_path):
    """The count command sets it first: here it then refuses an input that matches nothing
    (exit 2, before Spark), with numpy's pool never started."""
    code = ("import os, sys; from freqgap.cli import main; "
            f"rc = main(['count', '--input', {str(tmp_path / 'none.jsonl')!r}, '--out', {str(tmp_path / 'o')!r}]); "
            "print(rc, os.environ.get('OPENBLAS_NUM_THREADS'), 'numpy' in sys.modules)")
    rc, value, _ = _python(code, {})
    assert (rc, value) == ("2", "1")
