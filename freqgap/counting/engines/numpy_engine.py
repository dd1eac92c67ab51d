"""The numpy engine: the term finder, window counts, run codec and term indices in numpy
and Arrow only (no compiler). Where numba is missing it is the default; everywhere it is
the plainer twin the compiled engine is checked against."""

from __future__ import annotations

from contextlib import contextmanager
from functools import partial
from typing import Iterator

import numpy as np

from freqgap.counting.exchange import runcodec
from freqgap.counting.kinds import PAIR, TRIPLE, UNIGRAM, UNIT_DOCS
from freqgap.counting.partials import sum_by_key
from freqgap.counting.rules import TermRules
from freqgap.counting.engines import pythia_case_study, term_indices
from freqgap.counting.engines.tokenize import find_terms
from freqgap.counting.engines.units import term_documents, unit_keys
from freqgap.counting.engines.windows import pair_counts, triple_counts, unigram_counts


class NumpyEngine:
    name = "numpy"
    reads_json = False            # partials reads JSON with Arrow's reader
    extract_records = None
    encode_run = staticmethod(runcodec.encode)
    decode_run = staticmethod(runcodec.decode)
    term_indices = staticmethod(term_indices.term_indices)

    def finder(self, rules: TermRules):
        return partial(find_terms, rules=rules)

    @contextmanager
    def leased(self, rules: TermRules) -> Iterator[tuple]:
        yield self.finder(rules), None

    def chunk_keys(self, texts, rules: TermRules, codec, finder=None, units=None):
        if rules.pythia_windows:         # the study's windows on the text as written
            return pythia_case_study.chunk_keys(texts, rules, codec)
        occ = (finder or self.finder(rules))(texts)
        gid = codec.encode(occ.terms)
        if rules.by_unit:
            return unit_keys(occ, gid, rules, texts, units), occ.tokens_per_doc
        ids, counts = unigram_counts(occ)
        out = {UNIGRAM: (gid[ids], counts)}
        if rules.doc_freq:
            out[UNIT_DOCS] = term_documents(occ, gid)
        if rules.max_order >= 2:
            keys, counts = pair_counts(occ, rules.window)
            out[PAIR] = (codec.pair_keys(gid[keys[:, 0]], gid[keys[:, 1]]), counts)
        if rules.max_order >= 3:
            keys, counts = triple_counts(occ, rules.window)
            out[TRIPLE] = (codec.triple_keys(gid[keys[:, 0]], gid[keys[:, 1]], gid[keys[:, 2]]), counts)
        return out, occ.tokens_per_doc

    @staticmethod
    def count_byte(data: np.ndarray, byte: int) -> int:
        return np.count_nonzero(data == byte)

    @staticmethod
    def merge(k1: np.ndarray, c1: np.ndarray, k2: np.ndarray, c2: np.ndarray):
        """Two runs as one by a sort of their concatenation."""
        return sum_by_key(np.concatenate((k1, k2)), np.concatenate((c1, c2)))

    @staticmethod
    def sum_runs(parts):
        """Many runs as one: one sort of them all (a stable sort, timsort, was no faster)."""
        return sum_by_key(np.concatenate([k for k, _ in parts]), np.concatenate([c for _, c in parts]))


ENGINE = NumpyEngine()
