"""The conformance suite: every counting engine equals the reference counter (SPEC §2).

One suite, parametrized over the engines of the registry (freqgap.counting.engines.ENGINES)
and over rule sets, the defaults and others (digit cap 5, other windows, extra vocabulary,
strip-punct, the document unit with and without a pair list), so a rule changed in
rules.py is proven on every engine. Each case counts
the same texts three ways: freqgap.counting.reference (the oracle), the engine's chunk step
(`Engine.chunk_keys`: finder, window keys, codec keys) and the engine's whole count task
over JSON lines (`partials.count_lines`: its JSON reader, key sums, statistics). The
runtime wing switched off runs this file again (test_runtime_switch.py).
"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from freqgap.counting import kinds, partials
from freqgap.counting.codec import TermCodec
from freqgap.counting.engines import ENGINES, get_engine
from freqgap.counting.reference import count_texts
from freqgap.counting.rules import TermRules
from tests.counting.test_property import DOC, FREE_TEXT, RULES

EXTRA_WORDS = TermRules().vocab + ("1st", "2nd", "4x4", "a\u00f1o", "kiwi", "o'clock", "'em")
# Listed terms (SPEC §2, term lists): overlapping phrases, a phrase holding a number, one
# whose first token is a vocabulary word, non-ASCII ones, a single listed word.
PHRASES = ("New York", "new york city", "York", "Apollo 11", "Quellton", "hour glass", "kiwi pie",
           "Z\u00fcrich HBF", "kelvin rd", "'em all", "5 o'clock shadow", "b c", "c d hours", "year 2000",
           "a\u00f1o nuevo", "x y z w")
RULE_SETS = {
    "default": TermRules(),
    "digit-cap-5": TermRules(max_digits=5),
    "cap-5-window-3-strip": TermRules(max_digits=5, window=3, number_rule="strip-punct"),
    "window-9-extra-vocab": TermRules(window=9, vocab=EXTRA_WORDS),
    "cap-2-pairs-only": TermRules(max_digits=2, max_order=2, vocab=EXTRA_WORDS),
    "document-unit": TermRules(unit="document", vocab=EXTRA_WORDS),
    "document-unit-listed-pairs": TermRules(unit="document", number_rule="strip-punct",
                                            pairs=(("9", "10"), ("hour", "5"), ("day", "9"))),
    "listed-phrases": TermRules(vocab=EXTRA_WORDS, terms=PHRASES),
    "listed-phrases-strip-window-3": TermRules(window=3, number_rule="strip-punct", terms=PHRASES),
    "listed-only-document-unit": TermRules(unit="document", listed_only=True, terms=PHRASES),
    "sentence-unit": TermRules(unit="sentence", vocab=EXTRA_WORDS),
    "sentence-unit-listed-pairs": TermRules(unit="sentence", number_rule="strip-punct",
                                            pairs=(("9", "10"), ("hour", "5"), ("day", "9"),
                                                   ("9", "10", "day"), ("5", "9", "hour"))),
    "sentence-unit-phrases": TermRules(unit="sentence", number_rule="strip-punct", terms=PHRASES),
}
ADVERSARIAL = [
    "9 10 9 9", "5 a b c hours", "5 a b c d hours", "a b 7", "8 c d",
    "x 5 y", "x 05 y", "123456 1234567 12345 00000 999999", "23, (23) $5 1,000 2.5 -5 \u0663",
    "hours Hour DECADES hourss weekly wee\u212a", "hours. ... '1990s' (7)",
    "5 1234567 a b c 9", "5 1234567 a b 9", "7\u00a08\u20289\x1c10\u300011\x8512\u200b13",
    "\u00a05\u00a0hours\u00a0", "\u2000\u2001\u20027", "5\u00a0\u2028hours\u30009", "\u00e9\u00a05 \u00e95",
    "5\u205f6\u202f7\u16808\u200a9\u20291\u00850", "\u212a\u00a0hours\u3000\u00e9\u20ac 3",
    "a" * 9 + "\u00a0" + "5" + "\u3000" * 2 + "hours",
    "the 1st and 2nds of 4X4s 1st hour 12 2nd", "(1st) 2nd.", "A\u00d1Os a\u00f1o \u212aiwi KIWIS O'Clock. 'EMs",
    "wee\u212a hour\u212a \u0130year", "", " ", "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15",
    " ".join(str(i % 97) for i in range(400)), "12345 123456 12345.",
]


ADVERSARIAL += [    # listed phrases: longest first, no overlaps, at document ends, across whitespace
    "new york city hall", "New York, New York", "new york new york city york", "NEW\u00a0YORK\u2028CITY",
    "Quellton. quellton QUELLTON (Quellton)", "apollo 11 apollo 11. (apollo 11) Apollo 011", "hour glass hours glass hour",
    "kiwi pie kiwis pie Kiwi\u00a0Pie", "Z\u00fcrich hbf Z\u00dcRICH HBF z\u00fcrich", "\u212aelvin rd kelvin RD.",
    "new", "york", "new york", "city new york", "5 o'clock shadow 5 O'Clock Shadow. 5 o'clock",
    "b c b c d hours", "a b c d e f", "year 2000 year 2000s YEAR 2000.", "A\u00d1O NUEVO a\u00f1o nuevos",
    "x y z w x y z x y z w w", "new york 5 a b c d 9 new york",
]
ADVERSARIAL += [    # sentence ends: after . ! ? behind closing quotes and brackets, not inside a token
    "It took 5 hours. Then 9 days! 10 hours? 9", "5 hour.) 9 day\"' 10.'] 11 (12?\") 13",
    "5 . 9 ! 10 ? 11 .. 12 ?! 13", "5 hours.9 days 10", "new york. city hall 5! new york city",
    "9\u00a0day.\u20289 day\u3002 9 day\u201d 10",
]


def engine_counts(name: str, texts: list[str], rules: TermRules) -> tuple[dict, dict, dict]:
    """(unigrams, pairs, triples) by term names from the engine's chunk step."""
    engine = get_engine(name)
    codec = TermCodec(rules)
    parts, tokens = engine.chunk_keys(texts, rules, codec, engine.finder(rules))
    assert tokens.tolist() == [len(t.split()) for t in texts]
    return tuple(_named(codec, kind, order, *parts.get(kind, (np.empty(0, np.int64),) * 2))
                 for kind, order in ((kinds.UNIGRAM, 1), (kinds.PAIR, 2), (kinds.TRIPLE, 3)))


def _named(codec: TermCodec, kind: str, order: int, keys: np.ndarray, counts: np.ndarray) -> dict:
    keys = np.asarray(keys, np.int64)
    if order == 1:
        return dict(zip(codec.decode(keys).to_pylist(), np.asarray(counts).tolist()))
    columns = [codec.decode(ids).to_pylist() for ids in TermCodec.split(keys, order)]
    return dict(zip(zip(*columns), np.asarray(counts).tolist()))


def task_counts(name: str, texts: list[str], rules: TermRules) -> tuple[dict, dict, dict]:
    """(unigrams, pairs, triples) from the engine's whole count task over JSON lines."""
    lines = b"\n".join(json.dumps({rules.text_field: t}).encode() for t in texts)
    codec = TermCodec(rules)
    sums: dict[str, Counter] = {k: Counter() for k in (kinds.UNIGRAM, kinds.PAIR, kinds.TRIPLE)}
    for batch in partials.count_lines([(0, 1, lines, False, None)], rules, "fail", {0: "t.jsonl"},
                                      engine=name):
        kind_column = batch.column(0)
        for kind in sums:
            rows = np.flatnonzero(np.asarray([k == kind for k in kind_column.to_pylist()]))
            if rows.size:
                keys = np.asarray(batch.column(1).to_numpy(zero_copy_only=False))[rows]
                counts = np.asarray(batch.column(2).to_numpy(zero_copy_only=False))[rows]
                order = {kinds.UNIGRAM: 1, kinds.PAIR: 2, kinds.TRIPLE: 3}[kind]
                sums[kind].update(_named(codec, kind, order, keys, counts))
    return tuple(dict(sums[k]) for k in (kinds.UNIGRAM, kinds.PAIR, kinds.TRIPLE))


def reference_counts(texts: list[str], rules: TermRules) -> tuple[dict, dict, dict]:
    ref = count_texts(texts, rules)
    return (dict(ref.unigrams), dict(ref.pairs) if rules.max_order >= 2 else {},
            dict(ref.triples) if rules.max_order >= 3 else {})


def conform(name: str, texts: list[str], rules: TermRules) -> tuple[dict, dict, dict]:
    """The reference counts, asserted equal to the engine's, both ways of counting."""
    want = reference_counts(texts, rules)
    assert engine_counts(name, texts, rules) == want, (name, "chunk step")
    assert task_counts(name, texts, rules) == want, (name, "count task")
    return want


@pytest.mark.parametrize("rule_set", RULE_SETS)
@pytest.mark.parametrize("engine", ENGINES)
def test_adversarial_cases(engine, rule_set):
    rules = RULE_SETS[rule_set]
    conform(engine, ADVERSARIAL, rules)
    for text in ADVERSARIAL:                     # each text alone too: its own boundaries
        assert engine_counts(engine, [text], rules) == reference_counts([text], rules)


@pytest.mark.parametrize("engine", ENGINES)
def test_the_digit_cap_is_the_rule_everywhere(engine):
    """With the digit cap at 5 a six-digit number is no term, on every engine, and still a
    position (it keeps 5 and 9 out of one window)."""
    rules = RULE_SETS["digit-cap-5"]
    uni, pairs, _ = conform(engine, ["12345 123456", "5 123456 a b c 9", "7 123456 a b 9"], rules)
    assert "12345" in uni and "123456" not in uni
    assert ("5", "9") not in pairs and pairs[("7", "9")] == 1
    assert conform(engine, ["123456"], TermRules())[0] == {"123456": 1}


@pytest.mark.parametrize("rule_set", RULE_SETS)
@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.one_of(DOC, FREE_TEXT), max_size=10))
def test_generated_texts_under_each_rule_set(engine, rule_set, texts):
    conform(engine, texts, RULE_SETS[rule_set])


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.one_of(DOC, FREE_TEXT), max_size=12), rules=RULES)
def test_generated_texts_under_generated_rules(engine, texts, rules):
    assert engine_counts(engine, texts, rules) == reference_counts(texts, rules)
