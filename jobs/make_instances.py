"""counts/ → instances/: task instances, term sets and few-shot prompts (SPEC §3).

Example: python jobs/make_instances.py --counts out/counts --out out/instances --grid demo
"""

from __future__ import annotations

import argparse
import sys

from freqgap.config import ConfigError
from freqgap.instances import CountsError, build_instances_dir, resolve_grid
from freqgap.config import load_conf


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--counts", required=True, help="counts directory (with _manifest.json)")
    ap.add_argument("--out", required=True, help="output instances directory")
    ap.add_argument("--grid", default="paper", help="grid profile in conf/tasks.yaml (paper, demo)")
    ap.add_argument("--tasks", help="comma-separated tasks (overrides the grid)")
    ap.add_argument("--ks", help="comma-separated k values, e.g. 0,2,4")
    ap.add_argument("--seeds", help="comma-separated seeds, e.g. 0,1")
    ap.add_argument("--max-instances", type=int, default=None,
                    help="at most this many test items per (task, k, seed), a random subset")
    args = ap.parse_args(argv)
    try:
        conf = load_conf("tasks")
        grid = resolve_grid(conf, args.grid,
                            tasks=args.tasks.split(",") if args.tasks else None,
                            ks=_ints(args.ks) if args.ks else None,
                            seeds=_ints(args.seeds) if args.seeds else None,
                            max_test_items=args.max_instances)
        manifest = build_instances_dir(args.counts, args.out, grid, conf)
    except (ConfigError, CountsError, FileNotFoundError, ValueError) as exc:
        print(f"make_instances: error: {exc}", file=sys.stderr)
        return 2
    t = manifest["totals"]
    print(f"wrote {args.out}: {t['instances_all']} instances, {t['prompts_all']} prompts "
          f"({', '.join(f'{k}={v}' for k, v in t['prompts'].items())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
