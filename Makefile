# freqgap — the README's two commands are `make demo` and `make test`.
# Every target installs what it needs itself (a venv in .venv, pinned versions).

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
FREQGAP := $(VENV)/bin/freqgap
STAMP := $(VENV)/.installed
export PYSPARK_PYTHON := $(abspath $(PY))
export PYSPARK_DRIVER_PYTHON := $(abspath $(PY))
export SPARK_LOCAL_IP := 127.0.0.1
export PYTHONUNBUFFERED := 1
# No hub access is assumed: everything the demo and tests need is local.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: help setup check-java test demo clean kernel

# `make help` lists every target that has a `## ` description on its rule line, from this
# file and mk/*.mk (tests/cli/test_make_help.py checks that none is missing).
help: ## list the targets with a one-line description each
	@grep -hE '^[a-zA-Z0-9_. -]+:.*## ' $(MAKEFILE_LIST) | \
	  awk 'BEGIN {FS = ":.*## "}; {printf "  make %-20s %s\n", $$1, $$2}'

check-java: ## stop with install instructions when Java 17 (for Spark) is missing
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
	touch $(STAMP)

setup: check-java $(STAMP) ## create .venv with the pinned versions (once; again when pyproject.toml changes)

# Opt-in: writes outside the checkout (a kernel spec in the user's Jupyter data directory,
# e.g. ~/.local/share/jupyter/kernels/freqgap), which `setup` never does.
kernel: setup ## install this venv as the Jupyter kernel "freqgap" into your user's Jupyter (for notebooks/)
	$(PY) -m ipykernel install --user --name freqgap --display-name "Python 3 (freqgap)"

test: setup ## set up, then run the whole test suite
	$(PY) -m pytest -q -ra tests

clean: ## remove out/, results/ and pytest caches
	rm -rf out results .pytest_cache

include $(wildcard mk/*.mk)

# The demo chain (freqgap/workflows/demo.py): count → instances → predict → gaps on the
# bundled sample with the committed demo model; each stage alone: demo-count, demo-instances,
# demo-predict, demo-gaps (mk/<area>.mk).
demo: setup ## set up, then run every stage on the bundled sample (freqgap demo; see README)
	$(FREQGAP) demo
