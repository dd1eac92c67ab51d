"""The count task's side of the hit lists (`--hits`, freqgap.counting.hits): which documents
of a chunk hold each key, with the key's occurrences in each, kept per task as exact totals
and the `limit` smallest (file, line) per key.

Why the window rule is not written again: a key's occurrences in a document are found by
`windows.pair_counts` / `triple_counts` (the engines' own rule) run over the chunk's
occurrences of key terms only, with each term renumbered per document (document, term), so
what they sum per term pair is a count per document. Runs only when --hits is given: the
default count never imports this module.
"""

from __future__ import annotations

import numpy as np

from freqgap.counting import kinds
from freqgap.counting.engines.tokenize import TermOccurrences
from freqgap.counting.engines.windows import pair_counts, triple_counts
from freqgap.counting.hits import HitSettings
from freqgap.counting.rules import TermRules

Hits = tuple[np.ndarray, np.ndarray, np.ndarray]      # (key index, document, occurrences)


def _expand(lo: np.ndarray, width: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(i, j) for every i and every j in lo[i] .. lo[i] + width[i] - 1."""
    total = int(width.sum())
    i = np.repeat(np.arange(lo.size), width)
    return i, np.repeat(lo, width) + (np.arange(total) - np.repeat(np.cumsum(width) - width, width))


class ChunkKeys:
    """The keys of one chunk's occurrences as codes over the key terms the chunk holds:
    `rank` numbers those terms in string order (R of them); a key of n terms has the code
    sum of rank * R^(n - 1 - slot)."""

    def __init__(self, settings: HitSettings, occ: TermOccurrences) -> None:
        local = {t: i for i, t in enumerate(occ.terms)}
        wanted = sorted({local[t] for key in settings.keys for t in key if t in local})
        self.tids = np.asarray(wanted, np.int64)
        self.size = max(len(wanted), 1)
        rank = {occ.terms[t]: r for r, t in enumerate(wanted)}
        self.codes: dict[int, tuple[np.ndarray, np.ndarray]] = {}   # terms -> (codes, key index)
        for n in (1, 2, 3):
            found = [(self.code([rank[t] for t in key]), k) for k, key in enumerate(settings.keys)
                     if len(key) == n and all(t in rank for t in key)]
            found.sort()
            self.codes[n] = (np.asarray([c for c, _ in found], np.int64),
                             np.asarray([k for _, k in found], np.int64))

    def code(self, ranks) -> int:
        out = 0
        for r in ranks:
            out = out * self.size + r
        return out

    def lookup(self, n: int, codes: np.ndarray, doc: np.ndarray, count: np.ndarray) -> Hits:
        """The (key index, document, occurrences) of the codes that are keys of n terms."""
        known, index = self.codes[n]
        at = np.searchsorted(known, codes)
        hit = at < known.size
        hit[hit] = known[at[hit]] == codes[hit]
        return index[at[hit]], doc[hit], count[hit]


def chunk_hits(occ: TermOccurrences, settings: HitSettings, rules: TermRules) -> Hits:
    """Every (key, document) of a chunk where the document holds the key, with the key's
    occurrences there: a term's positions; a pair's or triple's position pairs or triples
    within the window, or, under the document unit, 1 for a pair of two terms it holds."""
    keys = ChunkKeys(settings, occ)
    empty = (np.zeros(0, np.int64),) * 3
    if not keys.tids.size:
        return empty
    mask = np.isin(occ.term_id, keys.tids)
    doc = occ.doc[mask].astype(np.int64)
    rank = np.searchsorted(keys.tids, occ.term_id[mask])
    R = keys.size
    # One id per (document, key term): doc * R + rank, ordered as documents, then strings.
    entries, inverse, counts = np.unique(doc * R + rank, return_inverse=True, return_counts=True)
    e_doc, e_rank = entries // R, entries % R
    parts = [keys.lookup(1, e_rank, e_doc, counts)]
    if keys.codes[2][0].size and rules.by_document:
        parts.append(_pairs_held(keys, entries, e_doc, e_rank))
    elif keys.codes[2][0].size or keys.codes[3][0].size:
        per_doc = TermOccurrences(doc, occ.pos[mask], inverse.reshape(-1).astype(np.int64),
                                  [""] * entries.size, np.zeros(0, np.int64))
        if keys.codes[2][0].size:
            ids, n = pair_counts(per_doc, rules.window)
            a, b = entries[ids[:, 0]], entries[ids[:, 1]]
            parts.append(keys.lookup(2, (a % R) * R + b % R, a // R, n))
        if keys.codes[3][0].size:
            ids, n = triple_counts(per_doc, rules.window)
            a, b, c = (entries[ids[:, i]] for i in range(3))
            parts.append(keys.lookup(3, ((a % R) * R + b % R) * R + c % R, a // R, n))
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))


def _pairs_held(keys: ChunkKeys, entries: np.ndarray, e_doc: np.ndarray, e_rank: np.ndarray) -> Hits:
    """Document unit: each (pair key, document) whose document holds both terms, once: each
    entry (document, a) joined to the keys (a, b), then (document, b) looked up."""
    codes, index = keys.codes[2]
    R = keys.size
    first, second = codes // R, codes % R         # codes sorted, so by first term
    lo = np.searchsorted(first, e_rank, "left")
    entry, at = _expand(lo, np.searchsorted(first, e_rank, "right") - lo)
    want = e_doc[entry] * R + second[at]
    found = np.minimum(np.searchsorted(entries, want), entries.size - 1)
    held = entries[found] == want
    return index[at[held]], e_doc[entry[held]], np.ones(int(held.sum()), np.int64)


class TaskHits:
    """A count task's hit lists: exact totals per key, and per key the `limit` smallest
    (file index, line) with the occurrences there."""

    def __init__(self, settings: HitSettings, rules: TermRules) -> None:
        self.settings, self.rules = settings, rules
        n = len(settings.keys)
        self.units = np.zeros(n, np.int64)
        self.occurrences = np.zeros(n, np.int64)
        self.best: dict[int, list[tuple[int, int, int]]] = {}

    def add(self, occ: TermOccurrences, files, lines) -> None:
        """A chunk's hits; its documents' files and lines (1-based JSON Lines line or
        Parquet row) by their index in the chunk."""
        key, doc, n = chunk_hits(occ, self.settings, self.rules)
        if not key.size:
            return
        np.add.at(self.units, key, 1)
        np.add.at(self.occurrences, key, n)
        fidx = np.asarray(files, np.int64)[doc]
        line = np.asarray(lines, np.int64)[doc]
        order = np.lexsort((line, fidx, key))
        key, fidx, line, n = key[order], fidx[order], line[order], n[order]
        starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
        limit = self.settings.limit
        for s, e in zip(starts.tolist(), np.append(starts[1:], key.size).tolist()):
            k = int(key[s])
            e = min(e, s + limit)
            rows = list(zip(fidx[s:e].tolist(), line[s:e].tolist(), n[s:e].tolist()))
            kept = self.best.get(k)
            self.best[k] = rows if kept is None else sorted(kept + rows)[:limit]

    def rows(self) -> tuple[list[str], list[int | None], list[int]]:
        """The task's hit rows as statistics rows (kind, key, n): freqgap.counting.kinds."""
        kind, key, count = [], [], []
        sep = kinds.SEP
        for k in np.flatnonzero(self.units).tolist():
            kind += [f"{kinds.HIT_UNITS}{sep}{k}", f"{kinds.HIT_OCCURRENCES}{sep}{k}"]
            key += [None, None]
            count += [int(self.units[k]), int(self.occurrences[k])]
            for fidx, line, n in self.best.get(k, ()):
                kind.append(f"{kinds.HIT}{sep}{k}{sep}{fidx}")
                key.append(line)
                count.append(n)
        return kind, key, count


def write_table(rows: list[tuple], directory: str) -> int:
    """The hits table (freqgap.contract: `hits`) of the merged rows as one Parquet file under
    `directory` (written even when empty, so the table has its schema); its rows."""
    import pyarrow.parquet as pq

    from freqgap.contract import DATASETS as CONTRACT
    from freqgap.counting.inputs import arrow_fs

    schema = CONTRACT["hits"].schema()
    table = pa_table(rows, schema)
    fs, path = arrow_fs(directory)
    fs.create_dir(path, recursive=True)
    pq.write_table(table, f"{path}/.part-000.parquet.tmp", filesystem=fs)
    fs.move(f"{path}/.part-000.parquet.tmp", f"{path}/part-000.parquet")
    return table.num_rows


def pa_table(rows: list[tuple], schema):
    """Rows (in the schema's column order) as an Arrow table of `schema`."""
    import pyarrow as pa

    columns = list(zip(*rows)) if rows else [[] for _ in schema]
    return pa.Table.from_arrays([pa.array(list(c), type=f.type) for c, f in zip(columns, schema)],
                                schema=schema)
