# The entity demo (docs/demo_entities.md): invented facts planted in Zipf-distributed numbers
# of documents, a small model trained on them, QA accuracy by relevant-document count.
# ENTITIES_ARGS are passed to `freqgap demo-entities`, e.g. ENTITIES_ARGS="--threads 1".
ENTITIES_ARGS ?=

.PHONY: demo-entities

demo-entities: setup ## facts corpus → document-unit count → small model → QA accuracy by relevant documents (docs/img/demo_entities.png)
	$(FREQGAP) demo-entities $(ENTITIES_ARGS)
