"""An independent, deliberately plain counter of SPEC §2: the tests' oracle and the
benchmark's baseline ("the study's way": json, str.split, Counter, a window loop).

It shares nothing with the vectorised path except `TermRules.term_of`, the one-token rule,
and `TermRules.normalize` and `phrases`, the listed terms' (SPEC §2).
"""

from __future__ import annotations

import json
from collections import Counter
from bisect import bisect_left
from itertools import combinations
from typing import Iterable

from freqgap.errors import FreqgapError
from freqgap.counting.rules import SENTENCE_CLOSERS, SENTENCE_ENDS, SENTENCE_UNIT, TermRules


def _ends_sentence(token: str) -> bool:
    """Whether a token ends a sentence: its last character before any closing quotes and
    brackets is a sentence end (SPEC §2)."""
    core = token.rstrip(SENTENCE_CLOSERS)
    return core != "" and core[-1] in SENTENCE_ENDS


def token_terms(tokens: list[str], rules: TermRules) -> list[tuple[int, str]]:
    """(position, term) of a document's terms: left to right, the longest listed phrase
    starting at a position wins (its tokens normalized, `TermRules.normalize`), else the
    token's own term (`TermRules.term_of`); a phrase's tokens are no terms of their own."""
    phrases, longest = rules.phrases, rules.max_phrase_tokens
    norm = [rules.normalize(t) for t in tokens] if phrases else []
    terms, position = [], 0
    while position < len(tokens):
        for length in range(min(longest, len(tokens) - position), 1, -1):
            phrase = phrases.get(tuple(norm[position:position + length]))
            if phrase is not None:
                terms.append((position, phrase))
                position += length
                break
        else:
            term = rules.term_of(tokens[position])
            if term is not None:
                terms.append((position, term))
            position += 1
    return terms


class ReferenceCounts:
    """Unigram, pair and triple Counters keyed by sorted term tuples; with the document
    unit also `unit_docs`, the documents that hold each term."""

    def __init__(self) -> None:
        self.unit_docs: Counter[str] = Counter()
        self.unigrams: Counter[str] = Counter()
        self.pairs: Counter[tuple[str, str]] = Counter()
        self.triples: Counter[tuple[str, str, str]] = Counter()
        self.documents = 0
        self.units = 0          # sentences, under the sentence unit
        self.tokens = 0

    def add_text(self, text: str, rules: TermRules) -> None:
        """Count one document."""
        self.documents += 1
        tokens = text.split()
        self.tokens += len(tokens)
        terms = token_terms(tokens, rules)
        if rules.by_unit:
            self._add_units(tokens, terms, rules)
            return
        for i, (pi, ti) in enumerate(terms):
            self.unigrams[ti] += 1
            if rules.max_order < 2:
                continue
            for j in range(i + 1, len(terms)):
                pj, tj = terms[j]
                if pj - pi >= rules.window:
                    break
                self.pairs[tuple(sorted((ti, tj)))] += 1
                if rules.max_order < 3:
                    continue
                for k in range(j + 1, len(terms)):
                    pk, tk = terms[k]
                    if pk - pi >= rules.window:
                        break
                    self.triples[tuple(sorted((ti, tj, tk)))] += 1

    def _add_units(self, tokens: list[str], terms: list[tuple[int, str]], rules: TermRules) -> None:
        """A unit other than the window: each pair (and, without a pair list, triple) of
        distinct terms a unit holds counts once. A text is one document or training
        sequence; under the sentence unit its sentences are the units."""
        self.unigrams.update(t for _, t in terms)
        by_unit: dict[int, set[str]] = {}
        ends = [i for i, token in enumerate(tokens) if _ends_sentence(token)]
        for position, term in terms:
            unit = bisect_left(ends, position) if rules.unit == SENTENCE_UNIT else 0
            by_unit.setdefault(unit, set()).add(term)
        if rules.unit == SENTENCE_UNIT:
            self.units += len(ends) + (bool(tokens) and not _ends_sentence(tokens[-1]))
        for held in by_unit.values():
            distinct = sorted(held)
            self.unit_docs.update(distinct)
            if rules.max_order < 2:
                continue
            if rules.pairs:              # the listed pairs and triples the unit holds
                self.pairs.update(p for p in rules.pairs if len(p) == 2 and held.issuperset(p))
                if rules.max_order >= 3:
                    self.triples.update(p for p in rules.pairs if len(p) == 3 and held.issuperset(p))
                continue
            if len(distinct) > rules.unit_term_limit:
                raise FreqgapError(f"document {self.documents}: a {rules.unit} holds "
                                   f"{len(distinct)} distinct terms")
            self.pairs.update(combinations(distinct, 2))
            if rules.max_order >= 3:
                self.triples.update(combinations(distinct, 3))


def count_texts(texts: Iterable[str], rules: TermRules) -> ReferenceCounts:
    """Reference counts of an iterable of document texts."""
    counts = ReferenceCounts()
    for text in texts:
        counts.add_text(text, rules)
    return counts


def count_jsonl_lines(lines: Iterable[bytes | str], rules: TermRules) -> ReferenceCounts:
    """Reference counts of JSON Lines records (text in `rules.text_field`, top level only)."""
    counts = ReferenceCounts()
    for line in lines:
        if line.strip():
            counts.add_text(json.loads(line)[rules.text_field], rules)
    return counts
