"""Runtime dependencies are what the package imports (issue 42, item 4): polars, imported
by no module, is a development extra (a test reads the counts with it), not a requirement."""

from __future__ import annotations

import ast
import tomllib

from tests.cli.test_help import REPO


def test_polars_is_not_a_runtime_dependency_and_no_module_imports_it():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not any(d.startswith("polars") for d in project["dependencies"])
    assert any(d.startswith("polars") for d in project["optional-dependencies"]["dev"])
    importers = []
    for path in (REPO / "freqgap").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "polars" or n.startswith("polars.") for n in names):
                importers.append(str(path))
    assert importers == []
