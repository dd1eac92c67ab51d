"""First operands from the counts (SPEC §3), read with DuckDB filtered to the keys needed.

The pair table of a real corpus has billions of rows; only the pairs of one unit word
with a number are ever needed, so the filter runs inside DuckDB and only the top rows
come back to Python.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from freqgap.contract import check_parquet
from freqgap.errors import FreqgapError
from freqgap.instances.tasks import OperandRule, Task


class CountsError(FreqgapError):
    """The counts directory cannot provide what a task needs; the message names both."""


def dataset_glob(counts_dir: Path, name: str) -> str:
    """The Parquet glob of one counts dataset, with an error if it has no files."""
    base = Path(counts_dir) / name
    if not base.exists():
        raise CountsError(f"{counts_dir}: no {name}/ dataset (was the counting job run with "
                          f"max_order >= {2 if name == 'pairs' else 1}?)")
    if not any(base.rglob("*.parquet")):
        raise CountsError(f"{base}: no Parquet files")
    # an empty, damaged or wrongly typed file: one line naming it, not DuckDB's error
    check_parquet(name, base)
    return str(base / "**" / "*.parquet")


def _distinct_small_ints(terms: list[str], max_digits: int) -> list[int]:
    """Number terms → distinct integers with at most `max_digits` digits, ascending."""
    values = {int(t) for t in terms}
    return sorted(v for v in values if len(str(v)) <= max_digits)


def top_numbers(con: duckdb.DuckDBPyConnection, counts_dir: Path, rule: OperandRule) -> list[int]:
    """Of the `top` number terms with the highest ω (ties by term), the small integers."""
    # sum(count) per term: counts by training position hold a row per step bucket
    # (freqgap/counting/order_source.py); ω is then the count of all the data seen.
    rows = con.execute(
        f"SELECT term FROM read_parquet('{dataset_glob(counts_dir, 'unigrams')}') "
        "WHERE kind = 'number' AND regexp_full_match(term, '[0-9]+') "
        "GROUP BY term ORDER BY sum(count) DESC, term ASC LIMIT ?", [rule.top]).fetchall()
    return _distinct_small_ints([r[0] for r in rows], rule.max_digits)


def top_unit_numbers(con: duckdb.DuckDBPyConnection, counts_dir: Path, rule: OperandRule,
                     unit: str) -> list[int]:
    """Of the `top` (number, unit) pairs with the highest ω{x1,unit}, the small integers."""
    rows = con.execute(
        f"SELECT CASE WHEN t2 = $unit THEN t1 ELSE t2 END AS num "
        f"FROM read_parquet('{dataset_glob(counts_dir, 'pairs')}') "
        "WHERE (t2 = $unit AND regexp_full_match(t1, '[0-9]+')) "
        "   OR (t1 = $unit AND regexp_full_match(t2, '[0-9]+')) "
        "GROUP BY num ORDER BY sum(count) DESC, num ASC LIMIT $top",
        {"unit": unit, "top": rule.top}).fetchall()
    return _distinct_small_ints([r[0] for r in rows], rule.max_digits)


def select_x1(con: duckdb.DuckDBPyConnection, counts_dir: Path, task: Task,
              vocab: list[str] | None = None) -> list[int]:
    """x1 values of one task, with an error naming the task when there are none."""
    if task.kind == "unit":
        if vocab is not None and task.unit not in vocab:
            raise CountsError(
                f"task {task.name}: the unit word {task.unit!r} was not counted (counts "
                f"vocabulary: {', '.join(vocab)}); add it to conf/terms.yaml and recount")
        values = top_unit_numbers(con, counts_dir, task.rule, task.unit)
        if not values:
            raise CountsError(
                f"task {task.name}: no (number, {task.unit}) pairs with a number of at most "
                f"{task.rule.max_digits} digits in {counts_dir}/pairs; the corpus never has a "
                f"number within the window of '{task.unit}(s)'. Drop the task (--tasks) or "
                "count a larger corpus")
        return values
    values = top_numbers(con, counts_dir, task.rule)
    if not values:
        raise CountsError(f"task {task.name}: no number terms of at most {task.rule.max_digits} "
                          f"digits among the top {task.rule.top} in {counts_dir}/unigrams")
    return values
