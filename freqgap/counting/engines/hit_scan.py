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
from freqgap.counting.rules import SENTENCE_UNIT, TermRules

Hits = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]   # (key index, document, sentence, occurrences)


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


def _sentences(texts, occ: TermOccurrences, doc: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(unit, sentence number from 1 within its document) of the masked occurrences, by
    the sentence unit's own rule (engines/sentences.py): a document's first sentence is the
    unit of its first token."""
    from freqgap.counting.engines.sentences import sentence_units

    unit = sentence_units(texts, occ)[0][mask]
    docs = np.unique(doc)
    first = TermOccurrences(docs, np.zeros(docs.size, np.int64), np.zeros(docs.size, np.int64),
                            [], np.zeros(0, np.int64))
    first_unit = sentence_units(texts, first)[0]
    return unit, unit - first_unit[np.searchsorted(docs, doc)] + 1


def chunk_hits(occ: TermOccurrences, settings: HitSettings, rules: TermRules, texts=None,
               units=None) -> Hits:
    """Every (key, document, sentence, occurrences) of a chunk where the unit (the document,
    or under the sentence unit the sentence; 0 otherwise) holds the key: a term's positions;
    a pair's or triple's position pairs or triples within the window, or under another unit
    1 for the unit holding all its terms. `units` (the sequence unit) gives each document's
    unit: a key is held once by a unit however many of its documents hold its terms."""
    keys = ChunkKeys(settings, occ)
    if not keys.tids.size:
        return (np.zeros(0, np.int64),) * 4
    mask = np.isin(occ.term_id, keys.tids)
    doc = occ.doc[mask].astype(np.int64)
    unit, sentence = doc, np.zeros(doc.size, np.int64)
    if units is not None:
        unit = np.asarray(units, np.int64)[doc]
    if rules.unit == SENTENCE_UNIT:
        unit, sentence = _sentences(texts, occ, doc, mask)
    rank = np.searchsorted(keys.tids, occ.term_id[mask])
    R = keys.size
    # One id per (unit, key term): unit * R + rank, ordered as units, then strings.
    entries, first, inverse, counts = np.unique(unit * R + rank, return_index=True,
                                                return_inverse=True, return_counts=True)
    e_unit, e_rank = entries // R, entries % R
    parts = [keys.lookup(1, e_rank, first, counts)]
    if rules.by_unit:
        parts += [_held(keys, n, entries, e_unit, e_rank, first) for n in (2, 3)]
    elif keys.codes[2][0].size or keys.codes[3][0].size:
        per_doc = TermOccurrences(doc, occ.pos[mask], inverse.reshape(-1).astype(np.int64),
                                  [""] * entries.size, np.zeros(0, np.int64))
        if keys.codes[2][0].size:
            ids, n = pair_counts(per_doc, rules.window)
            a, b = entries[ids[:, 0]] % R, entries[ids[:, 1]] % R
            parts.append(keys.lookup(2, a * R + b, first[ids[:, 0]], n))
        if keys.codes[3][0].size:
            ids, n = triple_counts(per_doc, rules.window)
            a, b, c = (entries[ids[:, i]] % R for i in range(3))
            parts.append(keys.lookup(3, (a * R + b) * R + c, first[ids[:, 0]], n))
    key, at, n = (np.concatenate([p[i] for p in parts]) for i in range(3))
    return key, doc[at], sentence[at], n


def _held(keys: ChunkKeys, n: int, entries: np.ndarray, e_unit: np.ndarray, e_rank: np.ndarray,
          first: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each (key of n terms, unit) whose unit holds all its terms, once: each entry (unit, a)
    joined to the keys whose first term is a, then (unit, b), (unit, c) looked up. Returns
    (key index, an occurrence of the unit, 1) as ChunkKeys.lookup does."""
    codes, index = keys.codes[n]
    R = keys.size
    lead = codes // R ** (n - 1)                  # codes sorted, so by first term
    lo = np.searchsorted(lead, e_rank, "left")
    entry, at = _expand(lo, np.searchsorted(lead, e_rank, "right") - lo)
    held = np.ones(entry.size, bool)
    for slot in range(1, n):
        want = e_unit[entry] * R + (codes[at] // R ** (n - 1 - slot)) % R
        found = np.minimum(np.searchsorted(entries, want), entries.size - 1)
        held &= entries[found] == want
    return index[at[held]], first[entry[held]], np.ones(int(held.sum()), np.int64)


class TaskHits:
    """A count task's hit lists: exact totals per key, and per key the `limit` smallest
    (file index, line, sentence) with the occurrences there."""

    def __init__(self, settings: HitSettings, rules: TermRules) -> None:
        self.settings, self.rules = settings, rules
        n = len(settings.keys)
        self.units = np.zeros(n, np.int64)
        self.occurrences = np.zeros(n, np.int64)
        self.best: dict[int, list[tuple[int, int, int, int]]] = {}

    def add(self, occ: TermOccurrences, texts, files, lines, units=None) -> None:
        """A chunk's hits; its documents' files and lines (1-based JSON Lines line or
        Parquet row; a training sequence's entry index) by their index in the chunk; `texts`
        for the sentence unit; `units` each document's unit under the sequence unit.
        Documents of one (file, line) are one listed unit: a training sequence's pieces
        (all in one chunk) are listed as the sequence, their occurrences summed."""
        key, doc, sentence, n = chunk_hits(occ, self.settings, self.rules, texts, units)
        if not key.size:
            return
        fidx = np.asarray(files, np.int64)[doc]
        line = np.asarray(lines, np.int64)[doc]
        order = np.lexsort((sentence, line, fidx, key))
        key, fidx, line, sentence, n = (a[order] for a in (key, fidx, line, sentence, n))
        new = np.concatenate(([True], (key[1:] != key[:-1]) | (fidx[1:] != fidx[:-1])
                              | (line[1:] != line[:-1]) | (sentence[1:] != sentence[:-1])))
        at = np.flatnonzero(new)
        n = np.add.reduceat(n, at)
        key, fidx, line, sentence = (a[at] for a in (key, fidx, line, sentence))
        np.add.at(self.units, key, 1)
        np.add.at(self.occurrences, key, n)
        starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
        limit = self.settings.limit
        for s, e in zip(starts.tolist(), np.append(starts[1:], key.size).tolist()):
            k = int(key[s])
            e = min(e, s + limit)
            rows = list(zip(fidx[s:e].tolist(), line[s:e].tolist(), sentence[s:e].tolist(),
                            n[s:e].tolist()))
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
            for fidx, line, sentence, n in self.best.get(k, ()):
                kind.append(f"{kinds.HIT}{sep}{k}{sep}{fidx}{sep}{sentence}")
                key.append(line)
                count.append(n)
        return kind, key, count


def write_table(rows: list[tuple], directory: str, optional: tuple[str, ...] = ()) -> int:
    """The hits table (freqgap.contract: `hits`, with the `optional` columns) of the merged
    rows as one Parquet file under `directory` (written even when empty, so the table has
    its schema); its rows."""
    import pyarrow.parquet as pq

    from freqgap.contract import DATASETS as CONTRACT
    from freqgap.counting.inputs import arrow_fs

    schema = CONTRACT["hits"].schema(optional)
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
