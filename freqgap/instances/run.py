"""The instances stage: counts/ → instances/ (instances, instance terms, prompts, manifest).

Output files are written under temporary names and renamed when complete; the manifest
is removed first and written last, so an interrupted run never looks finished.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from freqgap.config import load_conf
from freqgap.contract import count_settings, refuse_partial_counts
from freqgap.instances.build import (PROMPT_SCHEMA, instances_table, make_instances,
                                     prompt_rows, terms_table)
from freqgap.instances.operands import CountsError, select_x1
from freqgap.instances.tasks import CONF_NAME, Grid, load_tasks
from freqgap.manifest import (MANIFEST_NAME, build_manifest, dataset_records, now_iso,
                              read_manifest, write_manifest)
from freqgap.progress import Progress

FILES = ("instances.parquet", "instance_terms.parquet", "prompts.parquet")


def result_settings(grid: Grid, conf: dict[str, Any]) -> dict[str, Any]:
    """The recorded settings the instances depend on, known before any work: the CLI's
    output guard refuses a directory holding instances of others unless --force."""
    return {"grid": {"tasks": list(grid.tasks), "ks": list(grid.ks), "seeds": list(grid.seeds),
                     "max_test_items": grid.max_test_items,
                     "zero_shot_first_seed_only": grid.zero_shot_first_seed_only},
            "tasks_conf": conf}


def _tmp(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp")


def build_instances_dir(counts_dir: str | Path, out_dir: str | Path, grid: Grid,
                        conf: dict[str, Any] | None = None,
                        progress_interval: float = 10.0, skip_unbuildable: bool = False,
                        on_plan: Callable[[dict[str, list], dict[str, str]], None] | None = None,
                        ) -> dict[str, Any]:
    """Write instances/ for `grid` from a finished counts/ directory; returns the manifest.

    `skip_unbuildable`: a task the counts cannot give operands for is left out (recorded
    with its reason in the manifest's totals.skipped) instead of stopping the run.
    `on_plan(instances by task, skipped)` is called before any prompt is written (the CLI
    prints the number of prompts and the predict time they will take)."""
    started = now_iso()
    counts_dir, out_dir = Path(counts_dir), Path(out_dir)
    counts_manifest = read_manifest(counts_dir, stage="count_terms")
    refuse_partial_counts(counts_manifest, counts_dir)      # a dry run, counts by subset
    vocab = counts_manifest.get("config", {}).get("vocab")
    conf = load_conf(CONF_NAME) if conf is None else conf
    tasks = load_tasks(conf)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / MANIFEST_NAME).unlink(missing_ok=True)

    con = duckdb.connect()
    selected, skipped = {}, {}
    for name in grid.tasks:
        try:
            selected[name] = select_x1(con, counts_dir, tasks[name], vocab)
        except CountsError as exc:
            if not skip_unbuildable:
                raise
            skipped[name] = str(exc)
    con.close()
    if not selected:
        raise CountsError(f"{counts_dir}: no task of the grid can be built from these counts: "
                          + "; ".join(skipped.values()))
    built = {name: make_instances(tasks[name], x1) for name, x1 in selected.items()}
    if on_plan is not None:
        on_plan(built, skipped)

    paths = {name: out_dir / name for name in FILES}
    inst_tables, term_tables = [], []
    totals: dict[str, Any] = {"instances": {}, "prompts": {}}
    progress = Progress("instances", total=len(built), unit="tasks",
                        interval=progress_interval)
    writer = pq.ParquetWriter(_tmp(paths["prompts.parquet"]), PROMPT_SCHEMA, compression="zstd")
    try:
        for name, insts in built.items():
            task = tasks[name]
            inst_tables.append(instances_table(insts))
            term_tables.append(terms_table(task, insts))
            n_prompts, batch = 0, []
            for row in prompt_rows(name, insts, grid, conf["shot_template"], conf["test_template"]):
                batch.append(row)
                if len(batch) >= 20000:
                    writer.write_table(pa.Table.from_pylist(batch, schema=PROMPT_SCHEMA))
                    n_prompts += len(batch)
                    batch = []
            if batch:
                writer.write_table(pa.Table.from_pylist(batch, schema=PROMPT_SCHEMA))
                n_prompts += len(batch)
            totals["instances"][name] = len(insts)
            totals["prompts"][name] = n_prompts
            progress.update(advance=1, extra=f"{name}: {len(insts)} instances, {n_prompts} prompts")
    finally:
        writer.close()
    pq.write_table(pa.concat_tables(inst_tables), _tmp(paths["instances.parquet"]),
                   compression="zstd")
    pq.write_table(pa.concat_tables(term_tables), _tmp(paths["instance_terms.parquet"]),
                   compression="zstd")
    for path in paths.values():
        os.replace(_tmp(path), path)
    totals["instances_all"] = sum(totals["instances"].values())
    totals["prompts_all"] = sum(totals["prompts"].values())
    totals["skipped"] = skipped             # task -> why the counts cannot build it
    config = {**result_settings(grid, conf), "x1": selected,
              "counts": {"dir": str(counts_dir), "config": counts_manifest.get("config", {})}}
    # The counts by their fingerprint, not size/mtime: rewriting identical counts leaves
    # these instances (and the predictions made from them) valid.
    inputs = [{"path": str(counts_dir / MANIFEST_NAME), "fingerprint": counts_manifest["fingerprint"]}]
    # The exact counts these instances were made from (freqgap/contract.py): gaps refuses
    # any other counts unless told.
    manifest = build_manifest("instances", config, inputs, totals, started,
                              upstream={"counts": counts_manifest["fingerprint"],
                                        "counts_dir": str(counts_dir)},
                              counts_settings=count_settings(counts_manifest["config"]),
                              files=dataset_records(out_dir))
    write_manifest(out_dir, manifest)
    return manifest
