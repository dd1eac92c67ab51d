"""Δ per checkpoint: each revision's predictions joined with ω as of that revision's step.

The gaps stage's public engine (freqgap/gaps/engine.py: its SQL sql/20..30, checks, bootstrap
intervals, logistic slope) runs once per checkpoint, with its two inputs swapped
(sql/41_dynamics_checkpoint.sql): the predictions of that revision only, and ω from the
cumulative bucket sums of sql/40_dynamics.sql. So the bin rule, Δ, its interval and the slope
exist once, in gaps.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any, Callable

from freqgap.errors import FreqgapError, InputMismatchError
from freqgap.gaps.options import GapsOptions
from freqgap.manifest import (MANIFEST_NAME, build_manifest, dataset_records, now_iso,
                              write_manifest)
from freqgap.progress import Progress

DB_NAME = "dynamics.duckdb"
# columns of the bucketed views standing in for a dataset the counts lack (max_order < 3)
_BUCKETED_EMPTY = {
    "pairs": [("t1", "VARCHAR"), ("t2", "VARCHAR"), ("step_bucket", "BIGINT"), ('"count"', "BIGINT")],
    "triples": [("t1", "VARCHAR"), ("t2", "VARCHAR"), ("t3", "VARCHAR"), ("step_bucket", "BIGINT"),
                ('"count"', "BIGINT")],
}
FILES = {"gaps": "gaps_by_step.parquet", "per_key": "per_key_by_step.parquet"}


class DynamicsInputError(FreqgapError):
    """An input of the per-checkpoint gaps the user must fix; the message names it."""


@dataclasses.dataclass
class DynamicsResult:
    results_dir: Path
    gaps: Any            # pandas frame: gaps rows with `step`
    per_key: Any         # pandas frame: per-key rows with `step` (ω as of that step)
    manifest: dict[str, Any]


def _counts_edges(counts_manifest: dict[str, Any], counts_dir: Path) -> list[int]:
    config = counts_manifest.get("config") or {}
    if config.get("input_kind") != "training_order":
        raise DynamicsInputError(
            f"{counts_dir / MANIFEST_NAME}: these counts are not by training position (no "
            "step_bucket); count the training order: freqgap count --order … (docs/dynamics.md)")
    return [int(e) for e in config["bucket_edges"]]


def _checkpoint_statements() -> dict[str, str]:
    """The statements of sql/41_dynamics_checkpoint.sql by the name each defines (the
    engine's PREDICTIONS_VIEW and OMEGA_TABLE)."""
    from freqgap.gaps.sqlrun import defined_name, statements
    from freqgap.paths import SQL_DIR

    text = (SQL_DIR / "41_dynamics_checkpoint.sql").read_text(encoding="utf-8")
    return {defined_name(s): s for s in statements(text)}


def _report(results: Path, gaps, per_key, opts: GapsOptions,
            summary: dict[str, Any] | None) -> list[str]:
    """The plots and summary.md; returns their paths relative to results."""
    from freqgap.analysis import dynamics as plots
    from freqgap.manifest import atomic_write_text

    written = [plots.plot_over_steps(gaps, results / "plots" / "delta_over_steps.png", opts.task_labels),
               plots.plot_exposures(per_key, results / "plots" / "accuracy_by_exposures.png",
                                    opts.task_labels)]
    if summary:
        text = plots.summary_text(gaps, summary["task"], str(summary["freq_def"]), int(summary["k"]),
                                  opts.task_labels)
        atomic_write_text(results / "summary.md", text + "\n")
        written.append(results / "summary.md")
    return [str(p.relative_to(results)) for p in written]


def run_dynamics_gaps(opts: GapsOptions, summary: dict[str, Any] | None = None,
                      log: Callable[[str], None] | None = None) -> DynamicsResult:
    """Write gaps_by_step / per_key_by_step (Parquet, DuckDB), the plots and summary.md
    (for summary = {task, freq_def, k}) under opts.results; the manifest last."""
    from freqgap.gaps import engine
    from freqgap.gaps.inputs import resolve_inputs
    from freqgap.gaps.sqlrun import empty_view, run_sql_file

    started = now_iso()
    opts.validate()
    inputs = resolve_inputs(opts)
    edges = _counts_edges(inputs.manifests["counts"], inputs.counts_dir)
    results = opts.path(opts.results).resolve()
    results.mkdir(parents=True, exist_ok=True)
    (results / MANIFEST_NAME).unlink(missing_ok=True)
    t0 = time.monotonic()
    with engine.database(results / DB_NAME, opts, results / ".duckdb_tmp") as con:
        variables = engine.sql_variables(inputs, opts)
        variables["bucket_edges_csv"] = ",".join(str(e) for e in edges)
        engine.load_inputs(con, inputs, opts, variables)
        run_sql_file(con, "40_dynamics.sql", variables, replace={
            f"bucketed_{n}": empty_view(f"bucketed_{n}", _BUCKETED_EMPTY[n]) for n in inputs.missing})
        bad = con.execute("SELECT revision, step, files FROM check_checkpoint_steps").fetchall()
        if bad:
            rev, step, files = bad[0]
            raise InputMismatchError(
                f"{files[0]}: revision {rev!r} is not stepN with N one of the counts' bucket edges "
                f"({inputs.counts_dir / MANIFEST_NAME}: {edges[:6]}…{edges[-1]}); predict at "
                "checkpoints whose steps are edges, or recount with these steps as edges")
        checkpoints = con.execute("SELECT revision, step FROM checkpoint_steps ORDER BY step").fetchall()
        swap = _checkpoint_statements()
        progress = Progress("dynamics gaps", total=len(checkpoints), unit="checkpoints", interval=0.0)
        for revision, step in checkpoints:
            v = {**variables, "revision": revision, "step": int(step)}
            engine.select_predictions(con, v, swap[engine.PREDICTIONS_VIEW])
            engine.compute_per_key(con, inputs, v, swap[engine.OMEGA_TABLE])
            engine.compute_gaps(con, opts, v)
            engine.fill_intervals(con, opts)
            run_sql_file(con, "42_dynamics_collect.sql", v)
            progress.update(advance=1, force=True, extra=f"{revision} done")
            if log:
                log(f"Δ at {revision}")
        order = "ORDER BY model, task, k, freq_def, step"
        for name, file in FILES.items():
            tmp = engine.tmp_path(results / file)
            con.execute(f"COPY (SELECT * FROM {name}_by_step {order}) TO '{tmp}' "
                        "(FORMAT parquet, COMPRESSION zstd)")
            tmp.replace(results / file)
        gaps = con.execute(f"SELECT * FROM gaps_by_step {order}").df()
        per_key = con.execute(f"SELECT * FROM per_key_by_step {order}, omega, key").df()
    outputs = [*FILES.values(), DB_NAME, *_report(results, gaps, per_key, opts, summary)]
    totals = {"checkpoints": len(checkpoints), "gaps_rows": len(gaps), "per_key_rows": len(per_key),
              "steps": [int(s) for _, s in checkpoints], "seconds": round(time.monotonic() - t0, 2)}
    manifest = build_manifest("dynamics_gaps", config={**opts.to_dict(), "bucket_edges": edges},
                              inputs=inputs.describe(), totals=totals, started=started,
                              upstream=inputs.upstream(),
                              outputs=sorted(outputs), files=dataset_records(results))
    write_manifest(results, manifest)
    return DynamicsResult(results, gaps, per_key, manifest)
