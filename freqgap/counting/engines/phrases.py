"""Listed phrases (SPEC §2, term lists): the tables both engines match them with, and the
numpy engine's matching pass.

Why a pass of its own after the single-token finder: a phrase is a run of whitespace tokens,
so it is found on token ids, not bytes. Every distinct token of a listed phrase (a
"component", normalized as `TermRules.normalize` does) gets an id; the finder marks each
text token that is a component, and a phrase is a run of consecutive components in one
document whose id sequence is listed. Id sequences are looked up by a 64-bit hash and then
compared id by id, so a hash collision can cost time, never a count. Of the phrases starting
at one position the longest wins; scanning left to right, a position inside a taken phrase
starts nothing, and its single-token term (a number, a vocabulary word) is dropped.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from freqgap.counting.rule_tables import LOWER_BYTES
from freqgap.counting.rules import TermRules

# Multiplier of the id-sequence hash h = (h * HASH_MULTIPLIER + id + 1) mod 2^64; another
# odd one is tried where two listed phrases of one length would share a hash.
HASH_MULTIPLIER = 0x9E3779B97F4A7C15


def next_draw(x: int) -> int:
    """The next of a fixed sequence of 64-bit values (a linear congruential step): the
    multiplier or seed a table takes where its current one gives two entries one hash."""
    return (x * 6364136223846793005 + 1442695040888963407) % 2 ** 64


def sequence_hashes(ids: np.ndarray, multiplier: int) -> np.ndarray:
    """The hash of each row of n x L values, as the matching passes make it: component ids
    here, token hashes in the numba pass (phrases_compiled.py)."""
    h = np.zeros(ids.shape[0], np.uint64)
    m = np.uint64(multiplier)
    for column in range(ids.shape[1]):
        h = h * m + (ids[:, column].astype(np.uint64) + np.uint64(1))
    return h


class PhraseTable:
    """The phrases of one rule set as arrays (built once per process and rules).

    components: normalized token -> id (sorted order); ascii_by_width: width -> (sorted
    fixed-width bytes of the ASCII components, their ids); lengths: the phrase lengths
    listed; for each length L: hashes[L] (sorted), rows[L] (the id sequences in hash
    order), names[L] (their terms); prefixes[L]: sorted hashes of the first L ids of every
    longer phrase (a run continues only while it may still become a phrase).
    """

    def __init__(self, rules: TermRules) -> None:
        phrases = rules.phrases
        self.longest = rules.max_phrase_tokens
        self.components = {c: i for i, c in enumerate(sorted({t for p in phrases for t in p}))}
        self.ascii_by_width: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        groups: dict[int, list[tuple[bytes, int]]] = {}     # one pass, not one per width
        for c, i in sorted((c.encode(), i) for c, i in self.components.items() if c.isascii()):
            groups.setdefault(len(c), []).append((c, i))
        for width in sorted(groups):
            self.ascii_by_width[width] = (np.array([c for c, _ in groups[width]], f"S{width}"),
                                          np.array([i for _, i in groups[width]], np.int64))
        by_length: dict[int, list[tuple[tuple[int, ...], str]]] = {}
        for tokens, name in phrases.items():
            by_length.setdefault(len(tokens), []).append((tuple(self.components[t] for t in tokens), name))
        self.lengths = sorted(by_length)
        self.multiplier = HASH_MULTIPLIER
        while True:
            self.hashes, self.rows, self.names, self.prefixes = {}, {}, {}, {}
            if self._build(by_length):
                break
            self.multiplier = next_draw(self.multiplier) | 1

    def _build(self, by_length: dict) -> bool:
        """The hash tables with the current multiplier; False where two phrases of one
        length share a hash."""
        for length, entries in by_length.items():
            ids = np.array([e[0] for e in entries], np.int64).reshape(len(entries), length)
            h = sequence_hashes(ids, self.multiplier)
            order = np.argsort(h, kind="stable")
            h = h[order]
            if h.size > 1 and (h[1:] == h[:-1]).any():
                return False
            self.hashes[length], self.rows[length] = h, ids[order]
            self.names[length] = [entries[i][1] for i in order.tolist()]
            for prefix in range(1, length):
                self.prefixes.setdefault(prefix, []).append(sequence_hashes(ids[:, :prefix], self.multiplier))
        self.prefixes = {k: np.unique(np.concatenate(v)) for k, v in self.prefixes.items()}
        return True


@lru_cache(maxsize=4)
def phrase_table(rules: TermRules) -> PhraseTable:
    """The PhraseTable of `rules` (built once per process and rule set)."""
    return PhraseTable(rules)


def component_ids(data: np.ndarray, s: np.ndarray, e: np.ndarray, high_tokens: np.ndarray,
                  table: PhraseTable) -> np.ndarray:
    """The component id of every token (-1: none): ASCII tokens by their lower-cased bytes
    against the components of their length; tokens holding non-ASCII bytes by Python's own
    str.lower() (s, e: the token bounds after strip-punct's stripping, when on)."""
    n = s.shape[0]
    out = np.full(n, -1, np.int64)
    length = e - s
    widths = sorted(table.ascii_by_width)
    if widths and n:
        code = np.where((length >= 1) & (length <= widths[-1]), length, 0)
        if high_tokens.size:
            code[high_tokens] = 0
        order = np.argsort(code, kind="stable")
        bounds = np.concatenate(([0], np.cumsum(np.bincount(code, minlength=widths[-1] + 1))))
        for width in widths:
            idx = order[bounds[width]:bounds[width + 1]]
            if not idx.size:
                continue
            wanted, ids = table.ascii_by_width[width]
            block = LOWER_BYTES[data[s[idx][:, None] + np.arange(width)[None, :]]]
            values = np.ascontiguousarray(block).view(f"S{width}").ravel()
            at = np.minimum(np.searchsorted(wanted, values), wanted.shape[0] - 1)
            hit = wanted[at] == values
            out[idx[hit]] = ids[at[hit]]
    if high_tokens.size:
        raw = data.tobytes()
        for t in high_tokens.tolist():
            cid = table.components.get(raw[s[t]:e[t]].decode("utf-8").lower())
            if cid is not None:
                out[t] = cid
    return out


def phrase_matches(cid: np.ndarray, last_in_doc: np.ndarray, table: PhraseTable):
    """(start token, length, term name) of the phrase each position would start, the
    longest of those listed, before overlaps are resolved (`leftmost_longest`)."""
    n = cid.shape[0]
    starts = np.flatnonzero(cid >= 0)
    h = cid[starts].astype(np.uint64) + np.uint64(1)
    m = np.uint64(table.multiplier)
    best_len = np.zeros(n, np.int64)
    best_name = np.full(n, -1, np.int64)
    names: list[str] = []
    for length in range(2, table.longest + 1):
        if length - 1 in table.prefixes:            # runs that may still become a phrase
            at = np.searchsorted(table.prefixes[length - 1], h)
            keep = at < table.prefixes[length - 1].shape[0]
            keep[keep] = table.prefixes[length - 1][at[keep]] == h[keep]
            starts, h = starts[keep], h[keep]
        last = starts + length - 1
        keep = last < n
        keep[keep] = (cid[last[keep]] >= 0) & ~last_in_doc[last[keep] - 1]
        starts, h, last = starts[keep], h[keep], last[keep]
        if not starts.size:
            break
        h = h * m + (cid[last].astype(np.uint64) + np.uint64(1))
        if length not in table.hashes:
            continue
        hashes = table.hashes[length]
        at = np.minimum(np.searchsorted(hashes, h), hashes.shape[0] - 1)
        hit = np.flatnonzero(hashes[at] == h)
        if hit.size:
            seqs = cid[starts[hit][:, None] + np.arange(length)[None, :]]
            hit = hit[(table.rows[length][at[hit]] == seqs).all(axis=1)]
        if hit.size:
            best_len[starts[hit]] = length
            best_name[starts[hit]] = len(names) + np.arange(hit.size)
            names.extend(table.names[length][i] for i in at[hit].tolist())
    found = np.flatnonzero(best_len)
    return found, best_len[found], [names[i] for i in best_name[found].tolist()]


def leftmost_longest(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Which of the candidate phrases (sorted by start) are taken, scanning left to right:
    one starting inside a taken phrase is not. A candidate no earlier one reaches into is
    taken; only clusters of overlapping candidates are scanned one by one."""
    taken = np.ones(starts.shape[0], np.bool_)
    if starts.shape[0] < 2:
        return taken
    ends = starts + lengths
    inside = np.zeros(starts.shape[0], np.bool_)
    inside[1:] = starts[1:] < np.maximum.accumulate(ends)[:-1]
    involved = inside.copy()
    involved[:-1] |= inside[1:]                 # the candidate before each one reached into
    cover = -1
    for k in np.flatnonzero(involved).tolist():
        if inside[k] and starts[k] < cover:
            taken[k] = False
        else:
            cover = ends[k]
    return taken


def covered_tokens(n: int, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """True at every token of a taken phrase (its first included)."""
    edge = np.zeros(n + 1, np.int64)
    np.add.at(edge, starts, 1)
    np.add.at(edge, starts + lengths, -1)
    return np.cumsum(edge[:-1]) > 0
