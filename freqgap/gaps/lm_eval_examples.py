"""lm-evaluation-harness's examples file for the frequency extremes: `{task: [doc ids]}`
(lm-eval's `--samples`), the documents of the exported tasks (freqgap.gaps.lm_eval_export)
whose key is in the bottom or the top bin of ω under one frequency definition.

The bins are the gaps run's own (the `key_bins` view of sql/30_gaps.sql: rank or quantile,
`bin_percent`), read from the run's database, so lm-eval re-runs exactly the instances
whose accuracies Δ compares. Bins pool seeds (as Δ does) and are taken over every model of
the run: an instance is chosen when its key is in a bin for any of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from freqgap.errors import FreqgapError
from freqgap.gaps.lm_eval_export import doc_ids, documents
from freqgap.manifest import atomic_write_text

# The definition every task has (both operands: x1,x2 for arithmetic and time units).
DEFAULT_FREQ_DEF = "1,2"

_BINNED = """
SELECT DISTINCT t.task, b.k, t.instance_id, b.in_top
FROM key_bins b
JOIN selected_terms t ON t.task = b.task AND t.freq_def = b.freq_def AND t.key = b.key
WHERE b.freq_def = ? AND (b.in_bottom OR b.in_top)
"""


class ExamplesError(FreqgapError):
    """The examples file cannot be made from this gaps run."""


def binned_instances(con, freq_def: str) -> set[tuple[str, int, int]]:
    """(task, k, instance_id) whose key is in the bottom or top bin of its group."""
    rows = con.execute(_BINNED, [freq_def]).fetchall()
    if not rows:
        have = [r[0] for r in con.execute(
            "SELECT DISTINCT freq_def FROM key_bins ORDER BY 1").fetchall()]
        raise ExamplesError(f"--examples-freq-def {freq_def}: no key of this run is binned "
                            f"under it (definitions binned: {', '.join(have) or 'none'})")
    return {(task, int(k), int(iid)) for task, k, iid, _ in rows}


def examples(con, instances_dir: str | Path, freq_def: str = DEFAULT_FREQ_DEF
             ) -> dict[str, list[int]]:
    """lm-eval task -> sorted doc ids of the binned instances, tasks in name order."""
    chosen = binned_instances(con, freq_def)
    out: dict[str, list[int]] = {}
    for (task, k, _seed, iid), (name, doc) in doc_ids(documents(instances_dir)).items():
        if (task, k, iid) in chosen:
            out.setdefault(name, []).append(doc)
    return {name: sorted(ids) for name, ids in sorted(out.items())}


def write_examples(con, instances_dir: str | Path, path: str | Path,
                   freq_def: str = DEFAULT_FREQ_DEF) -> dict[str, Any]:
    """Write the examples file (JSON, written whole); returns it."""
    data = examples(con, instances_dir, freq_def)
    lines = [f" {json.dumps(name)}: {json.dumps(ids)}" for name, ids in data.items()]
    atomic_write_text(Path(path), "{\n" + ",\n".join(lines) + "\n}\n")
    return data
