"""Outputs ready for a paper (issue 40, item 4): the .tex tables compile with a real
pdflatex (skipped where none is installed) and are plain ASCII with \\label and macros for
Δ/ω; no `-0.0`; one spelling of the scale; binned plots carry interval bars and bin sizes
and draw a withheld group as withheld; a Δ-by-model-size plot when there are several
models."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from freqgap.analysis import gaps as A
from freqgap.gaps.run import run_gaps
from tests.gaps.fixtures import options_for, random_world


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    root = tmp_path_factory.mktemp("paper")
    world = random_world(root / "w", seed=5, models=("pythia-70m", "pythia-410m"))
    res = run_gaps(options_for(world, root / "results", boot_reps=20, make_plots=True))
    return res


def test_tex_is_ascii_with_labels_and_macros(tables):
    texs = sorted(tables.results_dir.glob("table_*.tex"))
    assert texs
    for tex in texs:
        text = tex.read_text(encoding="utf-8")
        assert text.isascii(), [c for c in text if not c.isascii()][:5]
        assert r"\providecommand{\fgDelta}" in text and r"\providecommand{\fgOmega}" in text
        assert text.count(r"\label{tab:") == text.count(r"\begin{table}") > 0
        assert r"\toprule" in text and "-0.0 " not in text and "-0.0]" not in text


@pytest.mark.skipif(shutil.which("pdflatex") is None,
                    reason="pdflatex not installed (Debian: texlive-latex-base, "
                           "texlive-latex-recommended)")
def test_tex_compiles_with_pdflatex(tables, tmp_path):
    inputs = "\n".join(rf"\input{{{p.resolve()}}}" for p in
                       sorted(tables.results_dir.glob("table_*.tex")))
    doc = tmp_path / "paper.tex"
    doc.write_text("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
                   f"{inputs}\n\\end{{document}}\n", encoding="utf-8")
    out = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error",
                          doc.name], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-3000:]
    assert (tmp_path / "paper.pdf").stat().st_size > 1000
    assert "Missing character" not in (tmp_path / "paper.log").read_text(errors="replace")


def test_no_negative_zero():
    assert A._pct(-0.0004) == "0.0" and A._pct(-0.0006) == "-0.1" and A._pct(0.0) == "0.0"


def test_one_spelling_of_the_scale():
    import inspect

    import freqgap.analysis.dynamics as dyn
    import freqgap.suites.pipeline as pipe

    for module in (A, dyn, pipe):
        assert "(x100" not in inspect.getsource(module)


def test_binned_points_have_intervals_sizes_and_withheld_drawn_as_such():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = pd.DataFrame({"omega": [1, 1, 10, 10, 10, 100, 0],
                         "accuracy": [0.0, 1.0, 0.5, 0.5, 1.0, 1.0, 0.3]})
    b = A.binned(keys, 2)
    assert list(b["n_keys"]) == [2, 3, 1] or list(b["n_keys"]) == [2, 4]
    assert (b["ci_half"].dropna() > 0).all()
    fig, ax = plt.subplots()
    line = A._binned_points(ax, b, "k=2 (Δ withheld)", withheld=True)
    assert line.get_alpha() == pytest.approx(0.45) and line.get_linestyle() == ":"
    assert [t.get_text() for t in ax.texts] == [str(n) for n in b["n_keys"]]
    assert len(ax.collections) == 1                      # the interval bars
    plt.close(fig)


def test_model_size_from_names():
    assert A.model_size("pythia-70m") == 7e7 and A.model_size("gpt-j-6b") == 6e9
    assert A.model_size("pythia-1.4b-deduped") == 1.4e9 and A.model_size("demo") is None
    assert A.model_size("gpt-neo-125M") == 1.25e8


def test_delta_by_model_size_plot(tables):
    names = {p.name for p in tables.plots}
    assert {"delta_by_size_mult.png", "delta_by_size_add.png"} <= names
    one = tables.gaps[tables.gaps["model"] == "pythia-70m"]
    assert A.delta_by_model_size(one, tables.results_dir / "plots", [], {}) == []
