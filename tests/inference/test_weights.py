"""Weights' sha256: recorded for the demo model and checked on use; corrupt or truncated
checkpoints are one-line errors; digests cached by (path, size, mtime)."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from freqgap.inference import checksums
from freqgap.inference.checksums import CheckpointError, cached_sha256, verify_weights
from freqgap.inference.lm import get_lm
from freqgap.inference.predict import predict
from freqgap.manifest import sha256_file
from freqgap.paths import REPO_ROOT

DEMO = REPO_ROOT / "models" / "demo"


def test_demo_model_records_its_weights_and_matches_them():
    manifest = json.loads((DEMO / "_manifest.json").read_text())
    rec = manifest["weights"]["files"]["model.safetensors"]
    assert rec["sha256"] == sha256_file(DEMO / "model.safetensors")
    assert rec["size"] == (DEMO / "model.safetensors").stat().st_size
    lm = get_lm("demo", device="cpu")
    assert lm.weights_sha256 == manifest["weights"]["sha256"]


def test_overwritten_64_kib_is_refused(tmp_path, instances_dir):
    copy = tmp_path / "demo"
    shutil.copytree(DEMO, copy)
    with open(copy / "model.safetensors", "r+b") as f:
        f.seek(1 << 20)
        f.write(os.urandom(64 << 10))
    with pytest.raises(CheckpointError, match=r"model.safetensors: sha256 \w+… does not match "
                                              r"\w+… recorded in .*_manifest.json") as err:
        get_lm(str(copy), device="cpu")
    assert "\n" not in str(err.value)
    with pytest.raises(CheckpointError):
        predict(instances_dir, tmp_path / "out" / "demo", str(copy), device="cpu")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("keep", [0.5, 0.999, 4])
def test_truncated_safetensors_is_one_line(tmp_path, tiny_model_dirs, keep):
    copy = tmp_path / "m"
    shutil.copytree(tiny_model_dirs["gptj"], copy)
    f = copy / "model.safetensors"
    size = f.stat().st_size
    os.truncate(f, int(size * keep) if keep < 1 else keep)
    with pytest.raises(CheckpointError, match="truncated") as err:
        get_lm(str(copy), device="cpu")
    assert "\n" not in str(err.value)


def test_corrupt_header_and_missing_weights(tmp_path, tiny_model_dirs):
    copy = tmp_path / "m"
    shutil.copytree(tiny_model_dirs["gptj"], copy)
    f = copy / "model.safetensors"
    data = bytearray(f.read_bytes())
    data[8:12] = b"\xff\xfe{{"
    f.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="header is not valid JSON"):
        get_lm(str(copy), device="cpu")
    f.unlink()
    with pytest.raises(CheckpointError, match="no weight files"):
        get_lm(str(copy), device="cpu")


def test_unrecorded_model_is_hashed_not_refused(tiny_model_dirs):
    rec = verify_weights(tiny_model_dirs["gpt_neox"])
    assert list(rec["files"]) == ["model.safetensors"]
    assert rec["files"]["model.safetensors"]["sha256"] == \
        sha256_file(tiny_model_dirs["gpt_neox"] / "model.safetensors")


def test_digests_are_cached_by_path_size_and_mtime(tmp_path, monkeypatch):
    monkeypatch.setenv("FREQGAP_CACHE_DIR", str(tmp_path / "cache"))
    calls = []
    real = checksums.sha256_file
    monkeypatch.setattr(checksums, "sha256_file", lambda p: calls.append(p) or real(p))
    f = tmp_path / "w.bin"
    f.write_bytes(b"x" * 1000)
    first = cached_sha256(f)
    assert cached_sha256(f) == first and len(calls) == 1
    f.write_bytes(b"y" * 1000)                      # same size, new content and mtime
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert cached_sha256(f) != first and len(calls) == 2
    (tmp_path / "cache" / "sha256.json").write_text("{broken")
    assert cached_sha256(f) == real(f)              # a damaged cache is rebuilt


def test_hub_model_from_the_cache_is_hashed_and_recorded(tmp_path, tiny_model_dirs):
    """A hub id loads offline from the Hugging Face cache layout; its cached files are
    hashed (no recorded checksum to check against: computed, not refused)."""
    import subprocess
    import sys

    hub = tmp_path / "hub"
    repo = hub / "models--fake-org--tiny"
    for ref, commit, arch in (("main", "a" * 40, "gptj"), ("step1", "b" * 40, "gpt_neox")):
        snap = repo / "snapshots" / commit
        shutil.copytree(tiny_model_dirs[arch], snap)
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
    code = ("from freqgap.inference.lm import get_lm\n"
            "for rev in (None, 'step1'):\n"
            "    lm = get_lm('fake-org/tiny', revision=rev, device='cpu')\n"
            "    print(lm.revision, lm.weights_sha256, lm.architecture)\n")
    env = dict(os.environ, HF_HUB_CACHE=str(hub), HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO_ROOT))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [line.split() for line in out.stdout.strip().splitlines()]
    expect = [("main", "gptj", "GPTJForCausalLM"), ("step1", "gpt_neox", "GPTNeoXForCausalLM")]
    for (rev, sha, arch_name), (want_rev, arch, want_name) in zip(lines, expect):
        assert (rev, arch_name) == (want_rev, want_name)
        assert sha == verify_weights(tiny_model_dirs[arch])["sha256"]
