"""What `conf/spark/spark-env.sh` sets for a spark-submit whose driver runs here, from one
Python start (`python -m freqgap.runtime.spark_env --freqgap-spark-env PID ARGS`):

  * the driver JVM's class archive (`jvm_cds.spark_env`: its options, Spark's jars first);
  * the launcher JVM's archive (`launcher_cds`: SPARK_LAUNCHER_OPTS);
  * the driver's Python without Spark's zips (`spark_python`: PYSPARK_DRIVER_PYTHON).

Spark's scripts source spark-env.sh before they run the launcher, with spark-class's
arguments as `$@`; this prints shell code for it, and nothing for any other class or a
cluster-mode driver. Each part is off where it does not apply (FREQGAP_JVM_CDS=0: both
archives; FREQGAP_RUNTIME=stock: all of it).
"""

from __future__ import annotations

import os
import sys

from freqgap.runtime import enabled as runtime_enabled, jvm_cds, launcher_cds, spark_python

FLAG = "--freqgap-spark-env"


def shell_code(jvm_pid: int, spark_class_args: list[str]) -> str:
    """Shell code for `spark-class SPARK_CLASS_ARGS`, whose process (`jvm_pid`) becomes the driver JVM."""
    spark_home = os.environ.get("SPARK_HOME", "")
    if not runtime_enabled() or not spark_home or spark_class_args[:1] != [jvm_cds.SPARK_SUBMIT_CLASS]:
        return ""
    argv = spark_class_args[1:]
    if not jvm_cds.driver_runs_here(spark_home, argv):
        return ""
    code = spark_python.driver_env_code(spark_home)
    if jvm_cds.enabled():
        code += launcher_cds.spark_env_code(spark_home)
    return code + jvm_cds.spark_env(jvm_pid, spark_class_args)


def main(argv: list[str]) -> int:
    if argv[:1] != [FLAG] or len(argv) < 2 or not argv[1].isdigit():
        print(f"usage: python -m freqgap.runtime.spark_env {FLAG} PID SPARK_CLASS_ARGS... "
              "(conf/spark/spark-env.sh's helper)", file=sys.stderr)
        return 2
    sys.stdout.write(shell_code(int(argv[1]), argv[2:]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
