"""Accuracy of the QA suite per log bin of ω, the relevant-document count (Kandpal et al.
2023's figure): sql/50_qa_bins.sql over a gaps run's per_key table, then the figure.

Written to OUT/qa/ (bins.parquet, the figure) after the gaps, inside the suite's run, with
its own manifest removed first and written last, like every stage.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from freqgap.config import ConfigError
from freqgap.manifest import (MANIFEST_NAME, build_manifest, dataset_records, now_iso,
                              write_manifest)
from freqgap.suites.qa_items import FREQ_DEF

BIN_BASES = (2, 10)
QA_DIR = "qa"
BINS_FILE = "bins.parquet"
FIGURE_FILE = "accuracy_by_documents.png"


def bin_base(conf: dict[str, Any]) -> int:
    """conf/suites.yaml qa.bin_base: bins are powers of 2 or of 10."""
    base = conf.get("bin_base", 2)
    if base not in BIN_BASES:
        raise ConfigError(f"conf/suites.yaml qa.bin_base: {base!r}; use 2 or 10")
    return int(base)


def accuracy_bins(per_key_file: Path, base: int, level: float):
    """The rows of `qa_bins` (sql/50_qa_bins.sql) over a gaps run's per_key table."""
    import duckdb

    from freqgap.gaps.sqlrun import run_sql_file

    z = statistics.NormalDist().inv_cdf(0.5 + level / 2)
    con = duckdb.connect()
    try:
        run_sql_file(con, "50_qa_bins.sql", {"qa_per_key_files": [str(per_key_file)],
                                             "qa_freq_def": FREQ_DEF, "qa_bin_base": base,
                                             "qa_z": z})
        return con.execute("SELECT * FROM qa_bins").df()
    finally:
        con.close()


def write_bins(out: Path, gaps_result, base: int) -> dict[str, Any]:
    """OUT/qa/: bins.parquet, the figure and the manifest (removed first, written last)."""
    from freqgap.analysis.qa import plot_accuracy_by_documents

    started = now_iso()
    d = out / QA_DIR
    d.mkdir(parents=True, exist_ok=True)
    (d / MANIFEST_NAME).unlink(missing_ok=True)
    level = float(gaps_result.manifest["config"]["boot_level"])
    bins = accuracy_bins(gaps_result.files["per_key"], base, level)
    tmp = d / f".{BINS_FILE}.tmp"
    bins.to_parquet(tmp, index=False)
    tmp.replace(d / BINS_FILE)
    figure = plot_accuracy_by_documents(
        bins, d / FIGURE_FILE, level=level,
        title=f"QA accuracy by relevant-document count (bins: powers of {base})")
    write_manifest(d, build_manifest(
        "suite_qa_bins", {"bin_base": base, "level": level, "freq_def": FREQ_DEF},
        [{"path": str(gaps_result.results_dir), "fingerprint": gaps_result.manifest["fingerprint"]}],
        {"rows": len(bins), "models": sorted(set(bins["model"]))}, started,
        upstream={"gaps": gaps_result.manifest["fingerprint"]}, files=dataset_records(d)))
    return {"bins": bins, "figure": figure}
