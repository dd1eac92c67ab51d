"""Scaling trends: accuracy against parameter count, classified and plotted.

Rule (tolerance eps, default 0.02 = 2 accuracy points; points sorted by parameters):
let a_first, a_last be the smallest and largest model's accuracy, m / M the lowest /
highest accuracy among the models in between.
1. U-shaped    if a_first - m >= eps and a_last - m >= eps (a dip, then recovery);
   inverted-U  if M - a_first >= eps and M - a_last >= eps. When both hold, the larger
   excursion (a-m vs M-a, each its smaller side) decides.
2. positive    if a_last - a_first >= eps; inverse if a_first - a_last >= eps.
3. flat        otherwise (including fewer than two sizes).
The rule follows the Inverse Scaling Prize's reading of curves: it compares the ends and
the interior extreme, so a single noisy middle point moves the label only past eps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

LABELS = ("positive", "inverse", "U-shaped", "inverted-U", "flat")


def classify(params: Sequence[float], accuracy: Sequence[float], eps: float = 0.02) -> str:
    """The trend label of one curve (see the module rule)."""
    if len(params) != len(accuracy):
        raise ValueError(f"{len(params)} parameter counts for {len(accuracy)} accuracies")
    if eps < 0:
        raise ValueError("eps must be non-negative")
    pts = sorted(zip(params, accuracy))
    if len(pts) < 2:
        return "flat"
    acc = [a for _, a in pts]
    first, last, inner = acc[0], acc[-1], acc[1:-1]
    u = min(first, last) - min(inner) if inner else float("-inf")
    n = max(inner) - max(first, last) if inner else float("-inf")
    if u >= eps or n >= eps:
        return "U-shaped" if u >= n else "inverted-U"
    if last - first >= eps:
        return "positive"
    if first - last >= eps:
        return "inverse"
    return "flat"


def human_count(n: float) -> str:
    """70M, 1.4B, 105K: parameter counts as the model families name them."""
    for div, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(n) >= div:
            return f"{n / div:.3g}{unit}"
    return f"{n:.3g}"


def plot_scaling(curves: dict[str, tuple[Sequence[float], Sequence[float]]], path: str | Path,
                 title: str, eps: float = 0.02, chance: float | None = None) -> Path:
    """PNG of accuracy vs parameters (log x), one line per curve, labels with the trend."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for name, (params, acc) in curves.items():
        pts = sorted(zip(params, acc))
        if not pts:
            continue
        label = f"{name} ({classify([p for p, _ in pts], [a for _, a in pts], eps)})"
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
