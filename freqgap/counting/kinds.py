"""The kinds of partial rows a count task hands on, and the tables they become.

Why a module of its own: the driver reads task results by these names (statistics, skip
reports) and must not import the task code (numpy, pyarrow) to do so.

Count rows have kind u/p/t, or d (the document unit's documents per term; a step-bucketed
count `u@<bucket>` ..., a count by subset `u@<subset>` ...) and an int64 term key;
statistics travel in the same narrow table with a tab-joined label as kind (`docs<TAB>3`,
`skips<TAB>3<TAB>not valid JSON`, the hit lists' rows), so one exact sum gives counts, totals
and skip reports.
"""

from __future__ import annotations

UNIGRAM, PAIR, TRIPLE = "u", "p", "t"
COUNT_KINDS = (UNIGRAM, PAIR, TRIPLE)     # by order: a kind's key packs index + 1 terms
UNIT_DOCS = "d"          # document unit: the documents holding a term (unigrams' `documents`)
UNIT_COUNT = "n"         # sentence and sequence units: the units counted (key 0; manifest totals.units)
DOCS, TOKENS, LINES, BYTES, SUBSET = "docs", "tokens", "lines", "bytes", "subset"
SKIPS, SKIP_LINE = "skips", "skipline"     # count per (file, reason); example line numbers
SKIP_EXAMPLES = 20
# Hit lists (--hits, freqgap.counting.hits): per key index, `hit<TAB>key<TAB>file` with the
# line as key and the unit's occurrences; `hitunits<TAB>key` and `hitocc<TAB>key` the totals.
HIT, HIT_UNITS, HIT_OCCURRENCES = "hit", "hitunits", "hitocc"
SEP = "\t"
LABEL = "@"       # a labelled count kind: `u@<step bucket>`, or `u@<subset>` (--by-subset)
NO_SUBSET = ""    # --by-subset: the subset of a record without the field (and of a Parquet row)

DATASETS = ("unigrams", "pairs", "triples")
# dataset -> (partial kind, number of terms in a key)
LAYOUT = {"unigrams": (UNIGRAM, 1), "pairs": (PAIR, 2), "triples": (TRIPLE, 3)}


def is_count_kind(kind: str) -> bool:
    """Count rows (u, p, t, d, or u@<bucket> ...) go to run files; the rest are statistics."""
    base = kind.split("@", 1)[0]
    return base in COUNT_KINDS or base in (UNIT_DOCS, UNIT_COUNT)


def with_label(kind: str, label: object) -> str:
    """A count kind labelled by a step bucket or a subset (any string, "" too)."""
    return f"{kind}{LABEL}{label}"
