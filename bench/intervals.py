"""Distribution-free intervals for the median of per-round ratios (bench_count).

Single rounds of a ratio on a shared machine move a lot, so whether a goal holds is read
from the median of many rounds and an interval for it, not from one round.
"""

from __future__ import annotations

import math


def median_interval(values: list[float], level: float = 0.95) -> tuple[float, float] | None:
    """A distribution-free interval for the median of what the values sample: the order
    statistics x(k) and x(n + 1 - k) with the largest k whose coverage, 1 - 2 P(B < k) for B
    ~ Binomial(n, 1/2), is at least `level` (the sign test's interval: it assumes only that
    the rounds are independent draws); None when even (min, max) covers less (n < 6 at
    95 %)."""
    xs = sorted(values)
    n = len(xs)
    below = 0.0            # P(B < k) for the k being tried
    best = 0
    for k in range(1, n // 2 + 1):
        below += math.comb(n, k - 1) / 2 ** n
        if 1 - 2 * below < level:
            break
        best = k
    return (xs[best - 1], xs[n - best]) if best else None


def interval_of(values: list[float], fmt: str, unit: str = "") -> str:
    """'95 % interval of the median a-b' (median_interval), or why there is none."""
    got = median_interval(values)
    if got is None:
        return f"too few rounds ({len(values)}) for a 95 % interval of the median"
    return f"95 % interval of the median {format(got[0], fmt)}-{format(got[1], fmt)}{unit}"
