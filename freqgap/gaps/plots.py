"""PNG plots in the style of the paper's figures, drawn from per_key.

Figure 1: accuracy per x1 against ω{x1} (log x). Figures 3-5: keys binned by log ω,
mean accuracy per bin against the bin's ω, one line per k. Figure 6: the same per
model, for comparing model sizes. Keys with ω = 0 cannot sit on a log axis; their number is
written in the title instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from freqgap.gaps.tables import model_label, slug  # noqa: E402


def binned(keys: pd.DataFrame, n_bins: int) -> pd.DataFrame:
    """Seen keys in n_bins equal-width bins of log ω: geometric-mean ω, mean accuracy.

    Keys are unweighted, as in Δ; empty bins are dropped.
    """
    seen = keys[keys["omega"] > 0]
    if seen.empty:
        return pd.DataFrame(columns=["omega", "accuracy", "n_keys"])
    logw = np.log10(seen["omega"].to_numpy(dtype=float))
    lo, hi = logw.min(), logw.max()
    edges = np.linspace(lo, hi, n_bins + 1) if hi > lo else np.array([lo, lo + 1])
    which = np.clip(np.searchsorted(edges, logw, side="right") - 1, 0, len(edges) - 2)
    acc = seen["accuracy"].to_numpy(dtype=float)
    rows = [{"omega": float(10 ** logw[which == b].mean()), "accuracy": float(acc[which == b].mean()),
             "n_keys": int((which == b).sum())} for b in np.unique(which)]
    return pd.DataFrame(rows, columns=["omega", "accuracy", "n_keys"])


def _pick_k(available: list[int], wanted: Any) -> list[int]:
    """The configured k values that are present, else every present k."""
    wanted = wanted if isinstance(wanted, list) else ([wanted] if wanted is not None else [])
    chosen = [k for k in available if k in {int(w) for w in wanted}]
    return chosen or available


def _pick_tasks(available: list[str], wanted: Any) -> list[str]:
    """The configured tasks that are present, else every present task."""
    chosen = [t for t in available if t in set(wanted or [])]
    return chosen or available


def _save(fig, path: Path) -> Path:
    """Write a PNG under a temporary name and rename it, so no half-written plot remains."""
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=110, bbox_inches="tight")
    plt.close(fig)
    tmp.replace(path)
    return path


def figure1(per_key: pd.DataFrame, out_dir: Path, conf: dict[str, Any],
            labels: dict[str, str]) -> list[Path]:
    """Accuracy of each x1 against ω{x1}, one PNG per (model, task), one colour per k."""
    paths = []
    data = per_key[per_key["freq_def"] == "1"]
    tasks = _pick_tasks(sorted(set(data["task"])), conf.get("tasks"))
    for (model, revision, task), g in data.groupby(["model", "revision", "task"], sort=True):
        if task not in tasks:
            continue
        fig, ax = plt.subplots(figsize=(6, 4))
        unseen = 0
        for k in _pick_k(sorted(int(k) for k in g["k"].unique()), conf.get("k")):
            gk = g[g["k"] == k]
            unseen += int((gk["omega"] == 0).sum())
            seen = gk[gk["omega"] > 0]
            ax.scatter(seen["omega"], seen["accuracy"], s=14, alpha=0.7, label=f"k={k}")
        ax.set_xscale("log")
        ax.set_xlabel("ω{x1} (pretraining count)")
        ax.set_ylabel("accuracy on instances with this x1")
        title = f"{labels.get(task, task)} — {model_label(model, revision)}"
        ax.set_title(title + (f" ({unseen} unseen x1 not shown)" if unseen else ""), fontsize=9)
        ax.set_ylim(-0.03, 1.03)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
        name = f"fig1_{slug(model_label(model, revision))}_{slug(task)}.png"
        paths.append(_save(fig, out_dir / name))
    return paths


def binned_figures(per_key: pd.DataFrame, out_dir: Path, n_bins: int, def_order: list[str],
                   labels: dict[str, str]) -> list[Path]:
    """Figures 3-5: per (model, task) one panel per definition, a line per k."""
    paths = []
    for (model, revision, task), g in per_key.groupby(["model", "revision", "task"], sort=True):
        defs = [d for d in def_order if d in set(g["freq_def"])]
        defs += sorted(set(g["freq_def"]) - set(defs))
        fig, axes = plt.subplots(1, len(defs), figsize=(4.2 * len(defs), 3.6), squeeze=False)
        for ax, d in zip(axes[0], defs):
            gd = g[g["freq_def"] == d]
            for k in sorted(int(k) for k in gd["k"].unique()):
                b = binned(gd[gd["k"] == k], n_bins)
                if len(b):
                    ax.plot(b["omega"], b["accuracy"], marker="o", ms=3, label=f"k={k}")
            ax.set_xscale("log")
            ax.set_xlabel(f"ω{{{d}}} (bin of log ω)")
            ax.set_ylabel("mean accuracy of keys in bin")
            ax.set_ylim(-0.03, 1.03)
            ax.set_title(f"{labels.get(task, task)}: {{{d}}}", fontsize=9)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7)
            else:
                ax.text(0.5, 0.5, "no key with ω > 0", transform=ax.transAxes, ha="center")
        fig.suptitle(model_label(model, revision), fontsize=9)
        name = f"binned_{slug(model_label(model, revision))}_{slug(task)}.png"
        paths.append(_save(fig, out_dir / name))
    return paths


def figure6(per_key: pd.DataFrame, out_dir: Path, n_bins: int, conf: dict[str, Any],
            labels: dict[str, str]) -> list[Path]:
    """Several models (sizes): binned accuracy per model at one k, one PNG per task.

    Drawn only when per_key holds two or more (model, revision); the k used is the
    configured one when every model has it, else the smallest k all models share.
    """
    paths = []
    d = str(conf.get("freq_def", "1"))
    data = per_key[per_key["freq_def"] == d]
    if data.groupby(["model", "revision"]).ngroups < 2:
        return paths
    tasks = _pick_tasks(sorted(set(data["task"])), conf.get("tasks"))
    for task, g in data.groupby("task", sort=True):
        if task not in tasks:
            continue
        models = list(g.groupby(["model", "revision"], sort=True).groups)
        if len(models) < 2:
            continue
        common = set.intersection(*(set(int(k) for k in g[(g["model"] == m) & (g["revision"] == r)]["k"])
                                    for m, r in models))
        if not common:
            continue
        k = int(conf["k"]) if conf.get("k") is not None and int(conf["k"]) in common else min(common)
        fig, ax = plt.subplots(figsize=(6, 4))
        for m, r in models:
            b = binned(g[(g["model"] == m) & (g["revision"] == r) & (g["k"] == k)], n_bins)
            ax.plot(b["omega"], b["accuracy"], marker="o", ms=3, label=model_label(m, r))
        ax.set_xscale("log")
        ax.set_xlabel(f"ω{{{d}}} (bin of log ω)")
        ax.set_ylabel("mean accuracy of keys in bin")
        ax.set_ylim(-0.03, 1.03)
        ax.set_title(f"{labels.get(task, task)}, k={k}: models compared", fontsize=9)
        ax.legend(fontsize=8)
        paths.append(_save(fig, out_dir / f"fig6_{slug(task)}.png"))
    return paths


def draw_all(per_key: pd.DataFrame, out_dir: Path, plots_conf: dict[str, Any],
             tables_conf: dict[str, Any], labels: dict[str, str]) -> list[Path]:
    """Every figure; returns the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    def_order: list[str] = []
    for spec in tables_conf.values():
        def_order += [str(d) for d in spec.get("freq_defs", []) if str(d) not in def_order]
    n_bins = int(plots_conf.get("binned_bins", 10))
    paths = figure1(per_key, out_dir, plots_conf.get("figure1", {}), labels)
    paths += binned_figures(per_key, out_dir, n_bins, def_order, labels)
    paths += figure6(per_key, out_dir, n_bins, plots_conf.get("figure6", {}), labels)
    return paths
