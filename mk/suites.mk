# Negation and quantifier suites (issue 6): NeQA, "This is not a Dataset", quantifiers.
# See docs/suites.md. One command per benchmark:
#   make suite-neqa DATA=path/neqa.jsonl SUITE_MODELS=pythia-70m,pythia-160m [ORIGINAL=...] [COUNTS=out/counts]
SUITE_MODELS ?= demo
SUITE_OUT ?= out/suites
SUITE_FIXTURES := tests/fixtures/suites
SUITE_ARGS ?=

.PHONY: suite-neqa suite-tinad suite-quantifiers demo-suites test-suites

suite-neqa suite-tinad suite-quantifiers: setup ## a suite on DATA=file with SUITE_MODELS=m1,m2 (freqgap suite …)
	@test -n "$(DATA)" || { echo "set DATA=path to the benchmark file"; exit 2; }
	$(FREQGAP) suite $(@:suite-%=%) --data $(DATA) --models $(SUITE_MODELS) \
	  --out $(SUITE_OUT)/$(@:suite-%=%) $(if $(ORIGINAL),--original $(ORIGINAL)) \
	  $(if $(COUNTS),--counts $(COUNTS)) $(SUITE_ARGS)

# The three benchmarks on the small fixture files with the demo model (a smoke run).
demo-suites: setup ## the three suites on the fixture files with the demo model (a smoke run)
	$(FREQGAP) suite neqa --data $(SUITE_FIXTURES)/neqa.jsonl \
	  --original $(SUITE_FIXTURES)/neqa_nonnegated.jsonl --models $(SUITE_MODELS) \
	  --out $(SUITE_OUT)/neqa $(SUITE_ARGS)
	$(FREQGAP) suite tinad --data $(SUITE_FIXTURES)/tinad.jsonl \
	  --models $(SUITE_MODELS) --out $(SUITE_OUT)/tinad $(SUITE_ARGS)
	$(FREQGAP) suite quantifiers --data $(SUITE_FIXTURES)/quantifiers.csv \
	  --models $(SUITE_MODELS) --out $(SUITE_OUT)/quantifiers $(SUITE_ARGS)

test-suites: setup ## tests of the suites
	$(PY) -m pytest -q tests/suites
