"""Δ per checkpoint, end to end on a model trained here: ω as of each checkpoint is the
count of exactly the data trained on before it, and each checkpoint's Δ, interval and slope
equal what the ordinary gaps stage gives on a plain count of that data alone."""

from __future__ import annotations

import json
import zlib
from collections import Counter

import pandas as pd
import pyarrow.parquet as pq
import pytest

from freqgap.counting.documents import iter_documents
from freqgap.counting.indexed import IndexedDataset
from freqgap.counting.job import run_count
from freqgap.counting.rules import TermRules
from freqgap.dynamics.counts import count_model_order
from freqgap.dynamics.gaps import DynamicsInputError, run_dynamics_gaps
from freqgap.gaps.options import options_from_conf
from freqgap.gaps.run import run_gaps
from freqgap.inference.fake import FakeLM
from freqgap.inference.predict import predict
from freqgap.instances.run import build_instances_dir
from freqgap.instances.tasks import Grid
from freqgap.paths import SAMPLE_CORPUS_DIR
from freqgap.training.settings import load_settings
from freqgap.training.train import train_model
from tests.dynamics.helpers import expected_by_bucket

CHECKPOINTS = [0, 2, 4, 8, 16]
SUMMARY = {"task": "mult", "freq_def": "1", "k": 2}


def _answers(prompts, step: int) -> dict[str, str]:
    """A scripted model: right on a pseudo-random half of x1 values, more of them later."""
    out = {}
    for r in prompts:
        x1 = r["prompt"].rsplit("What is ", 1)[1].split(" ")[0]
        if zlib.crc32(f"{x1}|{step}".encode()) % 16 < 4 + step // 4:
            out[r["prompt"]] = r["answer"]
    return out


@pytest.fixture(scope="module")
def chain(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("dyn")
    (root / "corpus").mkdir()
    lines = [json.dumps({"text": t}) for _, _, t in iter_documents([SAMPLE_CORPUS_DIR])][:400]
    (root / "corpus" / "part.jsonl").write_text("\n".join(lines) + "\n")
    settings = load_settings("smoke", {"data_order": "packed", "checkpoints": CHECKPOINTS,
                                       "steps": 16, "batch_size": 8})
    train_model(settings, [str(root / "corpus")], root / "model", progress=False)
    count_model_order(root / "model", root / "counts", spark=spark, progress_interval=0.5)
    build_instances_dir(root / "counts", root / "instances",
                        Grid(tasks=("mult",), ks=(2,), seeds=(0, 1), max_test_items=30))
    prompts = pq.read_table(root / "instances" / "prompts.parquet").to_pylist()
    for step in CHECKPOINTS:
        lm = FakeLM("fake", answers=_answers(prompts, step), revision=f"step{step}")
        predict(root / "instances" / "prompts.parquet", root / "predictions" / f"fake-step{step}", lm,
                label="fake", revision_label=f"step{step}")
    opts = options_from_conf(counts=str(root / "counts"), instances=str(root / "instances"),
                             predictions=str(root / "predictions" / "*/"),
                             results=str(root / "results"), tasks=["mult"], boot_reps=200)
    result = run_dynamics_gaps(opts, summary=SUMMARY)
    return root, settings, result


def test_omega_per_checkpoint_is_the_count_of_the_data_seen_before_it(chain):
    root, settings, result = chain
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(root / "model")
    data = IndexedDataset(root / "model" / "data_order" / "document")
    sequences = [data[i] for i in range(len(data))]
    per_bucket = expected_by_bucket(sequences, tok, settings.batch_size, CHECKPOINTS, TermRules())
    pk = result.per_key[result.per_key["freq_def"] == "1"]
    assert set(pk["step"]) == set(CHECKPOINTS)
    for step in CHECKPOINTS:
        cum = Counter()
        for bucket, tables in per_bucket.items():
            if bucket <= step:
                cum.update(tables["unigrams"])
        at = pk[pk["step"] == step]
        assert len(at) > 10
        for key, omega in zip(at["key"], at["omega"]):
            assert omega == cum.get(key, 0), (step, key)
    assert (pk[pk["step"] == 0]["omega"] == 0).all()       # step0 has seen nothing


def test_each_checkpoint_equals_the_gaps_stage_on_a_plain_count_of_its_data(chain, spark, tmp_path):
    root, settings, result = chain
    from transformers import AutoTokenizer

    step = 8
    tok = AutoTokenizer.from_pretrained(root / "model")
    data = IndexedDataset(root / "model" / "data_order" / "document")
    texts = []
    for i in range(step * settings.batch_size):              # the sequences of steps 0..7
        pieces = [[]]
        for t in data[i].tolist():
            pieces.append([]) if t == tok.eos_token_id else pieces[-1].append(t)
        texts += [tok.decode(p, skip_special_tokens=True) for p in pieces if p]
    (tmp_path / "seen").mkdir()
    (tmp_path / "seen" / "seen.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    run_count([str(tmp_path / "seen")], str(tmp_path / "counts"), spark=spark)
    plain = run_gaps(options_from_conf(
        counts=str(tmp_path / "counts"), instances=str(root / "instances"),
        predictions=str(root / "predictions" / f"fake-step{step}/"), results=str(tmp_path / "gaps"),
        tasks=["mult"], boot_reps=200, counts_mismatch_ok=True)).gaps
    dyn = result.gaps[result.gaps["step"] == step]
    cols = ["accuracy", "delta", "ci_low", "ci_high", "n_keys", "n_unseen_keys", "logit_slope"]
    cols = [c for c in cols if c in plain.columns]
    a = plain.sort_values("freq_def").reset_index(drop=True)[["freq_def", *cols]]
    b = dyn.sort_values("freq_def").reset_index(drop=True)[["freq_def", *cols]]
    pd.testing.assert_frame_equal(a, b, check_dtype=False)
    assert a[a["freq_def"] == "1"]["delta"].notna().all()      # a real Δ is compared


def test_outputs_plots_and_summary(chain):
    root, _, result = chain
    res = root / "results"
    for name in ("gaps_by_step.parquet", "per_key_by_step.parquet", "dynamics.duckdb", "summary.md",
                 "plots/delta_over_steps.png", "plots/accuracy_by_exposures.png", "_manifest.json"):
        assert (res / name).is_file(), name
    manifest = json.loads((res / "_manifest.json").read_text())
    assert manifest["stage"] == "dynamics_gaps" and manifest["totals"]["steps"] == CHECKPOINTS
    text = (res / "summary.md").read_text()
    assert "| 16 |" in text and ("first entirely above 0 at step" in text or "never lies" in text)


def test_plain_counts_are_refused(chain, spark, tmp_path):
    root, _, _ = chain
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.jsonl").write_text(json.dumps({"text": "3 times 4 is 12"}) + "\n")
    run_count([str(tmp_path / "c")], str(tmp_path / "counts"), spark=spark)
    opts = options_from_conf(counts=str(tmp_path / "counts"), instances=str(root / "instances"),
                             predictions=str(root / "predictions" / "*/"),
                             results=str(tmp_path / "r"), counts_mismatch_ok=True)
    with pytest.raises(DynamicsInputError, match="not by training position"):
        run_dynamics_gaps(opts)


def test_command_line_gives_the_same_table(chain, tmp_path, capsys):
    from freqgap.cli import main

    root, _, result = chain
    code = main(["dynamics", "gaps", "--counts", str(root / "counts"), "--instances",
                 str(root / "instances"), "--predictions", str(root / "predictions" / "*/"),
                 "--out", str(tmp_path / "r"), "--boot-reps", "200"])
    assert code == 0
    out = capsys.readouterr().out
    assert "Δ over training — Multiplication, Δ{1}, k=2" in out and "| 16 |" in out
    again = pd.read_parquet(tmp_path / "r" / "gaps_by_step.parquet")
    cols = ["step", "freq_def", "delta", "ci_low", "ci_high"]
    pd.testing.assert_frame_equal(again[cols].reset_index(drop=True),
                                  result.gaps[cols].reset_index(drop=True), check_dtype=False)


def test_checkpoint_statements_replace_the_engines_two_inputs():
    """sql/41 defines exactly the inputs the gaps engine lets a caller replace, so a rename on
    either side fails here (and run_sql_file refuses it at run time)."""
    from freqgap.dynamics.gaps import _checkpoint_statements
    from freqgap.gaps import engine

    assert set(_checkpoint_statements()) == {engine.PREDICTIONS_VIEW, engine.OMEGA_TABLE}
