"""`make simulate` end to end with tiny settings: both laws through the whole chain."""

from __future__ import annotations

import json


from freqgap.manifest import read_manifest
from freqgap.workflows.simulate import SimulateOptions, run_simulate


def test_simulate_smoke(spark, tmp_path):
    opts = SimulateOptions(work=tmp_path / "work", results=tmp_path / "results",
                           train_profile="smoke", train_overrides={"steps": 4, "threads": 1},
                           corpus_overrides={"shard_mb": 0.15}, seeds=(0, 1), max_test_items=60,
                           boot_reps=20, device="cpu", max_order=1)
    report = run_simulate(opts, spark=spark, log=lambda _: None)
    text = report.read_text()
    assert "| zipf | {1} | 2 |" in text and "| uniform | {1} | 2 |" in text
    assert (tmp_path / "results" / "delta.png").stat().st_size > 1000
    assert (tmp_path / "results" / "accuracy_by_rank.png").stat().st_size > 1000
    summary = json.loads((tmp_path / "results" / "summary.json").read_text())
    laws = {r["law"] for r in summary["rows"] if r["freq_def"] == "1"}
    assert laws == {"zipf", "uniform"}
    # Two seeds, as `make simulate` runs: the per-seed Δ is a list with one entry per seed.
    for row in summary["rows"]:
        if row["delta_per_seed"] is not None:
            assert [entry["seed"] for entry in row["delta_per_seed"]] == [0, 1], row
    assert read_manifest(tmp_path / "results")["stage"] == "simulate"
    # Each law went through the whole chain, each stage leaving a complete manifest.
    for law in ("zipf", "uniform"):
        for stage in ("corpus", "model", "counts", "instances", "gaps"):
            read_manifest(tmp_path / "work" / law / stage)
        read_manifest(tmp_path / "work" / law / "predictions" / f"simulate-{law}")
