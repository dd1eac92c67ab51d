"""Shared checks of the corpus's number law: a log-log slope and an operand parser."""

from __future__ import annotations

import math
import re

QA_MULT = re.compile(r"^Q: What is (\d+) times (\d+)\?$", re.M)


def loglog_slope(counts: list[float]) -> float:
    """Least-squares slope of log(count) against log(rank), ranks 1..len(counts)."""
    xs = [math.log(r) for r in range(1, len(counts) + 1)]
    ys = [math.log(c) for c in counts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def qa_operand_counts(texts) -> dict[int, int]:
    """How often each number is an operand of a Q/A multiplication item."""
    out: dict[int, int] = {}
    for text in texts:
        for a, b in QA_MULT.findall(text):
            for x in (int(a), int(b)):
                out[x] = out.get(x, 0) + 1
    return out
