"""The numba engine: one compiled pass per step (compiled.py: finder and window keys;
jsonscan.py: the JSON reader; runcodec_compiled.py, term_indices_compiled.py), the same
results as the numpy engine. Compiled code is cached on disk, so the compile is paid once
per machine, not per task (docs/performance.md)."""

from __future__ import annotations

from contextlib import contextmanager
from functools import lru_cache
from typing import Iterator

from freqgap.counting.kinds import PAIR, TRIPLE, UNIGRAM, UNIT_DOCS
from freqgap.counting.rules import TermRules
from freqgap.counting.engines import pythia_case_study, runcodec_compiled, term_indices_compiled
from freqgap.counting.engines.compiled import CompiledFinder, merge_sums
from freqgap.counting.engines.jsonscan import extract_records
from freqgap.counting.engines.units import term_documents, unit_keys
from freqgap.counting.engines.windows import unigram_counts
from freqgap.counting.engines.words import count_byte
from freqgap.runtime.task_reuse import FINDERS, READER_SCRATCH


class NumbaEngine:
    name = "numba"
    reads_json = True
    extract_records = staticmethod(extract_records)
    merge = staticmethod(merge_sums)
    count_byte = staticmethod(count_byte)
    encode_run = staticmethod(runcodec_compiled.encode)
    decode_run = staticmethod(runcodec_compiled.decode)
    term_indices = staticmethod(term_indices_compiled.term_indices)

    def finder(self, rules: TermRules) -> CompiledFinder:
        return CompiledFinder(rules)

    @contextmanager
    def leased(self, rules: TermRules) -> Iterator[tuple]:
        """The finder and the JSON reader's arrays from the process's pools (a reused Spark
        worker makes them once, not per task: freqgap.runtime.task_reuse)."""
        with FINDERS.lease(rules, lambda: self.finder(rules)) as finder, \
                READER_SCRATCH.lease("json", dict) as scratch:
            yield finder, scratch

    @staticmethod
    @lru_cache(maxsize=2)
    def shared_finder(rules: TermRules) -> CompiledFinder:
        """A finder for callers that hold none (one call at a time uses it: chunk_keys
        returns before another can start)."""
        return CompiledFinder(rules)

    def chunk_keys(self, texts, rules: TermRules, codec, finder=None, units=None):
        if rules.pythia_windows:         # the study's windows on the text as written
            return pythia_case_study.chunk_keys(texts, rules, codec)
        finder = finder or self.shared_finder(rules)
        occ = finder.find_terms(texts, names=False)
        gid = occ.term_codes
        if rules.by_unit:
            return unit_keys(occ, gid, rules, texts, units), occ.tokens_per_doc
        ids, counts = unigram_counts(occ)
        out = {UNIGRAM: (gid[ids], counts)}
        if rules.doc_freq:
            out[UNIT_DOCS] = term_documents(occ, gid)
        if rules.max_order >= 2:
            out[PAIR], triples = finder.window_keys(occ, gid)
            if rules.max_order >= 3:
                out[TRIPLE] = triples
        return out, occ.tokens_per_doc

    @staticmethod
    def sum_runs(parts):
        """Many runs as one: a balanced tree of linear two-way merges."""
        while len(parts) > 1:
            merged = [merge_sums(*parts[i], *parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
            parts = merged + parts[len(merged) * 2:]
        return parts[0]


ENGINE = NumbaEngine()
