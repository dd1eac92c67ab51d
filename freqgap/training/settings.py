"""Training settings from conf/training.yaml: `defaults` merged with one profile."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from freqgap.config import ConfigError, load_conf


@dataclass(frozen=True)
class TrainSettings:
    """Everything that determines a training run (recorded in the model's train_manifest)."""

    name: str
    seed: int
    threads: int
    device: str
    tokenizer: dict[str, Any]
    model: dict[str, Any]
    seq_len: int
    batch_size: int
    steps: int
    lr: float
    min_lr_ratio: float
    warmup_steps: int
    weight_decay: float
    grad_clip: float
    log_every_s: float

    def to_dict(self) -> dict[str, Any]:
        return {k: copy.deepcopy(getattr(self, k)) for k in self.__dataclass_fields__}


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in (over or {}).items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def load_settings(name: str, overrides: dict[str, Any] | None = None,
                  conf: dict[str, Any] | None = None) -> TrainSettings:
    """The named profile of conf/training.yaml with optional (nested) overrides."""
    conf = conf if conf is not None else load_conf("training")
    profiles = conf.get("profiles") or {}
    if name not in profiles:
        raise ConfigError(f"conf/training.yaml: no profile {name!r} (have: {', '.join(sorted(profiles))})")
    merged = _merge(_merge(conf.get("defaults") or {}, profiles[name] or {}), overrides or {})
    fields = set(TrainSettings.__dataclass_fields__) - {"name"}
    if set(merged) != fields:
        raise ConfigError(f"conf/training.yaml: profile {name!r}: unknown keys "
                          f"{sorted(set(merged) - fields)}, missing keys {sorted(fields - set(merged))}")
    if merged["model"].get("max_position_embeddings", 0) < merged["seq_len"]:
        raise ConfigError(f"conf/training.yaml: profile {name!r}: seq_len exceeds "
                          "model.max_position_embeddings")
    for key in ("steps", "batch_size", "seq_len", "threads"):
        if int(merged[key]) < 1:
            raise ConfigError(f"conf/training.yaml: profile {name!r}: {key} must be >= 1")
    if merged["device"] not in ("auto", "cpu") and not str(merged["device"]).startswith("cuda"):
        raise ConfigError(f"conf/training.yaml: profile {name!r}: device must be auto, cpu or cuda[:n]")
    return TrainSettings(name=name, **merged)
