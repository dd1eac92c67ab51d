"""`make simulate`: the frequency effect as an intervention, not a correlation.

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

from freqgap.corpus import generate_corpus, load_profile
from freqgap.manifest import build_manifest, now_iso, write_manifest
from freqgap.training.settings import load_settings
from freqgap.training.train import train_model

LAWS = ("zipf", "uniform")


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


def _reusable(directory: Path, config: dict[str, Any], resume: bool) -> dict[str, Any] | None:
    """The manifest of a finished stage run with exactly `config`, if resuming."""
    from freqgap.manifest import read_manifest

    if not resume:
        return None
    try:
        manifest = read_manifest(directory)
    except (FileNotFoundError, ValueError):
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
    corpus = _reusable(base / "corpus", json.loads(json.dumps(profile.to_dict())), opts.resume)
    fresh_corpus = corpus is None
    if fresh_corpus:
        corpus = generate_corpus(profile, _fresh(base / "corpus"), progress=False)
    times["corpus_s"] = time.monotonic() - t
    log(f"[simulate] {law}: corpus {corpus['totals']['bytes_uncompressed'] / 1e6:.1f} MB")
    t = time.monotonic()
    settings = load_settings(opts.train_profile, opts.train_overrides)
    trained = None if fresh_corpus else _reusable(
        base / "model", {**settings.to_dict(), "corpus": [str(base / "corpus")]}, opts.resume)
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


def _fmt(x: Any, pct: bool = True) -> str:
    if x is None or x != x:
        return "–"
    return f"{100 * x:.1f}" if pct else f"{x:.2f}"


def write_report(runs: list[dict[str, Any]], opts: SimulateOptions, elapsed_s: float) -> Path:
    """results/simulate/report.md, delta.png, accuracy_by_rank.png, summary.json."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = opts.results
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for run in runs:
        g = run["gaps"]
        for _, r in g.sort_values(["k", "freq_def"]).iterrows():
            rows.append({"law": run["law"], **{c: (r[c].item() if hasattr(r[c], "item") else r[c])
                                               for c in g.columns}})
    summary = {"task": opts.task, "ks": list(opts.ks), "seeds": list(opts.seeds),
               "elapsed_s": round(elapsed_s, 1), "rows": rows,
               "times": {run["law"]: {k: round(v, 1) for k, v in run["times"].items()} for run in runs},
               "train": {run["law"]: run["train"] for run in runs}}
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str) + "\n")

    d1 = {run["law"]: run["gaps"][run["gaps"]["freq_def"] == "1"].iloc[0] for run in runs}
    fig, ax = plt.subplots(figsize=(4.5, 3.5))
    for i, law in enumerate(LAWS):
        r = d1[law]
        ax.bar(i, 100 * r["delta"], color=("tab:blue", "tab:gray")[i])
        if r.get("ci_low") is not None and r["ci_low"] == r["ci_low"]:
            ax.errorbar(i, 100 * r["delta"], yerr=[[100 * (r["delta"] - r["ci_low"])],
                                                   [100 * (r["ci_high"] - r["delta"])]],
                        color="black", capsize=6)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks([0, 1], ["Zipf corpus", "uniform corpus"])
    ax.set_ylabel("Δ1 (accuracy points, top − bottom 10%)")
    ax.set_title(f"{opts.task}, k={opts.ks[0]}: the gap caused by frequency")
    fig.tight_layout()
    fig.savefig(out / "delta.png", dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for run in runs:
        pk = run["per_key"]
        pk = pk[(pk["freq_def"] == "1") & (pk["k"] == opts.ks[0])].sort_values("omega", ascending=False)
        acc = pk["accuracy"].to_numpy()
        window = max(1, len(acc) // 10)
        smooth = [acc[max(0, i - window // 2): i + window // 2 + 1].mean() for i in range(len(acc))]
        ax.plot(range(1, len(acc) + 1), smooth, label=f"{run['law']} corpus")
    ax.set_xlabel("x1 by corpus frequency rank (1 = most frequent)")
    ax.set_ylabel("accuracy (running mean)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "accuracy_by_rank.png", dpi=120)
    plt.close(fig)

    lines = [
        f"# make simulate: frequency as an intervention ({opts.task}, k={', '.join(map(str, opts.ks))})",
        "",
        "Two GPT-NeoX models with the same settings, seed and number of steps were trained on two",
        "corpora that hold the same documents and differ only in how often each operand 0–99",
        "appears (Zipf law vs. every operand equally often). Each went through the project's",
        "chain: Spark count of its own corpus, SPEC §3 instances, greedy few-shot inference, DuckDB",
        "gaps (SPEC §5: rank binning, top vs bottom 10 % of keys, bootstrap 95 % interval over keys).",
        "",
        "| corpus | freq. def. | k | accuracy | top 10 % | bottom 10 % | Δ | 95 % interval | keys | Spearman ρ |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['law']} | {{{r['freq_def']}}} | {r['k']} | {_fmt(r.get('accuracy'))} | "
                     f"{_fmt(r.get('top_accuracy'))} | {_fmt(r.get('bottom_accuracy'))} | "
                     f"{_fmt(r.get('delta'))} | [{_fmt(r.get('ci_low'))}, {_fmt(r.get('ci_high'))}] | "
                     f"{r.get('n_keys')} | {_fmt(r.get('spearman_rho'), pct=False)} |")
    z, u = d1["zipf"], d1["uniform"]
    lines += [
        "",
        f"Δ1 under Zipf: {_fmt(z['delta'])} points; under the uniform control: {_fmt(u['delta'])} "
        f"points; difference {_fmt(z['delta'] - u['delta'])} points. Numbers ×100.",
        "",
        "In the uniform corpus every operand is seen as often, so any Δ1 left there is what the",
        "chain measures without an operand-frequency difference (noise, and the few counts that",
        "results such as 6 × 7 = 42 add to small numbers). The Zipf − uniform difference of Δ1 is",
        "the effect of operand frequency alone, the causal version of the study's correlational Δ.",
        "Δ over pairs ({x1,x2}, {x1,y}) can stay positive under the control: even with equal",
        "operand rates, single facts occur a chance-varying number of times, and the model",
        "recalls the facts it saw more often — the same effect, one level down.",
        "",
        "![Δ1](delta.png)",
        "",
        "![accuracy by rank](accuracy_by_rank.png)",
        "",
        f"Running time of this run: {elapsed_s / 60:.1f} min in all (a stage reused with --resume "
        "shows 0 s); per corpus: " + "; ".join(
            f"{run['law']}: " + ", ".join(f"{k[:-2]} {v:.0f} s" for k, v in run["times"].items())
            for run in runs) + ".",
        "",
        "Training: " + "; ".join(
            f"{run['law']}: {run['train']['parameters']:,} parameters, {run['train']['steps']} steps, "
            f"loss {run['train']['first_loss']:.2f} → {run['train']['final_loss_ema']:.2f}"
            for run in runs) + ".",
    ]
    report = out / "report.md"
    report.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return report


def run_simulate(opts: SimulateOptions, spark=None, log=print) -> Path:
    """Both laws, then the report; returns the report's path."""
    started = now_iso()
    t0 = time.monotonic()
    runs = [run_law(law, opts, spark=spark, log=log) for law in LAWS]
    report = write_report(runs, opts, time.monotonic() - t0)
    write_manifest(opts.results, build_manifest(
        "simulate", {"task": opts.task, "ks": list(opts.ks), "seeds": list(opts.seeds),
                     "max_test_items": opts.max_test_items, "train_profile": opts.train_profile,
                     "train_overrides": opts.train_overrides, "corpus_overrides": opts.corpus_overrides},
        inputs=[], totals={"elapsed_s": round(time.monotonic() - t0, 1)}, started=started))
    return report
