"""Issue 38, item 1: `instances`, `corpus` and `train` refuse their own earlier result made
with other settings unless --force, as gaps, count and predict do (freqgap/outdir.py); a
rerun with the same settings still replaces it. Before, each silently replaced the result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.guarantees.test_outdir_stages import run_cli
from tests.instances.counts_fixture import default_counts

pytestmark = pytest.mark.timeout(300)


def manifest(directory: Path) -> dict:
    return json.loads((directory / "_manifest.json").read_text())


def refused_then_forced(argv_old, argv_new, out: Path, differs: str, capsys) -> None:
    """argv_old makes a result; argv_new (other settings) is refused naming `differs` and
    leaves it untouched; the same settings rerun, and argv_new with --force replaces it."""
    assert run_cli(argv_old, capsys)[0] == 0
    before = manifest(out)
    code, err = run_cli(argv_new, capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "already holds a result of other settings" in err and differs in err, err
    assert "--force" in err and manifest(out) == before
    assert run_cli(argv_old, capsys)[0] == 0            # same settings: rerun as before
    assert manifest(out)["fingerprint"] == before["fingerprint"]
    assert run_cli([*argv_new, "--force"], capsys)[0] == 0
    assert manifest(out)["fingerprint"] != before["fingerprint"]


def test_instances_with_another_k(tmp_path, capsys):
    counts = default_counts(tmp_path / "counts")
    out = tmp_path / "inst"
    argv = ["instances", "--counts", counts, "--out", out, "--grid", "demo", "--limit", "3"]
    refused_then_forced([*argv, "--k", "0,2"], [*argv, "--k", "0,1"], out, "grid.ks", capsys)


def test_corpus_with_another_seed(tmp_path, capsys):
    out = tmp_path / "corpus"
    argv = ["corpus", "--profile", "tiny", "--out", out, "--shard-mb", "0.02"]
    refused_then_forced([*argv, "--seed", "1"], [*argv, "--seed", "2"], out, "seed: 1 -> 2",
                        capsys)


def test_train_with_other_steps(tmp_path, capsys):
    from freqgap.corpus import generate_corpus, load_profile

    corpus = tmp_path / "corpus"
    generate_corpus(load_profile("tiny", {"shard_mb": 0.02}), corpus, progress=False)
    out = tmp_path / "model"
    argv = ["train", "--profile", "smoke", "--corpus", corpus, "--out", out, "--threads", "1"]
    refused_then_forced([*argv, "--steps", "2"], [*argv, "--steps", "3"], out, "steps: 2 -> 3",
                        capsys)
    # threads and device change how training runs, not the model it is meant to be
    assert run_cli([*argv[:-1], "2", "--steps", "3"], capsys)[0] == 0
