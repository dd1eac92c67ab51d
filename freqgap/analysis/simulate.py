"""The report of `freqgap simulate`: Δ under a Zipf and a uniform corpus, side by side.

Takes the plain results of the workflow (frames and dicts) and writes the Markdown report,
its two plots and a JSON summary; it imports no stage.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

LAWS = ("zipf", "uniform")


def _fmt(x: Any, pct: bool = True) -> str:
    if x is None or x != x:
        return "–"
    return f"{100 * x:.1f}" if pct else f"{x:.2f}"


def _plain(value: Any) -> Any:
    """A cell of the gaps frame as JSON holds it: numpy scalars as Python's, arrays (the
    per-seed Δ, one entry per seed) as lists. `.item()` served the scalars but fails on an
    array of two or more seeds, and turned a one-seed array into a bare entry."""
    return value.tolist() if hasattr(value, "tolist") else value


def write_report(runs: list[dict[str, Any]], out: Path, task: str, ks: Sequence[int],
                 seeds: Sequence[int], elapsed_s: float) -> Path:
    """OUT/report.md, delta.png, accuracy_by_rank.png, summary.json from the runs of each law.

    A run is a dict: law, gaps and per_key (frames of the gaps stage), times (seconds per
    stage), train (the model manifest's totals).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for run in runs:
        g = run["gaps"]
        for _, r in g.sort_values(["k", "freq_def"]).iterrows():
            rows.append({"law": run["law"], **{c: _plain(r[c]) for c in g.columns}})
    summary = {"task": task, "ks": list(ks), "seeds": list(seeds),
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
    ax.set_title(f"{task}, k={ks[0]}: the gap caused by frequency")
    fig.tight_layout()
    fig.savefig(out / "delta.png", dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for run in runs:
        pk = run["per_key"]
        pk = pk[(pk["freq_def"] == "1") & (pk["k"] == ks[0])].sort_values("omega", ascending=False)
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

    kinds = {str(v) for run in runs if "ci_kind" in run["gaps"]
             for v in run["gaps"]["ci_kind"].dropna()}
    kind = {"seeds+keys": "the seeds (draws of the shots), then the keys",
            "keys": "the keys"}.get(next(iter(kinds), "keys"), "the keys")
    lines = [
        f"# make simulate: frequency as an intervention ({task}, k={', '.join(map(str, ks))})",
        "",
        "Two GPT-NeoX models with the same settings, seed and number of steps were trained on two",
        "corpora that hold the same documents and differ only in how often each operand 0–99",
        "appears (Zipf law vs. every operand equally often). Each went through the project's",
        "chain: Spark count of its own corpus, SPEC §3 instances, greedy few-shot inference, DuckDB",
        "gaps (SPEC §5: rank binning, top vs bottom 10 % of keys, bootstrap 95 % interval "
        f"resampling {kind}).",
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
