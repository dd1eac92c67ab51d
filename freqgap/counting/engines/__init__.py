"""The counting engines behind one seam, and the one place that chooses between them.

An engine is what the pipeline needs to be fast, built from `TermRules` and nothing else
(no rule is written inside an engine: freqgap.counting.rules and rule_tables state them):
find the terms of a chunk of texts and make their window keys (`chunk_keys`), merge runs
of summed keys (`merge`), write and read run files (`encode_run`, `decode_run`), and turn
the reduce's keys into term indices (`term_indices`). `numpy` needs only numpy and Arrow;
`numba` compiles the same steps and adds a JSON reader that writes straight into the
finder's buffer. Both give identical counts (tests/counting/test_conformance.py runs one
suite over every engine against freqgap.counting.reference).

Choosing: `FREQGAP_ENGINE=numpy|numba|auto`, else `engine:` in conf/spark/runtime.yaml
(get_spark passes the choice on to the executors); `auto`: numba where it imports, else
numpy. No module outside this
package imports numba or an engine module (tests/counting/test_engines.py checks it).
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, ContextManager, Protocol

import numpy as np

from freqgap.config import ConfigError
from freqgap.counting.rules import TermRules
from freqgap.runtime import configured

ENGINE_ENV = "FREQGAP_ENGINE"
AUTO = "auto"                          # the first of ENGINES whose package imports
# name -> (its module, the package it needs); the first that imports is the default
ENGINES = {"numba": ("freqgap.counting.engines.numba_engine", "numba"),
           "numpy": ("freqgap.counting.engines.numpy_engine", "numpy")}

Keys = tuple[np.ndarray, np.ndarray]   # (sorted distinct int64 keys, int64 counts)


class Engine(Protocol):
    """What the count pipeline asks of an engine (one object per process and name)."""

    name: str
    reads_json: bool      # True: it parses a chunk of JSON lines itself (`extract_records`)

    def finder(self, rules: TermRules) -> Any:
        """The term finder of `rules` (texts -> TermOccurrences; its tables built once)."""

    def leased(self, rules: TermRules) -> ContextManager[tuple[Any, dict | None]]:
        """(finder, JSON reader scratch or None) for one count task."""

    def chunk_keys(self, texts: Any, rules: TermRules, codec: Any, finder: Any,
                   units: np.ndarray | None = None) -> tuple[dict[str, Keys], np.ndarray]:
        """{kind: (keys, counts)} of one chunk of texts, and each text's token count;
        `units`: the unit (training sequence) of each text, under the sequence unit."""

    def extract_records(self, buf: np.ndarray, text_field: str, subset_field: str | None,
                        scratch: dict) -> Any:
        """A chunk of JSON lines parsed into the finder's buffer, or None: the Python path."""

    def count_byte(self, data: np.ndarray, byte: int) -> int:
        """How many bytes of data equal `byte` (newlines of a block)."""

    def sum_runs(self, parts: list[Keys]) -> Keys:
        """Two or more runs as one (the reduce's merge of every task's slice)."""

    def merge(self, k1: np.ndarray, c1: np.ndarray, k2: np.ndarray, c2: np.ndarray) -> Keys:
        """Two runs of sorted distinct keys as one, equal keys summed."""

    def encode_run(self, keys: np.ndarray, counts: np.ndarray, order: int) -> Any:
        """A run file's bytes of sorted distinct keys and their counts."""

    def decode_run(self, *args: Any) -> Keys:
        """Rows back from a run file's bytes (either engine's writer)."""

    def term_indices(self, keys: np.ndarray, order: int) -> tuple[np.ndarray, np.ndarray]:
        """(distinct term ids, int32 indices per term column) of packed keys."""


_loaded: dict[str, Engine] = {}


def engine_name(name: str | None = None) -> str:
    """The engine to use: `name`, else FREQGAP_ENGINE, else conf/spark/runtime.yaml's
    `engine`; `auto` (the default) is the first of ENGINES whose package imports. An
    unknown name fails with the known ones."""
    chosen = (name or configured("engine", ENGINE_ENV, AUTO)).strip().lower()
    if chosen == AUTO:
        chosen = ""
    if chosen and chosen not in ENGINES:
        raise ConfigError(f"unknown counting engine {chosen!r} ({ENGINE_ENV} or "
                          f"conf/spark/runtime.yaml's engine): expected one of {', '.join(ENGINES)} "
                          f"or {AUTO}")
    if chosen:
        return chosen
    for candidate, (_, needs) in ENGINES.items():
        try:
            importlib.import_module(needs)
        except ImportError:
            continue
        return candidate
    raise ConfigError(f"no counting engine imports: install one of {', '.join(ENGINES)}")


def get_engine(name: str | None = None) -> Engine:
    """The engine `name` (engine_name's choice when None), loaded once per process."""
    name = engine_name(name)
    engine = _loaded.get(name)
    if engine is None:
        engine = _loaded[name] = importlib.import_module(ENGINES[name][0]).ENGINE
    return engine


def term_finder(rules: TermRules, engine: str | None = None) -> Callable[..., Any]:
    """A function texts -> TermOccurrences under `rules` (tables built once)."""
    return get_engine(engine).finder(rules)


def count_byte(data: np.ndarray, byte: int) -> int:
    """How many bytes of `data` (uint8) equal `byte` (< 0x80), by the engine in use."""
    return get_engine().count_byte(data, byte)


def load_hit_scan() -> Any:
    """The hit lists' task side (engines/hit_scan.py: it runs the engines' window code per
    document), imported only when a count is given --hits."""
    return importlib.import_module("freqgap.counting.engines.hit_scan")
