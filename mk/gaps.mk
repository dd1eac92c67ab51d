# make gaps: DuckDB joins counts, instances and predictions into Δ (SPEC §5); see docs/gaps.md.
# Inputs and settings come from conf/gaps.yaml; override any of them with GAPS_ARGS, e.g.
#   make gaps GAPS_ARGS="--predictions 'out/predictions/gpt-j-6b/' --binning quantile"
# (the same as `freqgap gaps …`; see `freqgap gaps --help`)
GAPS_ARGS ?=
DEMO_GAPS_ARGS ?=
BENCH_GAPS_ARGS ?=

.PHONY: gaps demo-gaps bench-gaps test-gaps

gaps: setup ## DuckDB gaps of out/ into results/ (conf/gaps.yaml; GAPS_ARGS="…" overrides)
	$(FREQGAP) gaps $(GAPS_ARGS)

# The demo's last stage: the gaps of the demo outputs, printed as a Table-2-like summary.
# Reads the demo stages' directories (DEMO_* of mk/instances.mk, out/ by default).
demo-gaps: setup ## gaps of the demo outputs with a Table-2-like summary
	$(FREQGAP) gaps --summary \
	  --counts $(or $(DEMO_COUNTS),out/counts) --instances $(or $(DEMO_INSTANCES),out/instances) \
	  --predictions '$(or $(DEMO_PREDICTIONS),out/predictions)/*/' $(DEMO_GAPS_ARGS)

# Benchmark (not a test): a generated pairs table of >= 100M rows; time and peak memory.
bench-gaps: setup ## gaps benchmark on a generated pairs table of >= 100M rows
	$(PY) bench/bench_gaps.py $(BENCH_GAPS_ARGS)

test-gaps: setup ## tests of the gaps stage
	$(PY) -m pytest -q tests/gaps
