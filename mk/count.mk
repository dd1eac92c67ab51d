# Counting job (issue: the counting job). Included by the Makefile.

.PHONY: demo-count count bench-count

# The embedded default: the bundled sample corpus in data/sample -> out/counts (local mode).
demo-count: setup ## count the bundled sample corpus into out/counts, and plot the counts
	$(FREQGAP) count --progress-interval 5
	$(PY) analysis/count_report.py out/counts out/reports/counts.png

# spark-submit form, for arguments: make count ARGS="--input ... --out ..."
count: setup ## spark-submit jobs/count_terms.py $(ARGS) (e.g. ARGS="--input DIR --out DIR")
	SPARK_HOME=$$($(PY) -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))') \
	  SPARK_CONF_DIR=conf/spark PYSPARK_PYTHON=$(abspath $(PY)) $(VENV)/bin/spark-submit jobs/count_terms.py $(ARGS)

bench-count: setup ## counting benchmark on real text and a generated corpus, into bench/RESULTS.md (ARGS=--quick: one run each, not written)
	$(PY) bench/bench_count.py $(ARGS)
