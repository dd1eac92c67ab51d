"""Δ over two count tables on the same predictions (`freqgap gaps --compare-counts DIR`):
how far the gap moves when the keys are binned by another rule set's counts.

Why here and not a second `freqgap gaps` run: both Δ must come from the very same
predictions, instances and settings, so the other counts go through the same steps
(engine.load_inputs, compute_per_key, compute_gaps) in a scratch database, and their Δ per
group is joined to this run's in sql/60_rule_set_shift.sql, stored in this run's database.
The other counts need not be those the instances were made from (that is the point): the
fingerprint check is waived for them and their fingerprint recorded instead.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import sys
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from freqgap.gaps import engine
from freqgap.gaps.inputs import resolve_inputs
from freqgap.gaps.options import GapsOptions
from freqgap.gaps.sqlrun import run_sql_file

SHIFT_FILE = "rule_set_shift.parquet"
SQL_FILE = "60_rule_set_shift.sql"
GROUP = ["model", "revision", "task", "k", "freq_def"]
# The waived check's warning: the other counts are other counts by design.
_WAIVED = "accepted (--counts-mismatch-ok)"


def _other_options(opts: GapsOptions) -> GapsOptions:
    """This run's options with the other counts in place of --counts."""
    return dataclasses.replace(opts, counts=opts.compare_counts, compare_counts=None,
                               counts_mismatch_ok=True)


def _resolve_quietly(opts: GapsOptions):
    """resolve_inputs, less the warning of the waived fingerprint check (others pass on)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        inputs = resolve_inputs(opts)
    for line in err.getvalue().splitlines():
        if _WAIVED not in line:
            print(line, file=sys.stderr)
    return inputs


def other_gaps(opts: GapsOptions, scratch: Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """(Δ, seen keys, ρ and reason per group over the other counts; what they were)."""
    other = _other_options(opts)
    inputs = _resolve_quietly(other)
    with engine.database(scratch / "compare.duckdb", other, scratch / "spill") as con:
        variables = engine.sql_variables(inputs, other)
        engine.load_inputs(con, inputs, other, variables)
        engine.compute_per_key(con, inputs, variables)
        engine.compute_gaps(con, other, variables)
        rows = con.execute(f"""
            SELECT {', '.join(GROUP)}, delta, n_keys, spearman_rho,
                   CASE WHEN delta IS NULL THEN withheld_reason_raw END AS withheld_reason
            FROM gap_points""").df()
    manifest = inputs.manifests["counts"]
    return rows, {"counts": str(inputs.counts_dir), "fingerprint": manifest["fingerprint"],
                  "rule_set": (manifest.get("config") or {}).get("rule_set", "razeghi")}


def write_shift(con, opts: GapsOptions, variables: dict[str, Any], path: Path) -> dict[str, Any]:
    """Fill gaps_compare and define rule_set_shift in this run's database (`con`, after
    compute_gaps and fill_intervals), write the view to `path`; returns the manifest's
    record of the comparison."""
    with tempfile.TemporaryDirectory(prefix=".compare-", dir=path.parent) as tmp:
        rows, record = other_gaps(opts, Path(tmp))
    run_sql_file(con, SQL_FILE, variables)
    con.execute("DELETE FROM gaps_compare")
    con.register("other_gaps", rows)
    con.execute("INSERT INTO gaps_compare SELECT * FROM other_gaps")
    con.unregister("other_gaps")
    tmp_file = engine.tmp_path(path)
    con.execute(f"COPY (SELECT * FROM rule_set_shift) TO '{tmp_file}' "
                "(FORMAT parquet, COMPRESSION zstd)")
    tmp_file.replace(path)
    shifts = con.execute("SELECT count(*), count(delta_shift), max(abs(delta_shift)) "
                         "FROM rule_set_shift").fetchall()[0]
    return {**record, "groups": int(shifts[0]), "groups_with_both": int(shifts[1]),
            "max_abs_shift": None if shifts[2] is None else float(shifts[2])}


def shift_text(path: Path, limit: int = 40) -> str:
    """The comparison as a few lines: Δ over each count table and the shift, ×100."""
    df = pd.read_parquet(path)
    lines = [f"Δ by rule set (×100; --counts vs --compare-counts, shift = compare − counts): "
             f"{len(df)} groups -> {path}"]
    for r in df.head(limit).itertuples():
        def pct(v):
            return "  n/a" if pd.isna(v) else f"{100 * v:+6.1f}"
        lines.append(f"  {r.model}@{r.revision} {r.task} k={r.k} {r.freq_def}: "
                     f"{pct(r.delta)} {pct(r.delta_compare)} shift {pct(r.delta_shift)}")
    if len(df) > limit:
        lines.append(f"  … {len(df) - limit} more: freqgap query \"SELECT * FROM rule_set_shift\"")
    return "\n".join(lines)
