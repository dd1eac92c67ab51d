# The synthetic corpus, the small demo model and `make simulate` (docs/demo_model.md).
# SIMULATE_ARGS are passed to `freqgap simulate`, e.g. SIMULATE_ARGS="--steps 500".
SIMULATE_ARGS ?=

.PHONY: simulate sample-corpus bench-corpus demo-model test-simulate

# Two models (Zipf vs uniform operands, same steps and seed), each through count →
# instances → inference → gaps; report in results/simulate/. Its duration is the one
# measured in docs/demo_model.md (tests/cli/test_make_targets.py keeps the two equal).
simulate: setup ## Zipf vs uniform corpus, same model and steps: the gap caused by frequency (~22 min on 2 cores)
	$(FREQGAP) simulate $(SIMULATE_ARGS)

# Rewrite the committed sample corpus (byte-identical to the committed files).
sample-corpus: setup ## rewrite the committed sample corpus data/sample (byte-identical)
	$(FREQGAP) corpus --profile sample --out data/sample

# The counting benchmark's corpus (>= 500 MB of JSON Lines, not committed).
bench-corpus: setup ## the counting benchmark's corpus in out/corpus/bench (>= 500 MB)
	$(FREQGAP) corpus --profile bench --out out/corpus/bench --workers 2

# Retrain the committed demo checkpoint (the command in models/demo/COMMAND.txt).
demo-model: setup ## retrain the committed demo checkpoint models/demo
	$(FREQGAP) train --profile demo --corpus data/sample --out models/demo --threads 1 --record-predictions 40

test-simulate: setup ## tests of the corpus generator, training and simulate
	$(PY) -m pytest -q tests/corpus tests/training
