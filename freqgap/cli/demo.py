"""Run the whole chain on the bundled sample corpus with the committed demo model:
count → instances (grid demo) → predict (model demo) → gaps, ending with a Table-2-like
summary and the paths of the plots (`make demo` runs this). About 1–2 minutes on 2 cores.
"""

from __future__ import annotations

import argparse

from freqgap.cli.common import add_device, add_out, add_progress_interval


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", metavar="PATH",
                   help="corpus to count (files, directory or glob; default: the bundled "
                        "sample corpus, shipped with the package)")
    p.add_argument("--work", default="out", metavar="DIR",
                   help="directory of counts/, instances/, predictions/ and reports/")
    add_out(p, "results", "the gaps stage's tables, plots, freqgap.duckdb")
    p.add_argument("--model", default="demo",
                   help="alias in conf/models.yaml, Hugging Face id or local model directory")
    from freqgap.config import load_conf

    grids = sorted(load_conf("tasks").get("grids") or {})
    p.add_argument("--grid", default="demo", choices=grids, help="grid of conf/tasks.yaml")
    add_device(p)
    add_progress_interval(p, default=5.0)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from freqgap.cli.common import existing_path
    from freqgap.outdir import claim_each
    from freqgap.workflows.demo import DemoOptions, run_demo

    from freqgap.paths import SAMPLE_CORPUS_DIR

    args.corpus = args.corpus or str(SAMPLE_CORPUS_DIR)     # found from any directory
    if "://" not in args.corpus and not any(c in args.corpus for c in "*?["):
        existing_path("--corpus", args.corpus)
    with claim_each(("--work", args.work), ("--out", args.out)):   # one demo per directory
        run_demo(DemoOptions(corpus=args.corpus, work=Path(args.work), results=Path(args.out),
                             model=args.model, grid=args.grid, device=args.device,
                             verbose=args.verbose, progress_interval=args.progress_interval))
    return 0
