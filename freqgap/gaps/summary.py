"""The short text `make demo` prints: a Table-2-like summary, what it means, where the files are."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from freqgap.gaps.tables import header_for, legend, markdown_table, model_label, table_rows

_DEF_WORDS = {"1": "x1", "1,2": "{x1, x2}", "1,y": "{x1, y}", "1,2,3": "{x1, unit, x3}",
              "1,2,y": "{x1, unit, y}"}


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
    """One sentence that reads one Δ of the table aloud."""
    r = _headline_row(gaps, tables)
    if r is None:
        return "No Δ could be computed (too few keys with ω > 0)."
    task = labels.get(r["task"], r["task"])
    what = _DEF_WORDS.get(r["freq_def"], r["freq_def"])
    text = (f"For example, {model_label(r['model'], r['revision'])} on {task} with k={int(r['k'])} "
            f"answers {100 * r['accuracy']:.1f} % of the test items. Ranked by how often {what} "
            f"occurs in the pretraining corpus, the most frequent {bin_percent} % of keys are "
            f"answered {abs(100 * r['delta']):.1f} points "
            f"{'more' if r['delta'] >= 0 else 'less'} accurately than the least frequent "
            f"{bin_percent} % (Δ{r['freq_def']})")
    if not math.isnan(r.get("ci_low", math.nan)):
        text += f"; 95 % bootstrap interval over keys [{100 * r['ci_low']:.1f}, {100 * r['ci_high']:.1f}]"
    if not math.isnan(r.get("spearman_rho", math.nan)):
        text += f", Spearman ρ(ω, accuracy) = {r['spearman_rho']:.2f}"
    text += (". Δ near 0 means frequency makes no difference; an interval entirely above 0 means "
             "the model is reliably better on terms it saw more often in training.")
    if r["n_unseen_keys"]:
        text += f" {int(r['n_unseen_keys'])} key(s) never seen in the corpus were left out."
    return text


def summary_text(gaps: pd.DataFrame, tables: dict, labels: dict[str, str], binning: str,
                 bin_percent: int, level: float, results_dir: Path, plots: list[Path]) -> str:
    """The printed summary: every table with data, a sentence, and the paths."""
    out = []
    for name, spec in tables.items():
        per_model = table_rows(gaps, spec, labels)
        if not per_model:
            continue
        out.append(spec.get("title", name))
        for label, rows in per_model.items():
            out += ["", label, markdown_table(header_for(spec), rows)]
        out.append("")
    out.append(legend(binning, bin_percent, level))
    out += ["", _headline(gaps, tables, labels, bin_percent), ""]
    out.append(f"Results in {results_dir}: gaps.parquet, per_key.parquet, table_*.md/.tex and "
               f"freqgap.duckdb; ask it anything with `duckdb {results_dir / 'freqgap.duckdb'}` "
               f"or `python jobs/gaps.py --results {results_dir} --query \"SELECT * FROM gaps\"`.")
    if plots:
        out.append("Plots:")
        out += [f"  {p}" for p in plots]
    return "\n".join(out)
