"""Scaling trends: accuracy against parameter count, classified and plotted.

Rule (tolerance eps, default 0.02 = 2 accuracy points; points sorted by parameters):
let a_first, a_last be the smallest and largest model's accuracy, m / M the lowest /
highest accuracy among the models in between.
1. U-shaped    if a_first - m >= eps and a_last - m >= eps (a dip, then recovery);
   inverted-U  if M - a_first >= eps and M - a_last >= eps. When both hold, the larger
   excursion (a-m vs M-a, each its smaller side) decides.
2. positive    if a_last - a_first >= eps; inverse if a_first - a_last >= eps.
3. flat        otherwise.
A curve of fewer than two sizes has no trend: it is labelled "one size" (calling it flat
would claim a finding that one model cannot show).
The rule follows the Inverse Scaling Prize's reading of curves: it compares the ends and
the interior extreme, so a single noisy middle point moves the label only past eps.
The plot is freqgap.analysis.suites.plot_scaling (it takes the labels as data).
"""

from __future__ import annotations

from typing import Sequence

ONE_SIZE = "one size"


def classify(params: Sequence[float], accuracy: Sequence[float], eps: float = 0.02) -> str:
    """The trend label of one curve (see the module rule)."""
    if len(params) != len(accuracy):
        raise ValueError(f"{len(params)} parameter counts for {len(accuracy)} accuracies")
    if eps < 0:
        raise ValueError("eps must be non-negative")
    pts = sorted(zip(params, accuracy))
    if len({p for p, _ in pts}) < 2:
        return ONE_SIZE
    acc = [a for _, a in pts]
    first, last, inner = acc[0], acc[-1], acc[1:-1]
    u = min(first, last) - min(inner) if inner else float("-inf")
    n = max(inner) - max(first, last) if inner else float("-inf")
    if u >= eps or n >= eps:
        return "U-shaped" if u >= n else "inverted-U"
    if last - first >= eps:
        return "positive"
    if first - last >= eps:
        return "inverse"
    return "flat"
