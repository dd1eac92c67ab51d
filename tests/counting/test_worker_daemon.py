"""Python workers forked from freqgap's preloading daemon count exactly what stock workers do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from tests.counting.corpus_utils import write_jsonl
from tests.counting.test_job import random_texts
from freqgap.runtime import enabled as runtime_enabled

# A piece of the runtime wing, which FREQGAP_RUNTIME=stock turns off (test_runtime_switch.py).
pytestmark = pytest.mark.skipif(not runtime_enabled(), reason="the runtime wing is off (FREQGAP_RUNTIME=stock)")

REPO = Path(__file__).resolve().parents[2]

# A Spark job over files: each task counts its file with the job's own task code and says
# which daemon forked it. Run in the shared session (local mode: freqgap's daemon) and in a
# fresh one with PySpark's stock daemon.
_JOB = """
import json, os, sys
from collections import Counter
from pathlib import Path

def count_file(paths):
    from freqgap.counting.kinds import COUNT_KINDS
    from freqgap.counting.partials import count_lines, line_rows
    from freqgap.counting.rules import TermRules
    from freqgap.counting.inputs import InputFile
    for path in paths:
        st = os.stat(path)
        sums = Counter()
        rows = line_rows([InputFile(0, path, st.st_size, st.st_mtime_ns)], "text", "fail")
        for batch in count_lines(rows, TermRules(), "fail", {0: path}):
            for kind, key, n in zip(*(batch.column(c).to_pylist() for c in ("kind", "key", "n"))):
                if kind in COUNT_KINDS:
                    sums[f"{kind}:{key}"] += n
        daemon = Path(f"/proc/{os.getppid()}/cmdline").read_bytes().split(b"\\0")
        yield path, dict(sums), [a.decode() for a in daemon if a.startswith(b"freqgap") or a.startswith(b"pyspark")]

def run(sc, paths):
    return sorted(sc.parallelize(paths, len(paths)).mapPartitions(count_file).collect())
"""


def _run_in(spark, paths):
    scope: dict = {}
    exec(compile(_JOB, "daemon_job", "exec"), scope)
    return scope["run"](spark.sparkContext, paths)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_counts_are_identical_with_and_without_the_preloading_daemon(spark, tmp_path):
    texts = random_texts(7, 300)
    paths = [str(write_jsonl(tmp_path / f"f{i}.jsonl.zst", texts[i::3])) for i in range(3)]
    with_daemon = _run_in(spark, paths)
    script = (f"import json, sys\n{_JOB}\nfrom freqgap.spark_session import get_spark\n"
              "spark = get_spark(master='local[2]', conf={'spark.python.daemon.module': 'pyspark.daemon'})\n"
              "print(json.dumps(run(spark.sparkContext, json.loads(sys.argv[1]))))\nspark.stop()\n")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable, "FREQGAP_JVM_CDS": "0"}
    proc = subprocess.run([sys.executable, "-c", script, json.dumps(paths)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    stock = [tuple(row) for row in json.loads(proc.stdout.strip().splitlines()[-1])]
    assert {tuple(d) for *_, d in with_daemon} == {("freqgap.runtime.worker_daemon", "pyspark.worker")}
    assert {tuple(d) for *_, d in stock} == {("pyspark.daemon", "pyspark.worker")}
    assert [(p, c) for p, c, _ in with_daemon] == [(p, c) for p, c, _ in stock]
    assert all(c for _, c, _ in stock)


def test_preload_freezes_the_heap_it_made_without_collecting():
    """The collector is off during the imports and back on after them, with no collection
    in between; what they made is frozen (never walked, so never copied, by a forked
    worker's collections), and the modules of every task kind are loaded."""
    script = ("import gc\n"
              "from freqgap.runtime.worker_daemon import preload\n"
              "collections = []\n"
              "gc.callbacks.append(lambda phase, info: phase == 'start' and collections.append(info['generation']))\n"
              "preload()\n"
              "import sys\n"
              "loaded = all(f'freqgap.counting.{m}' in sys.modules for m in ('exchange.runs', 'exchange.final_tables', 'spread'))\n"
              "print(collections, gc.isenabled(), gc.get_freeze_count() > 10000, loaded)\n")
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["[]", "True", "True", "True"]


def test_preload_works_without_numba():
    """Where numba does not import, the daemon still preloads (the numpy path) and starts."""
    script = ("import sys; sys.modules['numba'] = None\n"
              "from freqgap.runtime.worker_daemon import preload; preload()\n"
              "from freqgap.counting.engines import engine_name; print(engine_name())\n"
              "assert 'numba' not in [m.split('.')[0] for m in sys.modules if sys.modules[m] is not None]\n")
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0 and proc.stdout.strip() == "numpy", proc.stderr[-2000:]


def test_a_failing_preload_still_starts_the_daemon(monkeypatch):
    """The preload is only a head start: if it fails, PySpark's daemon runs all the same."""
    from pyspark import daemon

    from freqgap.runtime import worker_daemon

    def broken():
        raise ImportError("no numpy here")

    started = []
    monkeypatch.setattr(worker_daemon, "preload", broken)
    monkeypatch.setattr(daemon, "manager", lambda: started.append(True))
    worker_daemon.main()
    assert started == [True]


def test_the_daemon_is_set_for_local_mode_not_in_the_cluster_defaults():
    from freqgap.spark_session import SPARK_CONF_DIR, read_spark_defaults

    assert read_spark_defaults(SPARK_CONF_DIR / "spark-local.conf") == {
        "spark.python.daemon.module": "freqgap.runtime.worker_daemon"}
    assert "spark.python.daemon.module" not in read_spark_defaults()


def test_local_mode_is_told_from_the_master(monkeypatch):
    from freqgap import spark_session
    from freqgap.spark_session import runs_locally

    for var in ("MASTER", "PYSPARK_GATEWAY_PORT", "PYSPARK_SUBMIT_ARGS"):
        monkeypatch.delenv(var, raising=False)
    assert runs_locally(None) and runs_locally("local[2]") and not runs_locally("spark://h:7077")
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "1")                  # under spark-submit:
    monkeypatch.setattr(spark_session, "_master_spark_submit_set", lambda: "spark://h:7077")
    assert not runs_locally(None)                                    # its JVM's master decides
    monkeypatch.setattr(spark_session, "_master_spark_submit_set", lambda: "local[3]")
    assert runs_locally(None)
    monkeypatch.setenv("MASTER", "local[4]")
    assert runs_locally(None) and not runs_locally("yarn")


def test_zip_directories_are_read_again_only_when_the_archive_changed(tmp_path, monkeypatch):
    """keep_zip_directories: invalidate_caches() keeps an unchanged archive's directory (no
    re-read) and re-reads one whose file changed, so a changed zip's new module imports."""
    import importlib
    import zipfile
    import zipimport

    from freqgap.runtime.worker_daemon import keep_zip_directories

    archive = tmp_path / "lib.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("fg_zip_a.py", "VALUE = 1\n")
        z.writestr("fg_zip_pkg/__init__.py", "")
    monkeypatch.syspath_prepend(str(archive))
    assert importlib.import_module("fg_zip_a").VALUE == 1
    importlib.import_module("fg_zip_pkg")
    importer = sys.path_importer_cache[str(archive)]
    package = zipimport.zipimporter(str(archive / "fg_zip_pkg"))    # a second importer of it
    sys.path_importer_cache[str(archive / "fg_zip_pkg")] = package
    assert isinstance(importer, zipimport.zipimporter)
    undo = keep_zip_directories()
    try:
        files = importer._files
        importlib.invalidate_caches()
        assert importer._files is files and package._files is files   # unchanged: not read again
        with zipfile.ZipFile(archive, "a") as z:
            z.writestr("fg_zip_b.py", "VALUE = 2\n")
        os.utime(archive, ns=(1, 1))                     # another mtime even on a coarse clock
        importlib.invalidate_caches()
        for each in (importer, package):                  # every importer of the archive
            assert each._files is not files and "fg_zip_b.py" in each._files
        assert importlib.import_module("fg_zip_b").VALUE == 2
    finally:
        undo()
        sys.path_importer_cache.pop(str(archive / "fg_zip_pkg"), None)
        for name in ("fg_zip_a", "fg_zip_b", "fg_zip_pkg"):
            sys.modules.pop(name, None)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_importing_pyspark_worker_in_the_daemon_starts_no_thread():
    """PySpark imports its worker module after the fork lest it start a thread first; the
    daemon imports it before (preload), which is only safe while it starts none."""
    code = ("import os, importlib\nimport numpy, pyarrow, zstandard\nimport freqgap.counting.partials\n"
            "before = len(os.listdir('/proc/self/task'))\nimportlib.import_module('pyspark.worker')\n"
            "print(before, len(os.listdir('/proc/self/task')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=REPO).stdout.split()
    assert out[0] == out[1]


def _fake_site(root: Path, zips: list[str]) -> list[str]:
    """A site-packages with pyspark installed and Spark's zips inside it (pip's layout)."""
    site = root / "site"
    (site / "pyspark" / "python" / "lib").mkdir(parents=True)
    (site / "pyspark" / "__init__.py").write_text("")
    (site / "py4j").mkdir()
    (site / "py4j" / "__init__.py").write_text("")
    (site / "py4j" / "version.py").write_text(f"__version__ = '{metadata.version('py4j')}'\n")
    entries = []
    for name in zips:
        (site / "pyspark" / "python" / "lib" / name).write_bytes(b"")
        entries.append(str(site / "pyspark" / "python" / "lib" / name))
    return entries + [str(site)]


def test_spark_zips_give_way_to_the_installed_packages_they_copy(tmp_path):
    from freqgap.runtime.pyspark_path import prefer_installed_packages

    version = metadata.version("py4j")
    path = _fake_site(tmp_path, ["pyspark.zip", f"py4j-{version}-src.zip"])
    zips = path[:2]
    assert prefer_installed_packages(path) == zips
    assert path == [str(tmp_path / "site")]


def test_spark_zips_stay_where_they_are_not_copies(tmp_path):
    from freqgap.runtime.pyspark_path import prefer_installed_packages

    # a py4j of another version than the zip's; a pyspark.zip of a Spark distribution
    # (not inside the pyspark this path imports)
    path = _fake_site(tmp_path, ["py4j-0.0.1-src.zip"])
    other = tmp_path / "spark-dist" / "python" / "lib"
    other.mkdir(parents=True)
    (other / "pyspark.zip").write_bytes(b"")
    path.insert(0, str(other / "pyspark.zip"))
    before = list(path)
    assert prefer_installed_packages(path) == []
    assert path == before


def test_py4j_version_is_read_as_its_package_metadata_says(tmp_path):
    """The version is read from py4j/version.py, not importlib.metadata: the same answer for
    the installed py4j; a py4j without the file keeps its zip (no version: not a copy)."""
    import py4j

    from freqgap.runtime.pyspark_path import _py4j_version, prefer_installed_packages

    assert _py4j_version(Path(py4j.__file__).parent) == metadata.version("py4j")
    path = _fake_site(tmp_path, [f"py4j-{metadata.version('py4j')}-src.zip"])
    (tmp_path / "site" / "py4j" / "version.py").unlink()
    before = list(path)
    assert prefer_installed_packages(path) == []
    assert path == before


def test_workers_import_the_installed_pyspark_not_its_zip(spark):
    """The shared local session's workers fork from freqgap's daemon: they run the very
    PySpark files the driver runs (compiled once into __pycache__), not pyspark.zip."""
    import pyspark

    files = spark.sparkContext.parallelize([0], 1).map(
        lambda _: (sys.modules["pyspark"].__file__, sys.modules["py4j"].__file__)).collect()[0]
    assert ".zip" not in files[0] and Path(files[0]).resolve() == Path(pyspark.__file__).resolve()
    assert ".zip" not in files[1], files


_SUBMITTED = """
import sys
sys.path.insert(0, sys.argv[1])
from freqgap.runtime.pyspark_path import prefer_installed_packages
prefer_installed_packages()
import pyspark
from freqgap.spark_session import get_spark
sc = get_spark().sparkContext
print(sc.master, sc.getConf().get("spark.python.daemon.module", "-"), ".zip" in pyspark.__file__)
sc.stop()
"""


def test_plain_spark_submit_in_local_mode_gets_the_preloading_daemon(tmp_path):
    """`spark-submit --master local[N]` is local mode as `freqgap count` is: spark-local.conf
    applies, and its driver imports PySpark from the installed package, not Spark's zip."""
    from tests.counting.cluster import SPARK_HOME

    script = tmp_path / "job.py"
    script.write_text(_SUBMITTED)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SPARK_LOCAL_IP": "127.0.0.1", "HOME": str(tmp_path),
           "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable, "FREQGAP_JVM_CDS": "0"}
    proc = subprocess.run([str(SPARK_HOME / "bin" / "spark-submit"), "--master", "local[1]", str(script), str(REPO)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["local[1]", "freqgap.runtime.worker_daemon", "False"]
