"""A newcomer's mistakes that used to send them the wrong way (issue 40, item 1): each is
one line with exit 2, checked before any work, saying what to do."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from freqgap.cli import main
from freqgap.manifest import MANIFEST_NAME
from tests.cli.test_help import REPO


def _run(argv) -> int:
    """main(argv)'s exit status, argparse's SystemExit included."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def _one_line(capsys, rc) -> str:
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1, err
    return err


@pytest.mark.parametrize("device, says", [
    ("gpu", "'gpu': not a device name; use cpu, cuda, cuda:N (a GPU index) or mps"),
    ("cuda:x", "not a device name"),
    ("cpu:1", "the CPU has no index"),
])
def test_a_device_name_that_is_no_device(device, says, capsys, tmp_path):
    rc = _run(["predict", "--model", "demo", "--prompts", str(tmp_path), "--device", device])
    assert says in _one_line(capsys, rc)


def test_cuda_on_a_torch_without_it_is_refused_before_loading(capsys, tmp_path, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    rc = _run(["predict", "--model", "demo", "--prompts", str(tmp_path), "--device", "cuda"])
    assert "sees no CUDA device; use --device cpu" in _one_line(capsys, rc)


def test_a_gpu_index_past_the_last_one(capsys, tmp_path, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    rc = _run(["suite", "neqa", "--device", "cuda:2", "--models", "demo"])
    assert "only 2 CUDA device(s) are visible (cuda:0 … cuda:1)" in _one_line(capsys, rc)


def test_freqgap_is_offline_unless_asked_and_names_the_cache(tmp_path):
    """A hub model that is not cached: one line at once, naming the cache searched."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "FREQGAP_ONLINE")}
    env.update(HF_HUB_CACHE=str(tmp_path / "hub"), PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-m", "freqgap", "predict", "--model",
                          "EleutherAI/pythia-70m", "--prompts", str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert (f"EleutherAI/pythia-70m @ main is not in the Hugging Face cache {tmp_path / 'hub'} "
            "(searched offline)") in out.stderr
    assert "--online (or FREQGAP_ONLINE=1)" in out.stderr


def test_the_offline_switch():
    from freqgap.cli.offline import apply_offline, wants_online

    assert wants_online(["--online", "predict"]) and not wants_online(["predict"])
    saved = {k: os.environ.pop(k, None) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE",
                                                    "FREQGAP_ONLINE")}
    try:
        apply_offline(["--online"])
        assert "HF_HUB_OFFLINE" not in os.environ
        os.environ["FREQGAP_ONLINE"] = "1"
        apply_offline([])
        assert "HF_HUB_OFFLINE" not in os.environ
        del os.environ["FREQGAP_ONLINE"]
        apply_offline([])
        assert os.environ["HF_HUB_OFFLINE"] == "1"
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None)
            if v is not None:
                os.environ[k] = v


def test_a_folder_of_prediction_folders_gets_the_glob(tmp_path, capsys):
    for name in ("demo", "pythia"):
        (tmp_path / "mypred" / name).mkdir(parents=True)
        (tmp_path / "mypred" / name / MANIFEST_NAME).write_text(json.dumps({"stage": "predict"}))
    rc = _run(["gaps", "--predictions", str(tmp_path / "mypred"), "--out", str(tmp_path / "r")])
    err = _one_line(capsys, rc)
    assert f"{tmp_path / 'mypred'} holds prediction folders (demo, pythia)" in err
    assert f"--predictions '{tmp_path / 'mypred'}/*/'" in err
    assert "did not finish" not in err
