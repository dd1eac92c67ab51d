"""`make gaps` end to end: inputs → DuckDB (sql/) → bootstrap → files under results/.

Output is never half-written: the old manifest is removed first, every file is written
under a temporary name and renamed, stale tables/plots of earlier runs are removed, and
`_manifest.json` is written last.
"""

from __future__ import annotations

import dataclasses
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Callable

import duckdb
import pandas as pd
import pyarrow as pa

from freqgap.contract import DATASETS, check_written
from freqgap.analysis.gaps import draw_all, render_tables
from freqgap.gaps.bootstrap import GROUP, bootstrap_intervals
from freqgap.gaps.logistic import logistic_fits
from freqgap.gaps.inputs import GapsInputError, GapsInputs, resolve_inputs
from freqgap.gaps.options import GapsOptions
from freqgap.gaps.sqlrun import EMPTY_COUNTS, run_sql_file
from freqgap.manifest import (MANIFEST_NAME, atomic_write_text, build_manifest, now_iso,
                              write_manifest)
from freqgap.progress import Progress

DB_NAME = "freqgap.duckdb"
PLOTS_DIR = "plots"

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


@dataclasses.dataclass
class GapsResult:
    """What a run wrote, with the two result tables loaded (they are small)."""

    results_dir: Path
    files: dict[str, Path]
    plots: list[Path]
    gaps: pd.DataFrame
    per_key: pd.DataFrame
    manifest: dict[str, Any]


def _tmp(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp")


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


def _variables(inputs: GapsInputs, opts: GapsOptions) -> dict[str, Any]:
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


def _write_parquet(con, query: str, path: Path) -> None:
    tmp = _tmp(path)
    con.execute(f"COPY ({query}) TO '{tmp}' (FORMAT parquet, COMPRESSION zstd)")
    tmp.replace(path)


def _remove_stale(results: Path, keep: set[Path]) -> None:
    """Tables and plots of earlier runs that this run did not write."""
    for p in list(results.glob("table_*.md")) + list(results.glob("table_*.tex")) + \
            list((results / PLOTS_DIR).glob("*.png")):
        if p not in keep:
            p.unlink()


def run_gaps(opts: GapsOptions, log: Callable[[str], None] | None = None) -> GapsResult:
    """Compute per_key and gaps and write every output; raises GapsInputError on bad input."""
    started = now_iso()
    opts.validate()
    inputs = resolve_inputs(opts)
    results = opts.path(opts.results).resolve()
    results.mkdir(parents=True, exist_ok=True)
    (results / MANIFEST_NAME).unlink(missing_ok=True)
    progress = Progress("gaps", total=6, unit="steps", interval=0.0)
    timings: dict[str, float] = {}
    clock = [time.monotonic()]

    def step(name: str, text: str) -> None:
        """Report a finished step with its duration (kept for the manifest)."""
        now = time.monotonic()
        timings[name] = round(now - clock[0], 3)
        clock[0] = now
        progress.update(advance=1, extra=f"{text} ({timings[name]:.1f} s)", force=True)
        if log:
            log(text)

    db_path = results / DB_NAME
    tmp_db = _tmp(db_path)
    for p in (tmp_db, tmp_db.with_name(tmp_db.name + ".wal")):
        p.unlink(missing_ok=True)
    spill = opts.path(opts.temp_directory) if opts.temp_directory else results / ".duckdb_tmp"
    con = _connect(tmp_db, opts, spill)
    try:
        variables = _variables(inputs, opts)
        _check_inputs(con, inputs)
        replace = {name: EMPTY_COUNTS[name] for name in inputs.missing}
        run_sql_file(con, "10_inputs.sql", variables, replace)
        run_sql_file(con, "15_checks.sql", variables)
        _run_checks(con, inputs)
        run_sql_file(con, "20_selection.sql", variables)
        _check_selection(con, inputs, opts)
        step("check_inputs", "inputs checked; now looking up ω of every key in the count "
                             "tables (the long step)")
        run_sql_file(con, "25_per_key.sql", variables)
        _check_counts_unique(con, inputs)
        n_keys = con.execute("SELECT count(*) FROM key_omega").fetchall()[0][0]
        step("per_key", f"ω of {n_keys} keys looked up, per-key table built")
        run_sql_file(con, "30_gaps.sql", variables)
        _check_bins(con, opts)
        step("gaps", "Δ and ρ computed; bootstrap next")
        _insert_intervals(con, opts)
        _insert_logistic(con, opts)
        step("bootstrap", f"{opts.interval} bootstrap intervals ({opts.boot_reps} resamples "
                          "per group) and logistic slopes")
        files = {"per_key": results / "per_key.parquet", "gaps": results / "gaps.parquet"}
        order = "ORDER BY model, revision, task, k, freq_def"
        _write_parquet(con, f"SELECT * FROM per_key {order}, omega, key", files["per_key"])
        _write_parquet(con, f"SELECT * FROM gaps {order}", files["gaps"])
        for name in ("per_key", "gaps"):
            check_written(name, files[name])          # freqgap/contract.py
        per_key = con.execute(f"SELECT * FROM per_key {order}, omega, key").df()
        gaps = con.execute(f"SELECT * FROM gaps {order}").df()
        totals = {"per_key_rows": len(per_key), "gaps_rows": len(gaps), "keys": n_keys,
                  "models": sorted({f"{m}@{r}" if r else m for m, r in
                                    zip(gaps["model"], gaps["revision"])}),
                  "tasks": sorted(set(gaps["task"])),
                  "prediction_rows": int(con.execute(
                      "SELECT count(*) FROM selected_predictions").fetchall()[0][0]),
                  "seconds": timings}
        con.close()
    except BaseException:
        con.close()
        for p in (tmp_db, tmp_db.with_name(tmp_db.name + ".wal")):
            p.unlink(missing_ok=True)
        shutil.rmtree(spill, ignore_errors=True)
        raise
    tmp_db.replace(db_path)
    db_path.with_name(db_path.name + ".wal").unlink(missing_ok=True)
    shutil.rmtree(spill, ignore_errors=True)
    step("write", "Parquet and database written")
    files["database"] = db_path
    for name, text in render_tables(gaps, opts.tables, opts.task_labels, opts.binning,
                                    opts.bin_percent, opts.boot_level, opts.paper_reference,
                                    opts.paper_ks).items():
        path = results / f"table_{name}"
        atomic_write_text(path, text)
        files[path.name] = path
    plots = draw_all(per_key, gaps, results / PLOTS_DIR, opts.plots, opts.tables,
                     opts.task_labels) if opts.make_plots else []
    _remove_stale(results, set(files.values()) | set(plots))
    step("tables_plots", f"tables and {len(plots)} plots written")
    manifest = build_manifest(
        "gaps", config=opts.to_dict(), inputs=inputs.describe(), totals=totals, started=started,
        compatibility=inputs.compatibility, upstream=inputs.upstream(),
        counts_mismatch_ok=opts.counts_mismatch_ok,
        outputs=sorted(str(p.relative_to(results)) for p in list(files.values()) + plots))
    write_manifest(results, manifest)
    return GapsResult(results_dir=results, files=files, plots=plots, gaps=gaps,
                      per_key=per_key, manifest=manifest)

