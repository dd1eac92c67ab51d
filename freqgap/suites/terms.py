"""Instance terms of the suites: which corpus words an instance's success may depend on.

Counting (SPEC §2) matches a whitespace token to a vocabulary word ignoring case, or to the
word plus "s", and the term is the lower-case singular. The suites therefore reduce a
word to a *term* by one rule, `word_term`: strip surrounding punctuation, lower-case, keep
letters, apostrophes and hyphens only, and drop one final "s" when what remains has at
least three letters and does not end in "s" ("crops" -> "crop", "glass" and "gas" stay).
Content words are terms of at least three letters that are not in STOPWORDS (function
words, auxiliaries and the negation cues, which are counted separately as NEGATION_CUES).

Per benchmark (freq_def names are the sets' roles; terms are sorted as strings):
- NeQA: `answer` = {head(correct option)}, `distractor` = {head(wrong option)},
  `options` = {head(A), head(B)}, `subject,answer` = {subject(question), head(correct)};
  head(text) = its last content word, subject(text) = its first content word.
- TINaD: `subject` = {first content word}, `object` = {last content word},
  `concepts` = {first, last content word} of the sentence.
- Quantifiers: `critical` = {critical word}, `backbone,critical` = {backbone noun, critical
  word} with backbone noun = the backbone's first content word, `quantifier,critical` =
  {quantifier's last word, critical word} (exp2 only); earlier/control compare two words and
  use `typical`, `atypical` and `backbone,typical`, `backbone,atypical`.
An instance without a term for a definition gets the key NO_TERM (repeated to the
definition's arity): it is never a vocabulary word, so its count is 0 and the gaps leave it
out and report it (SPEC §5 step 2), while every instance keeps a key under every definition.
"""

from __future__ import annotations

from typing import Iterable

STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing down during each either else
ever every few for from further had has have having he her here hers him his how however
i if in into is it its itself just least less let like made make many may me might more
most much must my neither no nor not of off often on once one only or other our ours out
over own per rather same several shall she should since so some such than that the their
them then there these they this those through thus to too under until up upon us very was
we were what when where whether which while who whom whose why will with within without
would yet you your isn't aren't wasn't weren't don't doesn't didn't can't cannot couldn't
won't wouldn't shouldn't hasn't haven't hadn't never nothing none nobody nowhere commonly
usually typically generally
""".split())
NO_TERM = "<none>"
NEGATION_CUES = ("not", "no", "never", "none", "nothing", "nobody", "cannot", "n't")
_KEEP = set("abcdefghijklmnopqrstuvwxyz'-")


def word_term(word: str) -> str | None:
    """The term a written word is counted under, or None if it has no letters (module rule)."""
    w = word.strip().strip(".,;:!?\"()[]{}<>`“”‘’").lower()
    if w.endswith("'s"):
        w = w[:-2]
    if not w or any(c not in _KEEP for c in w) or not any(c.isalpha() for c in w):
        return None
    w = w.strip("'-")
    if len(w) >= 4 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    return w or None


def content_terms(text: str) -> list[str]:
    """Terms of the content words of a text, in order (repeats kept)."""
    out = []
    for tok in text.split():
        if tok.lower().strip(".,;:!?\"()") in STOPWORDS:
            continue
        t = word_term(tok)
        if t is not None and len(t) >= 3 and t not in STOPWORDS:
            out.append(t)
    return out


def head(text: str) -> str | None:
    """Last content word's term (a phrase's head in English noun phrases)."""
    terms = content_terms(text)
    return terms[-1] if terms else None


def subject(text: str) -> str | None:
    """First content word's term."""
    terms = content_terms(text)
    return terms[0] if terms else None


def term_set(*terms: str | None) -> tuple[str, ...]:
    """Sorted term tuple (1 to 3 terms); NO_TERM repeated when any term is missing."""
    if not 1 <= len(terms) <= 3:
        raise ValueError("a frequency definition has one to three terms")
    if any(t is None for t in terms):
        return (NO_TERM,) * len(terms)
    return tuple(sorted(terms))  # type: ignore[arg-type]


def vocabulary(term_sets: Iterable[tuple[str, ...]]) -> list[str]:
    """Every word term used, sorted: the counting job's `--vocab` for these instances."""
    return sorted({t for ts in term_sets for t in ts if t != NO_TERM})
