"""`freqgap predict` under torchrun: a shard per rank, rank 0 merges, one line on failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from freqgap.errors import UsageError
from freqgap.inference.distributed import Launch, launch_from_env, rank_device
from freqgap.inference.predict import predict
from freqgap.inference.prompts import read_prompts
from freqgap.inference.shards import shard_dir
from freqgap.inference.writer import part_files
from freqgap.manifest import read_manifest
from tests.tiny_models import build_tiny_model

KEY = ["task", "k", "seed", "instance_id"]
LAUNCH_TIMEOUT = 300      # seconds: two ranks importing torch on a busy machine


def _rows(directory):
    import pyarrow as pa

    t = pa.concat_tables(pq.read_table(f) for f in part_files(directory))
    return t.sort_by([(c, "ascending") for c in KEY]).to_pylist()


@pytest.fixture(scope="module")
def setup(tmp_path_factory, tiny_tokenizer, instances_dir):
    """A tiny GPT-NeoX, a small prompts file, and the single-process reference run."""
    base = tmp_path_factory.mktemp("torchrun")
    model = build_tiny_model("gpt_neox", base / "model", seed=3, tokenizer=tiny_tokenizer)
    table = read_prompts(instances_dir)
    table = table.filter(pc.less_equal(table.column("k"), 2))
    prompts = base / "prompts.parquet"
    pq.write_table(table, prompts)
    reference = base / "reference"
    predict(prompts, reference, str(model), device="cpu", label="neox")
    return model, prompts, reference


def _torchrun(model, prompts, out, *extra, nproc=2):
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env.update(OMP_NUM_THREADS="1", PYTHONPATH=os.getcwd())
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           f"--nproc_per_node={nproc}", "-m", "freqgap", "predict", "--prompts", str(prompts),
           "--model", str(model), "--out", str(out), "--name", "neox", "--device", "cpu",
           "--progress-interval", "1000", *extra]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=LAUNCH_TIMEOUT)


def test_torchrun_equals_single_process_and_a_failed_rank_fails_the_run(setup, tmp_path):
    model, prompts, reference = setup
    out = tmp_path / "neox"
    # Rank 1's shard directory holds predictions of other settings: rank 1 refuses.
    bad = shard_dir(out, (1, 2))
    bad.mkdir(parents=True)
    (bad / "_fingerprint.json").write_text(json.dumps({"model": "another"}))
    failed = _torchrun(model, prompts, out)
    assert failed.returncode != 0
    lines = [ln for ln in failed.stderr.splitlines() if "freqgap predict: error:" in ln]
    assert len(lines) == 1, failed.stderr
    assert "rank 1 of 2 failed:" in lines[0] and "other settings" in lines[0]
    assert "nothing was merged" in lines[0]
    assert not (out / "_manifest.json").exists() and not part_files(out)
    assert (shard_dir(out, (0, 2)) / "_manifest.json").exists()      # kept for the rerun

    (bad / "_fingerprint.json").unlink(missing_ok=True)    # (the refusal may remove it)
    done = _torchrun(model, prompts, out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("predictions, accuracy") == 1            # rank 0 reports
    assert _rows(out) == _rows(reference)
    manifest, single = read_manifest(out), read_manifest(reference)
    assert manifest["config"]["merged_from"] == ["0-of-2", "1-of-2"]
    assert manifest["settings_fingerprint"] == single["settings_fingerprint"]
    assert manifest["totals"]["rows"] == single["totals"]["rows"]
    assert not (out / "_shards").exists()
    # A rerun of the finished directory: rank 0 returns it as it is, nothing recomputed.
    before = (out / "_manifest.json").read_bytes()
    again = _torchrun(model, prompts, out)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("predictions, accuracy") == 1
    assert (out / "_manifest.json").read_bytes() == before and not (out / "_shards").exists()
    # --force over other settings: the shards run again and their merge replaces the rows.
    shorter = tmp_path / "shorter"
    predict(prompts, shorter, str(model), device="cpu", label="neox", max_new_tokens=2)
    forced = _torchrun(model, prompts, out, "--max-new-tokens", "2", "--force")
    assert forced.returncode == 0, forced.stderr
    assert _rows(out) == _rows(shorter) != _rows(reference)
    assert read_manifest(out)["config"]["max_new_tokens"] == 2


def test_launch_from_env():
    assert launch_from_env({}) is None
    assert launch_from_env({"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0"}) is None
    assert launch_from_env({"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1"}) == \
        Launch(3, 4, 1)
    for bad, match in (({"RANK": "4", "WORLD_SIZE": "4"}, "0 <= RANK < WORLD_SIZE"),
                       ({"RANK": "x", "WORLD_SIZE": "4"}, "RANK='x'"),
                       ({"LOCAL_RANK": "0"}, "RANK=None")):
        with pytest.raises(UsageError, match=match):
            launch_from_env(bad)


def test_launch_without_rendezvous_is_one_line(monkeypatch):
    from freqgap.inference.distributed import predict_launched

    monkeypatch.delenv("MASTER_ADDR", raising=False)
    monkeypatch.delenv("MASTER_PORT", raising=False)
    with pytest.raises(UsageError, match="MASTER_ADDR and MASTER_PORT not: start the ranks"):
        predict_launched(Launch(0, 2, 0), "p", "o", "m")


def test_rank_device():
    launch = Launch(1, 2, 1)
    assert rank_device("cpu", launch) == "cpu"
    with pytest.raises(UsageError, match="each rank uses cuda:LOCAL_RANK"):
        rank_device("cuda:0", launch)
    import torch

    if not torch.cuda.is_available():
        assert rank_device(None, launch) == "cpu"


@pytest.mark.parametrize("option", [["--shard", "0/2"], ["--merge", "2"],
                                    ["--revisions", "a,b"], ["--out", "s3://bucket/neox"]])
def test_shard_options_refused_under_a_launcher(option, setup, tmp_path, monkeypatch, capsys):
    from freqgap.cli import main

    model, prompts, _ = setup
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("LOCAL_RANK", "0")
    out = [] if option[0] == "--out" else ["--out", str(tmp_path / "o")]
    monkeypatch.setattr("freqgap.counting.bucket_copies.pull", lambda uri, cache: tmp_path / "o")
    code = main(["predict", "--prompts", str(prompts), "--model", str(model), *out, *option])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    shown = option[1] if option[0] == "--out" else " ".join(option)
    assert f"{shown} under a launcher (WORLD_SIZE=2" in err[0]
    assert not (tmp_path / "o").exists()
