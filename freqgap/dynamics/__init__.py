"""Frequency over training time (issue 13): counts as of every checkpoint and Δ per checkpoint.

settings.py  conf/dynamics.yaml: bucket edges (Pythia's checkpoint steps), the demo's profile
counts.py    count a training order (a model's data_order/, or Pythia's document.idx/.bin)
gaps.py      the gaps stage's SQL once per checkpoint with ω as of that step
"""
