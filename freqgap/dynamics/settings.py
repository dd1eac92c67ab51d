"""conf/dynamics.yaml: the bucket edges (default: Pythia's 154 checkpoint steps) and the
profile of `make dynamics`."""

from __future__ import annotations

from typing import Any

from freqgap.config import ConfigError, load_conf

CONF = "dynamics"


def load_dynamics_conf() -> dict[str, Any]:
    return load_conf(CONF)


def edges_from_conf(spec: dict[str, Any] | None = None) -> list[int]:
    """The sorted union of `steps` and the range `every` (start..stop inclusive)."""
    spec = spec if spec is not None else load_dynamics_conf()["bucket_edges"]
    steps = {int(s) for s in spec.get("steps") or []}
    every = spec.get("every")
    if every:
        start, stop, step = int(every["start"]), int(every["stop"]), int(every["step"])
        if step < 1 or stop < start:
            raise ConfigError(f"conf/{CONF}.yaml: bucket_edges.every: need step >= 1 and "
                              f"stop >= start, got {every}")
        steps.update(range(start, stop + 1, step))
    if not steps or min(steps) < 0:
        raise ConfigError(f"conf/{CONF}.yaml: bucket_edges: need at least one step >= 0")
    return sorted(steps)


def pythia_settings() -> dict[str, Any]:
    return dict(load_dynamics_conf()["pythia"])


def demo_settings() -> dict[str, Any]:
    return dict(load_dynamics_conf()["demo"])
