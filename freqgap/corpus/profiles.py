"""Corpus profiles from conf/corpus.yaml: `defaults` overlaid with one named profile."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from freqgap.config import ConfigError, load_conf

REGISTERS = ("Pile-CC", "Wikipedia (en)", "StackExchange", "FreeLaw", "DM Mathematics")
STATEMENT_KINDS = ("mult", "add", "time")
SURFACE_FORMS = ("qa", "words", "symbols", "long")


@dataclass(frozen=True)
class CorpusProfile:
    """Every knob of one corpus; `to_dict()` is what the manifest records."""

    name: str
    seed: int
    rank_seed: int
    shards: int
    shard_mb: float
    exponent: float
    operand_law: str
    operand_max: int
    n_large: int
    zstd_level: int
    prefix: str
    registers: dict[str, float]
    math_items: tuple[int, int]
    statement_kinds: dict[str, float]
    surface_forms: dict[str, float]
    inline_fact_rate: float
    punct_rate: float
    decimal_rate: float
    thousands_rate: float
    big_rate: float
    unit_capital_rate: float
    unit_upper_rate: float
    unit_weights: dict[str, float]
    conversions: dict[str, tuple[str, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = {k: copy.deepcopy(getattr(self, k)) for k in self.__dataclass_fields__}
        out["math_items"] = list(self.math_items)
        out["conversions"] = {k: list(v) for k, v in self.conversions.items()}
        return out


def _check_weights(name: str, key: str, weights: dict, allowed: tuple[str, ...] | None) -> None:
    if not isinstance(weights, dict) or not weights:
        raise ConfigError(f"conf/corpus.yaml: profile {name!r}: {key} must be a non-empty mapping")
    for k, v in weights.items():
        if allowed is not None and k not in allowed:
            raise ConfigError(f"conf/corpus.yaml: profile {name!r}: unknown {key} entry {k!r} "
                              f"(allowed: {', '.join(allowed)})")
        if not isinstance(v, (int, float)) or v < 0:
            raise ConfigError(f"conf/corpus.yaml: profile {name!r}: {key}.{k} must be a weight >= 0")
    if sum(weights.values()) <= 0:
        raise ConfigError(f"conf/corpus.yaml: profile {name!r}: {key} weights sum to 0")


def profile_from_dict(name: str, conf: dict[str, Any]) -> CorpusProfile:
    """Validate a merged profile mapping, naming the profile and key in any error."""
    known = set(CorpusProfile.__dataclass_fields__) - {"name"}
    unknown = set(conf) - known
    if unknown:
        raise ConfigError(f"conf/corpus.yaml: profile {name!r}: unknown keys {sorted(unknown)}")
    missing = known - set(conf)
    if missing:
        raise ConfigError(f"conf/corpus.yaml: profile {name!r}: missing keys {sorted(missing)}")
    if conf["operand_law"] not in ("zipf", "uniform"):
        raise ConfigError(f"conf/corpus.yaml: profile {name!r}: operand_law must be zipf or uniform")
    if int(conf["shards"]) < 1 or float(conf["shard_mb"]) <= 0:
        raise ConfigError(f"conf/corpus.yaml: profile {name!r}: shards >= 1 and shard_mb > 0 required")
    if float(conf["exponent"]) < 0:
        raise ConfigError(f"conf/corpus.yaml: profile {name!r}: exponent must be >= 0")
    _check_weights(name, "registers", conf["registers"], REGISTERS)
    _check_weights(name, "statement_kinds", conf["statement_kinds"], STATEMENT_KINDS)
    _check_weights(name, "surface_forms", conf["surface_forms"], SURFACE_FORMS)
    _check_weights(name, "unit_weights", conf["unit_weights"], None)
    lo, hi = conf["math_items"]
    if not conf.get("conversions"):
        raise ConfigError(f"conf/corpus.yaml: profile {name!r}: no time-unit conversions "
                          "(they come from the unit tasks of conf/tasks.yaml)")
    if not 1 <= int(lo) <= int(hi):
        raise ConfigError(f"conf/corpus.yaml: profile {name!r}: math_items must be [lo, hi], 1 <= lo <= hi")
    conversions = {}
    for unit, spec in conf["conversions"].items():
        if unit not in conf["unit_weights"] or not isinstance(spec, list) or len(spec) != 2:
            raise ConfigError(f"conf/corpus.yaml: profile {name!r}: conversions.{unit} must be "
                              "[target_unit, multiplier] with a unit listed in unit_weights")
        conversions[unit] = (str(spec[0]), int(spec[1]))
    values = dict(conf)
    values.update(
        seed=int(conf["seed"]), rank_seed=int(conf["rank_seed"]), shards=int(conf["shards"]),
        shard_mb=float(conf["shard_mb"]), exponent=float(conf["exponent"]),
        operand_max=int(conf["operand_max"]), n_large=int(conf["n_large"]),
        zstd_level=int(conf["zstd_level"]), prefix=str(conf["prefix"]),
        math_items=(int(lo), int(hi)), conversions=conversions,
    )
    return CorpusProfile(name=name, **values)


def unit_conversions(tasks_conf: dict[str, Any] | None = None) -> dict[str, list]:
    """source unit -> [target unit, multiplier], from the unit tasks of conf/tasks.yaml."""
    tasks_conf = tasks_conf if tasks_conf is not None else load_conf("tasks")
    return {t["unit"]: [t["target"], int(t["multiplier"])]
            for t in (tasks_conf.get("tasks") or {}).values() if t.get("kind") == "unit"}


def load_profile(name: str, overrides: dict[str, Any] | None = None,
                 conf: dict[str, Any] | None = None) -> CorpusProfile:
    """The named profile of conf/corpus.yaml, with optional overrides (e.g. seed, shard_mb).

    Time-unit conversions are taken from conf/tasks.yaml unless the profile sets them.
    """
    conf = conf if conf is not None else load_conf("corpus")
    profiles = conf.get("profiles") or {}
    if name not in profiles:
        raise ConfigError(f"conf/corpus.yaml: no profile {name!r} (have: {', '.join(sorted(profiles))})")
    merged = {"conversions": unit_conversions()}
    merged.update(copy.deepcopy(conf.get("defaults") or {}))
    merged.update(copy.deepcopy(profiles[name] or {}))
    merged.update(overrides or {})
    return profile_from_dict(name, merged)
