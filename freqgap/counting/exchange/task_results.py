"""What a count task hands the driver, and the reducers' key ranges the driver cuts from it.

Why a module of its own: the driver plans the reduce from these alone, and must not import
the run files' reader and writer (`exchange`: numpy, pyarrow), which the driver of a count
never needs and whose imports every cold run would pay. So the key ranges are cut in
plain Python: a sort of one sample per INDEX_STEP partial rows (a thousand for 4 M rows).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Iterable

WORK_FORMAT = 3               # run files and task results as written now (plan.json records it)
INDEX_STEP = 4096             # rows per index key of a run file (and per sample the driver gets)

KeyRange = tuple[int | None, int | None]      # [lo, hi) over int64 keys; None: unbounded


@dataclass
class TaskResult:
    """What one count task hands the driver: where its runs are, each run's index keys
    (the driver's samples for the reducers' key ranges), and its statistics rows."""

    runs: list[tuple[str, str, int]] = field(default_factory=list)   # (uri, kind, rows)
    index: list[list[int]] = field(default_factory=list)             # per run
    stats: dict[tuple[str, int | None], int] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"runs": [list(r) for r in self.runs], "index": self.index,
                "stats": [[k, key, n] for (k, key), n in self.stats.items()]}

    @classmethod
    def from_json(cls, data: dict) -> "TaskResult":
        return cls([tuple(r) for r in data["runs"]], data["index"],
                   {(k, key): n for k, key, n in data["stats"]})


def key_ranges(results: Iterable[TaskResult], reducers: int) -> list[KeyRange]:
    """At most `reducers` key ranges [lo, hi), in key order, covering every int64 key once,
    cut at weighted quantiles of the runs' index keys (each stands for the INDEX_STEP rows
    from it, the last of a run for the rest), so each range holds about as many partial rows
    of all kinds together. Keys are packed term ids, very unevenly spread: an even split of
    the key space would give one reducer nearly everything.

    Range i ends at the first sample (in key order) with at least i/reducers of all rows
    before it; equal samples are one cut whatever their order, so the ranges depend only on
    the samples."""
    samples: list[tuple[int, int]] = []          # (index key, rows it stands for)
    for result in results:
        for (_, _, rows), index in zip(result.runs, result.index):
            if index:
                samples.extend((int(k), INDEX_STEP) for k in index[:-1])
                samples.append((int(index[-1]), rows - INDEX_STEP * (len(index) - 1)))
    if reducers <= 1 or not samples:
        return [(None, None)]
    samples.sort(key=lambda s: s[0])
    keys = [k for k, _ in samples]
    cumulative = list(accumulate((w for _, w in samples), initial=0))
    before, total = cumulative[:-1], cumulative[-1]          # rows before sample i; all rows
    picks = {keys[min(bisect_left(before, total * i / reducers), len(keys) - 1)] for i in range(1, reducers)}
    cuts = sorted(k for k in picks if k > keys[0])
    edges: list[int | None] = [None, *cuts, None]
    return list(zip(edges[:-1], edges[1:]))
