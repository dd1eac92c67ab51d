"""predict over a list of revisions in one call: local step<N>/ checkpoints or hub revisions."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from freqgap.errors import UsageError
from freqgap.inference.models import ModelError
from freqgap.inference.predict import predict, predict_revisions, resolve_revision
from freqgap.inference.writer import part_files
from freqgap.manifest import read_manifest
from tests.tiny_models import build_tiny_model


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory, tiny_tokenizer):
    """<root>/step1/ and <root>/step2/: two checkpoints of one run (different weights)."""
    root = tmp_path_factory.mktemp("run")
    for step, seed in (("step1", 5), ("step2", 6)):
        build_tiny_model("gpt_neox", root / step, seed=seed, tokenizer=tiny_tokenizer)
    return root


@pytest.fixture(scope="module")
def few_prompts(tmp_path_factory, instances_dir):
    t = pq.read_table(instances_dir / "prompts.parquet").slice(0, 30)
    path = tmp_path_factory.mktemp("p") / "prompts.parquet"
    pq.write_table(t, path)
    return path


def _table(d):
    return pa.concat_tables(pq.read_table(f) for f in part_files(d))


def test_local_checkpoints_one_directory_per_revision(tmp_path, checkpoints, few_prompts):
    manifests = predict_revisions(few_prompts, tmp_path, str(checkpoints), ["step1", "step2"],
                                  name="dyn", device="cpu")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dyn-step1", "dyn-step2"]
    weights = set()
    for rev, m in zip(["step1", "step2"], manifests):
        d = tmp_path / f"dyn-{rev}"
        t = _table(d)
        assert set(t.column("model").to_pylist()) == {"dyn"}
        assert set(t.column("revision").to_pylist()) == {rev}
        assert t.num_rows == 30 and read_manifest(d) == m
        assert m["config"]["revision"] == rev and m["config"]["model"]["model_id"].endswith(rev)
        weights.add(m["weights_sha256"])
    assert len(weights) == 2
    # Each revision is the same as predicting its checkpoint alone.
    alone = predict(few_prompts, tmp_path / "alone", str(checkpoints / "step2"), label="dyn",
                    revision_label="step2", device="cpu")
    assert _table(tmp_path / "alone").to_pylist() == _table(tmp_path / "dyn-step2").to_pylist()
    assert alone["settings_fingerprint"] == manifests[1]["settings_fingerprint"]
    # A rerun finds both finished.
    again = predict_revisions(few_prompts, tmp_path, str(checkpoints), ["step1", "step2"],
                              name="dyn", device="cpu")
    assert again == manifests


def test_revision_resolution(checkpoints):
    assert resolve_revision(str(checkpoints), "step1") == (str(checkpoints / "step1"), None)
    assert resolve_revision("pythia-70m", "step1000") == ("pythia-70m", "step1000")
    with pytest.raises(UsageError, match=r"step9 holds no checkpoint .*: step1, step2"):
        resolve_revision(str(checkpoints), "step9")


def test_every_revision_is_checked_before_any_work(tmp_path, checkpoints, few_prompts):
    with pytest.raises(ModelError, match="'step1500' is not a Pythia checkpoint"):
        predict_revisions(few_prompts, tmp_path / "o", "pythia-70m", ["step1000", "step1500"])
    with pytest.raises(UsageError, match="listed twice"):
        predict_revisions(few_prompts, tmp_path / "o", str(checkpoints), ["step1", "step1"])
    with pytest.raises(UsageError, match="at least one"):
        predict_revisions(few_prompts, tmp_path / "o", str(checkpoints), [])
    assert not (tmp_path / "o").exists()


def test_cli_revisions(tmp_path, checkpoints, few_prompts, capsys, monkeypatch):
    from freqgap.cli import main

    monkeypatch.chdir(tmp_path)
    args = ["predict", "--prompts", str(few_prompts), "--model", str(checkpoints),
            "--revisions", "step1,step2", "--name", "dyn", "--device", "cpu"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "out/predictions/dyn-step1: 30 predictions" in out
    assert "out/predictions/dyn-step2: 30 predictions" in out
    assert main(args + ["--max-new-tokens", "2"]) == 2
    err = capsys.readouterr().err
    assert "dyn-step1: holds predictions made with other settings (decoding:" in err
    assert err.count("\n") == 1
    assert main(args + ["--max-new-tokens", "2", "--force"]) == 0
    assert main(args + ["--revision", "step1"]) == 2
    assert "--revision and --revisions exclude each other" in capsys.readouterr().err
