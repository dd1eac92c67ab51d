"""The character sets of SPEC §2 (freqgap.counting.rules) as the byte and code-point
tables the engines scan with.

Why a module: the numpy finder, the compiled finder and the compiled JSON reader each
need the whitespace set, the digits and the strip-punct punctuation as lookup arrays.
Made here once from rules.py, no engine writes a character of a rule itself, so a rule
changed in rules.py reaches every engine.
"""

from __future__ import annotations

import numpy as np

from freqgap.counting.rules import (ASCII_WHITESPACE, DIGITS, NON_ASCII_WHITESPACE, PY_WHITESPACE,
                                    STRIP_PUNCTUATION)


def byte_table(chars: str) -> np.ndarray:
    """A 256-entry bool table, True at the (single-byte) characters of `chars`."""
    table = np.zeros(256, dtype=np.bool_)
    for c in chars:
        table[ord(c)] = True
    return table


WHITESPACE_BYTES = byte_table(ASCII_WHITESPACE)      # ASCII whitespace, by byte
DIGIT_BYTES = byte_table(DIGITS)                     # the number rule's characters
PUNCT_BYTES = byte_table(STRIP_PUNCTUATION)          # what strip-punct strips
# The digits as a byte range, for compiled code that compares instead of looking up.
DIGIT_FIRST, DIGIT_LAST = ord(DIGITS[0]), ord(DIGITS[-1])
assert DIGITS == "".join(map(chr, range(DIGIT_FIRST, DIGIT_LAST + 1)))

# Non-ASCII whitespace by code point (True where Python's str.split() splits).
WHITESPACE_CODEPOINTS = np.zeros(max(map(ord, NON_ASCII_WHITESPACE)) + 1, dtype=np.bool_)
WHITESPACE_CODEPOINTS[[ord(c) for c in NON_ASCII_WHITESPACE]] = True
# Their UTF-8 encodings as big-endian integers, by length in bytes (2 or 3).
WHITESPACE_UTF8 = {n: np.array(sorted(int.from_bytes(c.encode(), "big") for c in NON_ASCII_WHITESPACE
                                      if len(c.encode()) == n), dtype=np.int64) for n in (2, 3)}
assert sum(map(len, WHITESPACE_UTF8.values())) == len(NON_ASCII_WHITESPACE)
assert len(PY_WHITESPACE) == len(ASCII_WHITESPACE) + len(NON_ASCII_WHITESPACE)

# Vocabulary forms compare by Python's str.lower(). ASCII letters lower-case by +32; of the
# non-ASCII characters only these lower-case to ASCII (tests/counting/test_rules.py checks
# every code point), so a token with any other non-ASCII character never equals an ASCII form.
LOWER_BYTES = np.arange(256, dtype=np.uint8)
LOWER_BYTES[ord("A"):ord("Z") + 1] += 32
LOWER_TO_ASCII = "\u212a"
LOWER_TO_ASCII_CODEPOINTS = np.array([ord(c) for c in LOWER_TO_ASCII], np.int64)
