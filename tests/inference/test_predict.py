"""The prediction job: output per DATA.md, resume, shards and merge, clear errors."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from freqgap.errors import InputMismatchError, UsageError
from freqgap.inference.lm import get_lm
from freqgap.inference.models import ModelError, resolve_model
from freqgap.inference.parse import score
from freqgap.inference.predict import model_label, predict
from freqgap.inference.prompts import PromptsError, read_prompts
from freqgap.inference.shards import merge_shards, parse_shard, shard_dir
from freqgap.inference.writer import PREDICTION_SCHEMA, PredictionsError, part_files
from freqgap.manifest import read_manifest
from tests.tiny_models import build_tiny_model

KEY = ["task", "k", "seed", "instance_id"]


def _read(directory):
    t = pa.concat_tables(pq.read_table(f) for f in part_files(directory))
    return t.sort_by([(c, "ascending") for c in KEY]).to_pylist()


@pytest.fixture(scope="module")
def reference(tmp_path_factory, lms, instances_dir):
    """One uninterrupted, unsharded run of the GPT-NeoX model."""
    out = tmp_path_factory.mktemp("pred") / "neox"
    predict(instances_dir, out, lms["gpt_neox"], label="neox", chunk_size=40)
    return out


def test_output_follows_data_contract(reference, instances_dir):
    manifest = read_manifest(reference)
    rows = _read(reference)
    prompts = read_prompts(instances_dir).to_pylist()
    assert manifest["totals"]["rows"] == len(rows) == len(prompts)
    assert pq.read_schema(part_files(reference)[0]) == PREDICTION_SCHEMA
    assert len(part_files(reference)) > 1                      # chunked
    answers = {tuple(p[c] for c in KEY): p["answer"] for p in prompts}
    for r in rows:
        assert r["model"] == "neox" and r["revision"] == "local"
        s = score(r["continuation"], answers[tuple(r[c] for c in KEY)])
        assert {c: r[c] for c in s} == s
    assert manifest["totals"]["prefix_reused"] > 0
    assert manifest["config"]["model"]["architecture"] == "GPTNeoXForCausalLM"
    assert len(manifest["weights_sha256"]) == 64
    assert manifest["weights_sha256"] == manifest["config"]["fingerprint_fields"]["weights_sha256"]
    assert not (reference / "_fingerprint.json").exists() and not (reference / ".lock").exists()


def test_no_reuse_gives_identical_predictions(reference, tmp_path, lms, instances_dir):
    predict(instances_dir, tmp_path / "neox", lms["gpt_neox"].with_batch_size(50), label="neox",
            reuse_prefix=False)
    assert _read(tmp_path / "neox") == _read(reference)


def _interrupting(lm, after_calls):
    """The same LM whose generate_until raises KeyboardInterrupt after `after_calls` calls."""
    lm = lm.with_batch_size(lm.batch_size)
    real, calls = lm.generate_until, [0]

    def flaky(requests):
        calls[0] += 1
        if calls[0] > after_calls:
            raise KeyboardInterrupt
        return real(requests)

    lm.generate_until = flaky
    return lm


def test_resume_after_interrupted_run(reference, tmp_path, lms, instances_dir):
    out = tmp_path / "neox"
    with pytest.raises(KeyboardInterrupt):
        predict(instances_dir, out, _interrupting(lms["gpt_neox"], 3), label="neox",
                chunk_size=40)
    first = part_files(out)
    assert 1 <= len(first) < len(part_files(reference)) and not (out / "_manifest.json").exists()
    assert (out / "_fingerprint.json").exists() and not (out / ".lock").exists()
    mtimes = [f.stat().st_mtime_ns for f in first]
    (out / f".part-{len(first):05d}.parquet.tmp").write_bytes(b"half a chunk")  # killed mid-write
    manifest = predict(instances_dir, out, lms["gpt_neox"], label="neox", chunk_size=40)
    assert [f.stat().st_mtime_ns for f in first] == mtimes            # finished chunks kept
    assert not list(out.glob(".part-*.tmp"))
    assert _read(out) == _read(reference)
    assert manifest["totals"]["rows"] == len(_read(reference))
    assert manifest["settings_fingerprint"] == read_manifest(reference)["settings_fingerprint"]
    # A rerun of a finished directory does nothing.
    assert predict(instances_dir, out, lms["gpt_neox"], label="neox") == read_manifest(out)


def test_resume_refuses_another_models_directory(reference, tmp_path, lms, instances_dir):
    out = tmp_path / "x"
    with pytest.raises(KeyboardInterrupt):
        predict(instances_dir, out, _interrupting(lms["gpt_neox"], 1), label="neox",
                chunk_size=40)
    with pytest.raises(InputMismatchError, match=r"other settings \(.*model: neox → gptj"):
        predict(instances_dir, out, lms["gptj"], label="gptj")


def test_shards_merge_to_the_unsharded_result(reference, tmp_path, lms, instances_dir):
    out = tmp_path / "neox"
    for i in range(3):
        predict(instances_dir, out, lms["gpt_neox"], label="neox", shard=(i, 3))
    sizes = [read_manifest(shard_dir(out, (i, 3)))["totals"]["rows"] for i in range(3)]
    assert all(s > 0 for s in sizes)
    # A merge killed after writing its part file but before the manifest is redone.
    (out / "part-00000.parquet").write_bytes(b"half a merge")
    manifest = merge_shards(out, instances_dir)
    assert manifest["totals"]["rows"] == sum(sizes)
    assert _read(out) == _read(reference)
    assert not (out / "_shards").exists() and not (out / ".lock").exists()
    assert merge_shards(out, instances_dir) == manifest          # merged before: unchanged


def test_merge_detects_missing_shard_and_rows(tmp_path, lms, instances_dir):
    out = tmp_path / "neox"
    for i in (0, 2):
        predict(instances_dir, out, lms["gpt_neox"], label="neox", shard=(i, 3))
    with pytest.raises(PredictionsError, match=r"missing shard\(s\) \[1\]"):
        merge_shards(out, instances_dir)
    predict(instances_dir, out, lms["gpt_neox"], label="neox", shard=(1, 3), chunk_size=10)
    lost = part_files(shard_dir(out, (1, 3)))[0]                    # a lost chunk
    n_lost = pq.read_metadata(lost).num_rows
    assert 0 < n_lost <= 10
    lost.unlink()
    with pytest.raises(PredictionsError, match=f"{n_lost} missing rows"):
        merge_shards(out, instances_dir)


def test_merge_detects_doubled_rows(tmp_path, lms, instances_dir):
    out = tmp_path / "neox"
    for i in range(2):
        predict(instances_dir, out, lms["gpt_neox"], label="neox", shard=(i, 2))
    src = part_files(shard_dir(out, (0, 2)))[0]
    shutil.copy(src, shard_dir(out, (1, 2)) / "part-09999.parquet")
    with pytest.raises(PredictionsError, match="doubled rows"):
        merge_shards(out, instances_dir)


def test_parse_shard():
    assert parse_shard("1/4") == (1, 4) and parse_shard(None) is None
    for bad in ("4/4", "a/b", "1", "-1/3", "0/0"):
        with pytest.raises(UsageError, match="i/N"):
            parse_shard(bad)


def test_prompts_errors(tmp_path, lms, instances_dir):
    with pytest.raises(PromptsError, match="not found"):
        predict(tmp_path / "nope.parquet", tmp_path / "o", lms["gptj"])
    t = read_prompts(instances_dir).drop_columns(["prefix", "answer"])
    pq.write_table(t, tmp_path / "bad.parquet")
    with pytest.raises(PromptsError, match=r"bad.parquet: missing column\(s\) prefix, answer"):
        predict(tmp_path / "bad.parquet", tmp_path / "o", lms["gptj"])
    (tmp_path / "junk.parquet").write_text("not parquet")
    with pytest.raises(PromptsError, match="junk.parquet: not a readable Parquet file"):
        predict(tmp_path / "junk.parquet", tmp_path / "o", lms["gptj"])
    assert not (tmp_path / "o").exists()


def test_context_shorter_than_longest_prompt(tmp_path, tiny_tokenizer, instances_dir):
    from transformers import GPTJConfig

    d = build_tiny_model("gptj", tmp_path / "short", tokenizer=tiny_tokenizer)
    cfg = GPTJConfig.from_pretrained(d)
    cfg.n_positions = 48
    cfg.save_pretrained(d)
    lm = get_lm(str(d), device="cpu")
    assert lm.max_length == 48
    with pytest.raises(ModelError, match=r"context length 48 tokens is shorter than the longest "
                                         r"prompt \(\d+ tokens"):
        predict(instances_dir, tmp_path / "o", lm)
    assert not (tmp_path / "o").exists()           # a failed run leaves no directory


def test_unknown_alias_lists_known_ones():
    with pytest.raises(ModelError, match="unknown model 'gpt-k-6b'.*gpt-j-6b.*pythia-70m-deduped"):
        resolve_model("gpt-k-6b")


def test_registry_aliases():
    assert resolve_model("gpt-j-6b").source == "EleutherAI/gpt-j-6b"
    assert resolve_model("gpt-j-6b").revision == "float16"
    assert resolve_model("GPT-NEO-1.3B").source == "EleutherAI/gpt-neo-1.3B"
    spec = resolve_model("pythia-12b-deduped", revision="step512")
    assert (spec.source, spec.revision) == ("EleutherAI/pythia-12b-deduped", "step512")
    assert resolve_model("EleutherAI/pythia-70m", revision="step1").revision == "step1"
    with pytest.raises(ModelError, match="not a Pythia checkpoint"):
        resolve_model("pythia-70m", revision="step1500")
    assert model_label("pythia-70m", "step1000") == "pythia-70m-step1000"
    assert model_label("pythia-70m") == "pythia-70m"
    assert model_label("/x/models/demo/", None) == "demo"


def test_weights_not_available_offline_says_how_to_fetch():
    with pytest.raises(ModelError, match=r"not available offline.*huggingface-cli download "
                                         r"EleutherAI/pythia-70m --revision step3000.*local"):
        get_lm("pythia-70m", revision="step3000", device="cpu")


def test_directory_without_a_model(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="cannot load a causal LM"):
        get_lm(str(tmp_path / "empty"), device="cpu")
    with pytest.raises(ModelError, match="not a directory holding a model"):
        resolve_model(str(tmp_path / "missing"))


def test_other_prompts_file_is_refused(reference, tmp_path, lms, instances_dir):
    t = read_prompts(instances_dir)
    pq.write_table(t.slice(0, 5), tmp_path / "five.parquet")
    with pytest.raises(InputMismatchError, match="prompts_sha256"):
        predict(tmp_path / "five.parquet", reference, lms["gpt_neox"], label="neox")
    out = tmp_path / "partial"
    with pytest.raises(KeyboardInterrupt):
        predict(instances_dir, out, _interrupting(lms["gpt_neox"], 1), label="neox",
                chunk_size=40)
    with pytest.raises(InputMismatchError, match="prompts_sha256"):
        predict(tmp_path / "five.parquet", out, lms["gpt_neox"], label="neox")


def test_cli_shards_merge_and_errors(tmp_path, tiny_model_dirs, instances_dir, capsys):
    from jobs.predict import main

    model = str(tiny_model_dirs["gptj"])
    common = ["--prompts", str(instances_dir), "--model", model, "--out", str(tmp_path / "gptj"),
              "--device", "cpu", "--batch-size", "8"]
    assert main(common + ["--shard", "0/2"]) == 0
    assert main(common + ["--merge", "2"]) == 2
    assert "missing shard(s) [1]" in capsys.readouterr().err
    assert main(common + ["--shard", "1/2"]) == 0
    assert main(common + ["--merge", "2"]) == 0
    assert "predictions, accuracy" in capsys.readouterr().out
    manifest = read_manifest(tmp_path / "gptj")
    assert manifest["totals"]["rows"] == read_prompts(instances_dir).num_rows
    assert main(["--prompts", str(instances_dir), "--model", "gpt-k-6b"]) == 2
    assert "Known aliases" in capsys.readouterr().err
