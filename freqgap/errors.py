"""The one error model: everything a user can fix is a `FreqgapError`.

The `freqgap` command catches `FreqgapError` (and only it) and prints
`freqgap <cmd>: error: <message>` with exit status 2 and no traceback. Anything else is a
bug and keeps its traceback. So a message must say what is wrong, where (file, line,
option or value) and how to fix it, in one line. Never raise `FreqgapError` for a bug.
"""

from __future__ import annotations


class FreqgapError(Exception):
    """A problem the user can fix (bad input, bad option, missing or mismatched file)."""


class UsageError(FreqgapError):
    """An option value is out of range or options contradict each other."""


class InputMismatchError(FreqgapError):
    """An input belongs to another run (other settings, corpus, model or stage)."""
