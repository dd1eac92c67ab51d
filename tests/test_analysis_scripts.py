"""analysis/ holds the scripts that make every figure and table of the README and docs/:
each is thin over the package (imports freqgap, one `main`, nothing else of its own),
`make figures` reruns them, and a script draws from a finished result or names what is
missing in one line."""

from __future__ import annotations

import ast
import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((REPO / "analysis").glob("*.py"))
FIGURES_MK = REPO / "mk" / "figures.mk"
MAX_LINES = 60          # a script that grows past this holds logic that belongs in freqgap/analysis


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"analysis_{path.stem}_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_there_are_scripts_and_make_figures_runs_each_of_them():
    assert {p.name for p in SCRIPTS} >= {"count_report.py", "gaps_figures.py", "dynamics_figures.py"}
    recipe = FIGURES_MK.read_text()
    for path in SCRIPTS:
        assert f"analysis/{path.name}" in recipe, f"make figures does not run analysis/{path.name}"


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_each_script_is_thin_over_freqgap(path):
    tree = ast.parse(path.read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "freqgap" in imported, f"{path.name} does not use the package"
    functions = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assert functions == ["main"], f"{path.name}: {functions}: only `main`, the rest in freqgap/analysis"
    assert not [n for n in tree.body if isinstance(n, ast.ClassDef)], f"{path.name} defines a class"
    assert any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) for n in tree.body)
    assert ast.get_docstring(tree), f"{path.name} says nothing of the figure it makes"
    assert len(path.read_text().splitlines()) <= MAX_LINES, f"{path.name} is not thin"


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_help_lists_figures():
    listed = subprocess.run(["make", "--no-print-directory", "help"], capture_output=True, text=True,
                            cwd=REPO, timeout=60).stdout
    assert any(line.split()[:2] == ["make", "figures"] for line in listed.splitlines()), listed


@pytest.mark.parametrize("name", ["gaps_figures", "dynamics_figures"])
def test_a_missing_result_is_one_line(name, tmp_path, capsys):
    assert _load(REPO / "analysis" / f"{name}.py").main([str(tmp_path / "nothing"), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nothing" in err[0] and "make " in err[0], err
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def gaps_result(tmp_path_factory):
    from freqgap.gaps.run import run_gaps
    from tests.gaps.fixtures import options_for, random_world

    root = tmp_path_factory.mktemp("analysis")
    world = random_world(root / "w", seed=3, tasks=("mult",), models=("tiny-a",), ks=(2,), n_x1=20)
    return run_gaps(options_for(world, root / "results", boot_reps=50))


def test_gaps_figures_redraws_a_result_with_its_own_settings(gaps_result, tmp_path, capsys):
    result = gaps_result
    before = sorted(p.name for p in result.results_dir.iterdir())
    assert _load(REPO / "analysis" / "gaps_figures.py").main([str(result.results_dir), str(tmp_path / "figs")]) == 0
    pngs = sorted((tmp_path / "figs").glob("*.png"))
    assert pngs and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    printed = capsys.readouterr().out
    assert "| Task | k | Acc |" in printed and "Multiplication" in printed
    assert sorted(p.name for p in result.results_dir.iterdir()) == before      # the result untouched


def test_dynamics_figures_draws_the_readme_plots_and_table(gaps_result, tmp_path, capsys):
    """A dynamics result as `freqgap dynamics gaps` leaves it (the gaps stage's rows at three
    checkpoints, a dynamics_gaps manifest): both plots and the per-checkpoint table."""
    import pandas as pd

    from freqgap.dynamics.gaps import FILES
    from freqgap.manifest import build_manifest, dataset_records, now_iso, write_manifest

    results = tmp_path / "dynamics"
    results.mkdir()
    for name, source in (("gaps", "gaps.parquet"), ("per_key", "per_key.parquet")):
        frame = pd.read_parquet(gaps_result.results_dir / source)
        steps = [frame.assign(step=step, revision=f"step{step}") for step in (0, 16, 32)]
        pd.concat(steps).to_parquet(results / FILES[name])
    write_manifest(results, build_manifest(
        "dynamics_gaps", config={"task_labels": {"mult": "Multiplication"}}, inputs=[],
        totals={}, started=now_iso(), upstream=gaps_result.manifest["upstream"],
        outputs=sorted(FILES.values()), files=dataset_records(results)))
    out = tmp_path / "img"
    assert _load(REPO / "analysis" / "dynamics_figures.py").main([str(results), str(out), "mult:1:2"]) == 0
    for png in ("dynamics_delta_over_steps.png", "dynamics_accuracy_by_exposures.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert "| step | accuracy |" in printed and "| 32 |" in printed and "Multiplication" in printed
