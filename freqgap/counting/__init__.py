"""Exact term counting (SPEC §2): numbers, vocabulary words, windowed pairs and triples.

Modules, one job each:
- `rules`    the term rules as configuration (`TermRules`) and the whitespace definition;
- `tokenize` the vectorised tokenizer that finds term positions in a batch of documents;
- `windows`  turns term positions into exact unigram, pair and triple counts;
- `records`  parses JSON Lines / Parquet records into texts, naming bad ones;
- `sources`  lists inputs and streams lines out of plain, .zst and .gz files;
- `documents` the texts of a corpus as the job reads them (training reads the same);
- `reference` an independent single-process counter (the tests' oracle, the benchmark's baseline);
- `job`      the Spark orchestration: groups, resume, merge, atomic commit, manifest;
- `numpy_sorts` numpy's AVX2 sorts on AMD Zen 4 (its AVX-512 ones run 5x slower there):
  called here, before any module of the package imports numpy.
"""

from freqgap.runtime.numpy_sorts import prefer_fast_sorts

prefer_fast_sorts()

from freqgap.counting.rules import TermRules  # noqa: E402 - after numpy's environment is set

__all__ = ["TermRules"]
