"""The suites' rows in the Parquet shapes of docs/DATA.md, so the DuckDB gaps apply unchanged.

instances: the suite's instance with question text and gold answer; the arithmetic
operand columns x1, x2, x3, y are null. instance_terms: one row per (task, instance,
freq_def) with the sorted term set. predictions: one row per (model, revision, task, k,
seed, instance) with `correct`; the suites have no lenient parse, so the lenient columns
repeat the strict ones. Files are written under a temporary name and renamed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from freqgap.contract import DATASETS

# The shapes of docs/DATA.md, declared once in freqgap/contract.py (int64 integers).
INSTANCES = DATASETS["instances"].schema()
INSTANCE_TERMS = DATASETS["instance_terms"].schema()
PREDICTIONS = DATASETS["suite_predictions"].schema()


def instance_row(task: str, instance_id: int, question: str, answer: str) -> dict[str, Any]:
    return {"task": task, "instance_id": instance_id, "x1": None, "x2": None, "x3": None,
            "y": None, "question": question, "answer": answer}


def term_rows(task: str, instance_id: int, defs: dict[str, tuple[str, ...]]) -> list[dict[str, Any]]:
    """One instance_terms row per definition (terms sorted as strings, padded with null)."""
    rows = []
    for freq_def, terms in defs.items():
        if list(terms) != sorted(terms) or not 1 <= len(terms) <= 3:
            raise ValueError(f"{task}/{instance_id}/{freq_def}: terms {terms} not 1-3 sorted terms")
        padded = list(terms) + [None] * (3 - len(terms))
        rows.append({"task": task, "instance_id": instance_id, "freq_def": freq_def,
                     "n_terms": len(terms), "t1": padded[0], "t2": padded[1], "t3": padded[2]})
    return rows


def prediction_row(model: str, revision: str | None, task: str, k: int, instance_id: int,
                   continuation: str, answer: str, correct: bool, seed: int = 0) -> dict[str, Any]:
    return {"model": model, "revision": revision, "task": task, "k": k, "seed": seed,
            "instance_id": instance_id, "continuation": continuation, "answer": answer,
            "answer_lenient": answer, "correct": bool(correct), "correct_lenient": bool(correct)}


def write_table(rows: Iterable[dict[str, Any]], schema: pa.Schema, path: str | Path) -> int:
    """Write rows with `schema` to `path` atomically; returns the row count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(list(rows), schema=schema)
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)
    return table.num_rows


def write_frame(rows: Iterable[dict[str, Any]], path: str | Path) -> int:
    """Write suite-specific detail rows (schema inferred) atomically; returns the row count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(list(rows))
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)
    return table.num_rows
