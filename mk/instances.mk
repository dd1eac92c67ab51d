# Instances and inference (issue 3). See docs/inference.md.
.PHONY: demo-instances demo-predict bench-inference test-instances

DEMO_COUNTS ?= out/counts
DEMO_INSTANCES ?= out/instances
DEMO_PREDICTIONS ?= out/predictions

# The `demo` grid of conf/tasks.yaml: a few tasks, k=2, seeds 0-1, a capped number of items.
demo-instances: setup ## instances and prompts of the demo grid from out/counts
	$(FREQGAP) instances --counts $(DEMO_COUNTS) --out $(DEMO_INSTANCES) --grid demo

# The demo model is the `demo` alias of conf/models.yaml (models/demo/). Predictions are
# redone from scratch each time, since demo-instances rewrites the prompts.
demo-predict: setup ## predictions of the committed demo model on the demo prompts
	@test -f models/demo/config.json || { \
	  echo "demo-predict: no demo model: models/demo/config.json is missing."; \
	  echo "  The demo model is committed to models/demo/; alternatively run"; \
	  echo "  $(FREQGAP) predict --prompts $(DEMO_INSTANCES) --model <dir or HF id>"; exit 1; }
	rm -rf $(DEMO_PREDICTIONS)/demo
	$(FREQGAP) predict --prompts $(DEMO_INSTANCES) --model demo --out $(DEMO_PREDICTIONS)/demo

# Prefix KV-cache reuse vs the study's way (full prompts, batch 50), k=16, on the CPU.
bench-inference: setup ## prefix KV-cache reuse vs the study's full prompts, k=16, CPU
	$(PY) bench/bench_inference.py

test-instances: setup ## tests of the instances and inference stages
	$(PY) -m pytest -q tests/instances tests/inference
