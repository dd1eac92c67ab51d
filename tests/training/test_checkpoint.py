"""The committed demo checkpoint loads offline and reproduces the predictions recorded beside it."""

from __future__ import annotations

import json

from freqgap.paths import REPO_ROOT
from freqgap.training.predictions import PREDICTIONS_FILE, check_predictions

DEMO = REPO_ROOT / "models" / "demo"


def test_demo_checkpoint_is_complete_and_small():
    for name in ("model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json",
                 "COMMAND.txt", "_manifest.json", PREDICTIONS_FILE, "README.md"):
        assert (DEMO / name).is_file(), name
    assert (DEMO / "model.safetensors").stat().st_size < 8_000_000
    assert "jobs/train_lm.py" in (DEMO / "COMMAND.txt").read_text()
    config = json.loads((DEMO / "config.json").read_text())
    assert config["model_type"] == "gpt_neox"


def test_demo_checkpoint_reproduces_recorded_predictions(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    recorded = json.loads((DEMO / PREDICTIONS_FILE).read_text())["items"]
    assert len(recorded) >= 20
    # A model that answers nothing would reproduce trivially; this one has learned facts.
    assert sum(r["correct"] for r in recorded) >= 4
    assert check_predictions(DEMO) == []
