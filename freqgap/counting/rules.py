"""The term rules of SPEC §2 as one immutable configuration object.

Every counter in the project (the Spark job, the reference counter, the tests) takes a
`TermRules`, so the definitions live in exactly one place: conf/terms.yaml.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field, asdict
from pathlib import Path
from typing import Any, Iterable

import yaml

from freqgap.config import ConfigError, load_conf

# Python's str.split() with no argument splits on runs of these characters (str.isspace()).
# All are below U+3001 in Unicode 15 (tests/counting/test_rules.py checks every code point
# on the running Python): scanning that far costs 1 ms instead of 0.1 s in every process.
WHITESPACE_BELOW = 0x3001
PY_WHITESPACE = "".join(c for c in map(chr, range(WHITESPACE_BELOW)) if c.isspace())
ASCII_WHITESPACE = "".join(c for c in PY_WHITESPACE if ord(c) < 128)
NON_ASCII_WHITESPACE = "".join(c for c in PY_WHITESPACE if ord(c) >= 128)
# Punctuation removed from both ends of a token by the opt-in strip-punct rule.
STRIP_PUNCTUATION = string.punctuation
NUMBER_RULES = ("strict", "strip-punct")
# A number term is 1..max_digits ASCII digits (SPEC §2): `TermRules.is_number`; the
# engines' byte tables take the digit characters from here.
DIGITS = "".join(c for c in map(chr, range(128)) if c.isdigit())
# The digit cap's upper limit: SPEC §2 counts integers with less than seven digits. The
# term-id packing (freqgap.counting.codec) is sized from it.
MAX_DIGITS = 6
# Largest window W: triples per term grow with W^2 (at W=64 a dense run of terms gives ~2,000
# triples per position), so a task's memory and time are bounded only with W bounded.
MAX_WINDOW = 64
# Named rule sets (SPEC §2; their values are in conf/rule_sets.yaml, read by
# freqgap.counting.rule_sets): `razeghi`, the default, is conf/terms.yaml as it stands;
# `pythia-case-study` also matches terms as the Pythia study's counter did
# (freqgap.counting.engines.pythia_case_study).
RAZEGHI, PYTHIA_CASE_STUDY = "razeghi", "pythia-case-study"
RULE_SETS = (RAZEGHI, PYTHIA_CASE_STUDY)
# Co-occurrence units (SPEC §2): `window` counts position pairs within W tokens (the
# default); every other unit counts the units (sentences, documents = records, training
# sequences) that hold all the terms of a pair or triple.
WINDOW_UNIT, SENTENCE_UNIT, DOCUMENT_UNIT, SEQUENCE_UNIT = "window", "sentence", "document", "sequence"
UNITS = (WINDOW_UNIT, SENTENCE_UNIT, DOCUMENT_UNIT, SEQUENCE_UNIT)
# A sentence ends after a token whose last character, once these closing quotes and brackets
# are set aside from its end, is one of SENTENCE_ENDS (SPEC §2; engines/sentences.py).
SENTENCE_ENDS, SENTENCE_CLOSERS = ".!?", "\"')]"
# A listed term (--terms, SPEC §2) is one or more whitespace tokens, each normalized as a
# text token is (`TermRules.normalize`); the term's name is its normalized tokens joined by
# this separator ("New  York" -> "new york").
TERM_TOKEN_SEPARATOR = " "
# The most tokens of a listed term: an entity name, not a passage (the numba engine's phrase
# table keeps a sequence's length in 7 bits).
MAX_TERM_TOKENS = 64


def all_digits(text: str) -> bool:
    """Made only of ASCII digits (and not empty): the characters of a number term."""
    return text.isascii() and text.isdigit()


def unit_term_limit(max_unit_terms: int, max_order: int) -> int:
    """The most distinct terms a unit may hold without a pair list: n terms make n(n-1)/2
    pairs and n(n-1)(n-2)/6 triples, so with triples n is the largest whose triples are at
    most the pairs of max_unit_terms (229 for 2,000): one bound on what a unit makes."""
    if max_order < 3:
        return max_unit_terms
    budget = max_unit_terms * (max_unit_terms - 1) // 2
    n = max(2, round((6 * budget) ** (1 / 3)) + 2)
    while n > 2 and n * (n - 1) * (n - 2) // 6 > budget:
        n -= 1
    return min(n, max_unit_terms)


class UnitTooLarge(Exception):
    """A unit of the chunk holds more distinct terms than the rules allow (the index in the
    chunk of its document, the number, the rules): the count task names its file and line
    before `reason`."""

    def __init__(self, doc: int, distinct: int, rules: "TermRules") -> None:
        super().__init__(doc, distinct)
        self.doc, self.distinct, self.limit = doc, distinct, rules.unit_term_limit
        self.unit, self.max_order, self.max_unit_terms = rules.unit, rules.max_order, rules.max_unit_terms

    @property
    def reason(self) -> str:
        """What was refused and what to do, in one line."""
        where = {DOCUMENT_UNIT: "the document", SEQUENCE_UNIT: "the sequence"}.get(
            self.unit, f"a {self.unit} of the record")
        if self.max_order >= 3:
            why = (f"{self.limit}, the bound with triples (C(n,3) <= C(max_unit_terms,2), "
                   f"max_unit_terms = {self.max_unit_terms}: their triples would not fit in "
                   "memory); give --pairs FILE, --max-order 2 or raise --max-unit-terms")
        else:
            why = (f"max_unit_terms = {self.limit} (their pairs would not fit in memory); "
                   "give --pairs FILE or raise --max-unit-terms")
        return f"{where} holds {self.distinct} distinct terms, more than {why}"


@dataclass(frozen=True)
class TermRules:
    """What counts as a term, and the window and order of co-occurrence counts."""

    window: int = 5
    max_order: int = 3
    number_rule: str = "strict"
    max_digits: int = 6
    vocab: tuple[str, ...] = ("second", "minute", "hour", "day", "week", "month", "year", "decade")
    text_field: str = "text"
    subset_field: str = "meta.pile_set_name"
    # The named rule set these values are (RULE_SETS); recorded only when not the default.
    rule_set: str = RAZEGHI
    unit: str = WINDOW_UNIT
    # A unit with n distinct terms has n(n-1)/2 pairs: above this many (and no pair list)
    # the job refuses instead of running out of memory.
    max_unit_terms: int = 2000
    # The pairs (and triples) to count (units other than the window), each sorted as
    # strings; empty: all pairs and triples.
    pairs: tuple[tuple[str, ...], ...] = ()
    # Opt-in (issue 40): the unigrams gain `documents` under the window unit too; every
    # table is keyed by each record's subset (subset_field) as well. Recorded only when on.
    doc_freq: bool = False
    by_subset: bool = False
    # Listed terms (--terms FILE): single words and multi-word phrases, normalized
    # (`listed_term`), sorted; matched leftmost-longest beside numbers and vocabulary words.
    terms: tuple[str, ...] = ()
    # (term, id, category) of listed terms that carried them in the file: recorded, not counted.
    term_meta: tuple[tuple[str, str | None, str | None], ...] = ()
    # Only the listed terms count (--only-listed): no numbers, no vocabulary words.
    listed_only: bool = False
    _lookup: dict[str, str] = field(default=None, init=False, repr=False, compare=False)  # type: ignore[assignment]
    _strip: str = field(default="", init=False, repr=False, compare=False)
    _phrases: dict[tuple[str, ...], str] = field(default=None, init=False, repr=False, compare=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if not 2 <= self.window <= MAX_WINDOW:
            raise ConfigError(f"window must be within 2..{MAX_WINDOW} (got {self.window}): triples "
                              f"grow with the square of the window; use --window 2..{MAX_WINDOW}")
        if self.max_order not in (1, 2, 3):
            raise ConfigError(f"max_order must be 1, 2 or 3 (got {self.max_order})")
        if self.number_rule not in NUMBER_RULES:
            raise ConfigError(f"number_rule must be one of {NUMBER_RULES} (got {self.number_rule!r})")
        if not 1 <= self.max_digits <= MAX_DIGITS:
            raise ConfigError(f"max_digits must be within 1..{MAX_DIGITS} (got {self.max_digits}); "
                              "SPEC §2 counts integers with less than seven digits")
        if self.unit not in UNITS:
            raise ConfigError(f"unit must be one of {', '.join(UNITS)} (got {self.unit!r})")
        if self.rule_set not in RULE_SETS:
            raise ConfigError(f"rule set must be one of {', '.join(RULE_SETS)} (got {self.rule_set!r})")
        if self.pythia_windows and (self.unit != WINDOW_UNIT or self.max_order != 2
                                    or self.doc_freq or self.by_subset or self.terms
                                    or self.listed_only):
            raise ConfigError(f"the {PYTHIA_CASE_STUDY} rule set counts the study's windows only "
                              "(unigrams and pairs, window unit, its numbers and time units, no "
                              "per-document or per-subset counts): drop --unit, --max-order, "
                              "--terms and the other counting options")
        if self.max_unit_terms < 2:
            raise ConfigError(f"max_unit_terms must be at least 2 (got {self.max_unit_terms})")
        if self.by_subset and not self.subset_field:
            raise ConfigError("by_subset needs a subset_field (e.g. meta.pile_set_name)")
        words = []
        for w in self.vocab:
            if not isinstance(w, str) or not w or any(c in PY_WHITESPACE for c in w):
                raise ConfigError(f"vocabulary word {w!r} must be a non-empty string without whitespace")
            if all_digits(w):
                raise ConfigError(f"vocabulary word {w!r} is made only of ASCII digits: it is a number "
                                  "term already (SPEC §2); remove it from the vocabulary")
            words.append(w.lower())
        object.__setattr__(self, "vocab", tuple(sorted(set(words))))
        object.__setattr__(self, "_strip", STRIP_PUNCTUATION if self.number_rule == "strip-punct" else "")
        if self.terms and self.pythia_windows:
            raise ConfigError(f"the {PYTHIA_CASE_STUDY} rule set counts the study's terms only: "
                              "drop the term list (--terms)")
        object.__setattr__(self, "terms", tuple(sorted({self.listed_term(t) for t in self.terms})))
        object.__setattr__(self, "_lookup", self._build_lookup())
        object.__setattr__(self, "_phrases", {tuple(t.split(TERM_TOKEN_SEPARATOR)): t for t in self.terms
                                              if TERM_TOKEN_SEPARATOR in t})
        object.__setattr__(self, "pairs", self._checked_pairs())

    def _checked_pairs(self) -> tuple[tuple[str, ...], ...]:
        """The pair (and triple) list sorted within and across rows, each term checked to be
        one; triples need max_order 3."""
        if self.pairs and not self.by_unit:
            raise ConfigError("a pair list needs a unit other than the window (--unit "
                              "sentence, document or sequence)")
        out = set()
        for pair in self.pairs:
            if len(pair) not in (2, 3):
                raise ConfigError(f"pair {pair!r} must have two terms (or three: a triple)")
            if len(pair) == 3 and self.max_order < 3:
                raise ConfigError(f"the pair list holds the triple {tuple(pair)!r}: triples "
                                  "need --max-order 3")
            for term in pair:
                if not self.is_term(term):
                    raise ConfigError(f"{term!r} of pair {tuple(pair)!r} is not a term under the "
                                      "rules (a number as written, a lower-case singular "
                                      "vocabulary word or a listed term as normalized); fix the "
                                      "pair list or add the word")
            if len(set(pair)) < len(pair):
                raise ConfigError(f"pair {tuple(pair)!r} pairs a term with itself: a unit count "
                                  "counts pairs and triples of distinct terms")
            out.add(tuple(sorted(pair)))
        return tuple(sorted(out))

    def _build_lookup(self) -> dict[str, str]:
        """lower-case surface form -> term; an exact vocabulary word wins over a plural. A
        listed single word is a form of itself only (no plural folding)."""
        lookup: dict[str, str] = {}
        vocab = () if self.listed_only else self.vocab
        for w in vocab:
            lookup.setdefault(w + "s", w)
        for w in vocab:
            lookup[w] = w
        for t in self.terms:
            if TERM_TOKEN_SEPARATOR not in t:
                lookup[t] = t
        return lookup

    def normalize(self, token: str) -> str:
        """A token as listed terms are matched: strip-punct's stripping (when on), then
        Python's str.lower() (SPEC §2, term lists)."""
        return token.strip(self._strip).lower() if self._strip else token.lower()

    def listed_term(self, text: str) -> str:
        """The term a line of a term list stands for: its whitespace tokens normalized and
        joined by one space. ConfigError (naming the text) where no text could match it."""
        if not isinstance(text, str) or not text.split():
            raise ConfigError(f"listed term {text!r} is empty: a term is one or more words")
        tokens = [self.normalize(t) for t in text.split()]
        if not all(tokens):
            raise ConfigError(f"listed term {text!r} has a token of punctuation only, which the "
                              "strip-punct rule strips from every text token: remove that token")
        if len(tokens) > MAX_TERM_TOKENS:
            raise ConfigError(f"listed term {text[:40]!r}... has {len(tokens)} words: a listed term has at "
                              f"most {MAX_TERM_TOKENS} (an entity name, not a passage); shorten it")
        if len(tokens) == 1 and all_digits(tokens[0]):
            raise ConfigError(f"listed term {text!r} is made only of ASCII digits: it is a number "
                              "term already (SPEC §2); remove it from the term list")
        word = tokens[0]
        if (len(tokens) == 1 and not self.listed_only and word.endswith("s") and word not in self.vocab
                and word[:-1] in self.vocab):
            raise ConfigError(f"listed term {text!r} is the plural of vocabulary word {word[:-1]!r}, "
                              "which counts it already (SPEC §2); remove it from the term list")
        return TERM_TOKEN_SEPARATOR.join(tokens)

    @property
    def phrases(self) -> dict[tuple[str, ...], str]:
        """Listed terms of two or more tokens: normalized tokens -> term."""
        return self._phrases

    @property
    def max_phrase_tokens(self) -> int:
        """The most tokens of a listed phrase (0 without phrases)."""
        return max(map(len, self._phrases), default=0)

    @property
    def word_terms(self) -> list[str]:
        """Every term that is not a number (vocabulary words, listed terms), sorted: the
        codec gives them ids in this order."""
        return sorted(set(self._lookup.values()) | set(self.terms))

    @property
    def number_digits(self) -> int:
        """The longest number term (0 with listed_only: numbers are no terms then)."""
        return 0 if self.listed_only else self.max_digits

    @property
    def word_forms(self) -> dict[str, str]:
        """Lower-case surface forms (word and word+s) mapped to their term."""
        return self._lookup

    def word_term(self, token: str) -> str | None:
        """The word term of a token, or None (comparison via Python str.lower())."""
        return self._lookup.get(token.lower())

    def term_of(self, token: str) -> str | None:
        """The term a single token stands for under these rules, or None (SPEC §2). The
        number rule is stated here (`all_digits` inlined: the reference counter's loop)."""
        if self._strip:
            token = token.strip(self._strip)
            if not token:
                return None
        if 1 <= len(token) <= self.number_digits and token.isascii() and token.isdigit():
            return token
        return self._lookup.get(token.lower())

    def is_term(self, term: object) -> bool:
        """Whether `term` is a term's name under these rules (as the tables write it)."""
        return isinstance(term, str) and (self.term_of(term) == term
                                          or self._phrases.get(tuple(term.split(TERM_TOKEN_SEPARATOR))) == term)

    def is_number(self, token: str) -> bool:
        """Whether `token` is a number term as it stands (term_of's number rule)."""
        return all_digits(token) and self.term_of(token) == token

    @property
    def pythia_windows(self) -> bool:
        """Whether terms are matched in the Pythia study's windows, on the text as written
        (the engines and the count task branch on it)."""
        return self.rule_set == PYTHIA_CASE_STUDY

    @property
    def by_document(self) -> bool:
        """Whether a pair counts the documents that hold both terms (the document unit)."""
        return self.unit == DOCUMENT_UNIT

    @property
    def with_documents(self) -> bool:
        """Whether the unigrams carry the units holding each term (`documents`: the
        documents, or under the sentence and sequence units the sentences or sequences)."""
        return self.by_unit or self.doc_freq

    @property
    def by_unit(self) -> bool:
        """Whether a pair counts the units (sentences, documents, sequences) holding both
        terms, rather than position pairs within a window."""
        return self.unit != WINDOW_UNIT

    @property
    def unit_term_limit(self) -> int:
        """The most distinct terms one unit may hold without a pair list (unit_term_limit)."""
        return unit_term_limit(self.max_unit_terms, self.max_order)

    @property
    def whitespace(self) -> str:
        """The characters that split tokens: those of Python's str.split()."""
        return PY_WHITESPACE

    @property
    def strip_chars(self) -> str:
        """What the number rule strips from both ends of a token first ("" when strict)."""
        return self._strip

    def to_config(self) -> dict[str, Any]:
        """The rules as recorded in a manifest (and compared on resume)."""
        data = asdict(self)
        data.pop("_lookup", None)
        data.pop("_strip", None)
        if self.rule_set == RAZEGHI:
            del data["rule_set"]
        data["vocab"] = list(self.vocab)
        data["pairs"] = [list(p) for p in self.pairs]
        if not self.pairs:
            del data["pairs"]
        if self.unit == WINDOW_UNIT:      # the default unit is not recorded: a window count's
            del data["unit"], data["max_unit_terms"]   # manifest and fingerprint stay as before
        data.pop("_phrases", None)
        for opt_in in ("doc_freq", "by_subset", "terms", "term_meta", "listed_only"):
            if not data[opt_in]:
                del data[opt_in]
        if self.terms:
            data["terms"] = list(self.terms)
        if self.term_meta:
            data["term_meta"] = [list(m) for m in self.term_meta]
        return data

    @classmethod
    def from_config(cls, data: dict[str, Any]) -> "TermRules":
        known = {f for f in cls.__dataclass_fields__ if not f.startswith("_")}
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"unknown term-rule settings: {sorted(unknown)}")
        data = dict(data)
        if "vocab" in data:
            data["vocab"] = tuple(data["vocab"])
        if "pairs" in data:
            data["pairs"] = tuple(tuple(p) for p in data["pairs"])
        if "terms" in data:
            data["terms"] = tuple(data["terms"])
        if "term_meta" in data:
            data["term_meta"] = tuple(tuple(m) for m in data["term_meta"])
        return cls(**data)

    @classmethod
    def from_conf(cls, overrides: dict[str, Any] | None = None,
                  extra_words: Iterable[str] = ()) -> "TermRules":
        """conf/terms.yaml, with command-line overrides and added vocabulary words."""
        data = load_conf("terms")
        data.update({k: v for k, v in (overrides or {}).items() if v is not None})
        data["vocab"] = list(data.get("vocab") or []) + list(extra_words)
        return cls.from_config(data)


def read_vocab_file(path: str | Path) -> list[str]:
    """Words from a YAML file (a list, or a mapping with `vocab`) or a text file, one per line."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: vocabulary file not found")
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".yaml", ".yml"):
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
        words = data.get("vocab") if isinstance(data, dict) else data
        if not isinstance(words, list):
            raise ConfigError(f"{path}: expected a list of words or a mapping with 'vocab'")
        words = [str(w) for w in words]
    else:
        words = [line.strip() for line in text.splitlines()
                 if line.strip() and not line.lstrip().startswith("#")]
    for w in words:
        if all_digits(w):
            raise ConfigError(f"{path}: vocabulary word {w!r} is made only of ASCII digits, a number "
                              "term already (SPEC §2); remove it from the file")
    return words
