"""The engine seam: one registry chooses, nothing outside engines/ reaches past it, and no
engine writes a rule of its own."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from freqgap.config import ConfigError
from freqgap.counting import engines

PACKAGE = Path(engines.__file__).resolve().parents[2]          # freqgap/
ENGINES_DIR = Path(engines.__file__).resolve().parent
# numba's cache-loading patch is a start-up trick of the runtime wing: it patches numba
# itself, so it imports numba (and nothing of an engine).
NUMBA_PATCH = PACKAGE / "runtime" / "numba_cache.py"


def imported_names(path: Path) -> list[str]:
    """Every module name `path` imports, at any depth (function-level imports too)."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names += [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
    return names


def test_no_module_outside_engines_imports_numba_or_an_engine_module():
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ENGINES_DIR in path.parents:
            continue
        for name in imported_names(path):
            if name.split(".")[0] == "numba" and path != NUMBA_PATCH:
                bad.append(f"{path.relative_to(PACKAGE)} imports {name}")
            if name.startswith("freqgap.counting.engines.") and \
                    name.split(".")[3] in {p.stem for p in ENGINES_DIR.glob("*.py")} - {"__init__"}:
                bad.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert bad == [], "use freqgap.counting.engines.get_engine():\n  " + "\n  ".join(bad)


def test_the_scan_sees_such_an_import(tmp_path):
    """The check above fails on a module that imports past the seam (it can fail)."""
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from freqgap.counting.engines.compiled import CompiledFinder\n"
                     "    import numba\n")
    assert {"freqgap.counting.engines.compiled", "numba"} <= set(imported_names(probe))


RULE_LITERALS = ("0123456789", "strip-punct", "\\u00a0", "\\u3000", "\\x85", "\\u2028")


@pytest.mark.parametrize("path", sorted(ENGINES_DIR.glob("*.py")), ids=lambda p: p.name)
def test_no_engine_writes_a_rule_of_its_own(path):
    """Digits, number rules and whitespace come from rules.py / rule_tables.py."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
                  and (body := node.body) and isinstance(body[0], ast.Expr)}
    code = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and id(n) not in docstrings]
    found = [lit for lit in RULE_LITERALS
             if any(lit.encode().decode("unicode_escape") in s or lit in s for s in code)]
    assert found == [], f"{path.name}: rule literals {found}"


def test_unknown_engine_fails_with_the_known_names(monkeypatch):
    monkeypatch.setenv(engines.ENGINE_ENV, "cuda")
    with pytest.raises(ConfigError, match="numba, numpy"):
        engines.engine_name()
    with pytest.raises(ConfigError, match="numba, numpy"):
        engines.get_engine("fortran")


def test_the_environment_picks_the_engine_and_numba_is_the_default(monkeypatch):
    monkeypatch.setenv(engines.ENGINE_ENV, "NumPy")
    assert engines.get_engine().name == "numpy"
    monkeypatch.delenv(engines.ENGINE_ENV)
    pytest.importorskip("numba")
    assert engines.engine_name() == "numba" and engines.get_engine().name == "numba"


def test_numpy_is_the_default_where_numba_does_not_import(tmp_path):
    (tmp_path / "numba.py").write_text("raise ImportError('no numba here')\n")
    code = ("import os, sys; sys.path.insert(0, sys.argv[1]); os.environ.pop('FREQGAP_ENGINE', None)\n"
            "from freqgap.counting.engines import engine_name; print(engine_name())")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                         check=True, cwd=PACKAGE.parent)
    assert out.stdout.strip() == "numpy"


def test_the_conf_key_picks_the_engine_and_the_environment_wins(tmp_path):
    """conf/spark/runtime.yaml's `engine` (here from a FREQGAP_CONF directory)."""
    (tmp_path / "spark").mkdir()
    (tmp_path / "spark" / "runtime.yaml").write_text("engine: numpy\n")
    code = "from freqgap.counting.engines import get_engine; print(get_engine().name)"
    env = {k: v for k, v in os.environ.items() if k != "FREQGAP_ENGINE"}
    for extra, want in (({}, "numpy"), ({"FREQGAP_ENGINE": "auto"}, "numba")):
        if want == "numba":
            pytest.importorskip("numba")
        out = subprocess.run([sys.executable, "-c", code], env={**env, "FREQGAP_CONF": str(tmp_path), **extra},
                             capture_output=True, text=True, check=True, cwd=PACKAGE.parent)
        assert out.stdout.strip() == want


@pytest.mark.parametrize("name", engines.ENGINES)
def test_every_engine_has_what_the_protocol_names(name):
    if name == "numba":
        pytest.importorskip("numba")
    members = {m for m in vars(engines.Engine) if not m.startswith("_")} | set(engines.Engine.__annotations__)
    engine = engines.get_engine(name)
    assert engine.name == name
    assert [m for m in sorted(members) if not hasattr(engine, m)] == []
