"""`freqgap simulate` / `make simulate`: the frequency effect as an intervention, not a correlation.

Two corpora that differ only in the operand law (Zipf vs uniform; same seed, same
documents, operands redrawn) each get the same training run (same settings and seed).
Each model then goes through the project's own chain — Spark count of its corpus, SPEC §3
instances, few-shot inference, DuckDB gaps — and the report compares Δ. A gap that
appears under Zipf and vanishes under the uniform control is caused by frequency alone.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from freqgap.analysis.simulate import LAWS, write_report
from freqgap.corpus import generate_corpus, load_profile
from freqgap.manifest import build_manifest, now_iso, write_manifest
from freqgap.training.settings import load_settings
from freqgap.training.train import train_model


@dataclass
class SimulateOptions:
    """What to run; the defaults are the documented `make simulate`."""

    work: Path = Path("out/simulate")
    results: Path = Path("results/simulate")
    train_profile: str = "simulate"
    train_overrides: dict[str, Any] = field(default_factory=dict)
    corpus_overrides: dict[str, Any] = field(default_factory=dict)
    task: str = "mult"
    ks: tuple[int, ...] = (2,)
    seeds: tuple[int, ...] = (0, 1)
    max_test_items: int | None = None
    boot_reps: int = 1000
    device: str | None = None
    max_order: int | None = None      # counting: None = conf/terms.yaml (3); 1 = unigrams only
    resume: bool = False              # keep a corpus and model whose manifests match the settings


def _fresh(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def _reusable(directory: Path, config: dict[str, Any], resume: bool,
              stage: str) -> dict[str, Any] | None:
    """The manifest of a finished stage run with exactly `config`, if resuming."""
    from freqgap.errors import FreqgapError
    from freqgap.manifest import read_manifest

    if not resume:
        return None
    try:
        manifest = read_manifest(directory, stage=stage)
    except FreqgapError:      # missing, unfinished or damaged: not reusable, so redone
        return None
    return manifest if manifest.get("config") == config else None


def run_law(law: str, opts: SimulateOptions, spark=None, log=print) -> dict[str, Any]:
    """Corpus → model → counts → instances → predictions → gaps for one operand law."""
    from freqgap.counting.job import run_count
    from freqgap.counting.rules import TermRules
    from freqgap.gaps.options import options_from_conf
    from freqgap.gaps.run import run_gaps
    from freqgap.inference.predict import predict
    from freqgap.instances.run import build_instances_dir
    from freqgap.instances.tasks import Grid

    base = opts.work / law
    times: dict[str, float] = {}
    t = time.monotonic()
    profile = load_profile(law, opts.corpus_overrides)
    corpus = _reusable(base / "corpus", json.loads(json.dumps(profile.to_dict())), opts.resume,
                       "generate_corpus")
    fresh_corpus = corpus is None
    if fresh_corpus:
        corpus = generate_corpus(profile, _fresh(base / "corpus"), progress=False)
    times["corpus_s"] = time.monotonic() - t
    log(f"[simulate] {law}: corpus {corpus['totals']['bytes_uncompressed'] / 1e6:.1f} MB")
    t = time.monotonic()
    settings = load_settings(opts.train_profile, opts.train_overrides)
    trained = None if fresh_corpus else _reusable(
        base / "model", {**settings.to_dict(), "corpus": [str(base / "corpus")]}, opts.resume,
        "train_lm")
    if trained is None:
        trained = train_model(settings, [str(base / "corpus")], base / "model")
    else:
        log(f"[simulate] {law}: reusing the trained model in {base / 'model'} (--resume)")
    times["train_s"] = time.monotonic() - t
    t = time.monotonic()
    rules = TermRules.from_conf({"max_order": opts.max_order})
    if (base / "counts").exists():
        shutil.rmtree(base / "counts")  # counts of an earlier corpus would be refused, not replaced
    run_count([str(base / "corpus")], str(base / "counts"), rules=rules, spark=spark)
    times["count_s"] = time.monotonic() - t
    t = time.monotonic()
    grid = Grid(tasks=(opts.task,), ks=tuple(opts.ks), seeds=tuple(opts.seeds),
                max_test_items=opts.max_test_items)
    build_instances_dir(base / "counts", _fresh(base / "instances"), grid)
    label = f"simulate-{law}"
    pred_dir = base / "predictions" / label
    if pred_dir.exists():
        shutil.rmtree(pred_dir)
    predict(base / "instances" / "prompts.parquet", pred_dir, str(base / "model"), label=label,
            device=opts.device)
    times["predict_s"] = time.monotonic() - t
    t = time.monotonic()
    gaps_opts = options_from_conf(counts=str(base / "counts"), instances=str(base / "instances"),
                                  predictions=str(base / "predictions" / "*/"),
                                  results=str(base / "gaps"), tasks=[opts.task],
                                  boot_reps=opts.boot_reps)
    gaps_opts.make_plots = False
    run_gaps(gaps_opts)
    times["gaps_s"] = time.monotonic() - t
    gaps = pq.read_table(base / "gaps" / "gaps.parquet").to_pandas()
    per_key = pq.read_table(base / "gaps" / "per_key.parquet").to_pandas()
    return {"law": law, "gaps": gaps, "per_key": per_key, "times": times,
            "train": trained["totals"], "corpus": corpus["totals"]}


def run_simulate(opts: SimulateOptions, spark=None, log=print) -> Path:
    """Both laws, then the report; returns the report's path."""
    started = now_iso()
    t0 = time.monotonic()
    runs = [run_law(law, opts, spark=spark, log=log) for law in LAWS]
    report = write_report(runs, opts.results, opts.task, opts.ks, opts.seeds, time.monotonic() - t0)
    write_manifest(opts.results, build_manifest(
        "simulate", {"task": opts.task, "ks": list(opts.ks), "seeds": list(opts.seeds),
                     "max_test_items": opts.max_test_items, "train_profile": opts.train_profile,
                     "train_overrides": opts.train_overrides, "corpus_overrides": opts.corpus_overrides},
        inputs=[], totals={"elapsed_s": round(time.monotonic() - t0, 1)}, started=started))
    return report
