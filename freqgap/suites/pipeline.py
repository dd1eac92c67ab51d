"""One command per benchmark: instances and terms, each model's predictions, metrics,
scaling trends and plot, and (given counts) the frequency gaps.

Output directory layout (every directory gets `_manifest.json`, written last):
  instances/    instances.parquet, instance_terms.parquet (docs/DATA.md), vocab.yaml
  predictions/<model>/  predictions.parquet (DATA.md), metrics.json
  details/<model>.parquet  suite-specific scores (log-probs, p(True), surprisals); kept out
                of predictions/, whose every Parquet file the gaps stage reads as predictions
  summary/      metrics.json (every model), trends.json, scaling.png
  gaps/         with counts given: the DuckDB gaps (freqgap.gaps) over these tables
A model whose predictions directory has a complete manifest is not rerun (unless force).
The instances manifest is written after the last model: a run that fails or is killed
leaves no complete instances/ (its fingerprint is computed first, so each predictions
manifest names it as upstream). An output directory holding a run with other settings is
refused.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

import yaml

from freqgap.config import load_conf
from freqgap.errors import FreqgapError, InputMismatchError
from freqgap.outdir import claim as claim_dir
from freqgap.manifest import (MANIFEST_NAME, atomic_write_text, build_manifest,
                              dataset_records, describe_local_inputs, load_manifest_file, now_iso,
                              read_manifest, write_manifest)
from freqgap.suites import terms, trends
from freqgap.suites.io import SuiteDataError, materialise
from freqgap.suites.qa_suite import QASuite
from freqgap.suites.runner import NeQASuite, QuantifierSuite, TinadSuite
from freqgap.suites.tables import (INSTANCE_TERMS, INSTANCES, PREDICTIONS, write_frame,
                                   write_table)

SUITES = {"neqa": NeQASuite, "tinad": TinadSuite, "quantifiers": QuantifierSuite,
          "qa": QASuite}


def safe_name(model: str) -> str:
    """A model name as one directory name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "__", model).strip("_") or "model"


NEQA_ONLY = ("original", "task2_data", "task2_original", "task2_plain", "sample")


def build_suite(benchmark: str, data: str | Path, conf: dict[str, Any],
                original: str | Path | None = None, limit: int | None = None,
                overlong: str = "refuse", **neqa_options: Any):
    """The suite object of a benchmark; NeQA takes `task2_data`, `task2_original`,
    `sample` and `seed` besides `original` (freqgap.suites.runner.NeQASuite)."""
    if benchmark not in SUITES:
        raise SuiteDataError(f"unknown benchmark {benchmark!r}; known: {', '.join(SUITES)}")
    sub = conf.get(benchmark, {})
    if benchmark == "neqa":
        return NeQASuite(data, sub, original=original, limit=limit, overlong=overlong,
                         **neqa_options)
    given = [k for k in NEQA_ONLY if (original if k == "original" else neqa_options.get(k))
             is not None]
    if given:
        raise SuiteDataError(f"--{given[0].replace('_', '-')} applies to neqa only")
    return SUITES[benchmark](data, sub, limit=limit, overlong=overlong)


def plan_instances(suite, inputs: list[dict], config: dict[str, Any]
                   ) -> tuple[dict[str, Any], list[dict], list[dict], list[str]]:
    """instances/'s rows, vocabulary and manifest (with its fingerprint), nothing written:
    run() claims the directory first, writes the tables, and the manifest after the last
    model."""
    from freqgap.contract import seal

    started = now_iso()
    inst, trows = suite.instances()
    vocab = suite.vocabulary(trows)
    missing: dict[str, int] = {}
    for r in trows:
        if r["t1"] == terms.NO_TERM:
            key = f"{r['task']}:{r['freq_def']}"
            missing[key] = missing.get(key, 0) + 1
    totals = {"instances": len(inst), "instance_terms": len(trows), "vocab": len(vocab),
              "instances_without_terms": missing,
              "no_term_key": terms.NO_TERM}
    # What the counts must provide (checked by the gaps stage against the counts manifest).
    counts_needed = suite.counts_needed(vocab, load_conf("terms"))
    # Not made from counts (they come after, with --vocab vocab.yaml): gaps checks the
    # counts' settings against counts_settings instead of a fingerprint (docs/DATA.md).
    manifest = build_manifest("suite_instances", {**config, "counts": counts_needed},
                              inputs, totals, started, upstream={"counts": None},
                              counts_settings=counts_needed,
                              tasks=sorted({r["task"] for r in inst}),
                              freq_defs=sorted({r["freq_def"] for r in trows}))
    manifest["fingerprint"] = seal(manifest)["fingerprint"]
    return manifest, inst, trows, vocab


def write_instances(out: Path, inst: list[dict], trows: list[dict], vocab: list[str]) -> None:
    """instances/'s tables and the vocabulary the counting job needs (no manifest)."""
    d = out / "instances"
    write_table(inst, INSTANCES, d / "instances.parquet")
    write_table(trows, INSTANCE_TERMS, d / "instance_terms.parquet")
    atomic_write_text(d / "vocab.yaml", "# word terms of the instances: pass to the counting "
                      "job with --vocab\n" + yaml.safe_dump(vocab, default_flow_style=False))


def claim(out: Path, fingerprint: str) -> None:
    """Refuse an output directory that holds a run with other settings (its instances or
    any model's predictions made from other instances); then mark the run as unfinished
    (instances and summary manifests removed until this run completes them)."""
    d = out / "instances"
    if (d / MANIFEST_NAME).exists():
        old = load_manifest_file(d / MANIFEST_NAME)
        if old.get("fingerprint") != fingerprint:
            raise InputMismatchError(
                f"{out}: holds a run of other settings or data (instances fingerprint "
                f"{str(old.get('fingerprint'))[:12]}…, this run {fingerprint[:12]}…); use "
                f"another --out, or delete {out} to start over")
    for m in sorted((out / "predictions").glob(f"*/{MANIFEST_NAME}")):
        up = (load_manifest_file(m).get("upstream") or {}).get("instances")
        if up != fingerprint:
            raise InputMismatchError(
                f"{m.parent}: predictions made from other instances (other data or "
                f"settings); use another --out, or delete {m.parent} to drop them")
    for sub in ("instances", "summary"):
        (out / sub / MANIFEST_NAME).unlink(missing_ok=True)


def evaluate_model(suite, model_name: str, out: Path, config: dict[str, Any], inputs: list[dict],
                   upstream: str, revision: str | None, device: str | None, dtype: str | None,
                   batch_size: int, force: bool = False,
                   loader: Callable | None = None, verbose: bool = False) -> dict[str, Any]:
    """predictions/<model>/ for one model; reuses a complete earlier result unless `force`.
    `verbose` shows the backend's loading logs (transformers')."""
    d = out / "predictions" / safe_name(model_name)
    if not force and (d / MANIFEST_NAME).exists():
        try:
            manifest = read_manifest(d, stage="suite_predictions",
                                     upstream={"instances": upstream})
            if manifest.get("config") == json.loads(json.dumps(config)):
                return json.loads((d / "metrics.json").read_text(encoding="utf-8"))
        except FreqgapError:
            pass            # unfinished, of another version or settings: redone below
    (d / MANIFEST_NAME).unlink(missing_ok=True)
    started = now_iso()
    if loader is None:
        from freqgap.inference.lm import get_lm as loader
    lm = loader(model_name, revision=revision, device=device, dtype=dtype, batch_size=batch_size,
                verbose=verbose)
    try:
        suite.truncated = {}
        preds, details, metrics = suite.evaluate(lm)
        info, params = lm.describe(), lm.num_parameters
    finally:
        lm.close()
    n_pred = write_table(preds, PREDICTIONS, d / "predictions.parquet")
    n_det = write_frame(details, out / "details" / f"{safe_name(model_name)}.parquet")
    record = {"model": model_name, "revision": info.get("revision"), "parameters": params,
              "model_info": info, "truncated_prompts": dict(suite.truncated),
              "metrics": metrics}
    atomic_write_text(d / "metrics.json", json.dumps(record, indent=2, default=str) + "\n")
    write_manifest(d, build_manifest("suite_predictions", config, inputs,
                                     {"predictions": n_pred, "details": n_det,
                                      "truncated_prompts": dict(suite.truncated)}, started,
                                     model=info, parameters=params,
                                     upstream={"instances": upstream},
                                     files=dataset_records(d)))    # checked by every reader
    return record


def summarise(suite, records: list[dict[str, Any]], out: Path, config: dict[str, Any],
              inputs: list[dict], eps: float) -> dict[str, Any]:
    """summary/: all models' metrics, the trend of every headline metric, the scaling plot;
    returns the trends with each model's headline metrics and size (the printed table)."""
    started = now_iso()
    d = out / "summary"
    flat = {r["model"]: suite.flat_metrics(r["metrics"]) for r in records}
    params = {r["model"]: r["parameters"] for r in records}
    curves, labels = {}, {}
    for metric in suite.headline:
        pts = [(params[m], v[metric]) for m, v in flat.items()
               if v.get(metric) is not None and (params[m] or 0) > 0]   # log x: sizes > 0
        if not pts:
            continue
        curves[metric] = ([p for p, _ in pts], [a for _, a in pts])
        labels[metric] = trends.classify(*curves[metric], eps=eps)
    atomic_write_text(d / "metrics.json", json.dumps(records, indent=2, default=str) + "\n")
    atomic_write_text(d / "trends.json", json.dumps(
        {"eps": eps, "rule": "see freqgap/suites/trends.py and docs/suites.md",
         "models": sorted(params, key=params.get), "parameters": params, "trends": labels,
         "curves": {k: dict(zip(("parameters", "accuracy"), v)) for k, v in curves.items()}},
        indent=2) + "\n")
    if curves:
        from freqgap.analysis.suites import plot_scaling

        plot_scaling(curves, d / "scaling.png", title=f"{suite.name}: accuracy vs size",
                     labels=labels, chance=suite.chance)
    write_manifest(d, build_manifest("suite_summary", config, inputs,
                                     {"models": len(records), "curves": len(curves)}, started))
    return {"trends": labels, "metrics": flat, "parameters": params,
            "headline": list(suite.headline)}


def frequency_gaps(benchmark: str, out: Path, counts: str | Path, boot_reps: int | None = None):
    """gaps/: Δ per model, task and frequency definition over this run's tables."""
    from freqgap.gaps.options import options_from_conf
    from freqgap.gaps.run import run_gaps

    manifest = read_manifest(out / "instances", stage="suite_instances")
    tables = {benchmark: {"title": f"{benchmark}: accuracy and performance gaps (×100)",
                          "tasks": manifest["tasks"], "freq_defs": manifest["freq_defs"]}}
    opts = options_from_conf(counts=str(Path(counts).resolve()),
                             instances=str((out / "instances").resolve()),
                             predictions=str((out / "predictions").resolve()) + "/*/",
                             results=str((out / "gaps").resolve()), tables=tables,
                             plots={"binned_bins": 10}, boot_reps=boot_reps,
                             paper_ks=[])   # the suites have no k grid to be complete against
    return run_gaps(opts)


def run(benchmark: str, data: str | Path, models: list[str], out: str | Path,
        original: str | Path | None = None, revision: str | None = None,
        device: str | None = None, dtype: str | None = None, batch_size: int | None = None,
        limit: int | None = None, force: bool = False, conf: dict[str, Any] | None = None,
        loader: Callable | None = None, counts: str | Path | None = None,
        boot_reps: int | None = None, task2_data: str | Path | None = None,
        task2_original: str | Path | None = None, sample: int | None = None, seed: int = 42,
        letter_scoring: str | None = None, overlong: str | None = None,
        verbose: bool = False, task2_plain: bool = False) -> dict[str, Any]:
    """The whole benchmark for a list of models; returns the trend labels and record list
    (and the gaps result when `counts` names a counts directory)."""
    conf = load_conf("suites") if conf is None else conf
    if letter_scoring is not None:
        conf = {**conf, "neqa": {**conf.get("neqa", {}), "letter_scoring": letter_scoring}}
    if overlong is not None:
        conf = {**conf, "overlong": overlong}
    # one run per output directory; a run refused before writing leaves no empty --out
    with claim_dir(Path(out)) as out:
        return _run_locked(benchmark, data, models, out, original, revision, device,
                           dtype, batch_size, limit, force, conf, loader, counts,
                           boot_reps, task2_data, task2_original, sample, seed,
                           verbose=verbose, task2_plain=task2_plain)


def _run_locked(benchmark, data, models, out, original, revision, device, dtype, batch_size,
                limit, force, conf, loader, counts, boot_reps, task2_data, task2_original,
                sample, seed, verbose=False, task2_plain=False) -> dict[str, Any]:
    data = materialise(data, out / "data")
    original = materialise(original, out / "data") if original is not None else None
    neqa_options = {k: v for k, v in (("task2_data", task2_data),
                                      ("task2_original", task2_original),
                                      ("sample", sample)) if v is not None}
    if task2_plain:
        neqa_options["task2_plain"] = True
    if benchmark == "neqa":
        neqa_options["seed"] = seed
    suite = build_suite(benchmark, data, conf, original=original, limit=limit,
                        overlong=str(conf.get("overlong", "refuse")), **neqa_options)
    batch_size = int(batch_size or conf.get("batch_size", 16))
    paths = [Path(p) for p in dict.fromkeys(
        [str(data)] + ([str(original)] if original else [])
        + [str(p) for p in getattr(suite, "input_files", lambda: [])()])]
    # path, size and sha256 (no mtime: a touched or re-checked-out file is the same input)
    inputs = [{k: v for k, v in r.items() if k != "mtime"}
              for r in describe_local_inputs(paths, checksum=True)]
    config = {"benchmark": benchmark, "suite": conf.get(benchmark, {}), "limit": limit,
              "data": [str(p) for p in paths], "overlong": conf.get("overlong", "refuse")}
    if benchmark == "neqa":
        config.update(sample=sample, seed=seed if sample is not None else None,
                      task2_files=suite.task2_files)
        if suite.task2_plain:          # recorded when given (earlier manifests keep theirs)
            config["task2_plain"] = True
    if counts is not None:
        suite.check_counts(counts)        # before any model loads
    inst_manifest, inst, trows, vocab = plan_instances(suite, inputs, config)
    fp = inst_manifest["fingerprint"]
    claim(out, fp)
    write_instances(out, inst, trows, vocab)
    records = [evaluate_model(suite, m, out, {**config, "revision": revision, "dtype": dtype},
                              inputs, fp, revision, device, dtype, batch_size, force, loader,
                              verbose)
               for m in models]
    # the tables' bytes, sha256 and rows, checked by every reader (not in the fingerprint)
    inst_manifest["files"] = dataset_records(out / "instances")
    write_manifest(out / "instances", inst_manifest)
    inst_totals = inst_manifest["totals"]
    summary = summarise(suite, records, out, config, inputs, float(conf.get("trend_eps", 0.02)))
    gaps = frequency_gaps(benchmark, out, counts, boot_reps) if counts is not None else None
    report = suite.report(out, gaps) if gaps is not None else None
    return {"instances": inst_totals, "records": records, "trends": summary["trends"],
            "summary": summary, "gaps": gaps, "report": report}
