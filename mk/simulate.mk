# The synthetic corpus, the small demo model and `make simulate` (docs/demo_model.md).
# SIMULATE_ARGS are passed to jobs/simulate.py, e.g. SIMULATE_ARGS="--steps 500".
SIMULATE_ARGS ?=

.PHONY: simulate sample-corpus bench-corpus demo-model test-simulate

# Two models (Zipf vs uniform operands, same steps and seed), each through count →
# instances → inference → gaps; report in results/simulate/. About 30 min on 2 cores.
simulate: setup
	$(PY) jobs/simulate.py $(SIMULATE_ARGS)

# Rewrite the committed sample corpus (byte-identical to the committed files).
sample-corpus: setup
	$(PY) jobs/generate_corpus.py --profile sample --output data/sample

# The counting benchmark's corpus (>= 500 MB of JSON Lines, not committed).
bench-corpus: setup
	$(PY) jobs/generate_corpus.py --profile bench --output out/corpus/bench --workers 2

# Retrain the committed demo checkpoint (the command in models/demo/COMMAND.txt).
demo-model: setup
	$(PY) jobs/train_lm.py --profile demo --corpus data/sample --output models/demo --threads 1 --record-predictions 40

test-simulate: setup
	$(PY) -m pytest -q tests/corpus tests/training
