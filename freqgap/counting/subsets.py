"""Counts by subset (`count --by-subset`): a chunk's texts grouped by their record's subset
(`rules.subset_field`, the Pile's `meta.pile_set_name`), each group counted on its own and
its kinds labelled `u@<subset>`, `p@<subset>` ..., as the training order labels its step
buckets, so the job's one exact sum by (kind, key) also sums per subset and the reduce
writes the label as the tables' `subset` column (exchange/final_tables.py).

Why group the texts rather than label each key: a key packs its terms into the whole int64,
so a subset cannot ride in it; a group is counted by the same engine call as a whole chunk.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np
import pyarrow as pa

from freqgap.counting.kinds import NO_SUBSET, with_label


def groups(names: Sequence[str | None]) -> Iterator[tuple[str, np.ndarray]]:
    """(subset, indices of its texts in chunk order) per subset, in name order; a text
    whose record has no subset (None) is in NO_SUBSET's group."""
    by_name: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        by_name.setdefault(NO_SUBSET if name is None else name, []).append(i)
    for name in sorted(by_name):
        yield name, np.asarray(by_name[name], np.int64)


def arrow_names(subsets: pa.Array | None, n: int) -> list[str | None]:
    """Each text's subset from Arrow's reader (null: none), or n Nones without the field."""
    return [None] * n if subsets is None else subsets.to_pylist()


def take(texts: Any, index: np.ndarray) -> Any:
    """Texts `index` of a chunk, of the same type: a list of strings, an Arrow array or the
    compiled reader's batch (its `take`)."""
    if isinstance(texts, list):
        return [texts[i] for i in index.tolist()]
    return texts.take(pa.array(index) if isinstance(texts, pa.Array) else index)


def labelled(parts: dict[str, Any], subset: str) -> dict[str, Any]:
    """A group's {kind: keys} with each kind labelled by its subset."""
    return {with_label(kind, subset): value for kind, value in parts.items()}
