"""`--pairs FILE`: the term pairs a document-unit count keeps (SPEC §2).

Why a file of its own: a QA set's subject-answer pairs are few, while a document with n
distinct terms has n(n-1)/2 pairs; counting only the listed ones keeps any document
countable. Each line (row) is checked here, so a bad one is named by file and line before
Spark starts; `TermRules` then holds the pairs sorted (freqgap.counting.rules).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Iterator

from freqgap.counting.rules import TermRules
from freqgap.errors import FreqgapError
from freqgap.jsonl import iter_json_objects

COLUMNS = ("t1", "t2")


def _rows(path: Path) -> Iterator[tuple[int, Any, Any]]:
    """(line or row number, t1, t2) of each pair of a CSV, JSON Lines or Parquet file."""
    name = path.name.lower()
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        missing = [c for c in COLUMNS if c not in table.column_names]
        if missing:
            raise FreqgapError(f"{path}: no column {missing[0]!r}: a pair list has columns t1, t2")
        yield from ((i + 1, a, b) for i, (a, b) in enumerate(zip(table.column("t1").to_pylist(),
                                                                  table.column("t2").to_pylist())))
    elif name.endswith((".jsonl", ".json")):
        for number, row in iter_json_objects(path):
            if any(c not in row for c in COLUMNS):
                raise FreqgapError(f"{path}:{number}: expected an object with t1 and t2")
            yield number, row["t1"], row["t2"]
    else:
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None or [h.strip() for h in header[:2]] != list(COLUMNS):
                raise FreqgapError(f"{path}:1: the header must be t1,t2 (a CSV pair list)")
            for row in reader:
                if not any(cell.strip() for cell in row):
                    continue
                if len(row) < 2:
                    raise FreqgapError(f"{path}:{reader.line_num}: expected two terms, t1,t2")
                yield reader.line_num, row[0].strip(), row[1].strip()


def read_pairs(path: str | Path, rules: TermRules) -> tuple[tuple[str, str], ...]:
    """The pairs of `path`, each term checked to be a term under `rules` as written."""
    path = Path(path)
    if not path.is_file():
        raise FreqgapError(f"{path}: pair list not found (--pairs: CSV, JSON Lines or Parquet "
                           "with columns t1, t2)")
    pairs = []
    for number, *pair in _rows(path):
        for term in pair:
            if isinstance(term, int) and not isinstance(term, bool):
                term = str(term)
            if not isinstance(term, str) or rules.term_of(term) != term:
                raise FreqgapError(f"{path}:{number}: {term!r} is not a term under the rules (a "
                                   "number of 1..max_digits digits as written, or a lower-case "
                                   "singular vocabulary word; add words with --vocab)")
        a, b = (str(t) for t in pair)
        if a == b:
            raise FreqgapError(f"{path}:{number}: the pair ({a}, {b}) pairs a term with itself; "
                               "the document unit counts pairs of distinct terms")
        pairs.append((a, b))
    if not pairs:
        raise FreqgapError(f"{path}: the pair list is empty")
    return tuple(pairs)
