# Negation and quantifier suites (issue 6): NeQA, "This is not a Dataset", quantifiers.
# See docs/suites.md. One command per benchmark:
#   make suite-neqa DATA=path/neqa.jsonl SUITE_MODELS=pythia-70m,pythia-160m [ORIGINAL=...] [COUNTS=out/counts]
SUITE_MODELS ?= demo
SUITE_OUT ?= out/suites
SUITE_FIXTURES := tests/fixtures/suites
SUITE_ARGS ?=
# The demo model's tokenizer has no single " B" token: its letters are scored summed
# over their tokens (docs/suites.md; the authors' rule is top50), and its 256-token context
# is shorter than the few-shot prompts: they are cut on the left and counted.
NEQA_LETTER_SCORING ?= sum
DEMO_SUITE_ARGS ?= --overlong truncate

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
	  --task2-plain \
	  --letter-scoring $(NEQA_LETTER_SCORING) --out $(SUITE_OUT)/neqa $(DEMO_SUITE_ARGS) $(SUITE_ARGS)
	$(FREQGAP) suite tinad --data $(SUITE_FIXTURES)/tinad.jsonl \
	  --models $(SUITE_MODELS) --out $(SUITE_OUT)/tinad $(DEMO_SUITE_ARGS) $(SUITE_ARGS)
	$(FREQGAP) suite quantifiers --data $(SUITE_FIXTURES)/quantifiers.csv \
	  --models $(SUITE_MODELS) --out $(SUITE_OUT)/quantifiers $(DEMO_SUITE_ARGS) $(SUITE_ARGS)

test-suites: setup ## tests of the suites
	$(PY) -m pytest -q tests/suites
