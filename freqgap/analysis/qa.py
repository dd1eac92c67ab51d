"""The Kandpal figure: QA accuracy by relevant-document count, one line per model.

Plain data in (the rows of sql/50_qa_bins.sql's `qa_bins`), a PNG out. The bins are powers
of a base, so equal steps on the x axis are equal factors of ω; the pairs found in no
document (ω = 0, which a log axis cannot place) are drawn apart at the left, past a
dotted line. Each point carries its interval bar and the number of questions in the bin.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

ZERO_X = -1.5        # where the ω = 0 bin is drawn, left of bin 0 (ω = 1)


def bin_label(lo: int, hi: int) -> str:
    """`0`, `1`, `2–3`, `10–99`: a bin's ω range as printed under the axis."""
    return str(lo) if lo == hi else f"{lo}–{hi}"


def _x(bin_index: int) -> float:
    return ZERO_X if bin_index < 0 else float(bin_index)


def plot_accuracy_by_documents(bins: pd.DataFrame, path: Path, title: str,
                               level: float) -> Path:
    """Accuracy (×100) per bin and model with interval bars and bin sizes; returns path."""
    from freqgap.analysis.gaps import _plt, _save, model_label

    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    groups = list(bins.groupby(["model", "revision", "k"], sort=True))
    for j, ((model, revision, k), g) in enumerate(groups):
        g = g.sort_values("bin")
        shift = 0.05 * (j - (len(groups) - 1) / 2)      # models' bars side by side
        x = [_x(b) + shift for b in g["bin"]]
        acc = (100 * g["accuracy"]).to_numpy()
        err = (100 * (g["accuracy"] - g["ci_low"])).to_numpy(), \
            (100 * (g["ci_high"] - g["accuracy"])).to_numpy()
        label = model_label(model, revision) + (f" (k={k})" if len(groups) > 1 else "")
        seen = [i for i, b in enumerate(g["bin"]) if b >= 0]
        line = ax.errorbar([x[i] for i in seen], acc[seen], yerr=[e[seen] for e in err],
                           marker="o", capsize=3, label=label)
        zero = [i for i, b in enumerate(g["bin"]) if b < 0]
        if zero:
            ax.errorbar([x[i] for i in zero], acc[zero], yerr=[e[zero] for e in err],
                        marker="s", capsize=3, linestyle="none", color=line[0].get_color())
        for xi, a, n in zip(x, acc, g["n_rows"]):
            ax.annotate(f"n={n}", (xi, a), textcoords="offset points", xytext=(4, 6),
                        fontsize=7, color=line[0].get_color())
    ticks = bins.drop_duplicates("bin").sort_values("bin")
    ax.set_xticks([_x(b) for b in ticks["bin"]])
    ax.set_xticklabels([bin_label(int(lo), int(hi)) for lo, hi in zip(ticks["lo"], ticks["hi"])],
                       rotation=30, fontsize=8)
    if (ticks["bin"] < 0).any():
        ax.axvline(ZERO_X / 2, color="grey", linestyle=":", linewidth=1)
    ax.set_ylim(-5, 105)
    ax.set_xlabel("relevant documents (documents holding both entities), log-binned")
    ax.set_ylabel("accuracy ×100")
    ax.set_title(f"{title}\nbars: {round(100 * level)} % Wilson intervals; n = questions in the bin",
                 fontsize=9)
    ax.legend(fontsize=8)
    return _save(fig, path)


def bins_table(bins: pd.DataFrame) -> str:
    """The printed end of a QA run: accuracy ×100 per bin and model, with its interval and
    the questions and pairs in the bin."""
    from freqgap.analysis.gaps import model_label

    lines = ["accuracy ×100 by relevant documents (interval; questions, pairs)"]
    for (model, revision, k), g in bins.groupby(["model", "revision", "k"], sort=True):
        lines.append(f"{model_label(model, revision)} (k={k})")
        for r in g.sort_values("bin").itertuples():
            lines.append(f"  ω {bin_label(int(r.lo), int(r.hi)):>9}: {100 * r.accuracy:5.1f} "
                         f"[{100 * r.ci_low:.1f}, {100 * r.ci_high:.1f}]  "
                         f"({r.n_rows} questions, {r.n_keys} pairs)")
    return "\n".join(lines)


def delta_lines(gaps: pd.DataFrame) -> str:
    """Δ of each model with its interval and (seen/unseen pairs), as the gaps tables print
    a cell; the reason where Δ is withheld."""
    from freqgap.analysis.gaps import _cell, model_label

    lines = ["Δ ×100 (top − bottom bin of pairs by relevant documents) [interval] (seen/unseen pairs)"]
    for r in gaps.sort_values(["model", "revision", "k"]).itertuples():
        reason = f" — {r.withheld_reason}" if isinstance(r.withheld_reason, str) else ""
        lines.append(f"  {model_label(r.model, r.revision)} (k={r.k}): accuracy "
                     f"{100 * r.accuracy:.1f}, Δ {_cell(r, True)}{reason}")
    return "\n".join(lines)
