"""Helpers that write small corpora in every accepted format for the counting tests."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow.parquet as pq
import zstandard

from freqgap.counting.reference import ReferenceCounts, count_texts
from freqgap.counting.rules import TermRules


def write_jsonl(path: Path, texts: list[str], compress: str | None = None) -> Path:
    """Pile-format records, plain or compressed by the file name's suffix."""
    data = "".join(json.dumps({"text": t, "meta": {"pile_set_name": "Test"}}) + "\n" for t in texts)
    raw = data.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    if str(path).endswith(".zst"):
        raw = zstandard.ZstdCompressor(level=3).compress(raw)
    elif str(path).endswith(".gz"):
        raw = gzip.compress(raw, mtime=0)
    path.write_bytes(raw)
    return path


def read_counts(directory: Path) -> dict[str, dict]:
    """The three output datasets as dictionaries keyed like ReferenceCounts."""
    uni = {r["term"]: r["count"] for r in pq.read_table(directory / "unigrams").to_pylist()}
    pairs = {(r["t1"], r["t2"]): r["count"] for r in pq.read_table(directory / "pairs").to_pylist()}
    triples = {(r["t1"], r["t2"], r["t3"]): r["count"]
               for r in pq.read_table(directory / "triples").to_pylist()}
    return {"unigrams": uni, "pairs": pairs, "triples": triples}


def as_dicts(ref: ReferenceCounts) -> dict[str, dict]:
    return {"unigrams": dict(ref.unigrams), "pairs": dict(ref.pairs), "triples": dict(ref.triples)}


def reference(texts: list[str], rules: TermRules | None = None) -> dict[str, dict]:
    return as_dicts(count_texts(texts, rules or TermRules()))
