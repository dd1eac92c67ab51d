"""counts/ → instances/: task instances, term sets and few-shot prompts (SPEC §3).

Example: freqgap instances --counts out/counts --out out/instances --grid demo
"""

from __future__ import annotations

import argparse

from freqgap.cli.common import add_k, add_limit, add_out, add_progress_interval, add_seeds, str_list


def add_arguments(p: argparse.ArgumentParser) -> None:
    from freqgap.config import load_conf

    grids = load_conf("tasks").get("grids") or {}
    p.add_argument("--counts", default="out/counts", metavar="DIR",
                   help="counts directory of `freqgap count` (with _manifest.json)")
    add_out(p, "out/instances", "instances.parquet, terms.parquet, prompts.parquet, vocab.yaml")
    p.add_argument("--grid", default="paper", choices=sorted(grids),
                   help="grid of tasks, k and seeds in conf/tasks.yaml")
    p.add_argument("--tasks", type=str_list, metavar="T,T,…",
                   help="comma-separated tasks of conf/tasks.yaml (default: the grid's)")
    add_k(p, None, "overrides the grid's (e.g. 0,2,4)")
    add_seeds(p, None, "overrides the grid's (e.g. 0,1)")
    add_limit(p, "test items per (task, k, seed), a seeded random subset (default: the grid's)")
    add_progress_interval(p)


def run(args: argparse.Namespace) -> int:
    from freqgap.config import load_conf
    from freqgap.instances import build_instances_dir, resolve_grid
    from freqgap.outdir import claim

    conf = load_conf("tasks")
    grid = resolve_grid(conf, args.grid, tasks=args.tasks, ks=args.k, seeds=args.seeds,
                        max_test_items=args.limit)
    # one run per output directory, never over another result or an input (freqgap/outdir.py)
    with claim(args.out, stage="instances", inputs=[args.counts]):
        manifest = build_instances_dir(args.counts, args.out, grid, conf,
                                       progress_interval=args.progress_interval)
    t = manifest["totals"]
    print(f"wrote {args.out}: {t['instances_all']} instances, {t['prompts_all']} prompts "
          f"({', '.join(f'{k}={v}' for k, v in t['prompts'].items())})")
    return 0
