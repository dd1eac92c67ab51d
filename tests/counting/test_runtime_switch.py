"""FREQGAP_RUNTIME=stock turns the whole runtime wing off (freqgap/runtime/), and the counts
stay the same: the conformance suite and a standalone-cluster count run with it off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from freqgap.counting.job import run_count
from tests.counting.cluster import StandaloneCluster, submit_count
from tests.counting.corpus_utils import read_counts, reference, write_jsonl
from tests.counting.test_job import random_texts

REPO = Path(__file__).resolve().parents[2]
STOCK = {"FREQGAP_RUNTIME": "stock"}

_PROBE = """
import json, sys
from freqgap.runtime import enabled, jvm_cds, numba_cache, numpy_sorts, pyspark_path, spark_env
from freqgap.runtime.blas_threads import single_threaded_blas
from freqgap.runtime.task_reuse import Pool
pool = Pool()
with pool.lease("k", object) as first:
    pass
with pool.lease("k", object) as second:
    pass
print(json.dumps({
    "enabled": enabled(),
    "numpy_sorts": "NPY_DISABLE_CPU_FEATURES" in numpy_sorts.prefer_fast_sorts("/dev/null") or None,
    "blas": single_threaded_blas(),
    "pyspark_path": pyspark_path.prefer_installed_packages(list(sys.path)) != [] or None,
    "jvm_cds": jvm_cds.enabled(),
    "numba_cache": numba_cache.load_cached_code_lazily(),
    "pool_reuses": first is second,
    "spark_env": spark_env.shell_code(1, [jvm_cds.SPARK_SUBMIT_CLASS, "x.py"]) != "",
}))
"""


def _probe(extra_env: dict[str, str]) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("FREQGAP_RUNTIME", "OPENBLAS_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", _PROBE], env={**env, **extra_env}, cwd=REPO,
                         capture_output=True, text=True, check=True)
    import json

    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_switch_turns_every_piece_off():
    off = _probe(STOCK)
    assert off == {"enabled": False, "numpy_sorts": None, "blas": False, "pyspark_path": None,
                   "jvm_cds": False, "numba_cache": False, "pool_reuses": False, "spark_env": False}
    on = _probe({})
    assert on["enabled"] and on["blas"] and on["pool_reuses"] and on["jvm_cds"]


def test_the_conf_key_switches_it_and_the_environment_wins(tmp_path):
    """conf/spark/runtime.yaml's `runtime` (here from a FREQGAP_CONF directory) decides where
    FREQGAP_RUNTIME is unset, and is put in the environment for the workers."""
    (tmp_path / "spark").mkdir()
    (tmp_path / "spark" / "runtime.yaml").write_text("runtime: stock\n")
    code = "import os; from freqgap.runtime import enabled; print(enabled(), os.environ['FREQGAP_RUNTIME'])"
    env = {k: v for k, v in os.environ.items() if k != "FREQGAP_RUNTIME"}
    for extra, want in (({}, "False stock"), ({"FREQGAP_RUNTIME": "fast"}, "True fast")):
        out = subprocess.run([sys.executable, "-c", code], env={**env, "FREQGAP_CONF": str(tmp_path), **extra},
                             cwd=REPO, capture_output=True, text=True, check=True)
        assert out.stdout.split() == want.split()


def test_an_unknown_runtime_is_refused():
    out = subprocess.run([sys.executable, "-c", "from freqgap.runtime import enabled; enabled()"],
                         env={**os.environ, "FREQGAP_RUNTIME": "turbo"}, cwd=REPO,
                         capture_output=True, text=True)
    assert out.returncode != 0 and "expected one of fast, stock" in out.stderr


def test_the_conformance_suite_passes_with_the_runtime_off():
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         str(REPO / "tests" / "counting" / "test_conformance.py"), "-k", "adversarial or digit_cap"],
        env={**os.environ, **STOCK}, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:]
    assert " passed" in result.stdout and "skipped" not in result.stdout


@pytest.mark.cluster
def test_standalone_cluster_counts_are_identical_with_the_runtime_off(spark, tmp_path):
    """The same corpus counted in local mode with the runtime on, and by spark-submit on a
    standalone cluster with it off (driver and, through spark.executorEnv, executors)."""
    texts = random_texts(17, 300)
    for i in range(2):
        write_jsonl(tmp_path / "in" / f"shard-{i}.jsonl.zst", texts[i::2])
    run_count([str(tmp_path / "in")], str(tmp_path / "on"), spark=spark)
    with StandaloneCluster(tmp_path / "cluster") as cluster:
        result = submit_count(cluster, tmp_path / "in", tmp_path / "off", env=STOCK)
        assert result.returncode == 0, result.stderr[-3000:]
    assert read_counts(tmp_path / "off") == read_counts(tmp_path / "on") == reference(texts)
