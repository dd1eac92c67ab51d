"""Plots and the printed summary of Δ over training time (issue 13, docs/dynamics.md).

Takes the frames of the per-checkpoint gaps (gaps_by_step, per_key_by_step: a `step`
column, ω as of that step) and writes PNGs and text; it imports no stage.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np


def _ok(x: Any) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


def _pct(x: Any) -> str:
    return f"{100 * x:.1f}" if _ok(x) else "–"


def _label(task: str, labels: dict[str, str]) -> str:
    return labels.get(task, task)


def plot_over_steps(gaps, out: Path, labels: dict[str, str] | None = None) -> Path:
    """Accuracy and Δ against training step (symlog x so step 0 shows; one line per
    task and frequency definition; Δ with its interval as a band)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = labels or {}
    fig, (ax_acc, ax_d) = plt.subplots(1, 2, figsize=(10, 3.8))
    for (model, task, k), g in gaps.groupby(["model", "task", "k"], sort=True):
        first = g.sort_values("step").drop_duplicates("step")
        ax_acc.plot(first["step"], 100 * first["accuracy"], marker="o",
                    label=f"{_label(task, labels)}, k={k}")
        for freq_def, d in g.groupby("freq_def", sort=True):
            d = d.sort_values("step")
            line, = ax_d.plot(d["step"], 100 * d["delta"], marker="o",
                              label=f"{_label(task, labels)} Δ{{{freq_def}}}, k={k}")
            if "ci_low" in d and d["ci_low"].notna().any():
                ax_d.fill_between(d["step"], 100 * d["ci_low"], 100 * d["ci_high"],
                                  color=line.get_color(), alpha=0.15, lw=0)
    for ax in (ax_acc, ax_d):
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xlabel("training step (checkpoint stepN: after N steps)")
        ax.legend(fontsize=7)
    ax_d.axhline(0, color="black", lw=0.8)
    ax_acc.set_ylabel("accuracy (%)")
    ax_d.set_ylabel("Δ (accuracy points)")
    ax_acc.set_title("accuracy over training")
    ax_d.set_title("Δ: top − bottom 10 % of keys by ω as of the step\n(band: 95 % interval)",
                   fontsize=10)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def exposure_bins(per_key, freq_def: str = "1", n_bins: int = 8):
    """Per-key rows pooled over checkpoints, binned by ω as of the step: ω = 0 alone, then
    equal-width bins of log10 ω. Accuracy = correct / rows in the bin (test rows pooled)."""
    import pandas as pd

    pk = per_key[per_key["freq_def"] == freq_def]
    rows = []
    for (task, k), g in pk.groupby(["task", "k"], sort=True):
        seen = g[g["omega"] > 0]
        edges = np.linspace(np.log10(seen["omega"].min()), np.log10(seen["omega"].max()) + 1e-9,
                            n_bins + 1) if len(seen) else np.array([0.0, 1.0])
        which = np.where(g["omega"] > 0, np.searchsorted(edges, np.log10(g["omega"].clip(lower=1)),
                                                          side="right"), 0)
        for b, part in g.groupby(which):
            n, c = int(part["n_rows"].sum()), int(part["n_correct"].sum())
            lo = 0.0 if b == 0 else 10 ** edges[b - 1]
            hi = 0.0 if b == 0 else 10 ** edges[min(b, n_bins)]
            rows.append({"task": task, "k": k, "bin": int(b), "omega_low": lo, "omega_high": hi,
                         "omega_mid": 0.0 if b == 0 else math.sqrt(lo * hi),
                         "n_keys_steps": len(part), "n_rows": n, "accuracy": c / n if n else None,
                         "se": math.sqrt((c / n) * (1 - c / n) / n) if n else None})
    return pd.DataFrame(rows)


def plot_exposures(per_key, out: Path, labels: dict[str, str] | None = None,
                   freq_def: str = "1") -> Path:
    """Accuracy against the number of exposures a key had had by each checkpoint (ω as of
    the step), pooled over checkpoints; ω = 0 drawn at x = 0.5 (symlog axis)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = labels or {}
    bins = exposure_bins(per_key, freq_def)
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for (task, k), b in bins.groupby(["task", "k"], sort=True):
        x = np.where(b["omega_mid"] > 0, b["omega_mid"], 0.5)
        ax.errorbar(x, 100 * b["accuracy"], yerr=196 * b["se"], marker="o", capsize=3,
                    label=f"{_label(task, labels)}, k={k}")
    ax.set_xscale("log")
    ax.set_xlabel(f"exposures so far: ω{{{freq_def}}} as of the checkpoint (0 shown at 0.5)")
    ax.set_ylabel("accuracy (%), ±1.96 SE")
    ax.set_title("accuracy by exposures so far (all checkpoints pooled)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def first_step_above_zero(gaps, task: str, freq_def: str, k: int) -> int | None:
    """The first checkpoint step whose Δ interval lies entirely above 0 (None if none)."""
    g = gaps[(gaps["task"] == task) & (gaps["freq_def"] == freq_def) & (gaps["k"] == k)]
    hits = g[g["ci_low"].notna() & (g["ci_low"] > 0)].sort_values("step")
    return int(hits["step"].iloc[0]) if len(hits) else None


def summary_text(gaps, task: str, freq_def: str, k: int, labels: dict[str, str] | None = None) -> str:
    """A table of accuracy, Δ with its interval and the logistic slope per checkpoint, and
    the first step at which the interval is above 0."""
    labels = labels or {}
    g = gaps[(gaps["task"] == task) & (gaps["freq_def"] == freq_def) & (gaps["k"] == k)]
    g = g.sort_values("step")
    name = f"{_label(task, labels)}, Δ{{{freq_def}}}, k={k}"
    lines = [f"Δ over training — {name} (×100; 95 % interval)", "",
             "| step | accuracy | Δ | interval | keys seen | logistic slope |",
             "|---:|---:|---:|---|---:|---:|"]
    for _, r in g.iterrows():
        slope = r.get("logit_slope")
        lines.append(f"| {int(r['step'])} | {_pct(r['accuracy'])} | {_pct(r['delta'])} | "
                     f"[{_pct(r.get('ci_low'))}, {_pct(r.get('ci_high'))}] | {int(r['n_keys'])} | "
                     f"{f'{slope:.2f}' if _ok(slope) else '–'} |")
    first = first_step_above_zero(gaps, task, freq_def, k)
    lines += ["", (f"{name}: the interval is first entirely above 0 at step {first}."
                   if first is not None else f"{name}: the interval never lies entirely above 0.")]
    return "\n".join(lines)
