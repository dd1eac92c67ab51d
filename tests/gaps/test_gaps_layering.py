"""freqgap.gaps imports only the layers below it, and freqgap.analysis.gaps no stage at all.

Layers (README): base < analysis < corpus < counting < instances < inference < training <
gaps < suites < dynamics < workflows < cli. Every import inside a function counts too.
"""

from __future__ import annotations

import ast

from freqgap.paths import REPO_ROOT

BASE = {"errors", "paths", "config", "manifest", "contract", "progress", "spark_session",
        "jsonl"}
BELOW_GAPS = BASE | {"analysis", "corpus", "counting", "instances", "inference", "training",
                     "gaps"}


def freqgap_imports(path) -> set[str]:
    """The first component after `freqgap.` of every module the file imports."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        found |= {n.split(".")[1] for n in names if n.startswith("freqgap.") and "." in n}
    return found


def test_gaps_imports_nothing_above_it():
    files = sorted((REPO_ROOT / "freqgap" / "gaps").glob("*.py"))
    assert len(files) >= 8
    bad = {p.name: freqgap_imports(p) - BELOW_GAPS for p in files}
    assert not any(bad.values()), bad


def test_analysis_gaps_imports_no_stage():
    assert freqgap_imports(REPO_ROOT / "freqgap" / "analysis" / "gaps.py") <= BASE
