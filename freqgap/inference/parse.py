"""Answer parsing (SPEC §4): the paper rule and, beside it, a lenient rule.

Paper rule: the answer is the first whitespace-delimited token of the continuation (up
to the newline that stops generation); correct iff it equals str(y) exactly. Lenient rule:
the same token with surrounding punctuation and thousands separators removed.
"""

from __future__ import annotations

import re
import string

_PUNCT = string.punctuation
_THOUSANDS = re.compile(r"(?<=\d)[,_'\u00a0\u202f](?=\d{3}(?:\D|$))")


def paper_answer(continuation: str) -> str:
    """First whitespace-delimited token of the text before the first newline ('' if none)."""
    tokens = continuation.split("\n", 1)[0].split()
    return tokens[0] if tokens else ""


def lenient_answer(continuation: str) -> str:
    """The paper answer without thousands separators and surrounding punctuation."""
    token = _THOUSANDS.sub("", paper_answer(continuation)).rstrip(_PUNCT)
    token = token.lstrip(_PUNCT.replace("-", ""))
    # A leading minus is a sign only when a digit follows; otherwise it is punctuation.
    return token if re.match(r"-\d", token) else token.lstrip(_PUNCT)


def score(continuation: str, answer: str) -> dict[str, object]:
    """Parsed answers and correctness under both rules."""
    strict, lenient = paper_answer(continuation), lenient_answer(continuation)
    return {"answer": strict, "answer_lenient": lenient, "correct": strict == answer,
            "correct_lenient": lenient == answer}
