# Counting job (issue: the counting job). Included by the Makefile.

.PHONY: demo-count count bench-count

# The embedded default: the bundled sample corpus in data/sample -> out/counts (local mode).
demo-count: setup
	$(PY) jobs/count_terms.py --progress-interval 5
	$(PY) analysis/count_report.py out/counts out/reports/counts.png

# spark-submit form, for arguments: make count ARGS="--input ... --output ..."
count: setup
	SPARK_HOME=$$($(PY) -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))') \
	  $(VENV)/bin/spark-submit jobs/count_terms.py $(ARGS)

bench-count: setup
	$(PY) bench/bench_count.py $(ARGS)
