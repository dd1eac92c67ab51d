"""Prose-like documents in several Pile registers, filled with numbers and time units.

Each register is a set of sentence templates with slots; slots draw from the number law
(`{n}` a number term, `{np}` a number possibly with attached punctuation, `{nu}` a number
followed by a time-unit word, …) and from small word pools. Texts are not meant to be
read; they give the counting job realistic tokens (punctuated numbers, 7+ digit numbers,
mixed-case unit words) and the model a background to learn the facts against.
"""

from __future__ import annotations

import random
import re

from freqgap.corpus.numbers import NumberModel
from freqgap.corpus.profiles import CorpusProfile
from freqgap.corpus.statements import FactWriter, Weighted

NOUNS = ("report council team river market school company village road museum project "
         "station library bridge county budget survey harbor garden festival court agency "
         "factory hospital league album season program network system").split()
ADJS = ("small large northern old new local annual public main early late central quiet "
        "busy remote coastal rural modern former popular regional").split()
VERBS = ("reported announced built opened recorded described approved measured released "
         "expanded reviewed closed planned estimated published").split()
SYLL = "ka lo mer an dor vil ten sa ri bel mon tor ha lin ves gar ro el ma pen".split()
TECH = ("server query thread buffer cache request loop array function script process "
        "socket timeout index table column").split()
PARTIES = ("plaintiff defendant appellant respondent petitioner court jury counsel "
           "trustee debtor").split()

REGISTER_TEMPLATES = {
    "Pile-CC": [
        "We stayed for {nu} at the {adj} {noun} and it was worth every penny.",
        "Tickets cost {money} and the show lasts about {nu}.",
        "Only {n} people showed up, down from {np} last {unit}.",
        "Our {noun} {verb} {n} new members in the past {nu}.",
        "Call us at {big} or visit the {noun} any {unit} of the {unit2}.",
        "Save {pct} this {unit} on all {noun} items, now {money} each.",
        "The {adj} {noun} is {dec} miles from the {noun2}.",
        "I have been doing this for {nu} and I still love it.",
        "Shipping takes {n} to {nu}; orders over {thousands} ship free.",
        "Posted {nu} ago by {name} ({n} comments)",
        "{fact}, so plan ahead.",
    ],
    "Wikipedia (en)": [
        "{Name} is a {adj} {noun} in {Name2}, with a population of {n} at the last census.",
        "The {noun} was {verb} in {n} and covers {thousands} acres.",
        "It is about {n} km long and drains an area of {np} square km.",
        "The {adj} {noun} {verb} {n} works over a period of {nu}.",
        "{Name} served for {nu} before the {noun} was {verb} in {n}.",
        "Construction took {nu}, and the {noun} opened {n} {unit2}s later.",
        "The record of {dec} was set {nu} after the {noun} was {verb}.",
        "In its first {unit} the {noun} received {n} visitors ({pct} of the {adj} total).",
        "As a rule of thumb, {fact}.",
    ],
    "StackExchange": [
        "I set the {tech} timeout to {nu} but it still fails after {n} retries.",
        "My {tech} returns {n} rows instead of {np}; what am I missing?",
        "Try increasing the {tech} size to {n} and restart; it took me {nu} to find this.",
        "The cron job runs every {nu} and keeps {n} {tech}s around.",
        "Edit: with {n} workers it takes {dec} seconds, with {n2} it takes {nu}.",
        "Answer: check the {tech} limit (default {n}), then the {tech2} log, id {big}.",
        "Note that {fact}, which is why the {tech} overflows.",
    ],
    "FreeLaw": [
        "The {party} was sentenced to {nu} and ordered to pay {money} in restitution.",
        "Notice must be filed within {nu} of the judgment, see Case No. {n}-{n2}.",
        "The {party} moved for a stay of {nu}; the motion was denied on {month} {n}.",
        "Under section {n}, the {party} had {nu} to respond to the {party2}.",
        "The contract required delivery of {n} units within {nu} at {money} per unit.",
        "Damages were assessed at {thousands} plus interest of {pct} per {unit}.",
        "The {party} testified that {fact}.",
    ],
}
MONTHS = ("January February March April May June July August September October November "
          "December").split()
SLOT = re.compile(r"\{(\w+)\}")


class DocumentWriter:
    """Writes whole documents of one register; the same rng state gives the same text."""

    def __init__(self, profile: CorpusProfile, numbers: NumberModel) -> None:
        self.p = profile
        self.numbers = numbers
        self.facts = FactWriter(profile, numbers)
        self.register = Weighted(profile.registers)
        self.unit = Weighted(profile.unit_weights)

    # ---- slot values -------------------------------------------------------------
    def _unit_word(self, rng: random.Random, plural: bool) -> str:
        word = self.unit(rng) + ("s" if plural else "")
        u = rng.random()
        if u < self.p.unit_upper_rate:
            return word.upper()
        if u < self.p.unit_upper_rate + self.p.unit_capital_rate:
            return word.capitalize()
        return word

    def _punct(self, rng: random.Random, term: str) -> str:
        if rng.random() >= self.p.punct_rate:
            return term
        return rng.choice(("{},", "({})", "${}", "{}%", "-{}", "{}.", "{}:", '"{}"')).format(term)

    def _name(self, rng: random.Random) -> str:
        return "".join(rng.choice(SYLL) for _ in range(rng.randint(2, 3))).capitalize()

    def _slot(self, rng: random.Random, key: str) -> str:
        base = key.rstrip("2")
        if base == "n":
            return self.numbers.number(rng)
        if base == "np":
            return self._punct(rng, self.numbers.number(rng))
        if base == "nu":
            n = self.numbers.number(rng)
            return f"{n} {self._unit_word(rng, plural=n != '1')}"
        if base == "unit":
            return self._unit_word(rng, plural=False)
        if base == "money":
            n = self.numbers.number(rng)
            return f"${int(n):,}" if rng.random() < 0.5 else f"${n}"
        if base == "pct":
            return f"{self.numbers.number(rng)}%"
        if base == "dec":
            return f"{self.numbers.number(rng)}.{rng.randint(0, 99)}"
        if base == "thousands":
            return f"{rng.randint(1, 999)},{rng.randint(0, 999):03d}"
        if base == "big":
            return str(rng.randint(10 ** 6, 10 ** 10))
        if base == "fact":
            return self.facts.fact(rng, form=rng.choice(("words", "symbols", "long")))
        if base == "noun":
            return rng.choice(NOUNS)
        if base == "adj":
            return rng.choice(ADJS)
        if base == "verb":
            return rng.choice(VERBS)
        if base == "tech":
            return rng.choice(TECH)
        if base == "party":
            return rng.choice(PARTIES)
        if base == "month":
            return rng.choice(MONTHS)
        if base in ("name", "Name"):
            return self._name(rng)
        raise KeyError(f"unknown template slot {{{key}}}")

    def _sentence(self, rng: random.Random, template: str) -> str:
        text = SLOT.sub(lambda m: self._slot(rng, m.group(1)), template)
        return text[0].upper() + text[1:]

    def _extra_number(self, rng: random.Random) -> str:
        """A loose number token: a punctuated, decimal, thousands or 7+ digit form."""
        u = rng.random()
        if u < self.p.big_rate:
            return str(rng.randint(10 ** 6, 10 ** 9))
        if u < self.p.big_rate + self.p.decimal_rate:
            return self._slot(rng, "dec")
        if u < self.p.big_rate + self.p.decimal_rate + self.p.thousands_rate:
            return self._slot(rng, "thousands")
        return ""

    # ---- documents ---------------------------------------------------------------
    def prose(self, rng: random.Random, register: str) -> str:
        templates = REGISTER_TEMPLATES[register]
        plain = [t for t in templates if "{fact}" not in t]
        with_fact = [t for t in templates if "{fact}" in t]
        paragraphs = []
        for _ in range(rng.randint(2, 5)):
            sentences = []
            for _ in range(rng.randint(2, 6)):
                pool = with_fact if rng.random() < self.p.inline_fact_rate else plain
                sentences.append(self._sentence(rng, rng.choice(pool)))
                extra = self._extra_number(rng)
                if extra:
                    sentences.append(f"That is {extra} in total.")
            paragraphs.append(" ".join(sentences))
        return "\n\n".join(paragraphs)

    def math(self, rng: random.Random) -> str:
        """A worksheet: a run of facts, Q/A items separated by blank lines as in prompts."""
        lo, hi = self.p.math_items
        items = [self.facts.fact(rng) for _ in range(rng.randint(lo, hi))]
        return "\n\n".join(items)

    def document(self, rng: random.Random) -> dict:
        """One Pile-format record: {"text": ..., "meta": {"pile_set_name": ...}}."""
        register = self.register(rng)
        text = self.math(rng) if register == "DM Mathematics" else self.prose(rng, register)
        return {"text": text, "meta": {"pile_set_name": register}}
