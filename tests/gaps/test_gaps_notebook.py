"""notebooks/explore_gaps.ipynb runs top to bottom against a results directory."""

from __future__ import annotations

import os

import nbformat
from nbclient import NotebookClient

from freqgap.gaps.run import run_gaps
from freqgap.paths import REPO_ROOT
from tests.gaps.fixtures import options_for, random_world


def test_notebook_executes(tmp_path, monkeypatch):
    world = random_world(tmp_path / "w", seed=5)
    res = run_gaps(options_for(world, tmp_path / "results", boot_reps=50))
    monkeypatch.setenv("FREQGAP_RESULTS", str(res.results_dir))
    monkeypatch.delenv("MPLBACKEND", raising=False)          # the inline backend draws PNGs
    nb = nbformat.read(REPO_ROOT / "notebooks" / "explore_gaps.ipynb", as_version=4)
    # The current interpreter's kernel (the Makefile also installs one named "freqgap").
    NotebookClient(nb, kernel_name="python3", timeout=120,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = {i: c.get("outputs", []) for i, c in enumerate(nb.cells) if c.cell_type == "code"}
    assert not any(o.get("output_type") == "error" for outs in outputs.values() for o in outs)
    text = "\n".join(o.get("data", {}).get("text/plain", "") + o.get("text", "")
                     for outs in outputs.values() for o in outs)
    assert "group: ('tiny-a', 'main'" in text
    assert "tiny-b" in text                                 # the model comparison pivot
    assert any("image/png" in o.get("data", {}) for outs in outputs.values() for o in outs)
    assert os.environ["FREQGAP_RESULTS"] == str(res.results_dir)
