"""An independent, deliberately plain counter of SPEC §2: the tests' oracle and the
benchmark's baseline ("the study's way": json, str.split, Counter, a window loop).

It shares nothing with the vectorised path except `TermRules.term_of`, the one-token rule.
"""

from __future__ import annotations

import json
from collections import Counter
from itertools import combinations
from typing import Iterable

from freqgap.errors import FreqgapError
from freqgap.counting.rules import TermRules


class ReferenceCounts:
    """Unigram, pair and triple Counters keyed by sorted term tuples; with the document
    unit also `unit_docs`, the documents that hold each term."""

    def __init__(self) -> None:
        self.unit_docs: Counter[str] = Counter()
        self.unigrams: Counter[str] = Counter()
        self.pairs: Counter[tuple[str, str]] = Counter()
        self.triples: Counter[tuple[str, str, str]] = Counter()
        self.documents = 0
        self.tokens = 0

    def add_text(self, text: str, rules: TermRules) -> None:
        """Count one document."""
        self.documents += 1
        tokens = text.split()
        self.tokens += len(tokens)
        terms = []
        for position, token in enumerate(tokens):
            term = rules.term_of(token)
            if term is not None:
                terms.append((position, term))
        if rules.by_document:
            self._add_document([t for _, t in terms], rules)
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

    def _add_document(self, terms: list[str], rules: TermRules) -> None:
        """The document unit: each pair of distinct terms the document holds counts once."""
        self.unigrams.update(terms)
        distinct = sorted(set(terms))
        self.unit_docs.update(distinct)
        if rules.max_order < 2:
            return
        if not rules.pairs:
            if len(distinct) > rules.max_unit_terms:
                raise FreqgapError(f"document {self.documents} holds {len(distinct)} distinct terms")
            self.pairs.update(combinations(distinct, 2))
        else:
            held = set(distinct)
            self.pairs.update(p for p in rules.pairs if p[0] in held and p[1] in held)


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
