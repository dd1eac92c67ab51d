"""The Python Spark starts here runs without Spark's zips and core jar where they copy what is
installed: exactly those entries leave PYTHONPATH, nothing else, and only where safe."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from freqgap.runtime import spark_python
from freqgap.runtime import enabled as runtime_enabled

# A piece of the runtime wing, which FREQGAP_RUNTIME=stock turns off (test_runtime_switch.py).
pytestmark = pytest.mark.skipif(not runtime_enabled(), reason="the runtime wing is off (FREQGAP_RUNTIME=stock)")

REPO = Path(__file__).resolve().parents[2]
PRINT_PATH = "import os; print(repr(os.environ.get('PYTHONPATH')))"


def _wrapped(pythonpath: str | None, drop: str, python: str | None = sys.executable):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), spark_python.DROP_ENV: drop}
    if python is not None:
        env[spark_python.PYTHON_ENV] = python
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    return subprocess.run([str(spark_python.WRAPPER), "-c", PRINT_PATH], env=env, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("given, kept", [
    ("/a/p.zip:/b:/c/x.jar:/d", "/b:/d"),
    ("/b::/a/p.zip:/a/p.zip:", "/b::"),                 # every copy goes; empty entries stay
    ("/x/*:/a/p.zip:/a b/c:/a/p.zip.old", "/x/*:/a b/c:/a/p.zip.old"),   # no globbing, whole entries only
    ("/a/p.zip", ""),
    ("/d", "/d"),
])
def test_the_wrapper_drops_exactly_the_named_entries(given, kept):
    proc = _wrapped(given, "/a/p.zip:/c/x.jar")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == repr(kept)


def test_the_wrapper_leaves_an_unset_path_unset_and_needs_its_python():
    assert _wrapped(None, "/a/p.zip").stdout.strip() == "None"
    proc = _wrapped("/a/p.zip", "/a/p.zip", python=None)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "FREQGAP_PYTHON" in proc.stderr


def _jar(path: Path, names: list[str]) -> str:
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, "x = 1\n")
    return str(path)


def _installed_layout(tmp_path: Path) -> tuple[list[str], list[str]]:
    """Spark's Python path entries in pip's layout (zips inside the installed pyspark), and
    an import path that finds that pyspark and py4j."""
    from importlib import metadata

    site = tmp_path / "site"
    lib = site / "pyspark" / "python" / "lib"
    lib.mkdir(parents=True)
    (site / "pyspark" / "__init__.py").write_text("")
    (site / "py4j").mkdir()
    (site / "py4j" / "__init__.py").write_text("")
    (site / "py4j" / "version.py").write_text(f"__version__ = '{metadata.version('py4j')}'\n")
    zips = [str(lib / "pyspark.zip"), str(lib / f"py4j-{metadata.version('py4j')}-src.zip")]
    for z in zips:
        Path(z).write_bytes(b"")
    return zips, [str(site)]


def test_zips_that_copy_the_installed_packages_and_a_jar_without_python_go(tmp_path, monkeypatch):
    monkeypatch.setenv("FREQGAP_CACHE_DIR", str(tmp_path / "cache"))
    zips, path = _installed_layout(tmp_path)
    core = _jar(tmp_path / "spark-core_2.13-9.jar", ["org/apache/A.class"])
    with_python = _jar(tmp_path / "other.jar", ["org/B.class", "mod.py"])
    user = str(tmp_path / "user.zip")
    entries = [*zips, core, with_python, user]
    assert spark_python.droppable(entries, path) == [*zips, core]
    # A Spark distribution's zips (not inside the pyspark this path imports) stay.
    assert spark_python.droppable(entries, [str(tmp_path)]) == [core]


def test_a_jars_answer_is_kept_until_the_jar_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("FREQGAP_CACHE_DIR", str(tmp_path / "cache"))
    jar = _jar(tmp_path / "core.jar", ["A.class"])
    assert spark_python._holds_no_python(jar)
    opened = []
    real = zipfile.ZipFile
    monkeypatch.setattr(zipfile, "ZipFile", lambda *a, **k: opened.append(a[1:2] or ("r",)) or real(*a, **k))
    assert spark_python._holds_no_python(jar) and opened == []          # from the cache
    _jar(tmp_path / "core.jar", ["A.class", "pkg/__init__.py"])
    os.utime(jar, ns=(1, 1))
    assert not spark_python._holds_no_python(jar) and opened == [("w",), ("r",)]
    assert not spark_python._holds_no_python(str(tmp_path / "missing.jar"))


def test_the_driver_code_names_what_the_jvm_will_put_first(spark):
    """spark-env.sh's helper computes Spark's Python path entries without a JVM: the same
    strings as `PythonUtils.sparkPythonPath` in the running one."""
    from pyspark.find_spark_home import _find_spark_home

    jvm_says = str(spark.sparkContext._jvm.PythonUtils.sparkPythonPath()).split(os.pathsep)
    assert spark_python.spark_python_path(_find_spark_home()) == jvm_says


def test_local_workers_start_without_sparks_archives(spark):
    """The shared local session's worker daemon (and so its workers) ran through the wrapper:
    this interpreter, and none of Spark's three archives on its path."""
    from pyspark.find_spark_home import _find_spark_home

    sc = spark.sparkContext
    assert sc.pythonExec == str(spark_python.WRAPPER)
    seen = sc.parallelize([0], 1).map(
        lambda _: (sys.executable, os.environ.get("PYTHONPATH", ""), list(sys.path))).collect()[0]
    assert seen[0] == sys.executable
    for entry in spark_python.spark_python_path(_find_spark_home()):
        assert entry not in seen[1].split(os.pathsep) and entry not in seen[2], entry


def test_spark_env_runs_a_local_driver_through_the_wrapper(tmp_path):
    """A plain spark-submit with conf/spark: spark-env.sh exports the wrapper as the driver's
    Python; one whose Python is another interpreter, or a cluster-mode driver, is left alone."""
    from tests.counting.cluster import SPARK_HOME

    script = ('set -a; . "$FREQGAP_SPARK_ENV"; set +a; '
              'printf "%s|%s|%s\\n" "${PYSPARK_DRIVER_PYTHON:-}" "${FREQGAP_PYTHON:-}" "${FREQGAP_PYTHONPATH_DROP:-}"')
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SPARK_HOME": str(SPARK_HOME),
           "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable, "FREQGAP_JVM_CDS": "0",
           "FREQGAP_CACHE_DIR": str(tmp_path / "cache"),
           "FREQGAP_SPARK_ENV": str(REPO / "conf" / "spark" / "spark-env.sh")}

    def sourced(*args: str, **extra: str) -> list[str]:
        proc = subprocess.run(["bash", "-c", script, "spark-class", "org.apache.spark.deploy.SparkSubmit", *args],
                              env={**env, **extra}, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip().split("|")

    wrapper, python, drop = sourced("--master", "local[1]", "job.py")
    assert (wrapper, python) == (str(spark_python.WRAPPER), sys.executable)
    assert drop.split(os.pathsep) == spark_python.spark_python_path(str(SPARK_HOME))
    assert sourced("--deploy-mode", "cluster", "job.py") == ["", "", ""]
    # The driver's interpreter is another one (the helper then runs on PYSPARK_PYTHON's).
    assert sourced("job.py", PYSPARK_DRIVER_PYTHON="/bin/false") == ["/bin/false", "", ""]


def test_spark_env_helper_refuses_a_malformed_call_in_one_line():
    proc = subprocess.run([sys.executable, "-m", "freqgap.runtime.spark_env", "--freqgap-spark-env", "x"],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1
    assert "usage: python -m freqgap.runtime.spark_env" in proc.stderr
