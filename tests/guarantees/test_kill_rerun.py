"""A SIGKILL at any rename of instances, gaps, corpus and train leaves the previous
complete result or no _manifest.json (never a partial result under a complete manifest),
and a rerun after the kill equals a clean run (docs/guarantees.md)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.gaps.fixtures import random_world
from tests.guarantees.sweep import manifest_core, sweep, visible
from tests.instances.counts_fixture import default_counts

pytestmark = pytest.mark.timeout(900)


def same_parquet_and_manifest(a: Path, b: Path) -> None:
    """Equal tables (by content) and equal manifests but for times and paths."""
    files_a, files_b = visible(a), visible(b)
    assert set(files_a) == set(files_b)
    for name in files_a:
        if name.endswith(".parquet"):
            assert pq.read_table(a / name).equals(pq.read_table(b / name)), name
        elif name.endswith((".md", ".tex", ".yaml", ".jsonl.zst", ".safetensors", ".json")) \
                and name != "_manifest.json":
            assert files_a[name] == files_b[name], name
    assert manifest_core(a) == manifest_core(b)


# The interrupted run replaces a result of other settings: --force (freqgap/outdir.py).
def test_instances(tmp_path):
    counts = default_counts(tmp_path / "counts")
    argv = lambda limit: lambda out: ["instances", "--counts", str(counts), "--out", str(out),
                                      "--grid", "demo", "--limit", str(limit), "--force"]
    at = sweep(tmp_path, argv(5), argv(9), same_parquet_and_manifest)
    assert len(at) >= 4          # three tables and the manifest


def test_gaps(tmp_path):
    world = random_world(tmp_path / "world", n_x1=12, tasks=("mult", "hour_min"))

    def argv(reps):     # the new run replaces a result of other settings: --force
        return lambda out: ["gaps", "--counts", str(world.counts), "--instances",
                            str(world.instances), "--predictions", f"{world.predictions}/*/",
                            "--out", str(out), "--boot-reps", str(reps), "--no-plots",
                            "--threads", "1", "--force"]

    def same(a: Path, b: Path) -> None:
        for name in ("gaps.parquet", "per_key.parquet"):
            assert pq.read_table(a / name).equals(pq.read_table(b / name)), name
        assert sorted(visible(a)) == sorted(visible(b))
        assert manifest_core(a)["totals"] == manifest_core(b)["totals"]

    at = sweep(tmp_path, argv(20), argv(30), same, reruns="last")
    assert len(at) >= 4


def test_corpus(tmp_path):
    argv = lambda seed: lambda out: ["corpus", "--profile", "tiny", "--out", str(out),
                                     "--seed", str(seed), "--shard-mb", "0.05", "--force"]
    at = sweep(tmp_path, argv(1), argv(2), same_parquet_and_manifest)
    assert len(at) >= 3          # two shards and the manifest


def test_train(tmp_path):
    from freqgap.corpus import generate_corpus, load_profile

    corpus = tmp_path / "corpus"
    generate_corpus(load_profile("tiny", {"shard_mb": 0.05}), corpus, progress=False)
    argv = lambda steps: lambda out: ["train", "--profile", "smoke", "--corpus", str(corpus),
                                      "--out", str(out), "--steps", str(steps), "--threads", "1",
                                      "--force"]

    def same(a: Path, b: Path) -> None:
        assert (a / "model.safetensors").read_bytes() == (b / "model.safetensors").read_bytes()
        assert sorted(visible(a)) == sorted(visible(b))
        assert manifest_core(a)["weights"] == manifest_core(b)["weights"]

    at = sweep(tmp_path, argv(3), argv(4), same, points=4, reruns="last")
    assert len(at) >= 2


def test_import_lm_eval(tmp_path):
    """Was broken: the new rows replaced the old ones under the old manifest."""
    from tests.gaps.fixtures import build_world
    from tests.gaps.test_gaps_lm_eval import sample, write_log

    world = build_world(tmp_path / "w", [("mult", x1, x2, []) for x1 in range(1, 7)
                                         for x2 in (1, 2)], {str(x): x for x in range(1, 7)})
    logs = {}
    for shift in (0, 1):               # two logs: right answers, and every answer off by one
        lines = [sample(i, r, f" {int(r['answer']) + shift}\n")
                 for i, r in enumerate(world.instance_rows)]
        logs[shift] = write_log(tmp_path / f"lm{shift}", "mult_freq", lines)
    argv = lambda shift: lambda out: ["import-lm-eval", str(logs[shift]), "--instances",
                                      str(world.instances), "--model", "m", "--task", "mult",
                                      "--out", str(out)]
    at = sweep(tmp_path, argv(0), argv(1), same_parquet_and_manifest)
    assert len(at) >= 2              # the rows and the manifest
