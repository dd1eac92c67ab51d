"""Tables shaped like the paper's Table 2 (arithmetic) and Table 3 (time units).

One table per model: a row per (task, k), columns Acc and one Δ per frequency definition,
all ×100 as in the paper, each Δ with its bootstrap interval. Markdown for reading,
LaTeX for papers.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

DEF_MD = {"1": "Δ1", "1,2": "Δ1,2", "1,y": "Δ1,y", "1,2,3": "Δ1,2,3", "1,2,y": "Δ1,2,y"}


def _pct(x: Any) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}"


def _cell(row: Any, with_ci: bool) -> str:
    """One Δ cell: value and interval of a gaps row (a namedtuple), or a dash."""
    if row is None:
        return "–"
    text = _pct(row.delta)
    low = getattr(row, "ci_low", None)
    if with_ci and text != "–" and low is not None and not math.isnan(low):
        text += f" [{_pct(low)}, {_pct(row.ci_high)}]"
    return text


def slug(text: str) -> str:
    """A file-name-safe version of a model or task name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


def model_label(model: str, revision: str) -> str:
    """`model` or `model@revision`."""
    return f"{model}@{revision}" if revision else model


def table_rows(gaps: pd.DataFrame, spec: dict[str, Any], labels: dict[str, str],
               with_ci: bool = True) -> dict[str, list[list[str]]]:
    """{model label: rows [task label, k, Acc, Δ…]} for the tasks of `spec` present in gaps."""
    defs = [str(d) for d in spec.get("freq_defs", [])]
    tasks = [t for t in spec.get("tasks", []) if t in set(gaps["task"])]
    out: dict[str, list[list[str]]] = {}
    if not tasks:
        return out
    index = {(r.model, r.revision, r.task, int(r.k), r.freq_def): r
             for r in gaps.itertuples(index=False)}
    for (model, revision), g in gaps.groupby(["model", "revision"], sort=True):
        rows = []
        for task in tasks:
            ks = sorted(int(k) for k in g.loc[g["task"] == task, "k"].unique())
            for k in ks:
                found = [index.get((model, revision, task, k, d)) for d in defs]
                acc = next((f.accuracy for f in found if f is not None), None)
                if acc is None:
                    sub = g[(g["task"] == task) & (g["k"] == k)]
                    acc = sub["accuracy"].iloc[0] if len(sub) else None
                cells = [_cell(f, with_ci) for f in found]
                rows.append([labels.get(task, task), str(k), _pct(acc)] + cells)
        if rows:
            out[model_label(model, revision)] = rows
    return out


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A GitHub Markdown table."""
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i < 2 else "---:" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _latex_escape(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("#", r"\#"),
                 ("_", r"\_"), ("→", r"$\to$"), ("–", "--")):
        text = text.replace(a, b)
    return text


def latex_table(header: list[str], rows: list[list[str]], caption: str) -> str:
    """A booktabs LaTeX table."""
    def head(h: str) -> str:
        if h.startswith("Δ"):
            return f"$\\Delta_{{{h[1:]}}}$"
        return _latex_escape(h)
    cols = "ll" + "r" * (len(header) - 2)
    lines = [r"\begin{table}[t]", r"\centering", r"\small", f"\\begin{{tabular}}{{{cols}}}",
             r"\toprule", " & ".join(head(h) for h in header) + r" \\", r"\midrule"]
    lines += [" & ".join(_latex_escape(c) for c in r) + r" \\" for r in rows]
    lines += [r"\bottomrule", r"\end{tabular}", f"\\caption{{{_latex_escape(caption)}}}",
              r"\end{table}"]
    return "\n".join(lines)


def header_for(spec: dict[str, Any]) -> list[str]:
    """Task, k, Acc and one Δ column per frequency definition of the spec."""
    return ["Task", "k", "Acc"] + [DEF_MD.get(str(d), f"Δ{d}") for d in spec.get("freq_defs", [])]


def legend(binning: str, bin_percent: int, level: float) -> str:
    """What the numbers in a table mean, printed under it."""
    how = (f"top − bottom {bin_percent} % of keys ranked by ω" if binning == "rank" else
           f"keys above the {100 - bin_percent}th − at or below the {bin_percent}th percentile of ω")
    return (f"Acc: accuracy over all test rows, seeds pooled. Δ: mean accuracy of the {how} "
            f"(keys unweighted; keys with ω = 0 left out). ×100; in brackets a bootstrap "
            f"{100 * level:.0f} % interval over keys.")


def render_tables(gaps: pd.DataFrame, tables: dict[str, dict[str, Any]], labels: dict[str, str],
                  binning: str, bin_percent: int, level: float) -> dict[str, str]:
    """{file name: text} for every table spec with data: <name>.md and <name>.tex."""
    files: dict[str, str] = {}
    for name, spec in tables.items():
        per_model = table_rows(gaps, spec, labels)
        if not per_model:
            continue
        header = header_for(spec)
        title = spec.get("title", name)
        md = [f"# {title}", ""]
        tex = []
        for label, rows in per_model.items():
            md += [f"## {label}", "", markdown_table(header, rows), ""]
            tex += [latex_table(header, rows, f"{title}: {label}. " +
                                legend(binning, bin_percent, level)), ""]
        md.append(legend(binning, bin_percent, level))
        files[f"{name}.md"] = "\n".join(md) + "\n"
        files[f"{name}.tex"] = "\n".join(tex)
    return files
