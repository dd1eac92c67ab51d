#!/bin/sh
# freqgap/spark_python.py: run $FREQGAP_PYTHON with the entries of $FREQGAP_PYTHONPATH_DROP
# (colon-separated) taken off PYTHONPATH; every other entry stays, in order, empty ones too.
if [ -z "${FREQGAP_PYTHON:-}" ]; then
  echo "freqgap: spark-python.sh needs FREQGAP_PYTHON (the Python to run); see freqgap/spark_python.py" >&2
  exit 2
fi
if [ -n "${PYTHONPATH+set}" ] && [ -n "${FREQGAP_PYTHONPATH_DROP:-}" ]; then
  set -f
  _freqgap_path=":$PYTHONPATH:"
  _freqgap_ifs=$IFS
  IFS=:
  for _freqgap_drop in $FREQGAP_PYTHONPATH_DROP; do
    [ -n "$_freqgap_drop" ] || continue
    while :; do
      case "$_freqgap_path" in
        *":$_freqgap_drop:"*) _freqgap_path="${_freqgap_path%%":$_freqgap_drop:"*}:${_freqgap_path#*":$_freqgap_drop:"}" ;;
        *) break ;;
      esac
    done
  done
  IFS=$_freqgap_ifs
  _freqgap_path=${_freqgap_path#:}
  PYTHONPATH=${_freqgap_path%:}
  export PYTHONPATH
  unset _freqgap_path _freqgap_drop _freqgap_ifs
  set +f
fi
exec "$FREQGAP_PYTHON" "$@"
