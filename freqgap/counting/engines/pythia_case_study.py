"""The Pythia study's term counts (rule set `pythia-case-study`, SPEC §2 "Rule sets"): the
windows of EleutherAI/pythia case-studies/term_frequency/run_freq_count.py, token by token.

Why one module for both engines: the study matched with regular expressions on the text as
written (a literal space is not a tab, "today" holds "day"), which neither engine's byte
tables express; this pass over each text's whitespace tokens gives the same counts, and
its keys go through the codec, so the Spark job, the exchange and the tables are unchanged.
The tests check it against a literal transcription of the study's code
(tests/counting/test_rule_sets.py).

Each text is read as the study read a decoded training sequence: one space before it.
A *start* is a token of 1..5 decimal digits (str.isdecimal) with a literal space (U+0020)
on each side and the next token right after that space. A *word* is a token of only
word characters (str.isalnum, "_") and ASCII punctuation. From each start:
- number window: the last of 3, 2, 1 words after it that is followed by a token beginning
  with a digit; that token's first (at most 5) digits end the window;
- number-unit window: the first of 0..3 words after it followed by a token beginning with a
  time unit (a prefix: "days" holds "day");
- unit-number window: from a token that is exactly a time unit (literal spaces around it,
  the next token right after), the first of 0..3 words followed by a token beginning with
  a digit.
A window's numbers are its runs of digits cut into pieces of at most 5, as integers; its
units are every unit inside its tokens ("today" holds "day"). A number window adds one
to each number's unigram and to each pair of its numbers (self-pairs too); a time window
adds one to each (number, unit) pair. Nothing else counts.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import lru_cache
from itertools import combinations

import numpy as np
import pyarrow as pa

from freqgap.counting.codec import TermCodec
from freqgap.counting.kinds import PAIR, UNIGRAM
from freqgap.counting.partials import sum_by_key
from freqgap.counting.rules import PYTHIA_CASE_STUDY, TermRules

NUMBER_PIECE = 5                  # digits of one number: longer runs are cut into pieces
MAX_WORDS = 3                     # words between a window's two ends
SPACE = " "                       # the study's literal space (other whitespace only separates)
_TOKENS = re.compile(r"\S+")
_DIGIT_RUNS = re.compile(r"\d+")
_WORD_CHARS = frozenset(string.punctuation)


def _is_word(token: str) -> bool:
    """Only word characters (as `\\w`: alphanumeric or "_") and ASCII punctuation."""
    return all(c.isalnum() or c == "_" or c in _WORD_CHARS for c in token)


def _leading_digits(token: str) -> str:
    """The first (at most NUMBER_PIECE) decimal digits a token begins with ("" if none)."""
    n = 0
    while n < min(len(token), NUMBER_PIECE) and token[n].isdecimal():
        n += 1
    return token[:n]


def _numbers(parts: list[str]) -> list[int]:
    """The integers of the digit runs of `parts`, each run cut into pieces of NUMBER_PIECE."""
    out = []
    for part in parts:
        for run in _DIGIT_RUNS.findall(part):
            out.extend(int(run[k:k + NUMBER_PIECE]) for k in range(0, len(run), NUMBER_PIECE))
    return out


class _Text:
    """One text's tokens with what the windows ask of them."""

    def __init__(self, text: str, units: tuple[str, ...], unit_search: re.Pattern) -> None:
        line = SPACE + text
        spans = [m.span() for m in _TOKENS.finditer(line)]
        self.tokens = [line[s:e] for s, e in spans]
        n = len(spans)
        # a token is bounded by literal spaces and the next token follows after one space
        self.spaced = [line[s - 1] == SPACE and i + 1 < n and spans[i + 1][0] == e + 1
                       and line[e] == SPACE for i, (s, e) in enumerate(spans)]
        self.units, self.unit_search = units, unit_search
        self.words = [_is_word(t) for t in self.tokens]

    def words_after(self, i: int) -> int:
        """How many tokens after token i are words (at most MAX_WORDS)."""
        k = 0
        while k < MAX_WORDS and i + k + 1 < len(self.tokens) and self.words[i + k + 1]:
            k += 1
        return k

    def starts_number(self, i: int) -> bool:
        t = self.tokens[i]
        return self.spaced[i] and len(t) <= NUMBER_PIECE and t.isdecimal()

    def leading_unit(self, i: int) -> str | None:
        return next((u for u in self.units if self.tokens[i].startswith(u)), None)

    def found_units(self, parts: list[str]) -> list[str]:
        return [u for part in parts for u in self.unit_search.findall(part)]


def count_text(text: str, rules: TermRules, unigrams: Counter, pairs: Counter) -> None:
    """Add one text's windows to `unigrams` (number -> n) and `pairs` ((a, b) sorted as
    strings -> n)."""
    t = _Text(text, *_units(rules.vocab))
    tokens, last = t.tokens, len(t.tokens) - 1
    for i in range(len(tokens)):
        if t.starts_number(i):
            words = t.words_after(i)
            for k in range(min(words, last - i - 1), 0, -1):       # greedy: most words first
                end = _leading_digits(tokens[i + k + 1])
                if end:
                    numbers = sorted(_numbers([tokens[i]] + tokens[i + 1:i + k + 1] + [end]))
                    unigrams.update(str(n) for n in numbers)
                    pairs.update(_sorted(str(a), str(b)) for a, b in combinations(numbers, 2))
                    break
            for k in range(0, min(words, last - i - 1) + 1):       # lazy: fewest words first
                unit = t.leading_unit(i + k + 1)
                if unit:
                    between = tokens[i + 1:i + k + 1]
                    _add_unit_pairs(pairs, _numbers([tokens[i]] + between),
                                    t.found_units(between) + [unit])
                    break
        elif t.spaced[i] and tokens[i] in t.units:
            for k in range(0, min(t.words_after(i), last - i - 1) + 1):
                end = _leading_digits(tokens[i + k + 1])
                if end:
                    between = tokens[i + 1:i + k + 1]
                    _add_unit_pairs(pairs, _numbers(between + [end]),
                                    [tokens[i]] + t.found_units(between))
                    break


def _add_unit_pairs(pairs: Counter, numbers: list[int], units: list[str]) -> None:
    pairs.update((str(n), u) for n in numbers for u in units)


def _sorted(a: str, b: str) -> tuple[str, str]:
    """A pair as every pair key is: its terms sorted as strings."""
    return (a, b) if a <= b else (b, a)


@lru_cache(maxsize=4)
def _units(vocab: tuple[str, ...]) -> tuple[tuple[str, ...], re.Pattern]:
    """The time units (the rule set's vocabulary) longest first, so a prefix test and the
    search find the longest unit at a place, and their search pattern."""
    units = tuple(sorted(vocab, key=lambda u: (-len(u), u)))
    return units, re.compile("|".join(map(re.escape, units)))


def _as_strings(texts) -> list[str]:
    """Python strings of a chunk (list or Arrow array). A compiled reader's buffer, whose
    whitespace is all spaces, is refused: the literal space is part of the rule."""
    if isinstance(texts, (pa.Array, pa.ChunkedArray)):
        return texts.to_pylist()
    if not isinstance(texts, list):
        raise TypeError(f"the {PYTHIA_CASE_STUDY} matcher needs the texts as written, "
                        f"not {type(texts).__name__}")
    return texts


def chunk_keys(texts, rules: TermRules, codec: TermCodec) -> tuple[dict, np.ndarray]:
    """{kind: (keys, counts)} of one chunk of texts under the study's windows, and each
    text's whitespace tokens (as every engine reports them)."""
    texts = _as_strings(texts)
    unigrams: Counter = Counter()
    pairs: Counter = Counter()
    for text in texts:
        count_text(text, rules, unigrams, pairs)
    out = {UNIGRAM: _keys(codec.encode(list(unigrams)), unigrams.values()),
           PAIR: _keys(TermCodec.pair_keys(codec.encode([a for a, _ in pairs]),
                                           codec.encode([b for _, b in pairs])), pairs.values())}
    return out, np.array([len(t.split()) for t in texts], dtype=np.int64)


def _keys(keys: np.ndarray, counts) -> tuple[np.ndarray, np.ndarray]:
    return sum_by_key(keys, np.fromiter(counts, dtype=np.int64, count=keys.shape[0]))
