"""The import graph of the package: no cycle, and no module importing a layer above its own.

Layers, bottom to top (README "Layout"):
  base       freqgap.errors, paths, config, manifest, contract, progress, jsonl, outdir: the
             project's vocabulary
  runtime    freqgap.runtime.*  (what only makes Spark start or run faster; one switch off)
  session    freqgap.spark_session  (the Spark session, with or without the runtime wing)
  analysis   freqgap.analysis.*  (tables, plots, reports: plain data in, never a stage)
  stages     corpus < counting < instances < inference < training < gaps < suites < dynamics
  workflows  freqgap.workflows.*  (orchestration: demo chain, simulate)
  cli        freqgap.cli.*  (the `freqgap` command) and Spark's entry point into the package,
             freqgap.runtime.worker_daemon (it preloads the counting code)
A module may import its own layer (its own stage) and the layers below. Every import
counts, including those inside functions (they run too, only later), read with `ast`.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "freqgap"
BASE = ("errors", "paths", "config", "manifest", "contract", "progress", "outdir", "jsonl")
STAGES = ("corpus", "counting", "instances", "inference", "training", "gaps", "suites", "dynamics")
LAYERS = ("base", "runtime", "session", "analysis", *STAGES, "workflows", "cli")
ENTRY_POINTS = ("freqgap.runtime.worker_daemon",)   # run by Spark, above what they load


def modules() -> dict[str, Path]:
    """Dotted name -> file of every module of the package (a package is its __init__)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_data" in path.parts:
            continue
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The known module a dotted import name refers to (longest known prefix)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known:
            return candidate
        parts.pop()
    return None


def imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that `module` imports anywhere in its file."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            # `from pkg import sub` imports the submodule pkg.sub when there is one
            names = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in known else prefix
                     for a in node.names]
        for name in names:
            if name == "freqgap" or name.startswith("freqgap."):
                target = _resolve(name, known)
                if target and target != module:
                    found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    return {m: imports(m, p, known) for m, p in known.items()}


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in BASE:
        return "base"
    if parts[1] == "__main__" or module in ENTRY_POINTS:
        return "cli"
    if parts[1] == "spark_session":
        return "session"
    if parts[1] in LAYERS:
        return parts[1]
    raise AssertionError(f"{module}: not in the layer table of tests/test_layering.py; add its "
                         "package to BASE, STAGES or the layers (and to README's Layout)")


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        work = [(v, iter(sorted(g[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(g[w]))))
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return sorted(out)


def test_the_graph_is_read():
    g = graph()
    assert len(g) > 50
    assert "freqgap.counting.job" in g["freqgap.cli.count"]       # a function-level import
    assert "freqgap.analysis.simulate" in g["freqgap.workflows.simulate"]


def test_no_import_cycle():
    g = graph()
    found = cycles(g)
    edges = ["; ".join(f"{a} -> {b}" for a in c for b in sorted(g[a]) if b in c) for c in found]
    assert found == [], "import cycles (break each, e.g. by moving the shared code down " \
        "into its own module): " + " | ".join(edges)


def test_no_module_imports_a_layer_above_its_own():
    rank = {name: i for i, name in enumerate(LAYERS)}
    bad = []
    for module, targets in sorted(graph().items()):
        for target in sorted(targets):
            here, there = layer(module), layer(target)
            if rank[there] > rank[here]:
                bad.append(f"{module} ({here}) imports {target} ({there})")
    assert bad == [], "layering violated:\n  " + "\n  ".join(bad)


def test_the_package_root_keeps_only_the_vocabulary():
    """Every module at the root is base vocabulary or the Spark session; start-up tricks
    live in freqgap.runtime."""
    root = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "__main__"}
    assert root == set(BASE) | {"spark_session"}, root ^ (set(BASE) | {"spark_session"})


def test_heavy_libraries_are_lazy_where_the_cli_builds_its_parsers():
    """Modules the parsers import must not import torch & co at module level."""
    heavy = {"torch", "transformers", "pyspark", "duckdb", "matplotlib", "polars", "pandas",
             "pyarrow", "numpy"}
    known = modules()
    bad = []
    for module in [m for m in known if m.startswith("freqgap.cli")] + \
            ["freqgap", "freqgap.errors", "freqgap.paths", "freqgap.config"]:
        tree = ast.parse(known[module].read_text(encoding="utf-8"))
        for node in tree.body:                       # module level only
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            bad += [f"{module}: {n}" for n in names if n.split(".")[0] in heavy]
    assert bad == []
