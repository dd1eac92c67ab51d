"""Kill and rerun, changed settings, concurrent runs, failed runs (issue 10.2, 10.9)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from freqgap.errors import InputMismatchError, UsageError
from freqgap.inference.fake import FakeLM
from freqgap.inference.fingerprint import fingerprint_fields
from freqgap.inference.lm import PARAGRAPH, StopRule, get_lm
from freqgap.outdir import DirectoryBusyError, DirLock
from freqgap.inference.models import ModelError
from freqgap.inference.predict import load_prompts, predict
from freqgap.inference.prompts import PromptsError
from freqgap.inference.writer import part_files
from freqgap.manifest import read_manifest
from freqgap.paths import REPO_ROOT

KEY = ["task", "k", "seed", "instance_id"]
RUN = """
import sys
from freqgap.errors import FreqgapError
from freqgap.inference.fake import FakeLM
from freqgap.inference.predict import predict
try:
    predict(sys.argv[1], sys.argv[2], FakeLM(delay_s=float(sys.argv[3])), label="fake",
            chunk_size=10, progress_interval=1e9)
except FreqgapError as exc:
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(2)
"""


def _rows(directory):
    t = pa.concat_tables(pq.read_table(f) for f in part_files(directory))
    return t.sort_by([(c, "ascending") for c in KEY]).to_pylist()


def _start(instances_dir, out, delay):
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    return subprocess.Popen([sys.executable, "-c", RUN, str(instances_dir), str(out), str(delay)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(cond, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.01)
    return False


@pytest.fixture(scope="module")
def clean(tmp_path_factory, instances_dir):
    out = tmp_path_factory.mktemp("clean") / "fake"
    predict(instances_dir, out, FakeLM(), label="fake", chunk_size=10)
    return out


def test_sigkill_then_rerun_equals_a_clean_run_and_a_second_run_is_refused(
        tmp_path, instances_dir, clean):
    out = tmp_path / "fake"
    a = _start(instances_dir, out, 0.05)         # 240 prompts: ~12 s unless killed
    try:
        assert _wait_for(lambda: len(part_files(out)) >= 1), "no chunk written"
        # A second run into the same directory is refused at once, naming the holder.
        t0 = time.monotonic()
        b = _start(instances_dir, out, 0.0)
        _, err = b.communicate(timeout=60)
        assert b.returncode == 2, err
        assert f"another run (pid {a.pid}) is writing this directory" in err
        assert err.count("\n") == 1
        with pytest.raises(DirectoryBusyError):
            predict(instances_dir, out, FakeLM(), label="fake")
        assert time.monotonic() - t0 < 30
        a.send_signal(signal.SIGKILL)
        a.wait(timeout=60)
    finally:
        if a.poll() is None:
            a.kill()
            a.wait()
    assert a.returncode == -signal.SIGKILL
    kept = part_files(out)
    assert kept and not (out / "_manifest.json").exists()
    assert len(_rows(out)) < len(_rows(clean))
    mtimes = [f.stat().st_mtime_ns for f in kept]
    # Changed settings are refused and leave the chunks alone ...
    with pytest.raises(InputMismatchError, match=r"other settings \(decoding: greedy, "
                                                 r"max_new_tokens=5, .* → greedy, max_new_tokens=1"):
        predict(instances_dir, out, FakeLM(), label="fake", chunk_size=10, max_new_tokens=1)
    assert [f.stat().st_mtime_ns for f in part_files(out)[:len(kept)]] == mtimes
    # ... the unchanged rerun (the kernel released the dead run's lock) completes it.
    manifest = predict(instances_dir, out, FakeLM(), label="fake", chunk_size=10)
    assert [f.stat().st_mtime_ns for f in kept] == mtimes
    assert _rows(out) == _rows(clean)
    assert manifest["settings_fingerprint"] == read_manifest(clean)["settings_fingerprint"]
    assert not (out / ".lock").exists() and not (out / "_fingerprint.json").exists()


@pytest.mark.parametrize("change, field", [
    (dict(lm=FakeLM(seed=9)), "weights_sha256"),
    (dict(stop=PARAGRAPH), "decoding"),
    (dict(max_new_tokens=3), "decoding"),
    (dict(label="other"), "model"),
    (dict(revision_label="step7"), "revision"),
    (dict(shard=(0, 2)), None),               # another directory: no conflict
])
def test_finished_directory_with_other_settings(tmp_path, instances_dir, change, field):
    out = tmp_path / "fake"
    first = predict(instances_dir, out, FakeLM(), label="fake")
    kw = {"label": "fake", **{k: v for k, v in change.items() if k != "lm"}}
    lm = change.get("lm", FakeLM())
    if field is None:
        assert predict(instances_dir, out, lm, **kw)["totals"]["rows"] > 0
        return
    with pytest.raises(InputMismatchError, match=f"{field}: "):
        predict(instances_dir, out, lm, **kw)
    assert read_manifest(out) == first                        # untouched
    redone = predict(instances_dir, out, lm, force=True, **kw)
    assert redone["settings_fingerprint"] != first["settings_fingerprint"]
    assert redone["totals"]["rows"] == first["totals"]["rows"] == len(_rows(out))


def test_other_prompts_file_and_unchanged_rerun(tmp_path, instances_dir):
    out = tmp_path / "fake"
    first = predict(instances_dir, out, FakeLM(), label="fake")
    assert predict(instances_dir, out, FakeLM(), label="fake") == first     # nothing to do
    t = load_prompts(instances_dir).table
    pq.write_table(t.slice(0, 7), tmp_path / "seven.parquet")
    with pytest.raises(InputMismatchError, match="prompts_sha256"):
        predict(tmp_path / "seven.parquet", out, FakeLM(), label="fake")
    assert predict(tmp_path / "seven.parquet", out, FakeLM(), label="fake",
                   force=True)["totals"]["rows"] == 7 == len(_rows(out))


def test_directory_of_an_older_freqgap_is_refused(tmp_path, instances_dir, clean):
    out = tmp_path / "old"
    out.mkdir()
    for f in part_files(clean)[:1]:
        (out / f.name).write_bytes(f.read_bytes())
    with pytest.raises(InputMismatchError, match="without a fingerprint"):
        predict(instances_dir, out, FakeLM(), label="fake")
    assert predict(instances_dir, out, FakeLM(), label="fake", force=True)["totals"]["rows"] == \
        len(_rows(clean))


def test_batching_is_a_field_only_when_it_can_change_results(tiny_model_dirs, lms):
    args = dict(prompts_sha256="0" * 64, label="m", revision="local", max_new_tokens=5,
                stop=StopRule(), reuse_prefix=True, batch_size=8, shard=None)
    assert "batching" not in fingerprint_fields(lm=lms["gptj"], **args)
    half = get_lm(str(tiny_model_dirs["gptj"]), device="cpu", dtype="bfloat16")
    assert not half.batch_invariant
    fields = fingerprint_fields(lm=half, **args)
    assert fields["batching"] == {"batch_size": 8, "reuse_prefix": True}
    assert fields["dtype"] == "bfloat16" and fields["device_class"] == "cpu"


def test_failed_runs_leave_no_directory(tmp_path, instances_dir):
    out = tmp_path / "a" / "b" / "c"
    with pytest.raises(ModelError, match="unknown model"):
        predict(instances_dir, out, "no-such-model")
    with pytest.raises(UsageError, match="--chunk-size 0"):
        predict(instances_dir, out, FakeLM(), chunk_size=0)
    with pytest.raises(UsageError, match="set when an LM is built"):
        predict(instances_dir, out, FakeLM(), revision="step1")
    (tmp_path / "empty_model").mkdir()
    with pytest.raises(ModelError, match="no config.json"):
        predict(instances_dir, out, str(tmp_path / "empty_model"))
    assert not (tmp_path / "a").exists()
    keep = tmp_path / "kept"
    keep.mkdir()
    (keep / "notes.txt").write_text("mine")
    with pytest.raises(ModelError):
        predict(instances_dir, keep / "m", str(tmp_path / "empty_model"))
    assert sorted(p.name for p in keep.iterdir()) == ["notes.txt"]


def test_busy_directory_keeps_the_holders_lock(tmp_path, instances_dir):
    out = tmp_path / "busy"
    out.mkdir()
    with DirLock(out) as held:
        with pytest.raises(DirectoryBusyError):
            predict(instances_dir, out, FakeLM())
        assert (out / ".lock").exists()
        assert os.fstat(held.fd).st_ino == (out / ".lock").stat().st_ino


def test_bad_inputs_and_outputs(tmp_path, instances_dir):
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="cannot create or write the output directory"):
        predict(instances_dir, tmp_path / "file" / "out", FakeLM())
    t = load_prompts(instances_dir).table
    pq.write_table(t.slice(0, 0), tmp_path / "empty.parquet")
    with pytest.raises(PromptsError, match=r"no prompts \(0 rows\)"):
        predict(tmp_path / "empty.parquet", tmp_path / "o", FakeLM())
    pq.write_table(t.set_column(t.schema.get_field_index("k"), "k",
                                pa.array([str(v) for v in t.column("k").to_pylist()])),
                   tmp_path / "str_k.parquet")
    with pytest.raises(PromptsError, match="column k is string, expected int64"):
        predict(tmp_path / "str_k.parquet", tmp_path / "o", FakeLM())
    assert not (tmp_path / "o").exists()


def test_lock_is_exclusive_and_released(tmp_path):
    with DirLock(tmp_path):
        with pytest.raises(DirectoryBusyError, match=f"pid {os.getpid()}"):
            DirLock(tmp_path).acquire()
    assert not (tmp_path / ".lock").exists()
    with DirLock(tmp_path):
        pass



def test_finished_directory_is_checked_without_loading_the_model(tmp_path, instances_dir,
                                                                  tiny_model_dirs, monkeypatch):
    from freqgap.inference.hf import HFCausalLM

    few = tmp_path / "few.parquet"
    pq.write_table(load_prompts(instances_dir).table.slice(0, 12), few)
    model, out = str(tiny_model_dirs["gpt_neox"]), tmp_path / "m"
    first = predict(few, out, model, device="cpu")

    def no_load(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(HFCausalLM, "load", no_load)
    assert predict(few, out, model, device="cpu") == first
    with pytest.raises(InputMismatchError, match="max_new_tokens=5, .* → greedy, max_new_tokens=2"):
        predict(few, out, model, device="cpu", max_new_tokens=2)
    with pytest.raises(AssertionError, match="was loaded"):     # unfinished: loads as usual
        predict(few, tmp_path / "other", model, device="cpu")
