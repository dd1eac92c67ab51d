"""A class-data-sharing archive for Spark's launcher JVM, the short one `spark-class` runs
before every driver to build its command line (`org.apache.spark.launcher.Main`).

Why: that JVM is paid by every spark-submit and every `get_spark()`; an archive of the
classes it loads about halves it (docs/performance.md). Spark reads
its options from `SPARK_LAUNCHER_OPTS`, which `conf/spark/spark-env.sh` (through
`spark_env --freqgap-spark-env`) and `get_spark()` set. The archive is made on first use, at
once: the launcher run alone with `-XX:ArchiveClassesAtExit` (once per machine and
set-up), checked with `-Xshare:on` and renamed into place (`jvm_cds.finish`), under its
own directory so its small archives never push the driver's large ones out of
`jvm_cds`'s four. Keyed, checked and switched off (`FREQGAP_JVM_CDS=0`) as the driver's.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from freqgap.runtime import jvm_cds
from freqgap.runtime.spark_python import spark_core_jar

ENV = "SPARK_LAUNCHER_OPTS"
_MAIN = ["org.apache.spark.launcher.Main", "org.apache.spark.deploy.SparkSubmit",
         "--master", "local[1]", "pyspark-shell"]
_DUMP_TIMEOUT_S = 120


def archive_dir() -> Path:
    return jvm_cds.cache_dir().parent / "jvm-cds-launcher"


def launcher_opts(spark_home: str) -> str:
    """SPARK_LAUNCHER_OPTS for a launcher of `spark_home`: the user's, then the archive's
    (made now if missing); the user's alone where no archive can be had."""
    user = os.environ.get(ENV, "")
    java = jvm_cds._java()
    key = jvm_cds.archive_key(spark_home, {}, java=java, extra=f"spark-launcher\0{user}") if java else None
    if key is None or (archive_dir() / f"{key}.failed").exists():
        return user                      # no java, or this set-up's launcher can't dump: not again
    options, pending = jvm_cds.driver_options(key, archive_dir())
    if pending is not None:
        options = _dump(java, spark_home, user, options, pending)
        if not options:
            _touch(archive_dir() / f"{key}.failed")
    return f"{user} {options}".strip()


def _touch(path: Path) -> None:
    try:
        path.touch()
    except OSError:
        pass


def _dump(java: Path, spark_home: str, user: str, dump_options: str, pending: Path) -> str:
    """Run the launcher once writing the archive, publish it once checked; its options
    (or '' when the JVM could not dump)."""
    command = [str(java), "-Xmx128m", *shlex.split(user), *shlex.split(dump_options),
               "-cp", os.path.join(spark_home, "jars", "*"), *_MAIN]
    env = {**os.environ, "SPARK_HOME": spark_home}
    env.setdefault("SPARK_SCALA_VERSION", _scala_version(spark_home))   # spark-class sets it later
    try:
        returncode = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, env=env, timeout=_DUMP_TIMEOUT_S).returncode
    except (OSError, subprocess.SubprocessError):
        returncode = None
    archive = jvm_cds.finish(pending, command, returncode)
    return jvm_cds.map_options(archive) if archive else ""


def _scala_version(spark_home: str) -> str:
    """Spark's Scala version from its core jar's name (`spark-core_2.13-4.3.0.jar`): what
    load-spark-env.sh exports; the launcher refuses to run without it outside a build tree."""
    import re

    jar = spark_core_jar(spark_home)
    match = re.match(r"spark-core_(\d+\.\d+)-", os.path.basename(jar)) if jar else None
    return match.group(1) if match else ""


def spark_env_code(spark_home: str) -> str:
    """Shell code for spark-env.sh (sourced before spark-class runs the launcher)."""
    opts = launcher_opts(spark_home)
    return f"{ENV}={shlex.quote(opts)}\n" if opts != os.environ.get(ENV, "") else ""


@contextmanager
def options_in_environment(spark_home: str) -> Iterator[None]:
    """SPARK_LAUNCHER_OPTS set for what starts inside (get_spark's gateway launch), then as
    it was: PySpark's launch_gateway copies os.environ and takes no environment of its own."""
    before = os.environ.get(ENV)
    opts = launcher_opts(spark_home)
    if opts:
        os.environ[ENV] = opts
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before
