"""Orchestration above the stages: chains that run several stages in order.

`demo` is the chain behind `freqgap demo` / `make demo` on the bundled sample; `simulate`
trains on a Zipf and a uniform corpus and runs each through the chain. Stages never import
this package; it imports them (and freqgap.analysis for reports).
"""
