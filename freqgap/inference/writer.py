"""Resumable, chunked Parquet output of predictions (DATA.md `predictions/<model>/`).

Rows are written in chunks, each to a temporary name and renamed when complete, so a kill
loses at most the chunk being built. A rerun reads the keys of the finished chunks and
skips them. The manifest is written last, only when every expected row is present once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from freqgap.contract import DATASETS
from freqgap.errors import FreqgapError

PREDICTION_SCHEMA = DATASETS["predictions"].schema()     # declared in freqgap/contract.py
KEY = ("task", "k", "seed", "instance_id")
PART_GLOB = "part-*.parquet"

Key = tuple[str, int, int, int]


class PredictionsError(FreqgapError):
    """Predictions on disk are inconsistent (wrong model, missing or doubled rows)."""


def part_files(directory: str | Path) -> list[Path]:
    return sorted(Path(directory).glob(PART_GLOB))


def read_keys(files: Iterable[Path]) -> tuple[list[Key], set[tuple[str, str]]]:
    """Keys of the rows in `files` (with repeats) and the (model, revision) pairs seen."""
    keys: list[Key] = []
    models: set[tuple[str, str]] = set()
    for f in files:
        t = pq.read_table(f, columns=["model", "revision", *KEY])
        cols = [t.column(c).to_pylist() for c in KEY]
        keys.extend(zip(*cols))
        models.update(zip(t.column("model").to_pylist(), t.column("revision").to_pylist()))
    return keys, models


class ChunkWriter:
    """Appends chunks `part-NNNNN.parquet` to a directory; knows which keys are done."""

    def __init__(self, directory: str | Path, model: str, revision: str) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        for stale in self.directory.glob(".part-*.tmp"):
            stale.unlink()
        files = part_files(self.directory)
        keys, models = read_keys(files)
        other = models - {(model, revision)}
        if other:
            raise PredictionsError(
                f"{self.directory}: holds predictions of {sorted(other)}, not of "
                f"({model!r}, {revision!r}); use another --out or remove it")
        self.done: set[Key] = set(keys)
        if len(self.done) != len(keys):
            raise PredictionsError(f"{self.directory}: doubled rows in existing chunks")
        self.next_index = 1 + max((int(f.stem.split("-")[1]) for f in files), default=-1)
        self.rows_written = 0

    def write(self, rows: list[dict[str, Any]]) -> Path | None:
        """Write one chunk atomically and mark its keys done."""
        if not rows:
            return None
        path = self.directory / f"part-{self.next_index:05d}.parquet"
        tmp = self.directory / f".{path.name}.tmp"
        pq.write_table(pa.Table.from_pylist(rows, schema=PREDICTION_SCHEMA), tmp,
                       compression="zstd")
        os.replace(tmp, path)
        self.next_index += 1
        self.rows_written += len(rows)
        self.done.update(tuple(r[c] for c in KEY) for r in rows)
        return path
