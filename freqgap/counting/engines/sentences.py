"""The sentence unit (SPEC §2): the sentence of its document each term occurrence lies in.

A sentence ends after a token whose last character, once closing quotes and brackets
(rules.SENTENCE_CLOSERS) are set aside from its end, is `.`, `!` or `?` (rules.SENTENCE_ENDS),
and at the end of the document; sentences never cross documents. Why from the chunk's
bytes: the finders report term tokens only, while any token may end a sentence. Both
engines call this with the texts they counted (Python strings, an Arrow array, or the
compiled JSON reader's buffer), and only under the sentence unit: the window unit's hot
path makes no extra pass.
"""

from __future__ import annotations

import numpy as np

from freqgap.counting.engines.tokenize import TermOccurrences, _texts_to_buffer, _token_bounds, _token_mask
from freqgap.counting.rule_tables import byte_table
from freqgap.counting.rules import SENTENCE_CLOSERS, SENTENCE_ENDS

_CLOSER = byte_table(SENTENCE_CLOSERS)
_END = byte_table(SENTENCE_ENDS)


def _buffer(texts) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes of the texts with whitespace between them, and each text's byte offsets."""
    if hasattr(texts, "offsets") and hasattr(texts, "data"):   # jsonscan.Utf8Batch
        offsets = np.asarray(texts.offsets, np.int64)
        return texts.data[offsets[0]:offsets[-1]], offsets - offsets[0]
    return _texts_to_buffer(texts)


def sentence_ends(data: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """True for each token (bytes start..end-1) that ends a sentence."""
    last = end - 1
    inside = last >= start
    while True:                        # step back over trailing closers, a few bytes at most
        closing = inside & _CLOSER[data[np.where(inside, last, 0)]] if data.size else inside
        if not closing.any():
            break
        last = np.where(closing, last - 1, last)
        inside &= last >= start
    return inside & _END[data[np.where(inside, last, 0)]] if data.size else inside


def sentence_units(texts, occ: TermOccurrences) -> tuple[np.ndarray, int]:
    """(the sentence of each occurrence, numbered within the chunk in document order; the
    number of sentences of the chunk: its documents' sentence ends, plus one for each
    document whose last token ends none)."""
    data, offsets = _buffer(texts)
    start, end, first_tok = _token_bounds(_token_mask(data, np.flatnonzero(data >= 128)), offsets)
    ends = sentence_ends(data, start, end)
    before = np.cumsum(ends) - ends                 # sentence ends before each token
    unit = before[first_tok[occ.doc] + occ.pos] + occ.doc
    has_tokens = np.diff(first_tok) > 0
    last = np.where(has_tokens, first_tok[1:] - 1, 0)
    open_end = has_tokens & ~ends[last] if ends.size else has_tokens
    return unit.astype(np.int64), int(ends.sum()) + int(open_end.sum())
