"""Training settings from conf/training.yaml: `defaults` merged with one profile."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from freqgap.config import ConfigError, load_conf


DATA_ORDERS = ("windows", "packed")


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
    data_order: str = "windows"        # windows: random windows; packed: Pythia's order, recorded
    checkpoints: tuple[int, ...] = ()  # save the weights after these many steps (stepN/)

    def to_dict(self) -> dict[str, Any]:
        """All fields; data_order and checkpoints only when set, so that the manifests of
        models trained before they existed still match their settings."""
        out = {k: copy.deepcopy(getattr(self, k)) for k in self.__dataclass_fields__}
        out["checkpoints"] = list(self.checkpoints)
        for key, default in (("data_order", "windows"), ("checkpoints", [])):
            if out[key] == default:
                del out[key]
        return out


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
    optional = {"data_order", "checkpoints"}
    if not (fields - optional) <= set(merged) <= fields:
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
    if merged.get("data_order", "windows") not in DATA_ORDERS:
        raise ConfigError(f"conf/training.yaml: profile {name!r}: data_order must be one of "
                          f"{DATA_ORDERS}, not {merged['data_order']!r}")
    points = [int(c) for c in merged.get("checkpoints") or ()]
    if any(b <= a for a, b in zip(points, points[1:])) or any(not 0 <= c <= int(merged["steps"])
                                                              for c in points):
        raise ConfigError(f"conf/training.yaml: profile {name!r}: checkpoints must be increasing "
                          f"steps in 0..steps ({merged['steps']}), got {points}")
    merged["checkpoints"] = tuple(points)
    return TrainSettings(name=name, **merged)
