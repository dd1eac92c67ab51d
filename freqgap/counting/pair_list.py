"""`--pairs FILE`: the term pairs (and triples) a count by unit keeps (SPEC §2).

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
PAIR_COLUMNS = ("t1", "t2", "t3")     # a pair list's row: a pair, or a triple with t3


def term_rows(path: Path, columns: tuple[str, ...] = COLUMNS, need: int = 2) -> Iterator[tuple]:
    """(line or row number, term, …) of each row of a CSV, JSON Lines or Parquet file with
    the term columns `columns`, of which the first `need` must be given in every row; a
    later column left empty or null ends the row's terms (the hit lists' keys file, one to
    three terms a row, reads with this too: freqgap.counting.hits)."""
    name = path.name.lower()
    wanted = ", ".join(columns)
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        missing = [c for c in columns[:need] if c not in table.column_names]
        if missing:
            raise FreqgapError(f"{path}: no column {missing[0]!r}: expected columns {wanted}")
        present = [table.column(c).to_pylist() for c in columns if c in table.column_names]
        yield from ((i + 1, *_given(row)) for i, row in enumerate(zip(*present)))
    elif name.endswith((".jsonl", ".json")):
        for number, row in iter_json_objects(path):
            if any(c not in row for c in columns[:need]):
                raise FreqgapError(f"{path}:{number}: expected an object with {' and '.join(columns[:need])}")
            yield (number, *_given(row.get(c) for c in columns))
    else:
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            header = [h.strip() for h in header or []]
            if header[:need] != list(columns[:need]) or any(
                    h not in columns for h in header[:len(columns)]):
                raise FreqgapError(f"{path}:1: the header must be {','.join(columns[:max(need, 2)])} "
                                   "(a CSV term list)")
            for row in reader:
                if not any(cell.strip() for cell in row):
                    continue
                if len(row) < need:
                    raise FreqgapError(f"{path}:{reader.line_num}: expected {need} terms, "
                                       f"{','.join(columns[:need])}")
                yield (reader.line_num, *_given(cell.strip() for cell in row[:len(header)]))


def _given(values) -> tuple:
    """A row's terms up to the first empty or null one."""
    out = []
    for value in values:
        if value is None or value == "":
            break
        out.append(value)
    return tuple(out)


def checked_term(term: Any, rules: TermRules, path: Path, number: int) -> str:
    """A row's term (an integer read from JSON or Parquet as its digits), refused with its
    file and line unless it is a term as the tables write it (the pair list's and the hit
    lists' keys file's one check)."""
    if isinstance(term, int) and not isinstance(term, bool):
        term = str(term)
    if not rules.is_term(term):
        raise FreqgapError(f"{path}:{number}: {term!r} is not a term under the rules (a "
                           "number of 1..max_digits digits as written, a lower-case "
                           "singular vocabulary word, or a listed term as normalized; add "
                           "words with --vocab, terms with --terms)")
    return term


def read_pairs(path: str | Path, rules: TermRules) -> tuple[tuple[str, ...], ...]:
    """The pairs (and triples: rows with t3) of `path`, each term checked to be a term
    under `rules` as written."""
    path = Path(path)
    if not path.is_file():
        raise FreqgapError(f"{path}: pair list not found (--pairs: CSV, JSON Lines or Parquet "
                           "with columns t1, t2 and, for triples, t3)")
    pairs = []
    for number, *pair in term_rows(path, PAIR_COLUMNS):
        if len(pair) not in (2, 3):
            raise FreqgapError(f"{path}:{number}: expected two terms, t1 and t2 (or three, "
                               "with t3: a triple)")
        if len(pair) == 3 and rules.max_order < 3:
            raise FreqgapError(f"{path}:{number}: a triple; triples need --max-order 3")
        row = tuple(checked_term(term, rules, path, number) for term in pair)
        if len(set(row)) < len(row):
            raise FreqgapError(f"{path}:{number}: the pair ({', '.join(row)}) pairs a term with "
                               "itself; a unit count counts pairs and triples of distinct terms")
        pairs.append(row)
    if not pairs:
        raise FreqgapError(f"{path}: the pair list is empty")
    return tuple(pairs)
