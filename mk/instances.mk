# Instances and inference (issue 3). See docs/inference.md.
.PHONY: demo-instances demo-predict bench-inference test-instances

DEMO_COUNTS ?= out/counts
DEMO_INSTANCES ?= out/instances
DEMO_PREDICTIONS ?= out/predictions

# The `demo` grid of conf/tasks.yaml: a few tasks, k=2, seeds 0-1, a capped number of items.
demo-instances: setup
	$(PY) jobs/make_instances.py --counts $(DEMO_COUNTS) --out $(DEMO_INSTANCES) --grid demo

# The demo model is the `demo` alias of conf/models.yaml (models/demo/). Predictions are
# redone from scratch each time, since demo-instances rewrites the prompts.
demo-predict: setup
	@test -f models/demo/config.json || { \
	  echo "demo-predict: no demo model: models/demo/config.json is missing."; \
	  echo "  The demo model is committed to models/demo/; alternatively run"; \
	  echo "  $(PY) jobs/predict.py --prompts $(DEMO_INSTANCES) --model <dir or HF id>"; exit 1; }
	rm -rf $(DEMO_PREDICTIONS)/demo
	$(PY) jobs/predict.py --prompts $(DEMO_INSTANCES) --model demo --out-root $(DEMO_PREDICTIONS)

# Prefix KV-cache reuse vs the study's way (full prompts, batch 50), k=16, on the CPU.
bench-inference: setup
	$(PY) bench/bench_inference.py

test-instances: setup
	$(PY) -m pytest -q tests/instances tests/inference
