"""The Δ computation over one DuckDB connection: the gaps stage's public steps.

`freqgap gaps` (run.py) and the per-checkpoint gaps of freqgap.dynamics both go through
these functions, so the checks, the SQL files of sql/ (where Δ is defined, once) and the
bootstrap/logistic fills exist once. A caller may put its own statement in place of the two
inputs of Δ: the predictions view (PREDICTIONS_VIEW) and the ω table (OMEGA_TABLE); the
statement must define that name, and the SQL file must define it too (sqlrun.run_sql_file
refuses a replacement for a name the file does not define), so a rename here cannot go
unnoticed by a caller.

Order of calls: `database` (a connection), `sql_variables`, `load_inputs`, then per
computation `select_predictions` (only to swap the predictions), `compute_per_key`,
`compute_gaps`, `fill_intervals`.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import duckdb
import pandas as pd
import pyarrow as pa

from freqgap.contract import DATASETS
from freqgap.gaps.bootstrap import GROUP, bootstrap_intervals
from freqgap.gaps.inputs import GapsInputError, GapsInputs
from freqgap.gaps.logistic import logistic_fits
from freqgap.gaps.options import GapsOptions
from freqgap.gaps.sqlrun import EMPTY_COUNTS, defined_name, run_sql_file

# The two inputs of Δ a caller may define itself (sql/20_selection.sql, sql/25_per_key.sql).
PREDICTIONS_VIEW = "selected_predictions"
OMEGA_TABLE = "key_omega"

# Columns each dataset must have (freqgap/contract.py, docs/DATA.md).
REQUIRED = {f"{name}_files": DATASETS[name].column_names for name in
            ("unigrams", "pairs", "triples", "instances", "instance_terms", "predictions")}

# check view -> what it means, for the error message.
CHECKS = {
    "check_duplicate_predictions": "two or more prediction rows for one (model, revision, "
                                   "task, k, seed, instance_id)",
    "check_unknown_instances": "predictions for instances that the instances do not contain",
    "check_null_correct": "prediction rows with NULL in correct or a key column",
    "check_instance_terms": "instance_terms rows that break docs/DATA.md (arity, empty or "
                            "unsorted terms)",
    "check_duplicate_instance_terms": "two term keys for one (task, instance, freq_def)",
    "check_missing_terms": "instances without a term key under a definition their task has",
}


def tmp_path(path: Path) -> Path:
    """The name a file is written under before it is renamed to path."""
    return path.with_name(f".{path.name}.tmp")


@contextlib.contextmanager
def database(db_path: Path, opts: GapsOptions, spill_dir: Path
             ) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to a temporary database file that becomes db_path only when the block
    succeeds; on any error the temporary file and the spill directory are removed, so no
    half-built database is ever left under its real name."""
    tmp_db = tmp_path(db_path)
    wal = tmp_db.with_name(tmp_db.name + ".wal")
    for p in (tmp_db, wal):
        p.unlink(missing_ok=True)
    con = _connect(tmp_db, opts, spill_dir)
    try:
        yield con
    except BaseException:
        con.close()
        for p in (tmp_db, wal):
            p.unlink(missing_ok=True)
        shutil.rmtree(spill_dir, ignore_errors=True)
        raise
    con.close()
    tmp_db.replace(db_path)
    db_path.with_name(db_path.name + ".wal").unlink(missing_ok=True)
    shutil.rmtree(spill_dir, ignore_errors=True)


def load_inputs(con, inputs: GapsInputs, opts: GapsOptions, variables: dict[str, Any]) -> None:
    """Check every dataset and define the input and selection views (sql/10, 15, 20); raises
    GapsInputError naming the file on bad input."""
    _check_inputs(con, inputs)
    replace = {name: EMPTY_COUNTS[name] for name in inputs.missing}
    run_sql_file(con, "10_inputs.sql", variables, replace)
    run_sql_file(con, "15_checks.sql", variables)
    _run_checks(con, inputs)
    run_sql_file(con, "20_selection.sql", variables)
    _check_selection(con, inputs, opts)


def _statement_for(name: str, statement: str | None) -> dict[str, str]:
    """{name: statement} for run_sql_file, after checking the statement defines name."""
    if statement is None:
        return {}
    if defined_name(statement) != name:
        raise ValueError(f"replacement statement defines {defined_name(statement)!r}, "
                         f"not {name!r}: {statement[:80]}")
    return {name: statement}


def select_predictions(con, variables: dict[str, Any], predictions: str | None = None) -> None:
    """Redefine the selection views of sql/20_selection.sql, with `predictions` (a statement
    defining PREDICTIONS_VIEW) in place of the file's own when given."""
    run_sql_file(con, "20_selection.sql", variables, _statement_for(PREDICTIONS_VIEW, predictions))


def compute_per_key(con, inputs: GapsInputs, variables: dict[str, Any],
                    omega: str | None = None) -> None:
    """ω and accuracy per key (sql/25_per_key.sql), with `omega` (a statement defining
    OMEGA_TABLE) in place of the lookup in the count tables when given."""
    run_sql_file(con, "25_per_key.sql", variables, _statement_for(OMEGA_TABLE, omega))
    _check_counts_unique(con, inputs)


def compute_gaps(con, opts: GapsOptions, variables: dict[str, Any]) -> None:
    """Δ and ρ per group (sql/30_gaps.sql); raises where a bin rule leaves an end bin empty."""
    run_sql_file(con, "30_gaps.sql", variables)
    _check_bins(con, opts)


def fill_intervals(con, opts: GapsOptions) -> None:
    """The bootstrap intervals and logistic slopes of the groups compute_gaps defined."""
    _insert_intervals(con, opts)
    _insert_logistic(con, opts)


def _connect(db_path: Path, opts: GapsOptions, spill_dir: Path) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with bounded memory that spills to spill_dir."""
    con = duckdb.connect(str(db_path))
    if opts.memory_limit:
        con.execute(f"SET memory_limit = '{opts.memory_limit}'")
    if opts.threads:
        con.execute(f"SET threads = {int(opts.threads)}")
    spill_dir.mkdir(parents=True, exist_ok=True)
    con.execute(f"SET temp_directory = '{spill_dir}'")
    con.execute("SET preserve_insertion_order = false")
    # DuckDB's own bar during the long scan of the count tables, on a terminal only.
    con.execute(f"SET enable_progress_bar = {str(sys.stderr.isatty()).lower()}")
    return con


def sql_variables(inputs: GapsInputs, opts: GapsOptions) -> dict[str, Any]:
    """The getvariable() values of sql/10..30: dataset globs, filters, binning."""
    variables: dict[str, Any] = dict(inputs.datasets)
    variables.update(models=list(opts.models or []), tasks=list(opts.tasks or []),
                     freq_defs=list(opts.freq_defs or []), binning=opts.binning,
                     bin_percent=int(opts.bin_percent), min_seen_keys=int(opts.min_seen_keys))
    return variables


def _check_schema(con, name: str, glob: str, where: str) -> int:
    """Error naming `where` when a dataset lacks a DATA.md column; returns its row count."""
    try:
        cols = {r[0] for r in con.execute(
            "DESCRIBE SELECT * FROM read_parquet(?, union_by_name = true)", [glob]).fetchall()}
        missing = [c for c in REQUIRED[name] if c not in cols]
        if missing:
            raise GapsInputError(f"{where}: missing column(s) {missing} (docs/DATA.md)")
        return con.execute("SELECT count(*) FROM read_parquet(?, union_by_name = true)",
                           [glob]).fetchall()[0][0]
    except duckdb.Error as exc:
        raise GapsInputError(f"{where}: cannot read Parquet: {exc}") from exc


def _check_inputs(con, inputs: GapsInputs) -> None:
    """Every dataset has its columns and rows, each predictions directory included."""
    for name, globs in inputs.datasets.items():
        if name == "predictions_files":
            continue
        if _check_schema(con, name, globs[0], globs[0]) == 0:
            if name in ("pairs_files", "triples_files"):
                # Possible for a tiny corpus: every such key is then unseen, and counted.
                print(f"WARNING: {globs[0]}: no rows; every key of that arity is unseen",
                      file=sys.stderr)
                continue
            raise GapsInputError(f"{globs[0]}: dataset is empty")
    for d, g in zip(inputs.prediction_dirs, inputs.datasets["predictions_files"]):
        if _check_schema(con, "predictions_files", g, str(d)) == 0:
            raise GapsInputError(f"{d}: predictions directory holds no rows")


def _raise_if_any(con, view: str, meaning: str,
                  source: Callable[[pd.DataFrame], str], hint: str = "") -> None:
    """Stop with an error naming the file(s) when the check view `view` lists any row."""
    df = con.execute(f"SELECT * FROM {view} LIMIT 5").df()
    if df.empty:
        return
    n = con.execute(f"SELECT count(*) FROM {view}").fetchall()[0][0]
    example = df.drop(columns=[c for c in ("files", "filename") if c in df]).head(3)
    raise GapsInputError(f"{source(df)}: {meaning}: {n} case(s), e.g.\n"
                         f"{example.to_string(index=False)}\n{hint}(see SELECT * FROM {view})")


def _run_checks(con, inputs: GapsInputs) -> None:
    """Stop on the first non-empty check view of 15_checks.sql, naming the file(s) involved."""
    def files(df: pd.DataFrame) -> str:
        if "files" in df:
            return ", ".join(sorted({str(f) for v in df["files"] for f in list(v)}))
        if "filename" in df:
            return ", ".join(sorted({str(f) for f in df["filename"]}))
        return str(inputs.instances_dir)
    for view, meaning in CHECKS.items():
        _raise_if_any(con, view, meaning, files)


def _check_selection(con, inputs: GapsInputs, opts: GapsOptions) -> None:
    """The model/task filters select something; keys of each arity have a count table."""
    if con.execute("SELECT count(*) FROM selected_predictions").fetchall()[0][0] == 0:
        found = con.execute("SELECT list(DISTINCT model), list(DISTINCT task) FROM predictions"
                            ).fetchall()[0]
        raise GapsInputError(f"no predictions for models={opts.models} tasks={opts.tasks}; "
                             f"found models {sorted(found[0])}, tasks {sorted(found[1])}")
    arities = {r[0] for r in con.execute("SELECT DISTINCT n_terms FROM selected_terms").fetchall()}
    for arity, name in ((2, "pairs"), (3, "triples")):
        if arity in arities and name in inputs.missing:
            raise GapsInputError(
                f"{inputs.counts_dir}: no {name}/ dataset, but the instances have keys of "
                f"{arity} terms; count with max_order {arity}, or leave out those frequency "
                "definitions (freq_defs in conf/gaps.yaml)")


def _check_counts_unique(con, inputs: GapsInputs) -> None:
    _raise_if_any(con, "check_counted_twice", "key(s) counted in more than one row (a broken "
                  "counts output)", lambda df: str(inputs.counts_dir / df["dataset"].iloc[0]))


def _check_bins(con, opts: GapsOptions) -> None:
    """Stop, naming the group, where quantile edges leave the bottom or top bin empty: the
    original code used an accuracy of 0 there; Δ is undefined."""
    rows = con.execute("SELECT * FROM check_empty_bins").df()
    if rows.empty:
        return
    r = rows.iloc[0]
    which = "bottom" if r["n_bottom"] == 0 else "top"
    raise GapsInputError(
        f"gaps: group {r['model']}/{r['revision']}/{r['task']}/k={int(r['k'])}/{r['freq_def']} "
        f"(and {len(rows) - 1} more): {opts.binning} binning left the {which} bin empty "
        f"({int(r['n_keys'])} seen keys; edges {r['low_edge']:g} and {r['high_edge']:g}: many "
        "keys share the extreme ω), so Δ is undefined (the original code printed 0 here); "
        "use the default rank binning")


def _insert_intervals(con, opts: GapsOptions) -> None:
    """Fill gap_intervals: resamples drawn in numpy, binned by the SQL of 30_gaps.sql."""
    ranked = con.execute("""
        SELECT r.model, r.revision, r.task, r.k, r.freq_def, r.pos, r.omega, r.accuracy
        FROM ranked_keys r
        SEMI JOIN (SELECT * FROM gap_points WHERE delta IS NOT NULL) g
          USING (model, revision, task, k, freq_def)""").df()
    seeds = None
    if opts.interval == "seeds+keys":
        seeds = con.execute("""
            SELECT r.model, r.revision, r.task, r.k, r.freq_def, r.pos, s.seed, s.n_correct,
                   s.n_rows
            FROM ranked_keys r
            JOIN per_key_seed s USING (model, revision, task, k, freq_def, key)
            SEMI JOIN (SELECT * FROM gap_points WHERE delta IS NOT NULL) g
              USING (model, revision, task, k, freq_def)""").df()
    iv = bootstrap_intervals(con, ranked, seeds, opts.interval, opts.boot_reps, opts.boot_seed,
                             opts.boot_level)
    con.execute("DELETE FROM gap_intervals")
    if iv.empty:
        return
    con.register("boot_intervals", iv)
    con.execute(f"""
        INSERT INTO gap_intervals
        SELECT {', '.join(GROUP)},
               CASE WHEN isnan(ci_low) THEN NULL ELSE ci_low END,
               CASE WHEN isnan(ci_high) THEN NULL ELSE ci_high END,
               ci_level, ci_kind, boot_reps, boot_discarded, boot_seed
        FROM boot_intervals""")
    con.unregister("boot_intervals")


def _insert_logistic(con, opts: GapsOptions) -> None:
    """Fill gap_logistic: the slope of correctness on log10 ω per group (logistic.py)."""
    per_key = con.execute("SELECT model, revision, task, k, freq_def, omega, n_correct, n_rows "
                          "FROM per_key").df()
    fits = logistic_fits(per_key, opts.boot_level)
    con.execute("DELETE FROM gap_logistic")
    if fits.empty:
        return
    con.register("fits", pa.Table.from_pandas(fits, preserve_index=False))   # NaN -> NULL
    con.execute("INSERT INTO gap_logistic SELECT * FROM fits")
    con.unregister("fits")
