"""Where the project's files live, in a checkout or in an installed wheel.

In a checkout `conf/` and `sql/` beside the package are the one source of truth; a built
wheel carries copies of them as package data in `freqgap/_data/` (made by `setup.py` at
build time, never committed). A user overrides configuration files with `--conf DIR` or
the `FREQGAP_CONF` environment variable: a file present there replaces the one of the
same name, the others still come from the defaults. Relative paths of the user (inputs,
outputs) resolve against the current directory, never against this module.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent        # the checkout (or site-packages when installed)
_DATA_DIR = PACKAGE_DIR / "_data"     # conf/ and sql/ copied in by the wheel build
CONF_ENV = "FREQGAP_CONF"


def _shipped(name: str) -> Path:
    """The checkout's `name/` when it exists, else the installed package's copy."""
    checkout = REPO_ROOT / name
    return checkout if checkout.is_dir() else _DATA_DIR / name


DEFAULT_CONF_DIR = _shipped("conf")
SQL_DIR = _shipped("sql")
DATA_DIR = REPO_ROOT / "data"
SAMPLE_CORPUS_DIR = DATA_DIR / "sample"
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
