"""Exact term counting (SPEC §2): numbers, vocabulary words, windowed pairs and triples.

Modules, one job each:
- `rules`    the term rules as configuration (`TermRules`) and the whitespace definition;
- `rule_tables` the rules' character sets as the byte tables the engines scan with;
- `engines`  how terms are found and counted fast: the numpy and numba engines behind one
             seam (`engines.get_engine`), chosen in one place;
- `records`  parses JSON Lines / Parquet records into texts, naming bad ones;
- `sources`  lists inputs and streams lines out of plain, .zst and .gz files;
- `documents` the texts of a corpus as the job reads them (training reads the same);
- `reference` an independent single-process counter (the tests' oracle, the benchmark's baseline);
- `job`      the Spark orchestration: groups, resume, merge, atomic commit, manifest;
- freqgap.runtime.numpy_sorts picks numpy's sort code where its AVX-512 one is slow
  (docs/performance.md): called here, before any module of the package imports numpy.
"""

from freqgap.runtime.numpy_sorts import prefer_fast_sorts

prefer_fast_sorts()

from freqgap.counting.rules import TermRules  # noqa: E402 - after numpy's environment is set

__all__ = ["TermRules"]
