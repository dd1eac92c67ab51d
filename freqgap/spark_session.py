"""One way to get a Spark session, locally or on a cluster, with the package shipped.

`spark-submit --master spark://…` (or YARN, Kubernetes) decides the master; run as a plain
script, the job uses local mode on all cores. Executors import the same `freqgap` code
without a manual step (`ship_package`; their Python still needs numpy, pyarrow, zstandard
and numba: the same venv, or `--archives`).

Settings live in conf/spark/ (spark-defaults.conf, log4j2.properties): applied here to every
session this process starts, and read by `spark-submit` when SPARK_CONF_DIR points there;
spark-local.conf is added in local mode only. The driver JVM this module starts maps a
per-machine class-data-sharing archive (`jvm_cds`).
Spark's log is quiet unless `verbose`, so a user error prints one line.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from freqgap.runtime import enabled as runtime_enabled, jvm_cds, launcher_cds, spark_python
from freqgap.paths import DEFAULT_CONF_DIR

_SHIPPED_ATTR = "_freqgap_package_shipped"
SPARK_CONF_DIR = DEFAULT_CONF_DIR / "spark"
_JAVA_OPTIONS = ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions")


def read_spark_defaults(path: Path = SPARK_CONF_DIR / "spark-defaults.conf") -> dict[str, str]:
    """`key value` lines of a spark-defaults.conf file (comments and blanks skipped)."""
    conf: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition(" ")
            conf[key] = value.strip()
    return conf


def default_spark_conf(verbose: bool = False) -> dict[str, str]:
    """conf/spark/spark-defaults.conf and the log setup."""
    conf = read_spark_defaults()
    log = (f"-Dlog4j2.configurationFile={(SPARK_CONF_DIR / 'log4j2.properties').as_uri()}"
           f" -Dfreqgap.log.level={'info' if verbose else 'fatal'}")
    conf["spark.driver.extraJavaOptions"] = f"{conf.get('spark.driver.extraJavaOptions', '')} {log}".strip()
    return conf


class SparkRuntime:
    """A running SparkContext, in the shape of the part of a SparkSession this project uses
    (`.sparkContext`, `.stop()`).

    Why not a SparkSession: every job here runs the package's own task code over RDDs, and a
    SparkSession's JVM side (SQL settings, extensions, the ML functions registered through
    Scala reflection) cost a cold run's JVM much and served nothing (docs/performance.md). `session()` makes one, on demand, over the same
    context for a caller that wants SQL.
    """

    def __init__(self, context) -> None:
        self.sparkContext = context

    def session(self):
        """A SparkSession over this context (its JVM side is built now, once)."""
        from pyspark.sql import SparkSession

        return SparkSession.builder.getOrCreate()

    def stop(self) -> None:
        self.sparkContext.stop()


def get_spark(master: str | None = None, app_name: str = "freqgap", verbose: bool = False,
              conf: dict[str, str] | None = None) -> SparkRuntime:
    """The running Spark context, or a new one (local[*] unless a master is given or
    submitted), as a SparkRuntime.

    `conf` entries override the defaults; Java options are appended to the defaults' ones.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark import SparkConf, SparkContext

    _numpy_converters_without_pandas()
    active = SparkContext._active_spark_context
    if active is not None and master is None:
        runtime = SparkRuntime(active)
        ship_package(runtime)
        return runtime
    submitted_master = os.environ.get("MASTER") or _submitted_master()
    spark_conf = SparkConf().setAppName(app_name)
    if master:
        spark_conf.setMaster(master)
    elif not submitted_master:
        spark_conf.setMaster("local[*]")
    settings = default_spark_conf(verbose)
    if runs_locally(master) and runtime_enabled():        # the preloading worker daemon
        settings.update(read_spark_defaults(SPARK_CONF_DIR / "spark-local.conf"))
    settings.update(_passed_environment())
    for key, value in (conf or {}).items():
        settings[key] = f"{settings.get(key, '')} {value}".strip() if key in _JAVA_OPTIONS else value
    for key, value in settings.items():
        spark_conf.set(key, value)
    if not submitted_master and not verbose:
        _launch_quiet_gateway(master or "local[*]", app_name, settings)
    runtime = SparkRuntime(SparkContext.getOrCreate(spark_conf))
    # Under spark-submit the JVM started before this call: its log level is set here.
    runtime.sparkContext.setLogLevel("INFO" if verbose else "FATAL")
    if runtime.sparkContext.master.startswith("local") and runtime_enabled():
        spark_python.use_for_workers(runtime.sparkContext)
    ship_package(runtime)
    return runtime


def _passed_environment() -> dict[str, str]:
    """The driver's FREQGAP_* settings (engine, runtime switch) for every executor too."""
    return {f"spark.executorEnv.{k}": v for k, v in os.environ.items() if k.startswith("FREQGAP_")}


def _numpy_converters_without_pandas() -> None:
    """Swap PySpark's py4j converters of numpy values for ones that give the same answers
    without importing pandas (once per process).

    Why: py4j asks every input converter about every argument of every JVM call, and
    PySpark's two numpy converters answer by importing `pyspark.testing.utils` to learn
    whether numpy is installed; that module imports pandas (a costly part of every cold
    count's driver). An object can only be a numpy value when numpy is imported, so
    `sys.modules` answers the same.
    """
    from py4j import protocol
    from pyspark.sql import types

    class NumpyArrayConverter(types.NumpyArrayConverter):
        def can_convert(self, obj) -> bool:
            np = sys.modules.get("numpy")
            return np is not None and isinstance(obj, np.ndarray) and obj.ndim == 1

    class NumpyScalarConverter(types.NumpyScalarConverter):
        def can_convert(self, obj) -> bool:
            np = sys.modules.get("numpy")
            return np is not None and isinstance(obj, np.generic)

    swap = {types.NumpyArrayConverter: NumpyArrayConverter, types.NumpyScalarConverter: NumpyScalarConverter}
    protocol.INPUT_CONVERTER[:] = [swap[type(c)]() if type(c) in swap else c
                                   for c in protocol.INPUT_CONVERTER]


# What the JVM prints on stderr before any log configuration applies.
_JVM_NOISE = (b"WARNING: Using incubator modules",)
# Python workers of tasks cancelled after another task failed print these tracebacks.
_CANCELLED = (b"ConnectionResetError", b"BrokenPipeError")


def filter_jvm_stderr(lines):
    """The JVM's stderr lines less start-up noise and cancelled workers' tracebacks."""
    held: list[bytes] = []
    for line in lines:
        if held:
            held.append(line)
            if not line[:1].isspace():               # the traceback's last line
                if not line.startswith(_CANCELLED):
                    yield from held
                held = []
        elif line.startswith(b"Traceback (most recent call last)"):
            held = [line]
        elif not line.startswith(_JVM_NOISE):
            yield line
    yield from held


def _launch_quiet_gateway(master: str, app_name: str, settings: dict[str, str]) -> None:
    """Start Spark's JVM with its stderr filtered of start-up noise (once per process).

    PySpark's `launch_gateway(popen_kwargs=...)` is its documented hook for capturing the
    JVM's output; everything but the known noise lines is passed on to our stderr.
    """
    import subprocess
    import threading

    from pyspark import SparkConf, SparkContext
    from pyspark.find_spark_home import _find_spark_home
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    settings = jvm_cds.with_jars_first(_find_spark_home(), settings)
    conf = SparkConf(loadDefaults=False).setMaster(master).setAppName(app_name)
    for key, value in settings.items():
        conf.set(key, value)
    cds, pending = jvm_cds.driver_options(jvm_cds.archive_key(_find_spark_home(), settings))
    if cds:
        conf.set(_JAVA_OPTIONS[0], f"{settings.get(_JAVA_OPTIONS[0], '')} {cds}".strip())
    with launcher_cds.options_in_environment(_find_spark_home()):   # launch_gateway copies os.environ
        gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})
    if pending is not None:
        atexit.register(_finish_dump, gateway.proc, pending, jvm_cds.jvm_command(gateway.proc.pid))
    stream = gateway.proc.stderr

    def forward() -> None:
        for line in filter_jvm_stderr(iter(stream.readline, b"")):
            sys.stderr.buffer.write(line)
            sys.stderr.buffer.flush()

    threading.Thread(target=forward, name="spark-jvm-stderr", daemon=True).start()
    SparkContext._gateway = gateway
    SparkContext._jvm = gateway.jvm


def _finish_dump(proc, pending: Path, command: list[str] | None) -> None:
    """At exit, the first run's JVM writes the class archive: let it finish, then publish it."""
    import subprocess

    from pyspark import SparkContext

    active = SparkContext._active_spark_context
    if active is not None:               # its accumulator server would see the JVM go
        try:
            active.stop()
        except Exception:                # noqa: BLE001 - the JVM may be gone already
            pass
    if proc.stdin is not None:
        proc.stdin.close()               # the gateway JVM exits on EOF, dumping as it goes
    try:
        returncode = proc.wait(timeout=300)
    except subprocess.TimeoutExpired:
        returncode = None
    jvm_cds.finish(pending, command, returncode)


def runs_locally(master: str | None) -> bool:
    """Whether get_spark(master) runs in local mode: the argument, else spark-submit's
    --master (MASTER), else local[*] when not submitted (a master from a conf file: no)."""
    chosen = master or os.environ.get("MASTER") or (_master_spark_submit_set() if _submitted_master() else "local[*]")
    return chosen.startswith("local")


def _master_spark_submit_set() -> str:
    """Under spark-submit, the master it gave its JVM ('' when that JVM can't be asked).

    Why: a plain `spark-submit --master local[N] jobs/count_terms.py` is local mode too and
    gets spark-local.conf (the preloading worker daemon) as `freqgap count` does."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return ""
    from pyspark import SparkConf, SparkContext

    try:
        SparkContext._ensure_initialized()     # connects to spark-submit's JVM (started already)
        return SparkConf().get("spark.master", "") or ""
    except Exception:                          # noqa: BLE001 - no JVM to ask: not local
        return ""


def _submitted_master() -> bool:
    """True when spark-submit started this process (it then owns the master setting)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ or "--master" in os.environ.get("PYSPARK_SUBMIT_ARGS", "")


def _package_zip(package_dir: Path) -> Path:
    """This package's sources as a zip in a fresh temporary directory, removed when this
    Python exits. Why then: the driver's file server hands the file to every executor that
    starts while the context lives, so it can't go sooner; left behind, every cluster run
    kept its 0.3 MB copy in the temporary directory for good."""
    folder = tempfile.mkdtemp(prefix="freqgap-pkg-")
    atexit.register(shutil.rmtree, folder, True)
    target = Path(folder) / "freqgap.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(package_dir.rglob("*.py")):
            zf.write(path, path.relative_to(package_dir.parent).as_posix())
    return target


def ship_package(spark) -> None:
    """Make executors import this very freqgap (once per context).

    Local mode: the Python workers run on this machine, so they get this package's parent
    directory on PYTHONPATH and import the same files (numba's compiled code is then cached
    beside them, once per machine). A cluster: the package is zipped and added with
    `addPyFile` (each executor's Python worker compiles numba's code once: a fixed cost).
    """
    sc = spark.sparkContext
    if getattr(sc, _SHIPPED_ATTR, False):
        return
    package_dir = Path(__file__).resolve().parent
    if sc.master.startswith("local"):
        paths = [str(package_dir.parent)] + [p for p in sc.environment.get("PYTHONPATH", "").split(os.pathsep) if p]
        sc.environment["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    else:
        sc.addPyFile(str(_package_zip(package_dir)))
    setattr(sc, _SHIPPED_ATTR, True)
