"""Reading the prompts file and summarising prediction rows (shared by predict and merge).

Kept apart from freqgap.inference.predict so that the shard merge (freqgap.inference.shards)
needs no import of the prediction loop: predict imports shards, never the reverse.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from freqgap.contract import DATASETS, arrow_type
from freqgap.errors import FreqgapError

REQUIRED_COLUMNS = ("task", "k", "seed", "instance_id", "prefix", "prompt", "answer")


class PromptsError(FreqgapError):
    """The prompts file is missing or lacks columns; the message names the file."""


def read_prompts_path(path: str | Path) -> Path:
    """prompts.parquet itself, given it or the instances directory holding it."""
    path = Path(path)
    return path / "prompts.parquet" if path.is_dir() else path


def read_prompts(path: str | Path, columns: list[str] | None = None) -> pa.Table:
    """prompts.parquet (or a directory holding it), checked for the DATA.md columns."""
    path = read_prompts_path(path)
    if not path.exists():
        raise PromptsError(f"{path}: prompts file not found (run `freqgap instances` first)")
    try:
        names = pq.read_schema(path).names
    except (OSError, pa.ArrowInvalid) as exc:
        raise PromptsError(f"{path}: not a readable Parquet file ({exc}); pass the "
                           "instances stage's prompts.parquet") from None
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        raise PromptsError(f"{path}: missing column(s) {', '.join(missing)}; expected "
                           f"{', '.join(REQUIRED_COLUMNS)} (docs/DATA.md, instances/)")
    schema = pq.read_schema(path)
    spec = DATASETS["prompts"]
    wrong = [f"{c} is {schema.field(c).type}, expected {spec.column(c).type}"
             for c in REQUIRED_COLUMNS if schema.field(c).type != arrow_type(spec.column(c).type)]
    if wrong:
        raise PromptsError(f"{path}: column {'; '.join(wrong)} (docs/DATA.md, prompts); "
                           "rebuild it with `freqgap instances`")
    table = pq.read_table(path, columns=columns or list(REQUIRED_COLUMNS))
    if table.num_rows == 0:
        raise PromptsError(f"{path}: no prompts (0 rows); rebuild it with `freqgap instances` "
                           "(a grid or --limit that leaves no test items?)")
    return table


def summarize(table: pa.Table) -> dict[str, Any]:
    """Row totals and accuracies for a manifest."""
    def acc(col: str, t: pa.Table) -> float | None:
        if t.num_rows == 0:
            return None
        return round(float(pc.mean(pc.cast(t.column(col), pa.float64())).as_py()), 6)

    per_task = {}
    for task in sorted(set(table.column("task").to_pylist())):
        t = table.filter(pc.equal(table.column("task"), task))
        per_task[task] = {"rows": t.num_rows, "accuracy": acc("correct", t),
                          "accuracy_lenient": acc("correct_lenient", t)}
    return {"rows": table.num_rows, "accuracy": acc("correct", table),
            "accuracy_lenient": acc("correct_lenient", table), "per_task": per_task}
