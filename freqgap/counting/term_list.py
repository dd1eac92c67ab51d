"""`--terms FILE`: the listed terms a count adds to numbers and vocabulary words (SPEC §2).

Why a module of its own: an entity list is data (tens of thousands of names, with ids and
categories from a knowledge base), not configuration, and each line is checked here so a bad
one is named by file and line before Spark starts. A term's normalization is the rules' own
(`TermRules.listed_term`); `TermRules` then holds the terms and their (id, category).
"""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path
from typing import Any, Iterator

from freqgap.config import ConfigError
from freqgap.counting.rules import TermRules
from freqgap.errors import FreqgapError
from freqgap.jsonl import iter_json_objects

COLUMNS = ("term", "id", "category")        # `term` required, the others optional


def _rows(path: Path) -> Iterator[tuple[int, Any, Any, Any]]:
    """(line or row number, term, id, category) of each row of the file."""
    name = path.name.lower()
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        if "term" not in table.column_names:
            raise FreqgapError(f"{path}: no column 'term': a term list has columns term[, id, category]")
        columns = [table.column(c).to_pylist() if c in table.column_names else [None] * table.num_rows
                   for c in COLUMNS]
        yield from ((i + 1, *row) for i, row in enumerate(zip(*columns)))
    elif name.endswith((".jsonl", ".json")):
        for number, row in iter_json_objects(path):
            if "term" not in row:
                raise FreqgapError(f"{path}:{number}: expected an object with 'term' (and optional "
                                   "'id', 'category')")
            yield number, row["term"], row.get("id"), row.get("category")
    elif name.endswith(".csv"):
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            if "term" not in (reader.fieldnames or []):
                raise FreqgapError(f"{path}:1: the header must name a 'term' column (and optional "
                                   "'id', 'category')")
            for row in reader:
                yield reader.line_num, row["term"], row.get("id") or None, row.get("category") or None
    else:
        with path.open(encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if line.strip() and not line.lstrip().startswith("#"):
                    yield number, line, None, None


def read_terms(path: str | Path, rules: TermRules) -> TermRules:
    """`rules` with the terms of `path` (and their ids and categories) added."""
    path = Path(path)
    if not path.is_file():
        raise FreqgapError(f"{path}: term list not found (--terms: a text file, one term per "
                           "line, or CSV / JSON Lines / Parquet with a 'term' column)")
    seen: dict[str, tuple[int, Any, Any]] = {}
    for number, text, term_id, category in _rows(path):
        try:
            term = rules.listed_term(text)
        except ConfigError as exc:
            raise FreqgapError(f"{path}:{number}: {exc}") from None
        meta = tuple(None if v is None else str(v) for v in (term_id, category))
        if term in seen and seen[term][1:] != meta:
            raise FreqgapError(f"{path}:{number}: {term!r} is listed again (line {seen[term][0]}) "
                               "with another id or category; keep one line per term")
        seen.setdefault(term, (number, *meta))
    if not seen:
        raise FreqgapError(f"{path}: the term list is empty")
    meta = tuple((t, i, c) for t, (_, i, c) in sorted(seen.items()) if i is not None or c is not None)
    return dataclasses.replace(rules, terms=tuple(sorted(seen)), term_meta=meta)
