"""Ad-hoc SQL on results/freqgap.duckdb, for users without the duckdb command-line tool."""

from __future__ import annotations

from pathlib import Path

import duckdb

from freqgap.gaps.inputs import GapsInputError


def open_results(results_dir: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the database `make gaps` wrote."""
    db = Path(results_dir) / "freqgap.duckdb"
    if not db.exists():
        raise GapsInputError(f"{db}: not found; run `make gaps` first")
    return duckdb.connect(str(db), read_only=True)


def print_query(results_dir: Path, sql: str) -> None:
    """Run one statement and print its result as a table."""
    con = open_results(results_dir)
    try:
        con.sql(sql).show(max_rows=50, max_width=200)
    except duckdb.Error as exc:
        raise GapsInputError(f"{results_dir / 'freqgap.duckdb'}: {exc}") from exc
    finally:
        con.close()
