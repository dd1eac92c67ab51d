"""Tables, the printed summary and the plots of `freqgap gaps`, from its plain frames.

Takes the gaps and per_key frames (docs/gaps.md lists their columns) and configuration dicts;
imports no stage. Tables are shaped like the paper's Table 2 (arithmetic) and Table 3 (time
units): a row per (task, k), Acc and one Δ per frequency definition, ×100, each Δ with its
interval and the number of seen/unseen keys behind it; "—" where Δ is withheld. Plots follow
the paper's figures, with the logistic fit drawn over the binned points, and Δ against k.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

DEF_MD = {"1": "Δ1", "1,2": "Δ1,2", "1,y": "Δ1,y", "1,2,3": "Δ1,2,3", "1,2,y": "Δ1,2,y"}
DEF_WORDS = {"1": "x1", "1,2": "{x1, x2}", "1,y": "{x1, y}", "1,2,3": "{x1, unit, x3}",
             "1,2,y": "{x1, unit, y}"}
WITHHELD = "—"


def _nan(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _pct(x: Any) -> str:
    """x ×100 with one decimal; a value that rounds to zero is `0.0`, never `-0.0`."""
    if _nan(x):
        return "–"
    text = f"{100 * x:.1f}"
    return "0.0" if text == "-0.0" else text


def slug(text: str) -> str:
    """A file-name-safe version of a model or task name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


def model_label(model: str, revision: str) -> str:
    """`model` or `model@revision`."""
    return f"{model}@{revision}" if revision else model


def _keys(row: Any) -> str:
    return f"({int(row.n_keys)}/{int(row.n_unseen_keys)})"


def _cell(row: Any, with_ci: bool) -> str:
    """One Δ cell: value, interval and (seen/unseen keys), or "—" and the keys when withheld."""
    if row is None:
        return "–"
    if _nan(row.delta):
        return f"{WITHHELD} {_keys(row)}"
    text = _pct(row.delta)
    low = getattr(row, "ci_low", None)
    if with_ci and not _nan(low):
        text += f" [{_pct(low)}, {_pct(row.ci_high)}]"
    return f"{text} {_keys(row)}"


def _is_reference_model(model: str, reference: dict[str, Any]) -> bool:
    pattern = str(reference.get("model_pattern") or "")
    return bool(pattern) and re.search(pattern, model, re.I) is not None


def _reference_row(reference: dict[str, Any], task: str, k: int, defs: list[str],
                   label: str) -> list[str] | None:
    """The paper's figures (SPEC §6) for one (task, k), in the table's columns, or None."""
    figs = ((reference.get("figures") or {}).get(task) or {}).get(k) \
        or ((reference.get("figures") or {}).get(task) or {}).get(str(k))
    if not figs:
        return None
    fmt = lambda v: "–" if v is None else f"{float(v):.1f}"   # noqa: E731
    return [f"{label} (paper)", str(k), fmt(figs.get("acc"))] + [fmt(figs.get(d)) for d in defs]


def table_rows(gaps: pd.DataFrame, spec: dict[str, Any], labels: dict[str, str],
               with_ci: bool = True, reference: dict[str, Any] | None = None
               ) -> dict[str, list[list[str]]]:
    """{model label: rows [task label, k, Acc, Δ…]} for the tasks of `spec` present in gaps;
    under a row of a reference model (GPT-J-6B) the paper's figures for it, when it has some."""
    defs = [str(d) for d in spec.get("freq_defs", [])]
    tasks = [t for t in spec.get("tasks", []) if t in set(gaps["task"])]
    out: dict[str, list[list[str]]] = {}
    if not tasks:
        return out
    index = {(r.model, r.revision, r.task, int(r.k), r.freq_def): r
             for r in gaps.itertuples(index=False)}
    for (model, revision), g in gaps.groupby(["model", "revision"], sort=True):
        ref = reference if reference and _is_reference_model(model, reference) else None
        rows = []
        for task in tasks:
            ks = sorted(int(k) for k in g.loc[g["task"] == task, "k"].unique())
            for k in ks:
                found = [index.get((model, revision, task, k, d)) for d in defs]
                sub = g[(g["task"] == task) & (g["k"] == k)]
                acc = sub["accuracy"].iloc[0] if len(sub) else None
                rows.append([labels.get(task, task), str(k), _pct(acc)] +
                            [_cell(f, with_ci) for f in found])
                paper = _reference_row(ref, task, k, defs, labels.get(task, task)) if ref else None
                if paper:
                    rows.append(paper)
        if rows:
            out[model_label(model, revision)] = rows
    return out


def missing_grid(gaps: pd.DataFrame, spec: dict[str, Any], grid_k: list[int]) -> list[str]:
    """'model task: k=4, 8' for every (model, task) of the table lacking a k of the paper's grid."""
    notes = []
    tasks = [t for t in spec.get("tasks", []) if t in set(gaps["task"])]
    for (model, revision), g in gaps.groupby(["model", "revision"], sort=True):
        for task in tasks:
            have = {int(k) for k in g.loc[g["task"] == task, "k"]}
            lack = [k for k in grid_k if k not in have]
            if have and lack:
                notes.append(f"{model_label(model, revision)} {task}: k={', '.join(map(str, lack))}")
    return notes


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A GitHub Markdown table."""
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i < 2 else "---:" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


# Plain pdflatex reads ASCII (and the Latin letters of utf8 inputenc), not Δ, ω or −: each
# symbol of the tables becomes a macro or math. \fgDelta and \fgOmega are defined with
# \providecommand at the top of every .tex, so a paper can restyle them.
LATEX_PREAMBLE = [
    "% freqgap tables: \\input this file in a document that loads booktabs",
    "% (\\usepackage{booktabs}); define \\fgDelta or \\fgOmega first to restyle the symbols.",
    "\\providecommand{\\fgDelta}{\\ensuremath{\\Delta}}",
    "\\providecommand{\\fgOmega}{\\ensuremath{\\omega}}",
]
LATEX_SYMBOLS = (("\\", r"\textbackslash{}"), ("{", r"\{"), ("}", r"\}"), ("&", r"\&"),
                 ("%", r"\%"), ("#", r"\#"), ("$", r"\$"), ("_", r"\_"), ("~", r"\textasciitilde{}"),
                 ("^", r"\textasciicircum{}"), ("Δ", r"\fgDelta{}"), ("ω", r"\fgOmega{}"),
                 ("ρ", r"\ensuremath{\rho}"), ("−", r"\ensuremath{-}"),
                 ("×", r"\ensuremath{\times}"), ("→", r"\ensuremath{\to}"),
                 ("≥", r"\ensuremath{\geq}"), ("≤", r"\ensuremath{\leq}"), ("…", r"\ldots{}"),
                 ("–", "--"), ("—", "---"))


def _latex_escape(text: str) -> str:
    """Text as pdflatex typesets it: specials escaped, the tables' symbols as macros."""
    out = []
    for ch in text:
        out.append(next((b for a, b in LATEX_SYMBOLS if a == ch), ch))
    return "".join(out)


def latex_label(*parts: str) -> str:
    """`tab:arithmetic:gpt-j-6b`: a \\label key from the table and model names."""
    return "tab:" + ":".join(slug(p).lower() for p in parts)


def latex_table(header: list[str], rows: list[list[str]], caption: str,
                label: str | None = None) -> str:
    """A booktabs LaTeX table with a \\label, compiling under plain pdflatex."""
    def head(h: str) -> str:
        if h.startswith("Δ"):
            return f"$\\fgDelta_{{{h[1:]}}}$"
        return _latex_escape(h)
    cols = "ll" + "r" * (len(header) - 2)
    lines = [r"\begin{table}[t]", r"\centering", r"\small", f"\\begin{{tabular}}{{{cols}}}",
             r"\toprule", " & ".join(head(h) for h in header) + r" \\", r"\midrule"]
    lines += [" & ".join(_latex_escape(c) for c in r) + r" \\" for r in rows]
    lines += [r"\bottomrule", r"\end{tabular}", f"\\caption{{{_latex_escape(caption)}}}"]
    if label:
        lines.append(f"\\label{{{label}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines)


def header_for(spec: dict[str, Any]) -> list[str]:
    """Task, k, Acc and one Δ column per frequency definition of the spec."""
    return ["Task", "k", "Acc"] + [DEF_MD.get(str(d), f"Δ{d}") for d in spec.get("freq_defs", [])]


def _interval_words(kind: str | None, level: float) -> str:
    what = ("resampling the seeds (the draws of the k shots), then the keys" if kind == "seeds+keys"
            else "resampling the keys")
    return f"a {100 * level:.0f} % bootstrap interval {what}"


def legend(binning: str, bin_percent: int, level: float, min_seen_keys: int | None = None,
           kind: str | None = None) -> str:
    """What the numbers in a table mean, printed under it."""
    how = (f"top − bottom {bin_percent} % of keys ranked by ω" if binning == "rank" else
           f"last − first of {100 // bin_percent} quantile bins of ω (left-closed, as the "
           "original code)")
    text = (f"Acc: accuracy over all test rows, seeds pooled. Δ: mean accuracy of the {how} "
            f"(keys unweighted; keys with ω = 0 left out). ×100; in brackets "
            f"{_interval_words(kind, level)}; in parentheses the seen/unseen keys.")
    if min_seen_keys:
        text += (f" {WITHHELD}: Δ withheld, fewer than {min_seen_keys} seen keys (or bins that "
                 "would overlap).")
    return text


def _kind(gaps: pd.DataFrame) -> str | None:
    kinds = gaps["ci_kind"].dropna().unique() if "ci_kind" in gaps else []
    return str(kinds[0]) if len(kinds) else None


def _min_keys(gaps: pd.DataFrame) -> int | None:
    return int(gaps["min_seen_keys"].iloc[0]) if "min_seen_keys" in gaps and len(gaps) else None


def render_tables(gaps: pd.DataFrame, tables: dict[str, dict[str, Any]], labels: dict[str, str],
                  binning: str, bin_percent: int, level: float,
                  reference: dict[str, Any] | None = None,
                  grid_k: list[int] | None = None) -> dict[str, str]:
    """{file name: text} for every table spec with data: <name>.md and <name>.tex."""
    files: dict[str, str] = {}
    leg = legend(binning, bin_percent, level, _min_keys(gaps), _kind(gaps))
    for name, spec in tables.items():
        per_model = table_rows(gaps, spec, labels, reference=reference)
        if not per_model:
            continue
        header = header_for(spec)
        title = spec.get("title", name)
        md = [f"# {title}", ""]
        tex = list(LATEX_PREAMBLE) + [""]
        for label, rows in per_model.items():
            md += [f"## {label}", "", markdown_table(header, rows), ""]
            tex += [latex_table(header, rows, f"{title}: {label}. " + leg,
                                label=latex_label(name, label)), ""]
        lack = missing_grid(gaps, spec, list(grid_k or []))
        if lack:
            md.append("Not the paper's full grid; missing " + "; ".join(lack) + ".")
            md.append("")
        md.append(leg)
        files[f"{name}.md"] = "\n".join(md) + "\n"
        files[f"{name}.tex"] = "\n".join(tex)
    return files


# ---- the printed summary -------------------------------------------------------------------

def _headline_row(gaps: pd.DataFrame, tables: dict) -> pd.Series | None:
    """The row the sentence describes, chosen by rule rather than by size: the first task of
    the first table that has data, the first model, k = 2 if present (the paper's reference
    setting) else the smallest k, the table's first frequency definition."""
    rows = gaps.dropna(subset=["delta"])
    for spec in tables.values():
        for task in spec.get("tasks", []):
            for d in [str(x) for x in spec.get("freq_defs", [])]:
                sub = rows[(rows["task"] == task) & (rows["freq_def"] == d)]
                if sub.empty:
                    continue
                sub = sub.sort_values(["model", "revision", "k"])
                sub = sub[(sub["model"] == sub["model"].iloc[0]) &
                          (sub["revision"] == sub["revision"].iloc[0])]
                at2 = sub[sub["k"] == 2]
                return (at2 if not at2.empty else sub).iloc[0]
    return rows.sort_values(["model", "revision", "task", "k", "freq_def"]).iloc[0] \
        if not rows.empty else None


def _headline(gaps: pd.DataFrame, tables: dict, labels: dict[str, str], bin_percent: int) -> str:
    """A few sentences that read one Δ of the table aloud, with its interval, the spread over
    seeds and the logistic slope."""
    r = _headline_row(gaps, tables)
    if r is None:
        return "No Δ could be computed (too few keys with ω > 0)."
    task = labels.get(r["task"], r["task"])
    what = DEF_WORDS.get(r["freq_def"], r["freq_def"])
    text = (f"For example, {model_label(r['model'], r['revision'])} on {task} with k={int(r['k'])} "
            f"answers {100 * r['accuracy']:.1f} % of the test items. Ranked by how often {what} "
            f"occurs in the pretraining corpus, the most frequent {bin_percent} % of its "
            f"{int(r['n_keys'])} seen keys are answered {abs(100 * r['delta']):.1f} points "
            f"{'more' if r['delta'] >= 0 else 'less'} accurately than the least frequent "
            f"{bin_percent} % (Δ{r['freq_def']})")
    if not _nan(r.get("ci_low")):
        text += (f"; {_interval_words(r.get('ci_kind'), r.get('ci_level', 0.95))}: "
                 f"[{100 * r['ci_low']:.1f}, {100 * r['ci_high']:.1f}]")
    if not _nan(r.get("spearman_rho")):
        text += f", Spearman ρ(ω, accuracy) = {r['spearman_rho']:.2f}"
    text += ". "
    if int(r.get("n_seed_deltas") or 0) >= 2:
        text += (f"Each seed (draw of the shots) alone gives Δ from {100 * r['delta_seed_min']:.1f} "
                 f"to {100 * r['delta_seed_max']:.1f} (sd {100 * r['delta_seed_sd']:.1f} over "
                 f"{int(r['n_seed_deltas'])} seeds). ")
    if not _nan(r.get("logit_slope")):
        text += (f"A logistic regression of each answer's correctness on log10 ω gives a slope of "
                 f"{r['logit_slope']:.2f} per tenfold ω (95 % Wald interval "
                 f"[{r['logit_slope_low']:.2f}, {r['logit_slope_high']:.2f}]; > 0: more frequent, "
                 "more often right). ")
    text += ("Δ near 0 means frequency makes no difference; an interval entirely above 0 means "
             "the model is reliably better on terms it saw more often in training.")
    if r["n_unseen_keys"]:
        text += f" {int(r['n_unseen_keys'])} key(s) never seen in the corpus were left out."
    return text


def _withheld_words(gaps: pd.DataFrame) -> str | None:
    """One sentence on the groups whose Δ is withheld, or None."""
    if "withheld_reason" not in gaps:
        return None
    held = gaps[gaps["withheld_reason"].notna()]
    if held.empty:
        return None
    few = held[held["withheld_reason"].str.contains("fewer than", na=False)]
    examples = ", ".join(f"{r.task} k={int(r.k)} Δ{r.freq_def} ({int(r.n_keys)} keys)"
                         for r in few.head(4).itertuples())
    text = (f"{len(held)} of {len(gaps)} Δ are withheld ({WITHHELD} in the tables): too little "
            f"evidence")
    if len(few):
        text += (f", fewer than {int(few['min_seen_keys'].iloc[0])} keys with ω > 0 behind them, "
                 f"e.g. {examples}")
    return text + "; see withheld_reason in gaps.parquet."


def summary_text(gaps: pd.DataFrame, tables: dict, labels: dict[str, str], binning: str,
                 bin_percent: int, level: float, results_dir: Path, plots: list[Path],
                 reference: dict[str, Any] | None = None) -> str:
    """The printed summary: every table with data, sentences that read it, and the paths."""
    out = []
    for name, spec in tables.items():
        per_model = table_rows(gaps, spec, labels, reference=reference)
        if not per_model:
            continue
        out.append(spec.get("title", name))
        for label, rows in per_model.items():
            out += ["", label, markdown_table(header_for(spec), rows)]
        out.append("")
    out.append(legend(binning, bin_percent, level, _min_keys(gaps), _kind(gaps)))
    out += ["", _headline(gaps, tables, labels, bin_percent)]
    held = _withheld_words(gaps)
    if held:
        out += ["", held]
    out.append("")
    out.append(f"Results in {results_dir}: gaps.parquet, per_key.parquet, table_*.md/.tex and "
               f"freqgap.duckdb; ask it anything with `freqgap query \"SELECT * FROM gaps\" "
               f"--results {results_dir}` or `duckdb {results_dir / 'freqgap.duckdb'}`.")
    if plots:
        out.append("Plots:")
        out += [f"  {p}" for p in plots]
    return "\n".join(out)


# ---- plots ---------------------------------------------------------------------------------

def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def binned(keys: pd.DataFrame, n_bins: int) -> pd.DataFrame:
    """Seen keys in n_bins equal-width bins of log ω: geometric-mean ω, mean accuracy.

    Keys are unweighted, as in Δ; empty bins are dropped.
    """
    seen = keys[keys["omega"] > 0]
    if seen.empty:
        return pd.DataFrame(columns=["omega", "accuracy", "n_keys", "ci_half"])
    logw = np.log10(seen["omega"].to_numpy(dtype=float))
    lo, hi = logw.min(), logw.max()
    edges = np.linspace(lo, hi, n_bins + 1) if hi > lo else np.array([lo, lo + 1])
    which = np.clip(np.searchsorted(edges, logw, side="right") - 1, 0, len(edges) - 2)
    acc = seen["accuracy"].to_numpy(dtype=float)
    rows = []
    for b in np.unique(which):
        a = acc[which == b]
        # the normal-approximation 95 % interval of the bin's mean over its keys (none for
        # a bin of one key): what the bars of the binned plots show
        half = 1.96 * a.std(ddof=1) / math.sqrt(len(a)) if len(a) > 1 else float("nan")
        rows.append({"omega": float(10 ** logw[which == b].mean()), "accuracy": float(a.mean()),
                     "n_keys": int(len(a)), "ci_half": float(half)})
    return pd.DataFrame(rows, columns=["omega", "accuracy", "n_keys", "ci_half"])


def logistic_curve(intercept: float, slope: float, omega: np.ndarray) -> np.ndarray:
    """P(correct) = 1 / (1 + exp(-(b0 + b1 log10 ω))), the model of logit_* in gaps."""
    return 1.0 / (1.0 + np.exp(-(intercept + slope * np.log10(omega))))


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
    plt = _plt()
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=110, bbox_inches="tight")
    plt.close(fig)
    tmp.replace(path)
    return path


def figure1(per_key: pd.DataFrame, out_dir: Path, conf: dict[str, Any],
            labels: dict[str, str]) -> list[Path]:
    """Accuracy of each x1 against ω{x1}, one PNG per (model, task), one colour per k."""
    plt = _plt()
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


def binned_figures(per_key: pd.DataFrame, gaps: pd.DataFrame, out_dir: Path, n_bins: int,
                   def_order: list[str], labels: dict[str, str]) -> list[Path]:
    """Figures 3-5: per (model, task) one panel per definition, a line per k, and the fitted
    logistic curve of that k dashed over its points (where the slope is not withheld)."""
    plt = _plt()
    fits = {(r.model, r.revision, r.task, int(r.k), r.freq_def): r
            for r in gaps.itertuples(index=False)} if "logit_slope" in gaps else {}
    paths = []
    for (model, revision, task), g in per_key.groupby(["model", "revision", "task"], sort=True):
        defs = [d for d in def_order if d in set(g["freq_def"])]
        defs += sorted(set(g["freq_def"]) - set(defs))
        fig, axes = plt.subplots(1, len(defs), figsize=(4.2 * len(defs), 3.6), squeeze=False)
        for ax, d in zip(axes[0], defs):
            gd = g[g["freq_def"] == d]
            for k in sorted(int(k) for k in gd["k"].unique()):
                b = binned(gd[gd["k"] == k], n_bins)
                if not len(b):
                    continue
                fit = fits.get((model, revision, task, k, d))
                held = fit is not None and _nan(fit.delta)
                line = _binned_points(ax, b, f"k={k}" + (" (Δ withheld)" if held else ""), held)
                if fit is not None and not held and not _nan(fit.logit_slope):
                    seen = gd[(gd["k"] == k) & (gd["omega"] > 0)]["omega"].to_numpy(dtype=float)
                    w = np.geomspace(seen.min(), seen.max(), 50)
                    ax.plot(w, logistic_curve(fit.logit_intercept, fit.logit_slope, w), ls="--",
                            lw=1, color=line.get_color())
            ax.set_xscale("log")
            ax.set_xlabel(f"ω{{{d}}} (bin of log ω)")
            ax.set_ylabel("mean accuracy of keys in bin")
            ax.set_ylim(-0.03, 1.03)
            ax.set_title(f"{labels.get(task, task)}: {{{d}}}", fontsize=9)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7)
            else:
                ax.text(0.5, 0.5, "no key with ω > 0", transform=ax.transAxes, ha="center")
        fig.suptitle(f"{model_label(model, revision)} (dashed: logistic fit; bars: 95 % "
                     "interval of a bin's mean; numbers: keys in the bin)", fontsize=9)
        name = f"binned_{slug(model_label(model, revision))}_{slug(task)}.png"
        paths.append(_save(fig, out_dir / name))
    return paths


def _binned_points(ax, b: pd.DataFrame, label: str, withheld: bool = False):
    """One binned curve: points with their interval bars and each bin's number of keys;
    a group whose Δ is withheld is drawn hollow and faint, and says so in its label."""
    y = b["accuracy"].to_numpy(dtype=float)
    half = np.nan_to_num(b["ci_half"].to_numpy(dtype=float))
    err = np.vstack([np.minimum(half, y), np.minimum(half, 1 - y)])   # within [0, 1]
    style = dict(marker="o", ms=3, capsize=2, lw=1, label=label)
    if withheld:
        style.update(mfc="none", alpha=0.45, ls=":")
    bars = ax.errorbar(b["omega"], b["accuracy"], yerr=err, **style)
    for x, y, n in zip(b["omega"], b["accuracy"], b["n_keys"]):
        ax.annotate(str(int(n)), (x, y), textcoords="offset points", xytext=(0, 4),
                    fontsize=5, ha="center", color=bars.lines[0].get_color(),
                    alpha=0.45 if withheld else 0.9)
    return bars.lines[0]


def _delta_line(ax, x: pd.Series, gd: pd.DataFrame, freq_def: str) -> None:
    """One definition's Δ (×100) against x, its interval as error bars (a withheld Δ is a
    gap in the line)."""
    y = 100 * gd["delta"].astype(float).to_numpy()
    lo = 100 * gd["ci_low"].astype(float).to_numpy()
    hi = 100 * gd["ci_high"].astype(float).to_numpy()
    err = np.vstack([np.nan_to_num(y - lo), np.nan_to_num(hi - y)])
    ax.errorbar(x.to_numpy(), y, yerr=err, marker="o", ms=4, capsize=3,
                label=DEF_MD.get(freq_def, f"Δ{freq_def}"))


def model_size(model: str) -> float | None:
    """Parameters named by a model's name (pythia-70m → 7e7, gpt-j-6b → 6e9), else None."""
    m = re.search(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)([kmbt])(?![a-z])", model.lower())
    if not m:
        return None
    return float(m.group(1)) * {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}[m.group(2)]


def delta_by_model_size(gaps: pd.DataFrame, out_dir: Path, def_order: list[str],
                        labels: dict[str, str], k: int | None = None) -> list[Path]:
    """Δ (×100) against model size, one PNG per task when two or more models have a size in
    their name: a line per definition with interval bars, at the configured k when every
    model has it, else the smallest k they share; withheld Δ are left out (and counted)."""
    plt = _plt()
    paths = []
    g0 = gaps.assign(size=[model_size(m) for m in gaps["model"]]).dropna(subset=["size"])
    for task, g in g0.groupby("task", sort=True):
        sizes = g.groupby(["model", "revision"])["size"].first()
        if len(sizes) < 2 or sizes.nunique() < 2:
            continue
        common = set.intersection(*(set(int(x) for x in gm["k"])
                                    for _, gm in g.groupby(["model", "revision"])))
        if not common:
            continue
        kk = k if k is not None and k in common else min(common)
        gk = g[g["k"] == kk]
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        held = 0
        for d in [d for d in def_order if d in set(gk["freq_def"])] + \
                 sorted(set(gk["freq_def"]) - set(def_order)):
            gd = gk[gk["freq_def"] == d].sort_values("size")
            held += int(gd["delta"].isna().sum())
            gd = gd[gd["delta"].notna()]
            if gd.empty:
                continue
            _delta_line(ax, gd["size"], gd, d)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("parameters (from the model names)")
        ax.set_ylabel("Δ (×100)")
        ax.set_title(f"{labels.get(task, task)}, k={kk}: Δ by model size"
                     + (f" ({held} withheld, not drawn)" if held else ""), fontsize=9)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
        paths.append(_save(fig, out_dir / f"delta_by_size_{slug(task)}.png"))
    return paths


def delta_vs_k(gaps: pd.DataFrame, out_dir: Path, def_order: list[str],
               labels: dict[str, str]) -> list[Path]:
    """Δ (×100) against k per (model, task), a line per definition with its interval as error
    bars; withheld Δ are gaps in the line. Drawn when a task has two or more k."""
    plt = _plt()
    paths = []
    for (model, revision, task), g in gaps.groupby(["model", "revision", "task"], sort=True):
        if g["k"].nunique() < 2:
            continue
        defs = [d for d in def_order if d in set(g["freq_def"])]
        defs += sorted(set(g["freq_def"]) - set(defs))
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        for d in defs:
            gd = g[g["freq_def"] == d].sort_values("k")
            _delta_line(ax, gd["k"], gd, d)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xlabel("k (shots)")
        ax.set_ylabel("Δ (×100)")
        ax.set_xticks(sorted(int(k) for k in g["k"].unique()))
        ax.set_title(f"{labels.get(task, task)} — {model_label(model, revision)}", fontsize=9)
        ax.legend(fontsize=8)
        name = f"delta_vs_k_{slug(model_label(model, revision))}_{slug(task)}.png"
        paths.append(_save(fig, out_dir / name))
    return paths


def figure6(per_key: pd.DataFrame, out_dir: Path, n_bins: int, conf: dict[str, Any],
            labels: dict[str, str], gaps: pd.DataFrame | None = None) -> list[Path]:
    """Several models (sizes): binned accuracy per model at one k, one PNG per task.

    Drawn only when per_key holds two or more (model, revision); the k used is the
    configured one when every model has it, else the smallest k all models share.
    """
    plt = _plt()
    paths = []
    d = str(conf.get("freq_def", "1"))
    data = per_key[per_key["freq_def"] == d]
    withheld = set() if gaps is None else {
        (r.model, r.revision, r.task, int(r.k), r.freq_def)
        for r in gaps.itertuples(index=False) if _nan(r.delta)}
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
            held = (m, r, task, k, d) in withheld
            _binned_points(ax, b, model_label(m, r) + (" (Δ withheld)" if held else ""), held)
        ax.set_xscale("log")
        ax.set_xlabel(f"ω{{{d}}} (bin of log ω)")
        ax.set_ylabel("mean accuracy of keys in bin")
        ax.set_ylim(-0.03, 1.03)
        ax.set_title(f"{labels.get(task, task)}, k={k}: models compared", fontsize=9)
        ax.legend(fontsize=8)
        paths.append(_save(fig, out_dir / f"fig6_{slug(task)}.png"))
    return paths


def draw_all(per_key: pd.DataFrame, gaps: pd.DataFrame, out_dir: Path,
             plots_conf: dict[str, Any], tables_conf: dict[str, Any],
             labels: dict[str, str]) -> list[Path]:
    """Every figure; returns the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    def_order: list[str] = []
    for spec in tables_conf.values():
        def_order += [str(d) for d in spec.get("freq_defs", []) if str(d) not in def_order]
    n_bins = int(plots_conf.get("binned_bins", 10))
    paths = figure1(per_key, out_dir, plots_conf.get("figure1", {}), labels)
    paths += binned_figures(per_key, gaps, out_dir, n_bins, def_order, labels)
    paths += delta_vs_k(gaps, out_dir, def_order, labels)
    paths += figure6(per_key, out_dir, n_bins, plots_conf.get("figure6", {}), labels, gaps)
    fig6_k = (plots_conf.get("figure6") or {}).get("k")
    paths += delta_by_model_size(gaps, out_dir, def_order, labels,
                                 k=int(fig6_k) if fig6_k is not None else None)
    return paths
