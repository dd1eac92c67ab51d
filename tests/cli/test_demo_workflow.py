"""`freqgap demo` (freqgap/workflows/demo.py) end to end on tiny inputs: a generated corpus,
a tiny random GPT-NeoX, and the demo grid capped to 20 test items through `--conf DIR`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from freqgap.config import load_conf
from freqgap.corpus import generate_corpus, load_profile
from freqgap.manifest import read_manifest
from freqgap.paths import CONF_ENV


@pytest.mark.timeout(900)
def test_demo_chain_runs_every_stage(spark, tmp_path, monkeypatch):
    from freqgap.workflows.demo import DemoOptions, run_demo
    from tests.tiny_models import build_tiny_model

    conf = tmp_path / "conf"
    conf.mkdir()
    tasks = load_conf("tasks")
    tasks["grids"]["demo"]["max_test_items"] = 20
    (conf / "tasks.yaml").write_text(yaml.safe_dump(tasks, allow_unicode=True))
    monkeypatch.setenv(CONF_ENV, str(conf))

    corpus = tmp_path / "corpus"
    generate_corpus(load_profile("tiny", {"shard_mb": 0.2}), corpus, progress=False)
    model = build_tiny_model("gpt_neox", tmp_path / "model")
    lines: list[str] = []
    summary = run_demo(DemoOptions(corpus=str(corpus), work=tmp_path / "out",
                                   results=tmp_path / "results", model=str(model),
                                   device="cpu"), spark=spark, log=lines.append)

    assert "| Multiplication | 2 |" in summary and summary in lines
    out = tmp_path / "out"
    assert read_manifest(out / "counts")["stage"] == "count_terms"
    instances = read_manifest(out / "instances")
    assert instances["config"]["grid"]["max_test_items"] == 20, json.dumps(instances["config"])[:500]
    assert read_manifest(out / "predictions" / "model")["totals"]["rows"] > 0
    assert read_manifest(tmp_path / "results")["stage"] == "gaps"
    assert (out / "reports" / "counts.png").stat().st_size > 1000


@pytest.mark.timeout(900)
def test_the_readme_shows_what_make_demo_prints(spark, tmp_path):
    """README's block of what `make demo` printed is the demo's summary tables as `make demo`
    prints them now (the committed model and sample corpus; the bootstrap is seeded), so a
    change to Δ, its intervals or their format can't leave a stale table in the README."""
    from freqgap.workflows.demo import DemoOptions, run_demo

    repo = Path(__file__).resolve().parents[2]
    readme = (repo / "README.md").read_text(encoding="utf-8")
    section = readme.split("## What `make demo` prints", 1)[1].split("\n## ", 1)[0]
    shown = section.split("```\n")[3]          # the second block: the summary, after the chain
    rows = [line for line in shown.splitlines() if line.startswith("| ") and not line.startswith("| Task")]
    assert len(rows) == 4, shown
    summary = run_demo(DemoOptions(corpus=str(repo / "data" / "sample"), work=tmp_path / "out",
                                   results=tmp_path / "results", device="cpu"),
                       spark=spark, log=lambda line: None)
    printed = set(summary.splitlines())
    assert [line for line in shown.splitlines() if line and line not in printed] == [], summary
