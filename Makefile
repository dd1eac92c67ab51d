# freqgap — the README's two commands are `make demo` and `make test`.
# Every target installs what it needs itself (a venv in .venv, pinned versions).

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export PYSPARK_PYTHON := $(abspath $(PY))
export PYSPARK_DRIVER_PYTHON := $(abspath $(PY))
export SPARK_LOCAL_IP := 127.0.0.1
export PYTHONUNBUFFERED := 1
# No hub access is assumed: everything the demo and tests need is local.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: help setup check-java test demo clean

help:
	@echo "make demo   - set up, then run every stage on the bundled sample (see README)"
	@echo "make test   - set up, then run the test suite"
	@echo "make gaps   - DuckDB gaps from out/ into results/"
	@echo "make bench-count - counting benchmark (side by side with baselines)"

check-java:
	@command -v java >/dev/null 2>&1 || { \
	  echo "Java 17 is required by Spark and was not found."; \
	  echo "Install it with: sudo apt-get install -y openjdk-17-jre-headless"; \
	  echo "(macOS: brew install openjdk@17)"; exit 1; }

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# CPU build of torch first: an unpinned torch would pull a multi-GB CUDA build.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	$(PY) -m ipykernel install --user --name freqgap >/dev/null 2>&1 || true
	touch $(STAMP)

setup: check-java $(STAMP)

test: setup
	$(PY) -m pytest -q -ra tests

clean:
	rm -rf out results .pytest_cache

include $(wildcard mk/*.mk)

# The demo chain: each stage's target lives in mk/<area>.mk.
demo: setup
	$(MAKE) --no-print-directory demo-count demo-instances demo-predict demo-gaps
