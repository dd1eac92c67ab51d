"""Ad-hoc SQL on results/freqgap.duckdb (`freqgap query`), read-only unless asked otherwise.

A query must not change the results or write any file: opening the database read-only stops
DDL and DML, but not `COPY … TO`, `EXPORT DATABASE`, `ATTACH`, `INSTALL`, or a spill file.
So, by default, (1) every statement must be a SELECT (SHOW and DESCRIBE are SELECTs; COPY,
EXPORT, ATTACH, SET, PRAGMA, CALL, EXPLAIN — whose ANALYZE runs a COPY — and the rest are
refused before anything runs), and (2) the connection itself is locked down with DuckDB's
own settings: file access only below the run's input directories (the views read their
Parquet there), no extension install or load, no temporary files (temp_directory ''), and
lock_configuration so that no statement can undo this. `allow_write=True` (`--allow-write`)
opens the database normally and runs any statement: the explicit opt-in.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from freqgap.errors import UsageError
from freqgap.gaps.inputs import GapsInputError
from freqgap.manifest import read_manifest

DB_NAME = "freqgap.duckdb"
ALLOWED_STATEMENTS = ("SELECT",)


def input_directories(results_dir: Path) -> list[str]:
    """The input directories a complete gaps run recorded (counts, instances, predictions)."""
    manifest = read_manifest(results_dir, stage=("gaps", "dynamics_gaps"))
    dirs = sorted({str(Path(i["path"]).resolve()) for i in manifest.get("inputs", [])
                   if isinstance(i, dict) and i.get("path")})
    return [d.rstrip("/") + "/" for d in dirs]


def _lock_down(con: duckdb.DuckDBPyConnection, allowed: list[str]) -> None:
    """No file access outside `allowed`, no extensions, no temp files; settings locked."""
    quoted = ", ".join("'" + d.replace("'", "''") + "'" for d in allowed)
    con.execute(f"SET allowed_directories = [{quoted}]::VARCHAR[]")
    con.execute("SET temp_directory = ''")
    for setting in ("enable_external_access", "autoinstall_known_extensions",
                    "autoload_known_extensions"):
        con.execute(f"SET {setting} = false")
    con.execute("SET lock_configuration = true")


def open_results(results_dir: Path, allow_write: bool = False) -> duckdb.DuckDBPyConnection:
    """A connection to the database `freqgap gaps` wrote: locked down, or writable if asked."""
    db = Path(results_dir) / DB_NAME
    if not db.exists():
        raise GapsInputError(f"{db}: not found; run `freqgap gaps` first")
    if allow_write:
        return duckdb.connect(str(db))
    allowed = input_directories(Path(results_dir))
    con = duckdb.connect(str(db), read_only=True)
    _lock_down(con, allowed)
    return con


def read_only_statements(con: duckdb.DuckDBPyConnection, sql: str, where: str) -> list:
    """The statements of `sql`, each checked to be a SELECT; the first other one is an error."""
    try:
        stmts = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise GapsInputError(f"{where}: {exc}") from exc
    if not stmts:
        raise UsageError(f"{where}: no SQL statement given")
    for i, st in enumerate(stmts, start=1):
        kind = st.type.name
        if kind not in ALLOWED_STATEMENTS:
            raise UsageError(f"{where}: statement {i} is {kind}, not a SELECT; the query path "
                             "is read-only (pass --allow-write to run it)")
    return stmts


def print_query(results_dir: Path, sql: str, allow_write: bool = False) -> None:
    """Run the statement(s) and print each result as a table."""
    where = str(Path(results_dir) / DB_NAME)
    con = open_results(results_dir, allow_write)
    try:
        stmts = con.extract_statements(sql) if allow_write else \
            read_only_statements(con, sql, where)
        for st in stmts:
            rel = con.sql(st.query)
            if rel is not None:
                rel.show(max_rows=50, max_width=200)
    except duckdb.Error as exc:
        raise GapsInputError(f"{where}: {exc}") from exc
    finally:
        con.close()
