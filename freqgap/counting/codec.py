"""Fixed integer ids for terms, so partial counts travel as one int64 key, not strings.

Why: most of a Spark run's overhead was moving string keys from Python to the JVM and
hashing them. The id of a term depends only on the term rules, never on the data, so
partial counts from any task, group or rerun sum exactly, and the ids are decoded back to
strings once, on the final distinct keys.

Numbers of L digits (leading zeros kept) take the ids [B_L, B_L + 10^L), with B_1 = 0 and
B_{L+1} = B_L + 10^L; vocabulary words and listed terms (phrases too, as their strings)
follow in sorted order. BITS is derived from the
rules' digit cap (rules.MAX_DIGITS): the number ids of the largest cap need it, and three
terms of BITS bits must fit in one int64 key, or the module refuses to load.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pyarrow as pa

from freqgap.counting import arrow_arrays
from freqgap.config import ConfigError
from freqgap.counting.rules import MAX_DIGITS, TermRules

NUMBER_IDS = sum(10 ** length for length in range(1, MAX_DIGITS + 1))   # every cap's numbers
BITS = NUMBER_IDS.bit_length()            # one term's id (vocabulary words after the numbers)
MASK = (1 << BITS) - 1
if 3 * BITS > 63:
    raise ImportError(f"rules.MAX_DIGITS = {MAX_DIGITS} needs {BITS}-bit term ids: a triple key "
                      "would not fit in an int64")


class TermCodec:
    """Encode terms to ids and keys; decode key arrays to Arrow string columns."""

    def __init__(self, rules: TermRules) -> None:
        self.max_digits = rules.max_digits
        self.is_number = rules.is_number
        self.bases = np.zeros(self.max_digits + 2, dtype=np.int64)
        for length in range(1, self.max_digits + 1):
            self.bases[length + 1] = self.bases[length] + 10 ** length
        self.word_base = int(self.bases[self.max_digits + 1])
        self.words = rules.word_terms   # vocabulary words and listed terms, sorted
        self.word_index = {w: self.word_base + i for i, w in enumerate(self.words)}
        if self.word_base + len(self.words) > MASK:
            raise ConfigError(f"vocabulary and term list too large: {len(self.words)} words and "
                              f"listed terms (at most {MASK - self.word_base})")

    def encode(self, terms: list[str]) -> np.ndarray:
        """Ids of a list of terms (as found by the tokenizer)."""
        out = np.empty(len(terms), dtype=np.int64)
        for i, term in enumerate(terms):
            out[i] = (self.bases[len(term)] + int(term)) if self.is_number(term) else self.word_index[term]
        return out

    @staticmethod
    def pair_keys(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return (a << BITS) | b

    @staticmethod
    def triple_keys(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        return (a << (2 * BITS)) | (b << BITS) | c

    @staticmethod
    def split(keys: np.ndarray, order: int) -> list[np.ndarray]:
        """The `order` term ids packed in each key, first term first."""
        return [(keys >> (BITS * (order - 1 - i))) & MASK for i in range(order)]

    def decode(self, ids: np.ndarray) -> pa.Array:
        """Arrow strings of term ids, built from digit bytes without Python loops."""
        n = ids.shape[0]
        pieces, positions = [], []
        for length in range(1, self.max_digits + 1):
            sel = np.flatnonzero((ids >= self.bases[length]) & (ids < self.bases[length + 1]))
            if not sel.size:
                continue
            values = ids[sel] - self.bases[length]
            powers = 10 ** np.arange(length - 1, -1, -1, dtype=np.int64)
            digits = ((values[:, None] // powers[None, :]) % 10 + 48).astype(np.uint8)
            offsets = np.arange(0, sel.size * length + 1, length, dtype=np.int32)
            pieces.append(pa.StringArray.from_buffers(sel.size, pa.py_buffer(offsets),
                                                      pa.py_buffer(digits.tobytes())))
            positions.append(sel)
        words = np.flatnonzero(ids >= self.word_base)
        if words.size:
            vocab = arrow_arrays.strings(self.words)
            pieces.append(vocab.take(arrow_arrays.numeric(ids[words] - self.word_base)))
            positions.append(words)
        if not pieces:
            return arrow_arrays.strings([]) if n == 0 else pa.nulls(n, pa.string())
        stacked = pa.concat_arrays(pieces)
        inverse = np.empty(n, dtype=np.int64)
        inverse[np.concatenate(positions)] = np.arange(n)
        return stacked.take(arrow_arrays.numeric(inverse))


@lru_cache(maxsize=4)
def codec_for(rules: TermRules) -> TermCodec:
    """The codec of `rules`, built once per process: a reused worker runs many count tasks
    under one rule set, and indexing a long term list per task would cost each of them."""
    return TermCodec(rules)
