"""Plots of the negation and quantifier suites: accuracy against model size per metric.

Takes plain data (curves as parameter counts and accuracies, their trend labels) and never
imports a stage; freqgap.suites.pipeline classifies the curves (freqgap.suites.trends) and
calls it for summary/scaling.png.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence


def human_count(n: float) -> str:
    """70M, 1.4B, 105K: parameter counts as the model families name them."""
    for div, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(n) >= div:
            return f"{n / div:.3g}{unit}"
    return f"{n:.3g}"


def summary_table(summary: dict) -> str:
    """The end of a suite run: a row per model (smallest first) with its size and each
    headline metric ×100, then the trend of each metric across the models."""
    metrics, params = summary["metrics"], summary["parameters"]
    heads = [h for h in summary["headline"] if any(h in m for m in metrics.values())]
    models = sorted(metrics, key=lambda m: (params.get(m) or 0, m))
    rows = [["model", "parameters"] + heads]
    for m in models:
        rows.append([m, human_count(params[m]) if params.get(m) else "?"] +
                    ["–" if metrics[m].get(h) is None else f"{100 * metrics[m][h]:.1f}"
                     for h in heads])
    rows.append(["trend", ""] + [summary["trends"].get(h, "–") for h in heads])
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    line = lambda r: "  ".join(str(c).ljust(w) if i < 2 else str(c).rjust(w)   # noqa: E731
                               for i, (c, w) in enumerate(zip(r, widths)))
    rule = "-" * len(line(rows[0]))
    return "\n".join(["accuracy ×100 by model", line(rows[0]), rule]
                     + [line(r) for r in rows[1:-1]] + [rule, line(rows[-1])])


def plot_scaling(curves: dict[str, tuple[Sequence[float], Sequence[float]]], path: str | Path,
                 title: str, labels: dict[str, str] | None = None,
                 chance: float | None = None) -> Path:
    """PNG of accuracy vs parameters (log x), one line per curve; a curve's legend entry
    carries its trend label when `labels` has one. Written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    labels = labels or {}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for name, (params, acc) in curves.items():
        pts = sorted(zip(params, acc))
        if not pts:
            continue
        label = f"{name} ({labels[name]})" if name in labels else name
        ax.plot([p for p, _ in pts], [a for _, a in pts], marker="o", label=label)
    if chance is not None:
        ax.axhline(chance, color="grey", linestyle=":", linewidth=1, label="chance")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: human_count(v)))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("parameters")
    ax.set_ylabel("accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title)
    ax.legend(fontsize=7, loc="best")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=120)
    plt.close(fig)
    tmp.replace(path)
    return path
