"""Which term finder the counting job runs: the compiled one (numba) when it imports, else numpy.

`FREQGAP_COUNT_ENGINE=numpy|numba` forces one (numba then fails loudly if missing); both
give identical results (property tests run both against the reference counter).
"""

from __future__ import annotations

import os
from typing import Callable

import pyarrow as pa

from freqgap.config import ConfigError
from freqgap.counting.rules import TermRules
from freqgap.counting.tokenize import TermOccurrences, find_terms as find_terms_numpy

ENGINE_ENV = "FREQGAP_COUNT_ENGINE"
ENGINES = ("numba", "numpy")


def engine_name() -> str:
    """The engine in use here: the forced one, else numba if importable, else numpy."""
    forced = os.environ.get(ENGINE_ENV, "").strip().lower()
    if forced and forced not in ENGINES:
        raise ConfigError(f"{ENGINE_ENV}={forced!r}: expected one of {', '.join(ENGINES)}")
    if forced:
        return forced
    try:
        import numba  # noqa: F401
    except ImportError:
        return "numpy"
    return "numba"


def term_finder(rules: TermRules, engine: str | None = None) -> Callable[[list[str] | pa.Array], TermOccurrences]:
    """A function texts -> TermOccurrences under `rules` (tables built once)."""
    engine = engine or engine_name()
    if engine == "numpy":
        return lambda texts: find_terms_numpy(texts, rules)
    from freqgap.counting.compiled import CompiledFinder

    return CompiledFinder(rules)


def run_merger(engine: str | None = None):
    """The merge of two sorted runs of (key, count) that KeySums uses: compiled (one linear
    pass) with numba, else None (KeySums' numpy merge)."""
    if (engine or engine_name()) == "numpy":
        return None
    from freqgap.counting.compiled import merge_sums

    return merge_sums


def run_codec(engine: str | None = None):
    """(encode, decode) of a run file's rows (freqgap.counting.runcodec): compiled with
    numba, else numpy's. numpy's writer gives every value 8 bytes, the compiled one its
    fewest; either reader reads either writer's bytes to the same rows."""
    if (engine or engine_name()) == "numpy":
        from freqgap.counting import runcodec
    else:
        from freqgap.counting import runcodec_compiled as runcodec
    return runcodec.encode, runcodec.decode


def term_indexer(engine: str | None = None):
    """The reduce's keys -> (distinct term ids, int32 indices) (freqgap.counting.term_indices):
    compiled with numba, else numpy's; both give the same arrays."""
    if (engine or engine_name()) == "numpy":
        from freqgap.counting import term_indices
    else:
        from freqgap.counting import term_indices_compiled as term_indices
    return term_indices.term_indices
