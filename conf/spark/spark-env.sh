# Sourced by Spark's own scripts (spark-submit, spark-class) before they start a JVM, when
# SPARK_CONF_DIR=conf/spark. For a driver that `spark-submit` starts here, it maps freqgap's
# class-data-sharing archive of the driver JVM (freqgap/jvm_cds.py; docs/counting.md, "Start-up
# costs": a cold run ~3 CPU-s less): `python -m freqgap.jvm_cds --freqgap-spark-env` prints
# shell code that puts Spark's jars ahead of this directory on the class path (the JDK maps no
# archive behind a non-empty directory) and adds the archive's options to SPARK_SUBMIT_OPTS.
# It prints nothing, and spark-submit runs unchanged, for any other command, a class path or
# cluster deploy mode of the user's, FREQGAP_JVM_CDS=0, or a Python without freqgap.
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
    if _freqgap_cds="$("$_freqgap_python" -m freqgap.jvm_cds --freqgap-spark-env "$$" "$@" 2>/dev/null)"; then
      eval "$_freqgap_cds"
      break
    fi
  done
fi
unset _freqgap_python _freqgap_cds _freqgap_arg
