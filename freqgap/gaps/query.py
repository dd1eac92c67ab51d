"""Ad-hoc SQL on a result's database (`freqgap query`), read-only unless asked otherwise.

A query must not change the results or write any file: opening the database read-only stops
DDL and DML, but not `COPY … TO`, `EXPORT DATABASE`, `ATTACH`, `INSTALL`, or a spill file.
So, by default, (1) every statement must be a SELECT (SHOW and DESCRIBE are SELECTs; COPY,
EXPORT, ATTACH, SET, PRAGMA, CALL, EXPLAIN — whose ANALYZE runs a COPY — and the rest are
refused before anything runs), and (2) the connection itself is locked down with DuckDB's
own settings: file access only below the run's input directories (the views read their
Parquet there), no extension install or load, no temporary files (temp_directory ''), and
lock_configuration so that no statement can undo this. `allow_write=True` (`--allow-write`)
opens the database normally and runs any statement: the explicit opt-in.

The result is that of `freqgap gaps` (freqgap.duckdb) or of `freqgap dynamics gaps`
(dynamics.duckdb), told apart by its manifest. Inputs that moved are followed and inputs
that changed are refused where a statement reads them (freqgap/gaps/query_inputs.py).
The hit lists of a count made with --hits are views of the session (sql/26_hits.sql), over
the counts where they are now, since the run's database knows nothing of them.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import duckdb

from freqgap.errors import FreqgapError, UsageError
from freqgap.gaps.inputs import GapsInputError
from freqgap.gaps.query_inputs import InputState, locate_inputs
from freqgap.manifest import MANIFEST_NAME, read_manifest

DB_NAME = "freqgap.duckdb"
DB_NAMES = {"gaps": DB_NAME, "dynamics_gaps": "dynamics.duckdb"}
WRITERS = {"gaps": "freqgap gaps", "dynamics_gaps": "freqgap dynamics gaps"}
ALLOWED_STATEMENTS = ("SELECT",)
HITS_SQL = "26_hits.sql"
HIT_VIEWS = ("hits", "hit_totals")


@dataclasses.dataclass
class Results:
    """An open result: the connection, what it is, and which views read which inputs."""

    con: duckdb.DuckDBPyConnection
    directory: Path
    stage: str
    where: str                                   # the database file, for messages
    inputs: list[InputState]
    reads: dict[str, set[str]]                   # view -> recorded input paths it reads
    no_hits: str | None = None                   # why there are no hit views, if there are none

    def close(self) -> None:
        self.con.close()


def _manifest(results_dir: Path) -> dict:
    if not results_dir.is_dir():
        raise GapsInputError(f"{results_dir}: no such directory; run `freqgap gaps` first "
                             "(or pass --results DIR)")
    if not any((results_dir / name).exists() for name in (MANIFEST_NAME, *DB_NAMES.values())):
        raise GapsInputError(f"{results_dir / DB_NAME}: not found; run `freqgap gaps` first "
                             "(or pass --results DIR)")
    try:
        return read_manifest(results_dir, stage=tuple(DB_NAMES))
    except FreqgapError as exc:
        raise GapsInputError(f"{exc}; `freqgap query` reads the output directory of "
                             "`freqgap gaps` or `freqgap dynamics gaps`") from None


def input_directories(results_dir: Path) -> list[str]:
    """The input directories a complete gaps run recorded (counts, instances, predictions)."""
    states = locate_inputs(results_dir, _manifest(Path(results_dir)))
    dirs = sorted({str(Path(s.path or s.recorded).resolve()) for s in states})
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


def _connect(db: Path, read_only: bool, writer: str) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(str(db), read_only=read_only)
    except duckdb.Error as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise GapsInputError(f"{db}: not a readable DuckDB database ({first}); it is damaged "
                             f"or truncated: rerun `{writer}` into a fresh directory") from None


def _sql_text(path: str) -> str:
    return path.replace("'", "''")


def _repoint_and_map(con: duckdb.DuckDBPyConnection,
                     states: list[InputState]) -> dict[str, set[str]]:
    """Views over moved inputs redefined for this session (TEMP views shadow the stored
    ones, and the views built on them follow); returns each view's inputs, transitively."""
    views = dict(con.execute("SELECT view_name, sql FROM duckdb_views() "
                             "WHERE NOT internal AND NOT temporary").fetchall())
    moved = [s for s in states if s.moved]
    for name, sql in views.items():
        new = sql
        for s in moved:
            new = new.replace(f"'{_sql_text(s.recorded)}/", f"'{_sql_text(str(s.path))}/")
        if new != sql:
            con.execute(re.sub(r"^\s*CREATE\s+VIEW", "CREATE OR REPLACE TEMP VIEW", new, count=1,
                               flags=re.I))
    reads = {name: {s.recorded for s in states
                    if f"'{_sql_text(s.recorded)}/" in sql} for name, sql in views.items()}
    names = re.compile(r"\b(" + "|".join(map(re.escape, sorted(views))) + r")\b") if views else None
    uses = {name: set(names.findall(sql)) - {name} if names else set()
            for name, sql in views.items()}
    changed = True
    while changed:                                 # the inputs of the views a view uses
        changed = False
        for name in views:
            more = set().union(*(reads[u] for u in uses[name])) - reads[name] if uses[name] else set()
            if more:
                reads[name] |= more
                changed = True
    return reads


def _hits_glob(states: list[InputState]) -> tuple[InputState | None, str | None, str | None]:
    """(the counts input, the Parquet glob of its hits/, why there is none): hits/ is taken
    only from a finished count whose manifest lists its files, with the contract's schema."""
    from freqgap.contract import parquet_files
    from freqgap.gaps.inputs import dataset_glob
    from freqgap.manifest import FILES_FIELD

    counts = next((s for s in states if s.stage == "count_terms"), None)
    rerun = "rerun `freqgap count … --hits KEYS_FILE` (and the stages after it)"
    if counts is None:
        return None, None, "this result records no counts input, so it has no hit lists"
    if counts.path is None:
        return counts, None, (f"the counts {counts.recorded} are gone (not there, nor where "
                              "they were relative to the results); put them back")
    where = counts.path / "hits"
    if not where.exists():
        return counts, None, (f"the counts {counts.path} have no hit lists (hits/): they were "
                              f"made without --hits; {rerun}")
    try:
        manifest = read_manifest(counts.path, stage="count_terms", files=False)
        listed = {k for k in manifest.get(FILES_FIELD) or {} if k.startswith("hits/")}
        found = {p.relative_to(counts.path).as_posix() for p in parquet_files(where)}
        if not listed or "hits" not in (manifest.get("config") or {}) or listed != found:
            raise FreqgapError(f"{where}: not the hit lists its {MANIFEST_NAME} records "
                               f"(left from another run, or changed since); {rerun}")
        return counts, dataset_glob(counts.path, "hits", contract="hits"), None
    except FreqgapError as exc:
        return counts, None, str(exc)


def _define_hit_views(con: duckdb.DuckDBPyConnection, states: list[InputState],
                      reads: dict[str, set[str]]) -> str | None:
    """The views of sql/26_hits.sql for this session (TEMP: the database is not changed)
    when the counts hold hit lists; returns why not otherwise."""
    from freqgap.gaps.sqlrun import render, statements
    from freqgap.paths import SQL_DIR

    counts, files, why = _hits_glob(states)
    if files is None:
        return why
    path = SQL_DIR / HITS_SQL
    try:
        for stmt in statements(path.read_text(encoding="utf-8")):
            stmt = re.sub(r"^\s*CREATE\s+OR\s+REPLACE\s+VIEW", "CREATE OR REPLACE TEMP VIEW",
                          stmt, count=1, flags=re.I)
            con.execute(render(stmt, {"hits_files": [files]}, str(path)))
    except duckdb.Error as exc:         # a damaged file: only a query naming hits fails
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        return f"{counts.path / 'hits'}: cannot read the hit lists ({first})"
    for name in HIT_VIEWS:
        reads[name] = {counts.recorded}
    return None


def open_result(results_dir: Path, allow_write: bool = False) -> Results:
    """The database of a finished gaps (or dynamics gaps) run, locked down unless
    `allow_write`, its views pointing at where the inputs are now."""
    results_dir = Path(results_dir)
    manifest = _manifest(results_dir)
    stage = manifest["stage"]
    db = results_dir / DB_NAMES[stage]
    if not db.is_file():
        raise GapsInputError(f"{db}: not found although {results_dir}/_manifest.json records "
                             f"a finished run; rerun `{WRITERS[stage]}`")
    states = locate_inputs(results_dir, manifest)
    con = _connect(db, read_only=not allow_write, writer=WRITERS[stage])
    try:
        reads = _repoint_and_map(con, states)
        no_hits = _define_hit_views(con, states, reads)
        if not allow_write:
            allowed = sorted({str(Path(s.path or s.recorded).resolve()).rstrip("/") + "/"
                              for s in states})
            _lock_down(con, allowed)
    except BaseException:
        con.close()
        raise
    return Results(con, results_dir, stage, str(db), states, reads, no_hits)


def open_results(results_dir: Path, allow_write: bool = False) -> duckdb.DuckDBPyConnection:
    """A connection to the database `freqgap gaps` wrote: locked down, or writable if asked."""
    return open_result(results_dir, allow_write).con


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


def _views(names: list[str], verb: str = "") -> str:
    """'the view gaps reads' / 'the views counts, pairs read' (or with another verb)."""
    one = len(names) == 1
    verb = verb or ("reads" if one else "read")
    return f"the view{'' if one else 's'} {', '.join(names)} {verb}"


def check_inputs_read(result: Results, sql: str, allow_mixed: bool = False) -> list[str]:
    """Refuse a statement that reads, through its views, an input that is gone or that
    changed since the result was made; with `allow_mixed` a changed one is accepted and
    the returned labels say what is mixed."""
    used = {w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", sql) if w in result.reads}
    labels = []
    for state in result.inputs:
        views = sorted(v for v in used if state.recorded in result.reads[v])
        if not views:
            continue
        if state.path is None:
            raise GapsInputError(
                f"{result.where}: {_views(views)} {state.recorded}, which is gone "
                "(not there, nor where it was relative to the results); put it back, or "
                "query only the stored tables (see `freqgap query --list`)")
        if state.changed:
            what = (f"{state.path} changed since this result was made (its fingerprint "
                    f"{(state.recorded_fp or '?')[:12]} then, {(state.current_fp or 'none')[:12]} now)")
            if not allow_mixed:
                raise UsageError(
                    f"{result.where}: {_views(views, 'would read')} {what}, beside tables "
                    f"computed from the old one; rerun `{WRITERS[result.stage]}`, or pass "
                    "--allow-mixed to run it anyway with the output labelled")
            labels.append(f"MIXED INPUTS: {', '.join(views)} read {what}")
    return labels


def print_query(results_dir: Path, sql: str, allow_write: bool = False) -> None:
    """Run the statement(s) and print each result as a table."""
    from freqgap.gaps.query_output import QueryOutput

    run_query(results_dir, sql, QueryOutput(), allow_write=allow_write)


def run_query(results_dir: Path, sql: str, output, allow_write: bool = False,
              allow_mixed: bool = False) -> None:
    """Run the statement(s), each result handed to `output` (freqgap.gaps.query_output)."""
    result = open_result(results_dir, allow_write)
    try:
        stmts = result.con.extract_statements(sql) if allow_write else \
            read_only_statements(result.con, sql, result.where)
        if len(stmts) > 1 and not output.many_ok():
            raise UsageError(f"{len(stmts)} statements: --out and --format "
                             f"{output.fmt} take one; run them one at a time")
        labels = [check_inputs_read(result, st.query, allow_mixed) for st in stmts]
        for st, label in zip(stmts, labels):
            for line in label:
                print(f"freqgap query: warning: {line}", file=sys.stderr, flush=True)
            rel = result.con.sql(st.query)
            if rel is not None:
                output.write(rel, label)
    except duckdb.Error as exc:
        missing = re.search(r"Table with name (\w+) does not exist", str(exc))
        if result.no_hits and missing and missing.group(1).lower() in HIT_VIEWS:
            raise GapsInputError(f"{result.where}: no view {missing.group(1)}: "
                                 f"{result.no_hits}") from None
        raise GapsInputError(f"{result.where}: {exc}") from exc
    finally:
        result.close()


def catalog_text(results_dir: Path, width: int = 100) -> str:
    """`freqgap query --list`: the views and tables meant for questions, each with its
    description from sql/*.sql, then the internal steps by name only."""
    from freqgap.config import load_conf
    from freqgap.gaps.sqlrun import view_comments

    result = open_result(Path(results_dir))
    try:
        present = dict(result.con.execute(
            "SELECT view_name, 'view' FROM duckdb_views() WHERE NOT internal AND NOT temporary "
            "UNION ALL SELECT table_name, 'table' FROM duckdb_tables() WHERE NOT temporary"
        ).fetchall())
        present.update({name: "view" for name in HIT_VIEWS if name in result.reads})
    finally:
        result.close()
    wanted = list((load_conf("gaps").get("query") or {}).get(
        "dynamics" if result.stage == "dynamics_gaps" else "views") or [])
    wanted += [name for name in HIT_VIEWS if name not in wanted]
    comments = view_comments()
    lines = [f"{result.where}: for questions (e.g. freqgap query \"SELECT * FROM gaps\" "
             "--columns task,k,freq_def,delta,ci_low,ci_high)"]
    for name in (n for n in wanted if n in present):
        text = comments.get(name, "")
        text = text if len(text) <= width else text[:width - 1].rsplit(" ", 1)[0] + " …"
        lines.append(f"  {name:<22} {present[name]:<5}  {text}")
    internal = sorted(n for n in present if n not in wanted)
    lines.append(f"internal steps ({len(internal)}): {', '.join(internal)}")
    return "\n".join(lines)
