"""Where the project's files live, in a checkout or in an installed wheel.

In a checkout `conf/`, `sql/`, the sample corpus `data/sample/` and the demo model
`models/demo/` beside the package are the one source of truth; a built wheel carries
copies of them as package data in `freqgap/_data/` (made by `setup.py` at build time,
never committed), so that `freqgap count` and `freqgap demo` with their defaults work
from any directory. A user overrides configuration files with `--conf DIR` or
the `FREQGAP_CONF` environment variable: a file present there replaces the one of the
same name, the others still come from the defaults. Relative paths of the user (inputs,
outputs) resolve against the current directory, never against this module.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
_DATA_DIR = PACKAGE_DIR / "_data"     # what the wheel build copies in (setup.py SHIPPED)
CONF_ENV = "FREQGAP_CONF"
IN_CHECKOUT = (PACKAGE_DIR.parent / "conf").is_dir() and (PACKAGE_DIR.parent / "sql").is_dir()
# The root that the project's own relative paths resolve against (conf/models.yaml's
# `models/demo`, the sample corpus): the checkout, or the installed package's data, so
# that the defaults name files that exist wherever the command runs.
REPO_ROOT = PACKAGE_DIR.parent if IN_CHECKOUT else _DATA_DIR


DEFAULT_CONF_DIR = REPO_ROOT / "conf"
SQL_DIR = REPO_ROOT / "sql"
DATA_DIR = REPO_ROOT / "data"
SAMPLE_CORPUS_DIR = DATA_DIR / "sample"      # `freqgap count`'s and `freqgap demo`'s default
DEMO_MODEL_DIR = REPO_ROOT / "models" / "demo"
RESULTS_DIR = REPO_ROOT / "results"   # the checkout's `make gaps` output (the notebook reads it)


def conf_dirs() -> list[Path]:
    """Directories searched for conf/<name>.yaml, the user's override (if any) first."""
    override = os.environ.get(CONF_ENV)
    return ([Path(override)] if override else []) + [DEFAULT_CONF_DIR]


def conf_file(name: str) -> Path:
    """conf/<name>.yaml from the override directory if it holds one, else the default."""
    for directory in conf_dirs():
        path = directory / f"{name}.yaml"
        if path.exists():
            return path
    return DEFAULT_CONF_DIR / f"{name}.yaml"


def cache_root() -> Path:
    """This machine's cache of derived files (class archives, facts about Spark's jars):
    `$FREQGAP_CACHE_DIR`, else `$XDG_CACHE_HOME/freqgap`, else `~/.cache/freqgap`."""
    return Path(os.environ.get("FREQGAP_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "freqgap"))
