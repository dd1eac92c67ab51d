"""Hit lists (`--hits KEYS_FILE`, issue 41 item 3): for each listed term, pair or triple,
the documents that hold it, at most `limit` of them, with its totals over all of them.

Why a driver-side module of its own: the keys are read and checked before Spark starts, the
settings are part of the run's config (so `--resume` refuses other ones), and the tasks' hit
rows are merged here in plain Python (the driver of a count imports no numpy or pyarrow:
tests/counting/test_startup_imports.py). The tasks' side is `freqgap.counting.engines.hit_scan`.

Which documents are listed is fixed by the data alone: the `limit` smallest (file, line) in
the order of the sorted input paths (of an indexed training-order input, the smallest entry
indices), so no partitioning, split or input order changes it. Each task
keeps its smallest `limit` per key (the global smallest are among them) and the exact sums of
units and occurrences; they travel as statistics rows (`freqgap.counting.kinds`), summed
exactly like the others, and are merged here group by group.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from freqgap.counting import kinds
from freqgap.counting.pair_list import checked_term, term_rows
from freqgap.counting.rules import TermRules
from freqgap.errors import FreqgapError

HITS_TABLE = "hits"           # the table's directory in the counts directory
KEY_COLUMNS = ("t1", "t2", "t3")
DEFAULT_LIMIT = 100
TEXT_SUFFIXES = (".txt", ".tsv")
Key = tuple[str, ...]


@dataclass(frozen=True)
class HitSettings:
    """The keys (made canonical here: each its terms sorted as strings, the keys sorted by
    length then terms, no repeats) and the most documents listed per key."""

    keys: tuple[Key, ...]
    limit: int = DEFAULT_LIMIT

    def __post_init__(self) -> None:
        object.__setattr__(self, "keys", tuple(sorted({tuple(sorted(k)) for k in self.keys},
                                                     key=lambda k: (len(k), k))))
        if self.limit < 1:
            raise FreqgapError(f"--hits-limit must be at least 1 (got {self.limit})")
        if not self.keys:
            raise FreqgapError("--hits: no keys")

    def to_config(self) -> dict[str, Any]:
        """As recorded in the manifest's config (and compared on resume)."""
        return {"keys": [list(k) for k in self.keys], "limit": self.limit}


def _text_rows(path: Path) -> Iterable[tuple]:
    """(line number, term, …) of a text keys file: one key a line, its terms separated by
    tabs where the file has a tab (so a term may be a phrase), else by whitespace; blank
    lines and lines starting with # are left out."""
    text = path.read_text(encoding="utf-8")
    tabs = "\t" in text
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip() and not line.lstrip().startswith("#"):
            terms = [t.strip() for t in line.split("\t") if t.strip()] if tabs else line.split()
            yield (number, *terms)


def read_keys(path: str | Path, rules: TermRules) -> tuple[Key, ...]:
    """The keys of `path`, each term checked to be a term under `rules` as written, each key
    to have a count under them (a pair needs --max-order 2, a triple 3; under a unit other
    than the window a key's terms are distinct, and with --pairs a pair or triple must be
    listed there)."""
    if rules.pythia_windows:
        raise FreqgapError("--hits lists documents, sentences or training sequences: it takes "
                           "the default rule set")
    path = Path(path)
    if not path.is_file():
        raise FreqgapError(f"{path}: keys file not found (--hits: CSV with header t1[,t2[,t3]], "
                           "JSON Lines or Parquet with columns t1[, t2, t3], or text, one key a line)")
    rows = (_text_rows(path) if path.name.lower().endswith(TEXT_SUFFIXES)
            else term_rows(path, KEY_COLUMNS, need=1))
    most = rules.max_order
    keys = set()
    for number, *terms in rows:
        if not 1 <= len(terms) <= most:
            raise FreqgapError(f"{path}:{number}: a key of {len(terms)} terms; this count has keys "
                               f"of 1 to {most} terms (pairs need --max-order 2, triples 3)")
        key = tuple(sorted(checked_term(term, rules, path, number) for term in terms))
        if rules.by_unit and len(set(key)) < len(key):
            raise FreqgapError(f"{path}:{number}: the key ({', '.join(key)}) repeats a term; the "
                               f"{rules.unit} unit counts keys of distinct terms")
        if len(key) > 1 and rules.pairs and key not in rules.pairs:
            raise FreqgapError(f"{path}:{number}: the key ({', '.join(key)}) is not in --pairs, "
                               "so it has no count to agree with; add it there")
        keys.add(key)
    if not keys:
        raise FreqgapError(f"{path}: the keys file is empty")
    return tuple(keys)


class HitMerge:
    """The hit rows of every task so far, merged: per key the exact totals and the `limit`
    smallest (file index, line). Absorbing each group's results as it comes keeps what the
    driver holds to keys x limit rows beyond one group's."""

    def __init__(self, settings: HitSettings, sentences: bool = False,
                 seqs_per_step: int | None = None) -> None:
        self.settings, self.sentences = settings, sentences
        self.seqs_per_step = seqs_per_step      # set for an indexed training-order input
        n = len(settings.keys)
        self.units = [0] * n
        self.occurrences = [0] * n
        self.best: list[list[tuple[int, int, int, int]]] = [[] for _ in range(n)]

    def absorb(self, results: Iterable) -> None:
        """Take the hit rows out of the task results' statistics (what is left is the
        ordinary statistics the job sums)."""
        touched = set()
        for result in results:
            for slot in [s for s in result.stats if s[0].startswith(kinds.HIT)]:
                n = result.stats.pop(slot)
                name, k, *rest = slot[0].split(kinds.SEP)
                k = int(k)
                if name == kinds.HIT_UNITS:
                    self.units[k] += n
                elif name == kinds.HIT_OCCURRENCES:
                    self.occurrences[k] += n
                else:
                    self.best[k].append((int(rest[0]), int(slot[1]), int(rest[1]), n))
                    touched.add(k)
        for k in touched:
            self.best[k] = sorted(self.best[k])[:self.settings.limit]

    @property
    def optional(self) -> tuple[str, ...]:
        """The hits table's optional columns: `sentence` under the sentence unit,
        `sequence` and `step` for a training-order input."""
        if self.seqs_per_step:
            return ("sequence", "step")
        return ("sentence",) if self.sentences else ()

    def _unit(self, line: int, sentence: int) -> tuple:
        """(line, optional columns) of a listed unit: a training sequence (kept in the line
        slot, so the smallest entries are listed) has a null line, its entry and its step."""
        if self.seqs_per_step:
            return None, line, line // self.seqs_per_step
        return (line, sentence) if self.sentences else (line,)

    def rows(self, paths: dict[int, str]) -> list[tuple]:
        """The hits table's rows (freqgap.contract: `hits`, with `optional`'s columns), by
        key, then file, line and sentence."""
        out = []
        for k, key in enumerate(self.settings.keys):
            terms = list(key) + [None] * (len(KEY_COLUMNS) - len(key))
            for fidx, line, sentence, n in self.best[k]:
                out.append((len(key), *terms, paths[fidx], *self._unit(line, sentence), n,
                            self.units[k], self.occurrences[k]))
        return out

    def check(self) -> None:
        """Every listed hit belongs to a counted unit: a key's listed units are at most its
        total (an inconsistency here is a bug, never bad input)."""
        for k, best in enumerate(self.best):
            if len(best) > self.units[k] or sum(b[-1] for b in best) > self.occurrences[k]:
                raise AssertionError(f"hit lists of key {self.settings.keys[k]} exceed its totals")
