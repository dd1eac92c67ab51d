"""The Python that Spark starts here (the worker daemon in local mode, a spark-submit
driver), without Spark's zips and core jar on its path where they only copy what is
installed.

Why: Spark puts `pyspark.zip`, `py4j-<version>-src.zip` and spark-core's jar first on the
PYTHONPATH of every Python it starts (`PythonUtils.sparkPythonPath`). The interpreter's very
first import (`encodings`, before any code of ours runs) then reads the directory of each
archive, in Python: thousands of entries, in every such process (docs/performance.md).
Where pip installed
PySpark the zips hold the same files as the installed packages (`pyspark_path`), and the
jar holds no Python at all, so nothing is lost by leaving them off. A POSIX shell script
(`spark-python.sh`, a millisecond) drops exactly the entries named in
`FREQGAP_PYTHONPATH_DROP` from PYTHONPATH and execs `FREQGAP_PYTHON`: Spark has no setting
for the path it prepends, only for the interpreter it runs.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import zipfile
from pathlib import Path

WRAPPER = Path(__file__).with_name("spark-python.sh")
PYTHON_ENV = "FREQGAP_PYTHON"
DROP_ENV = "FREQGAP_PYTHONPATH_DROP"
_JAR_CACHE = "spark-python-jars.json"


def droppable(entries: list[str], import_path: list[str] | None = None) -> list[str]:
    """Which of Spark's Python path entries this interpreter can start without: the zips
    where they copy the installed pyspark/py4j (`pyspark_path.prefer_installed_packages`),
    a jar that holds no Python module. Any other entry (a Spark distribution's zips, a
    user's py-files) stays."""
    from freqgap.runtime.pyspark_path import prefer_installed_packages

    base = [p for p in (sys.path if import_path is None else import_path) if p not in entries]
    zips = [e for e in entries if e.endswith(".zip")]
    drop = prefer_installed_packages(zips + base)
    drop += [e for e in entries if e.endswith(".jar") and _holds_no_python(e)]
    return [e for e in entries if e in drop and e and os.pathsep not in e]


def _holds_no_python(jar: str) -> bool:
    """Whether a jar has no module Python could import from it (.py, .pyc, a package dir).
    Reading a jar's directory costs as much as the start it saves, so the answer is kept
    per (path, size, mtime) in the cache directory."""
    try:
        stat = os.stat(jar)
    except OSError:
        return False
    stamp = f"{jar}\0{stat.st_size}\0{stat.st_mtime_ns}"
    cache = _cache_file()
    known = _read_json(cache)
    if stamp in known:
        return bool(known[stamp])
    try:
        with zipfile.ZipFile(jar) as archive:
            answer = not any(name.endswith((".py", ".pyc")) for name in archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return False
    known[stamp] = answer
    _write_json(cache, known)
    return answer


def _cache_file() -> Path:
    from freqgap.paths import cache_root

    return cache_root() / _JAR_CACHE


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_json(path: Path, data: dict) -> None:
    """Atomically (a rename), and silently not at all where the cache can't be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def wrapper_env(entries: list[str], python: str) -> dict[str, str]:
    """The environment that makes the wrapper run `python` without the droppable entries;
    {} when none can go (then Spark's interpreter is used unwrapped)."""
    drop = droppable(entries)
    if not drop or not os.access(WRAPPER, os.X_OK):
        return {}
    return {PYTHON_ENV: python, DROP_ENV: os.pathsep.join(drop)}


def is_this_python(executable: str) -> bool:
    """Whether `executable` (a name on PATH or a path) is this very interpreter (a venv's
    python is the venv's, not the base one it links to): only then are the choices made
    here true for it."""
    found = shutil.which(executable)
    return found is not None and os.path.abspath(found) == os.path.abspath(sys.executable)


def use_for_workers(context) -> bool:
    """Local mode: start the worker daemon through the wrapper (its environment goes with
    the tasks' `environment`). Only where the workers' interpreter is this one."""
    if not is_this_python(context.pythonExec):
        return False
    entries = str(context._jvm.PythonUtils.sparkPythonPath()).split(os.pathsep)
    env = wrapper_env(entries, sys.executable)
    if not env:
        return False
    context.environment.update(env)
    context.pythonExec = str(WRAPPER)
    return True


def spark_python_path(spark_home: str) -> list[str]:
    """What `PythonUtils.sparkPythonPath` will put first for a driver JVM started here:
    SPARK_HOME's two zips and spark-core's jar (the jar that holds that class)."""
    lib = os.path.join(spark_home, "python", "lib")
    zips = sorted(p for p in _listdir(lib) if p.startswith("py4j-") and p.endswith("-src.zip"))
    jar = spark_core_jar(spark_home)
    return [os.path.join(lib, "pyspark.zip")] + [os.path.join(lib, z) for z in zips[-1:]] + ([jar] if jar else [])


def spark_core_jar(spark_home: str) -> str | None:
    """Spark's core jar (`SPARK_HOME/jars/spark-core_<scala>-<version>.jar`), or None."""
    jars = sorted(p for p in _listdir(os.path.join(spark_home, "jars")) if p.startswith("spark-core_"))
    return os.path.join(spark_home, "jars", jars[-1]) if jars else None


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def driver_env_code(spark_home: str) -> str:
    """Shell code for spark-env.sh: run a spark-submit driver here through the wrapper, where
    the interpreter PySpark picks from the environment (PYSPARK_DRIVER_PYTHON, else
    PYSPARK_PYTHON, else python3) is this one. A `spark.pyspark.(driver.)python` setting
    takes precedence over the variable in Spark: that driver then runs as it would have."""
    chosen = os.environ.get("PYSPARK_DRIVER_PYTHON") or os.environ.get("PYSPARK_PYTHON") or "python3"
    if not is_this_python(chosen):
        return ""
    env = wrapper_env(spark_python_path(spark_home), sys.executable)
    if not env:
        return ""
    import shlex

    env["PYSPARK_DRIVER_PYTHON"] = str(WRAPPER)
    return "".join(f"export {key}={shlex.quote(value)}\n" for key, value in env.items())
