"""Installable: the built wheel works in a fresh venv outside the checkout.

The wheel is built from a copy of the package sources, installed into a new venv in a tmp
directory, and the chain `freqgap count` (local Spark), `instances`, `predict` (a tiny
model), `gaps` and `query` runs from a tmp working directory. To stay offline and fast the new venv reaches the *dependencies* of the
development venv through a .pth file; freqgap itself must come from the wheel (asserted),
with conf/ and sql/ read from the package data it carries, and the defaults of `freqgap
count` and `freqgap demo` (the sample corpus, the demo model) found in it from an empty
directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "setup.py", "README.md", "freqgap", "conf", "sql", "data", "models")


def _run(cmd, **kw):
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert out.returncode == 0, f"{cmd}: {out.stdout[-2000:]}\n{out.stderr[-4000:]}"
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv dir, env) of a fresh venv holding only the freqgap wheel."""
    root = tmp_path_factory.mktemp("wheel")
    src = root / "src"
    src.mkdir()
    for name in SOURCES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "_data"))
        else:
            shutil.copy2(path, src / name)
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
          "-w", root / "dist", src], timeout=300)
    wheel = next((root / "dist").glob("freqgap-*.whl"))
    venv = root / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], timeout=120)
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
          "--no-index", wheel], timeout=300)
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
                .stdout.strip())
    (site / "_dev_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "FREQGAP_CONF")}
    env.update(PYSPARK_PYTHON=str(python), PYSPARK_DRIVER_PYTHON=str(python),
               SPARK_LOCAL_IP="127.0.0.1", PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    return venv, env


def test_package_comes_from_the_wheel_with_its_data(installed, tmp_path):
    venv, env = installed
    code = ("import freqgap, freqgap.paths as p; print(freqgap.__file__); "
            "print(p.DEFAULT_CONF_DIR); print(p.SQL_DIR); print(p.SAMPLE_CORPUS_DIR); "
            "print(p.DEMO_MODEL_DIR)")
    lines = _run([venv / "bin" / "python", "-c", code], cwd=tmp_path, env=env).stdout.split()
    assert all(Path(line).is_relative_to(venv) for line in lines), lines
    assert lines[1].endswith("_data/conf") and (Path(lines[2]) / "30_gaps.sql").exists()
    assert sorted(p.name for p in Path(lines[3]).glob("*.jsonl.zst")) == \
        sorted(p.name for p in (REPO / "data" / "sample").glob("*.jsonl.zst"))
    assert (Path(lines[4]) / "model.safetensors").stat().st_size == \
        (REPO / "models" / "demo" / "model.safetensors").stat().st_size
    help_text = _run([venv / "bin" / "freqgap", "gaps", "--help"], cwd=tmp_path, env=env).stdout
    assert "(conf/gaps.yaml: out/counts)" in " ".join(help_text.split())


@pytest.mark.timeout(600)
def test_the_chain_from_any_directory(installed, tmp_path):
    venv, env = installed
    freqgap = venv / "bin" / "freqgap"
    texts = [f"We had {a} hours and {b} minutes, {a} times {b} is {a * b}."
             for a in range(1, 40) for b in (2, 3, 5)]
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    out = _run([freqgap, "count", "--input", "corpus.jsonl", "--out", "counts", "--master",
                "local[1]", "--max-order", "2"], cwd=tmp_path, env=env, timeout=540)
    assert "wrote counts/" in out.stdout
    manifest = json.loads((tmp_path / "counts" / "_manifest.json").read_text())
    assert manifest["stage"] == "count_terms"
    out = _run([freqgap, "instances", "--counts", "counts", "--out", "instances", "--tasks",
                "mult,add", "--k", "0,2", "--seeds", "0", "--limit", "5"],
               cwd=tmp_path, env=env, timeout=300)
    assert "wrote instances" in out.stdout
    assert (tmp_path / "instances" / "prompts.parquet").stat().st_size > 0
    assert json.loads((tmp_path / "instances" / "_manifest.json").read_text())["stage"] == "instances"

    # the rest of the chain: a tiny model's predictions, the gaps (SQL from the package
    # data), and a query of their database
    from tests.tiny_models import build_tiny_model

    model = build_tiny_model("gpt_neox", tmp_path / "tiny-model")
    out = _run([freqgap, "predict", "--prompts", "instances", "--model", model, "--device", "cpu"],
               cwd=tmp_path, env=env, timeout=300)
    assert "out/predictions/tiny-model" in out.stdout
    out = _run([freqgap, "gaps", "--counts", "counts", "--instances", "instances", "--predictions",
                "out/predictions/*/", "--out", "results", "--no-plots", "--boot-reps", "10"],
               cwd=tmp_path, env=env, timeout=300)
    assert (tmp_path / "results" / "gaps.parquet").exists()
    out = _run([freqgap, "query", "--results", "results", "SELECT count(*) AS n FROM gaps"],
               cwd=tmp_path, env=env, timeout=120)
    assert "│" in out.stdout


@pytest.mark.timeout(900)
def test_demo_from_an_empty_directory(installed, tmp_path):
    """`freqgap demo` with its defaults (the shipped sample corpus and demo model) from a
    directory holding nothing; the demo grid is capped to 20 test items (--conf) to stay
    within CI time."""
    import yaml

    from freqgap.config import load_conf

    venv, env = installed
    conf = tmp_path / "conf"
    conf.mkdir()
    tasks = load_conf("tasks")
    tasks["grids"]["demo"]["max_test_items"] = 20
    (conf / "tasks.yaml").write_text(yaml.safe_dump(tasks, allow_unicode=True))
    empty = tmp_path / "empty"
    empty.mkdir()
    out = _run([venv / "bin" / "freqgap", "demo", "--conf", conf, "--device", "cpu"],
               cwd=empty, env=env, timeout=840)
    assert "| Multiplication | 2 |" in out.stdout
    counted = json.loads((empty / "out" / "counts" / "_manifest.json").read_text())
    assert all(Path(i["path"]).is_relative_to(venv) for i in counted["inputs"]), counted["inputs"]
    assert json.loads((empty / "results" / "_manifest.json").read_text())["stage"] == "gaps"
