# Sourced by Spark's own scripts (spark-submit, spark-class) before they start a JVM, when
# SPARK_CONF_DIR=conf/spark. For a driver that `spark-submit` starts here,
# `python -m freqgap.runtime.spark_env --freqgap-spark-env` (freqgap/runtime/spark_env.py; docs/counting.md,
# "Start-up costs") prints shell code that
#   - maps freqgap's class-data-sharing archive of the driver JVM (freqgap/runtime/jvm_cds.py; a cold
#     run ~3 CPU-s less): Spark's jars ahead of this directory on the class path (the JDK maps
#     no archive behind a non-empty directory), the archive's options in SPARK_SUBMIT_OPTS;
#   - maps one of the launcher JVM (freqgap/runtime/launcher_cds.py): SPARK_LAUNCHER_OPTS;
#   - starts the Python driver without Spark's zips on its path where they copy the installed
#     pyspark (freqgap/runtime/spark_python.py): PYSPARK_DRIVER_PYTHON.
# It prints nothing, and spark-submit runs unchanged, for any other command, a class path or
# cluster deploy mode of the user's, or a Python without freqgap; FREQGAP_JVM_CDS=0 leaves
# out the archives.
_freqgap_cds=""
if [ "$1" = "org.apache.spark.deploy.SparkSubmit" ]; then
  _freqgap_cds=1
  for _freqgap_arg in "$@"; do        # a class path already given (get_spark's): no Python start
    case "$_freqgap_arg" in --driver-class-path*|*spark.driver.extraClassPath*) _freqgap_cds="" ;; esac
  done
fi
if [ -n "$_freqgap_cds" ]; then
  for _freqgap_python in "$PYSPARK_DRIVER_PYTHON" "$PYSPARK_PYTHON" python3; do
    [ -n "$_freqgap_python" ] || continue
    if _freqgap_cds="$("$_freqgap_python" -m freqgap.runtime.spark_env --freqgap-spark-env "$$" "$@" 2>/dev/null)"; then
      eval "$_freqgap_cds"
      break
    fi
  done
fi
unset _freqgap_python _freqgap_cds _freqgap_arg
