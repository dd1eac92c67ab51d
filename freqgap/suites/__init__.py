"""Negation and quantifier suites: NeQA, "This is not a Dataset", quantifier comprehension.

Each benchmark has a loader (its released file layout), the prompts or stimuli it is scored
with, its metrics, and term rules that tie its instances to pretraining-corpus counts.
"""
