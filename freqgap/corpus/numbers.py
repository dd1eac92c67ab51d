"""The number law of the corpus: one ranked vocabulary of number terms, Zipf-distributed.

Operands 0..operand_max hold ranks 1..operand_max+1 in a seeded order, so that how often
an operand appears is independent of its magnitude; larger numbers (3 to 6 digits) follow.
P(rank r) ∝ r^-exponent. The uniform control gives every operand the mean operand weight
and leaves the rest unchanged, so only the operands' relative frequencies differ.
"""

from __future__ import annotations

import bisect
import itertools
import random

from freqgap.corpus.profiles import CorpusProfile


class NumberModel:
    """Draws number terms and operands; `terms` is in rank order (1 = most frequent), the
    order the frequency-law tests check."""

    def __init__(self, profile: CorpusProfile) -> None:
        rng = random.Random(profile.rank_seed)
        self.operands = list(range(profile.operand_max + 1))
        rng.shuffle(self.operands)
        taken = {str(x) for x in self.operands}
        large: list[str] = []
        while len(large) < profile.n_large:
            digits = rng.randint(3, 6)
            term = str(rng.randint(10 ** (digits - 1), 10 ** digits - 1))
            if term not in taken:
                taken.add(term)
                large.append(term)
        self.terms = [str(x) for x in self.operands] + large
        weights = [(r + 1) ** -profile.exponent for r in range(len(self.terms))]
        n_ops = len(self.operands)
        if profile.operand_law == "uniform":
            mean = sum(weights[:n_ops]) / n_ops
            weights[:n_ops] = [mean] * n_ops
        self._cum = list(itertools.accumulate(weights))
        self._op_cum = self._cum[:n_ops]

    def number(self, rng: random.Random) -> str:
        """A number term drawn from the whole vocabulary."""
        return self.terms[bisect.bisect_right(self._cum, rng.random() * self._cum[-1])]

    def operand(self, rng: random.Random) -> int:
        """An operand drawn from the law restricted to the operands."""
        return self.operands[bisect.bisect_right(self._op_cum, rng.random() * self._op_cum[-1])]
