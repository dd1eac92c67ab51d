"""`make gaps` end to end: inputs → DuckDB (sql/, through engine.py) → files under results/.

Output is never half-written: the old manifest is removed first, every file is written
under a temporary name and renamed, stale tables/plots of earlier runs are removed, and
`_manifest.json` is written last.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from freqgap.contract import check_written
from freqgap.analysis.gaps import draw_all, render_tables
from freqgap.gaps import engine
from freqgap.gaps.compare import SHIFT_FILE, write_shift
from freqgap.gaps.inputs import resolve_inputs
from freqgap.gaps.options import GapsOptions
from freqgap.manifest import (MANIFEST_NAME, atomic_write_text, build_manifest,
                              dataset_records, now_iso, write_manifest)
from freqgap.progress import Progress

DB_NAME = "freqgap.duckdb"
PLOTS_DIR = "plots"


@dataclasses.dataclass
class GapsResult:
    """What a run wrote, with the two result tables loaded (they are small)."""

    results_dir: Path
    files: dict[str, Path]
    plots: list[Path]
    gaps: pd.DataFrame
    per_key: pd.DataFrame
    manifest: dict[str, Any]


# Options that change how a run goes, not what it writes: a rerun differing only in these
# replaces the result without --force (freqgap/outdir.py).
RUN_ONLY_OPTIONS = ("results", "memory_limit", "threads", "temp_directory")


def result_settings(opts: GapsOptions) -> dict[str, Any]:
    """The recorded options a result depends on (an output holding a result of others is
    replaced only with --force)."""
    return {k: v for k, v in opts.to_dict().items() if k not in RUN_ONLY_OPTIONS}


def input_paths(opts: GapsOptions) -> list[Path]:
    """The input directories, the predictions glob expanded (an output must lie apart)."""
    import glob

    return [opts.path(opts.counts), opts.path(opts.instances),
            *(Path(p) for p in glob.glob(str(opts.path(opts.predictions)))),
            *([opts.path(opts.compare_counts)] if opts.compare_counts else [])]


def _write_parquet(con, query: str, path: Path) -> None:
    tmp = engine.tmp_path(path)
    con.execute(f"COPY ({query}) TO '{tmp}' (FORMAT parquet, COMPRESSION zstd)")
    tmp.replace(path)


def _remove_stale(results: Path, keep: set[Path]) -> None:
    """Tables and plots of earlier runs that this run did not write."""
    for p in list(results.glob("table_*.md")) + list(results.glob("table_*.tex")) + \
            list((results / PLOTS_DIR).glob("*.png")) + list(results.glob(SHIFT_FILE)):
        if p not in keep:
            p.unlink()


def run_gaps(opts: GapsOptions, log: Callable[[str], None] | None = None,
             examples: tuple[Path, str] | None = None) -> GapsResult:
    """Compute per_key and gaps and write every output; raises GapsInputError on bad input.
    `examples` = (path, frequency definition): also lm-eval's examples file of the bins
    (freqgap.gaps.lm_eval_examples)."""
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
    spill = opts.path(opts.temp_directory) if opts.temp_directory else results / ".duckdb_tmp"
    with engine.database(db_path, opts, spill) as con:
        variables = engine.sql_variables(inputs, opts)
        engine.load_inputs(con, inputs, opts, variables)
        step("check_inputs", "inputs checked; now looking up ω of every key in the count "
                             "tables (the long step)")
        engine.compute_per_key(con, inputs, variables)
        n_keys = con.execute(f"SELECT count(*) FROM {engine.OMEGA_TABLE}").fetchall()[0][0]
        step("per_key", f"ω of {n_keys} keys looked up, per-key table built")
        engine.compute_gaps(con, opts, variables)
        step("gaps", "Δ and ρ computed; bootstrap next")
        engine.fill_intervals(con, opts)
        step("bootstrap", f"{opts.interval} bootstrap intervals ({opts.boot_reps} resamples "
                          "per group) and logistic slopes")
        files = {"per_key": results / "per_key.parquet", "gaps": results / "gaps.parquet"}
        order = "ORDER BY model, revision, task, k, freq_def"
        _write_parquet(con, f"SELECT * FROM per_key {order}, omega, key", files["per_key"])
        _write_parquet(con, f"SELECT * FROM gaps {order}", files["gaps"])
        for name in ("per_key", "gaps"):
            check_written(name, files[name])          # freqgap/contract.py
        if examples is not None:
            from freqgap.gaps.lm_eval_examples import write_examples
            write_examples(con, opts.path(opts.instances), *examples)
        per_key = con.execute(f"SELECT * FROM per_key {order}, omega, key").df()
        gaps = con.execute(f"SELECT * FROM gaps {order}").df()
        totals = {"per_key_rows": len(per_key), "gaps_rows": len(gaps), "keys": n_keys,
                  "models": sorted({f"{m}@{r}" if r else m for m, r in
                                    zip(gaps["model"], gaps["revision"])}),
                  "tasks": sorted(set(gaps["task"])),
                  "prediction_rows": int(con.execute(
                      f"SELECT count(*) FROM {engine.PREDICTIONS_VIEW}").fetchall()[0][0]),
                  "seconds": timings}
        if opts.compare_counts:           # Δ over the other counts, and the shift
            files["rule_set_shift"] = results / SHIFT_FILE
            totals["compare_counts"] = write_shift(con, opts, variables, files["rule_set_shift"])
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
        counts_mismatch_ok=opts.counts_mismatch_ok, files=dataset_records(results),
        outputs=sorted(str(p.relative_to(results)) for p in list(files.values()) + plots))
    write_manifest(results, manifest)
    return GapsResult(results_dir=results, files=files, plots=plots, gaps=gaps,
                      per_key=per_key, manifest=manifest)

