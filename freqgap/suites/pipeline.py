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
"""

from __future__ import annotations

import gc
import json
import re
from pathlib import Path
from typing import Any, Callable

import yaml

from freqgap.config import load_conf
from freqgap.errors import FreqgapError
from freqgap.manifest import (atomic_write_text, build_manifest, describe_local_inputs, now_iso,
                              read_manifest, write_manifest)
from freqgap.suites import terms, trends
from freqgap.suites.io import materialise
from freqgap.suites.runner import NeQASuite, QuantifierSuite, TinadSuite, parameter_count
from freqgap.suites.tables import (INSTANCE_TERMS, INSTANCES, PREDICTIONS, write_frame,
                                   write_table)

SUITES = {"neqa": NeQASuite, "tinad": TinadSuite, "quantifiers": QuantifierSuite}


def safe_name(model: str) -> str:
    """A model name as one directory name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "__", model).strip("_") or "model"


def build_suite(benchmark: str, data: str | Path, conf: dict[str, Any],
                original: str | Path | None = None, limit: int | None = None):
    if benchmark not in SUITES:
        raise ValueError(f"unknown benchmark {benchmark!r}; known: {', '.join(SUITES)}")
    sub = conf.get(benchmark, {})
    if benchmark == "neqa":
        return NeQASuite(data, sub, original=original, limit=limit)
    if original is not None:
        raise ValueError("--original (non-negated questions) applies to neqa only")
    return SUITES[benchmark](data, sub, limit=limit)


def write_instances(suite, out: Path, inputs: list[dict], config: dict[str, Any]) -> dict[str, Any]:
    """instances/ with the DATA.md tables and the vocabulary the counting job needs."""
    started = now_iso()
    inst, trows = suite.instances()
    d = out / "instances"
    n_inst = write_table(inst, INSTANCES, d / "instances.parquet")
    n_terms = write_table(trows, INSTANCE_TERMS, d / "instance_terms.parquet")
    vocab = terms.vocabulary(tuple(t for t in (r["t1"], r["t2"], r["t3"]) if t) for r in trows)
    atomic_write_text(d / "vocab.yaml", "# word terms of the instances: pass to the counting "
                      "job with --vocab\n" + yaml.safe_dump(vocab, default_flow_style=False))
    missing: dict[str, int] = {}
    for r in trows:
        if r["t1"] == terms.NO_TERM:
            key = f"{r['task']}:{r['freq_def']}"
            missing[key] = missing.get(key, 0) + 1
    totals = {"instances": n_inst, "instance_terms": n_terms, "vocab": len(vocab),
              "instances_without_terms": missing,
              "no_term_key": terms.NO_TERM}
    term_conf = load_conf("terms")
    # What the counts must provide (checked by the gaps stage against the counts manifest).
    counts_needed = {k: term_conf.get(k) for k in ("window", "number_rule", "max_digits")}
    counts_needed["vocab"] = vocab
    # Not made from counts (they come after, with --vocab vocab.yaml): gaps checks the
    # counts' settings against counts_settings instead of a fingerprint (docs/DATA.md).
    write_manifest(d, build_manifest("suite_instances", {**config, "counts": counts_needed},
                                     inputs, totals, started, upstream={"counts": None},
                                     counts_settings=counts_needed,
                                     tasks=sorted({r["task"] for r in inst}),
                                     freq_defs=sorted({r["freq_def"] for r in trows})))
    return totals


def evaluate_model(suite, model_name: str, out: Path, config: dict[str, Any], inputs: list[dict],
                   revision: str | None, device: str | None, dtype: str | None, batch_size: int,
                   force: bool = False, loader: Callable | None = None) -> dict[str, Any]:
    """predictions/<model>/ for one model; reuses a complete earlier result unless `force`."""
    d = out / "predictions" / safe_name(model_name)
    if not force and (d / "_manifest.json").exists():
        try:
            manifest = read_manifest(d, stage="suite_predictions")
            if manifest.get("config") == config:
                return json.loads((d / "metrics.json").read_text(encoding="utf-8"))
        except FreqgapError:
            pass            # unfinished or of another version: redone below
    started = now_iso()
    if loader is None:
        from freqgap.inference.models import load_model as loader
    model, tokenizer, info = loader(model_name, revision=revision, device=device, dtype=dtype)
    params = parameter_count(model)
    rev = info.revision if info.revision is not None else revision
    preds, details, metrics = suite.evaluate(model, tokenizer, model_name, rev, batch_size)
    del model
    gc.collect()
    n_pred = write_table(preds, PREDICTIONS, d / "predictions.parquet")
    n_det = write_frame(details, out / "details" / f"{safe_name(model_name)}.parquet")
    record = {"model": model_name, "revision": rev, "parameters": params,
              "model_info": info.to_dict(), "metrics": metrics}
    atomic_write_text(d / "metrics.json", json.dumps(record, indent=2, default=str) + "\n")
    write_manifest(d, build_manifest("suite_predictions", config, inputs,
                                     {"predictions": n_pred, "details": n_det}, started,
                                     model=info.to_dict(), parameters=params))
    return record


def summarise(suite, records: list[dict[str, Any]], out: Path, config: dict[str, Any],
              inputs: list[dict], eps: float) -> dict[str, Any]:
    """summary/: all models' metrics, the trend of every headline metric, the scaling plot."""
    started = now_iso()
    d = out / "summary"
    flat = {r["model"]: suite.flat_metrics(r["metrics"]) for r in records}
    params = {r["model"]: r["parameters"] for r in records}
    curves, labels = {}, {}
    for metric in suite.headline:
        pts = [(params[m], v[metric]) for m, v in flat.items() if v.get(metric) is not None]
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
        trends.plot_scaling(curves, d / "scaling.png", title=f"{suite.name}: accuracy vs size",
                            eps=eps, chance=suite.chance)
    write_manifest(d, build_manifest("suite_summary", config, inputs,
                                     {"models": len(records), "curves": len(curves)}, started))
    return labels


def frequency_gaps(benchmark: str, out: Path, counts: str | Path, boot_reps: int | None = None):
    """gaps/: Δ per model, task and frequency definition over this run's tables."""
    from freqgap.gaps.options import options_from_conf
    from freqgap.gaps.run import run_gaps

    manifest = read_manifest(out / "instances", stage="suite_instances")
    tables = {benchmark: {"title": f"{benchmark}: accuracy and performance gaps (x100)",
                          "tasks": manifest["tasks"], "freq_defs": manifest["freq_defs"]}}
    opts = options_from_conf(counts=str(Path(counts).resolve()),
                             instances=str((out / "instances").resolve()),
                             predictions=str((out / "predictions").resolve()) + "/*/",
                             results=str((out / "gaps").resolve()), tables=tables,
                             plots={"binned_bins": 10}, boot_reps=boot_reps)
    return run_gaps(opts)


def run(benchmark: str, data: str | Path, models: list[str], out: str | Path,
        original: str | Path | None = None, revision: str | None = None,
        device: str | None = None, dtype: str | None = None, batch_size: int | None = None,
        limit: int | None = None, force: bool = False, conf: dict[str, Any] | None = None,
        loader: Callable | None = None, counts: str | Path | None = None,
        boot_reps: int | None = None) -> dict[str, Any]:
    """The whole benchmark for a list of models; returns the trend labels and record list
    (and the gaps result when `counts` names a counts directory)."""
    conf = load_conf("suites") if conf is None else conf
    out = Path(out)
    data = materialise(data, out / "data")
    original = materialise(original, out / "data") if original is not None else None
    suite = build_suite(benchmark, data, conf, original=original, limit=limit)
    batch_size = int(batch_size or conf.get("batch_size", 16))
    paths = [data] + ([original] if original else [])
    inputs = describe_local_inputs(paths, checksum=True)
    config = {"benchmark": benchmark, "suite": conf.get(benchmark, {}), "limit": limit,
              "data": [str(p) for p in paths]}
    inst_totals = write_instances(suite, out, inputs, config)
    records = [evaluate_model(suite, m, out, {**config, "revision": revision, "dtype": dtype},
                              inputs, revision, device, dtype, batch_size, force, loader)
               for m in models]
    labels = summarise(suite, records, out, config, inputs, float(conf.get("trend_eps", 0.02)))
    gaps = frequency_gaps(benchmark, out, counts, boot_reps) if counts is not None else None
    return {"instances": inst_totals, "records": records, "trends": labels, "gaps": gaps}
