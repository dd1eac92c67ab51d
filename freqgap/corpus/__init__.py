"""Deterministic synthetic Pile-format corpus with a controlled number-frequency law.

Used for the bundled sample corpus (data/sample/), the demo model's training data, the
`make simulate` intervention (Zipf vs uniform operands) and the counting benchmark.
"""

from freqgap.corpus.profiles import CorpusProfile, load_profile
from freqgap.corpus.writer import generate_corpus

__all__ = ["CorpusProfile", "load_profile", "generate_corpus"]
