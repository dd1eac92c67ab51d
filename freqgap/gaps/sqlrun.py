"""Run the SQL files of sql/ with their variables written in as literals.

The files read their parameters with getvariable('name') so that they also run as they are
in the duckdb CLI after `SET VARIABLE`. Here the calls are replaced by literals before
execution, so that the views stored in results/freqgap.duckdb carry their paths and answer
in a fresh session without any setup.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable

from freqgap.paths import SQL_DIR

_VAR = re.compile(r"getvariable\('([A-Za-z_][A-Za-z0-9_]*)'\)")
_VIEW = re.compile(r"CREATE\s+OR\s+REPLACE\s+(?:VIEW|TABLE)\s+([A-Za-z_][A-Za-z0-9_]*)", re.I)
_TABLE = re.compile(r"CREATE\s+TABLE\s+IF\s+NOT\s+EXISTS\s+([A-Za-z_][A-Za-z0-9_]*)", re.I)

def sql_literal(value: Any) -> str:
    """A DuckDB literal for a variable value (lists of strings become VARCHAR[])."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, (list, tuple)):
        if not all(isinstance(v, str) for v in value):
            raise TypeError(f"only lists of strings are supported, got {value!r}")
        return "[" + ", ".join(sql_literal(v) for v in value) + "]::VARCHAR[]"
    raise TypeError(f"no SQL literal for {value!r}")


def render(sql: str, variables: dict[str, Any], source: str = "<sql>") -> str:
    """Replace every getvariable('x') by the literal of variables['x']."""
    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in variables:
            raise KeyError(f"{source}: variable {name!r} is not set")
        return sql_literal(variables[name])
    return _VAR.sub(sub, sql)


def statements(sql: str) -> list[str]:
    """Split a file of our SQL into statements (no ';' occurs inside our strings)."""
    body = "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))
    return [s.strip() for s in body.split(";") if s.strip()]


def view_comments(sql_dir: Path = SQL_DIR) -> dict[str, str]:
    """name -> the comment block right above the statement defining it in sql/*.sql
    (`name:` dropped): the one description of a view, also for `freqgap query --list`."""
    found: dict[str, str] = {}
    for path in sorted(sql_dir.glob("*.sql")):
        comment: list[str] = []
        for line in path.read_text(encoding="utf-8").splitlines():
            text = line.strip()
            if text.startswith("--"):
                comment.append(text[2:].strip())
                continue
            match = _VIEW.search(text) or _TABLE.search(text)
            if match and comment and match.group(1) not in found:
                name = match.group(1)
                found[name] = re.sub(rf"^{re.escape(name)}(\s*/[^:]*)?:\s*", "", " ".join(comment))
            comment = []
    return found


def defined_name(statement: str) -> str | None:
    """The view or table a CREATE OR REPLACE statement defines."""
    m = _VIEW.search(statement)
    return m.group(1) if m else None


def run_sql_file(con, name: str, variables: dict[str, Any],
                 replace: dict[str, str] | None = None, sql_dir: Path = SQL_DIR) -> None:
    """Execute sql/<name>; statements defining a view listed in `replace` run its SQL instead.

    A name in `replace` that the file does not define is a bug (a view renamed on one side
    only) and raises before anything runs, instead of silently running the file's own SQL."""
    path = sql_dir / name
    stmts = statements(path.read_text(encoding="utf-8"))
    unknown = set(replace or ()) - {defined_name(s) for s in stmts}
    if unknown:
        raise KeyError(f"{path}: defines no {sorted(unknown)} to replace")
    for stmt in stmts:
        target = defined_name(stmt)
        if replace and target in replace:
            stmt = replace[target]
        con.execute(render(stmt, variables, str(path)))


def empty_view(name: str, columns: Iterable[tuple[str, str]]) -> str:
    """A view with the given columns and no rows, standing in for an absent dataset."""
    cols = ", ".join(f"NULL::{typ} AS {col}" for col, typ in columns)
    return f"CREATE OR REPLACE VIEW {name} AS SELECT {cols} WHERE false"


EMPTY_COUNTS = {
    "pairs": empty_view("pairs", [("t1", "VARCHAR"), ("t2", "VARCHAR"), ('"count"', "BIGINT")]),
    "triples": empty_view("triples", [("t1", "VARCHAR"), ("t2", "VARCHAR"), ("t3", "VARCHAR"),
                                      ('"count"', "BIGINT")]),
}
