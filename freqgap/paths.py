"""Where the project's files live, so no module hard-codes relative paths."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CONF_DIR = REPO_ROOT / "conf"
SQL_DIR = REPO_ROOT / "sql"
DATA_DIR = REPO_ROOT / "data"
OUT_DIR = REPO_ROOT / "out"
RESULTS_DIR = REPO_ROOT / "results"
SAMPLE_CORPUS_DIR = DATA_DIR / "sample"
