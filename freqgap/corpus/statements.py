"""Arithmetic and time-unit facts in several surface forms.

The `qa` form is exactly the prompt format of SPEC §3 (`Q: What is 23 times 18?\nA: 414`),
so a model trained on the corpus has seen the evaluation's format; the other forms
("23 times 18 is 414", "23 x 18 = 414", "a 3 hour trip is 180 minutes") are the kinds of
mention the counting job counts. Operands come from NumberModel.operand, so a fact's rate
follows its operands' frequency.
"""

from __future__ import annotations

import bisect
import itertools
import random

from freqgap.corpus.numbers import NumberModel
from freqgap.corpus.profiles import CorpusProfile

MULT_FORMS = {
    "qa": ["Q: What is {a} times {b}?\nA: {y}"],
    "words": ["{a} times {b} is {y}", "{a} times {b} makes {y}"],
    "symbols": ["{a} x {b} = {y}", "{a} * {b} = {y}"],
    "long": ["{a} multiplied by {b} equals {y}", "the product of {a} and {b} is {y}"],
}
ADD_FORMS = {
    "qa": ["Q: What is {a} plus {b}?\nA: {y}"],
    "words": ["{a} plus {b} is {y}", "{a} plus {b} makes {y}"],
    "symbols": ["{a} + {b} = {y}"],
    "long": ["the sum of {a} and {b} is {y}", "{a} added to {b} equals {y}"],
}
TIME_FORMS = {
    "qa": ["Q: What is {a} {unit}s in {target}s?\nA: {y}"],
    "words": ["a {a} {unit} trip is {y} {target}s", "{a} {units} is {y} {target}s",
              "a {a} {unit} wait is {y} {target}s"],
    "symbols": ["{a} {units} = {y} {target}s"],
    "long": ["there are {y} {target}s in {a} {units}", "{a} {units} equals {y} {target}s"],
}


class Weighted:
    """Deterministic weighted choice over a fixed list (cumulative weights + bisect)."""

    def __init__(self, weights: dict[str, float]) -> None:
        self.keys = list(weights)
        self.cum = list(itertools.accumulate(float(w) for w in weights.values()))

    def __call__(self, rng: random.Random) -> str:
        return self.keys[bisect.bisect_right(self.cum, rng.random() * self.cum[-1])]


class FactWriter:
    """Writes one fact statement; also tallies every fact written (for the manifest)."""

    def __init__(self, profile: CorpusProfile, numbers: NumberModel) -> None:
        self.numbers = numbers
        self.kind = Weighted(profile.statement_kinds)
        self.form = Weighted(profile.surface_forms)
        self.conversions = profile.conversions
        self.source_unit = Weighted({u: profile.unit_weights[u] for u in profile.conversions})
        self.tally = {"mult": 0, "add": 0, "time": 0}
        self.form_tally = {f: 0 for f in profile.surface_forms}

    def fact(self, rng: random.Random, kind: str | None = None, form: str | None = None) -> str:
        """One statement of `kind` (mult/add/time) in surface `form`, drawn if not given."""
        kind = kind or self.kind(rng)
        form = form or self.form(rng)
        self.tally[kind] += 1
        self.form_tally[form] += 1
        if kind == "time":
            unit = self.source_unit(rng)
            target, mult = self.conversions[unit]
            a = self.numbers.operand(rng)
            template = rng.choice(TIME_FORMS[form])
            units = unit if a == 1 else unit + "s"
            return template.format(a=a, unit=unit, units=units, target=target, y=a * mult)
        a, b = self.numbers.operand(rng), self.numbers.operand(rng)
        if kind == "mult":
            return rng.choice(MULT_FORMS[form]).format(a=a, b=b, y=a * b)
        return rng.choice(ADD_FORMS[form]).format(a=a, b=b, y=a + b)
