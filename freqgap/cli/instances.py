"""counts/ → instances/: task instances, term sets and few-shot prompts (SPEC §3).

Example: freqgap instances --counts out/counts --out out/instances --grid demo
"""

from __future__ import annotations

import argparse

from freqgap.cli.common import (add_force, add_k, add_limit, add_out, add_progress_interval,
                                add_seeds, str_list)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from freqgap.config import load_conf

    grids = load_conf("tasks").get("grids") or {}
    p.add_argument("--counts", default="out/counts", metavar="DIR",
                   help="counts directory of `freqgap count` (with _manifest.json)")
    add_out(p, "out/instances", "instances.parquet, instance_terms.parquet, prompts.parquet "
                                "and _manifest.json")
    p.add_argument("--grid", default="paper", choices=sorted(grids),
                   help="grid of tasks, k and seeds in conf/tasks.yaml")
    p.add_argument("--tasks", type=str_list, metavar="T,T,…",
                   help="comma-separated tasks of conf/tasks.yaml (default: the grid's)")
    add_k(p, None, "overrides the grid's (e.g. 0,2,4)")
    add_seeds(p, None, "overrides the grid's (e.g. 0,1)")
    add_limit(p, "test items per (task, k, seed), a seeded random subset (default: the grid's)")
    p.add_argument("--skip-unbuildable", action="store_true",
                   help="leave out a task the counts cannot give operands for (e.g. a unit "
                        "word never near a number), naming it and why, instead of stopping")
    add_progress_interval(p)
    add_force(p, "replace instances in --out made with other settings (grid, tasks, k, "
                 "seeds, limit, conf/tasks.yaml)")


def plan_text(built: dict[str, list], skipped: dict[str, str], grid) -> str:
    """What is about to be written and what predicting it will take (a CPU, the demo
    model): shown before the prompts are written, so a grid too large is stopped early.
    Each (k, seed) tests every instance but the k shots' (capped by max_test_items): an
    estimate, since a shot can exclude a commuted twin of itself too."""
    from freqgap.config import load_conf
    from freqgap.progress import format_duration

    cap = grid.max_test_items
    prompts = sum(min(max(len(insts) - k, 0), cap if cap is not None else len(insts))
                  for insts in built.values() for k in grid.ks for _ in grid.seeds_for(k))
    rate = float(load_conf("models").get("predict_rate_cpu_demo") or 0)
    when = (f"; `freqgap predict` takes about {format_duration(prompts / rate)} for them with "
            f"the demo model on a CPU (~{rate:g} prompts/s; larger models longer, a GPU "
            "far less)") if rate > 0 else ""
    text = (f"plan: {len(built)} task(s), {sum(map(len, built.values())):,} instances, about "
            f"{prompts:,} prompts{when}")
    for name, why in skipped.items():
        text += f"\nskipped task {name} (--skip-unbuildable): {why}"
    return text


def run(args: argparse.Namespace) -> int:
    from freqgap.config import load_conf
    from freqgap.instances import CountsError, build_instances_dir, resolve_grid
    from freqgap.instances.run import result_settings
    from freqgap.outdir import claim

    conf = load_conf("tasks")
    grid = resolve_grid(conf, args.grid, tasks=args.tasks, ks=args.k, seeds=args.seeds,
                        max_test_items=args.limit)
    # one run per output directory, never over another result or an input (freqgap/outdir.py)
    with claim(args.out, stage="instances", inputs=[args.counts],
               settings=result_settings(grid, conf), force=args.force):
        try:
            manifest = build_instances_dir(
                args.counts, args.out, grid, conf, progress_interval=args.progress_interval,
                skip_unbuildable=args.skip_unbuildable,
                on_plan=lambda built, skipped: print(plan_text(built, skipped, grid), flush=True))
        except CountsError as exc:
            if args.skip_unbuildable or len(grid.tasks) < 2 or not str(exc).startswith("task "):
                raise
            raise CountsError(f"{exc} (or pass --skip-unbuildable to build the grid's other "
                              "tasks)") from None
    t = manifest["totals"]
    print(f"wrote {args.out}: {t['instances_all']} instances, {t['prompts_all']} prompts "
          f"({', '.join(f'{k}={v}' for k, v in t['prompts'].items())})")
    return 0
