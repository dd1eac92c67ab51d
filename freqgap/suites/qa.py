"""The QA suite end to end (issue 41 item 5): entity-pair instances, greedy answers, ω =
relevant-document count, accuracy and Δ by frequency, and the Kandpal figure.

  write_count_inputs(items, DIR)  -> DIR/pairs.csv, entities.txt, vocab.yaml
  freqgap count --unit document --pairs DIR/pairs.csv --vocab DIR/vocab.yaml ...
  run_qa(items, counts, models, OUT) -> OUT/{instances,predictions,summary,gaps,qa}/

Everything is the suite pipeline's (freqgap.suites.pipeline with the `qa` suite): the same
instances, reuse of finished models, DuckDB gaps and bootstrap, and the bins of
freqgap.suites.qa_bins after the gaps. This module is the one call a workflow makes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from freqgap.config import load_conf
from freqgap.suites import qa_items


def write_count_inputs(items_path: str | Path, dest: str | Path,
                       conf: dict[str, Any] | None = None) -> dict[str, Path]:
    """The counting job's inputs for the evaluated items (the shots left out): pairs.csv,
    entities.txt, vocab.yaml under `dest` (freqgap.suites.qa_items.write_count_inputs)."""
    conf = (load_conf("suites") if conf is None else conf).get("qa", {})
    _, items = qa_items.split_shots(qa_items.load(items_path), int(conf.get("shots", 3)),
                                    items_path)
    return qa_items.write_count_inputs(items, dest)


def run_qa(items_path: str | Path, counts_dir: str | Path, models: list[str],
           out_dir: str | Path, *, loader: Callable | None = None, revision: str | None = None,
           device: str | None = None, dtype: str | None = None, batch_size: int | None = None,
           limit: int | None = None, force: bool = False, boot_reps: int | None = None,
           conf: dict[str, Any] | None = None, verbose: bool = False) -> dict[str, Any]:
    """The QA suite for `models` against document-unit counts; returns accuracy per model,
    the gaps rows, the bins and the figure's path (docs/suites.md, "QA")."""
    from freqgap.suites.pipeline import run

    result = run("qa", items_path, models, out_dir, revision=revision, device=device,
                 dtype=dtype, batch_size=batch_size, limit=limit, force=force, conf=conf,
                 loader=loader, counts=counts_dir, boot_reps=boot_reps, verbose=verbose)
    report = result["report"]
    return {"accuracy": {r["model"]: r["metrics"]["accuracy"] for r in result["records"]},
            "gaps": result["gaps"].gaps, "bins": report["bins"], "figure": report["figure"],
            "out": Path(out_dir), "records": result["records"]}
