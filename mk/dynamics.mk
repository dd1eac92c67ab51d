# Frequency over training time (docs/dynamics.md). DYNAMICS_ARGS are passed to
# `freqgap dynamics demo`, e.g. DYNAMICS_ARGS="--resume" or "--steps 256".
DYNAMICS_ARGS ?=

.PHONY: dynamics test-dynamics

# Train the demo model with Pythia's packed data order and 8 log-spaced checkpoints, count
# what it trained on by checkpoint (Spark), predict at every checkpoint, Δ per checkpoint;
# results/dynamics/ (plots, summary.md). About 6 min on 2 idle cores.
dynamics: setup ## Δ over training time: the demo model's checkpoints, counts as of each step (~6 min)
	$(FREQGAP) dynamics demo $(DYNAMICS_ARGS)

test-dynamics: setup ## tests of the indexed reader/writer, counting by step, Δ per checkpoint
	$(PY) -m pytest -q tests/dynamics
