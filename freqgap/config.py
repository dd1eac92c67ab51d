"""Loading of the YAML files in conf/: the one source of truth for terms, tasks, models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from freqgap.errors import FreqgapError
from freqgap.paths import conf_file


class ConfigError(FreqgapError):
    """A configuration file is missing or malformed; the message names the file."""


def load_yaml(path: str | Path) -> dict[str, Any]:
    """Read one YAML mapping, naming the file in any error."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: configuration file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at top level")
    return data


def load_conf(name: str) -> dict[str, Any]:
    """Read conf/<name>.yaml (or its replacement in `--conf DIR` / $FREQGAP_CONF)."""
    return load_yaml(conf_file(name))
