"""make simulate: train on a Zipf and on a uniform-operand corpus, and compare Δ.

    python jobs/simulate.py                       # the documented run (see docs/demo_model.md)
    python jobs/simulate.py --steps 20 --shard-mb 0.25 --max-test-items 100   # a quick look

Both corpora (profiles zipf and uniform of conf/corpus.yaml) hold the same documents with
the operands redrawn; both models use training profile `simulate` of conf/training.yaml
(same steps and seed). Each goes through count → instances → inference → gaps; the
report (Markdown + plots) goes to --results.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from freqgap.training.simulate import SimulateOptions, run_simulate


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="out/simulate", help="corpora, models, counts, … (default: out/simulate)")
    ap.add_argument("--results", default="results/simulate", help="report directory (default: results/simulate)")
    ap.add_argument("--train-profile", default="simulate", help="profile in conf/training.yaml")
    ap.add_argument("--steps", type=int, help="override the training steps (both models)")
    ap.add_argument("--threads", type=int, help="torch CPU threads for training")
    ap.add_argument("--shard-mb", type=float, help="override the corpora's MB per shard")
    ap.add_argument("--task", default="mult", help="task of conf/tasks.yaml (default: mult)")
    ap.add_argument("--k", type=int, nargs="+", default=[2], help="shot counts (default: 2)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1], help="shot seeds (default: 0 1)")
    ap.add_argument("--max-test-items", type=int, help="cap on test items per (k, seed) (default: all)")
    ap.add_argument("--boot-reps", type=int, default=1000, help="bootstrap replicates for Δ's interval")
    ap.add_argument("--device", help="inference device (default: cuda if available, else cpu)")
    ap.add_argument("--resume", action="store_true",
                    help="keep corpora and models already written with the same settings "
                         "(their manifests say so); counts, inference and gaps are redone")
    args = ap.parse_args(argv)
    train = {k: v for k, v in {"steps": args.steps, "threads": args.threads}.items() if v is not None}
    corpus = {"shard_mb": args.shard_mb} if args.shard_mb else {}
    opts = SimulateOptions(work=Path(args.work), results=Path(args.results),
                           train_profile=args.train_profile, train_overrides=train,
                           corpus_overrides=corpus, task=args.task, ks=tuple(args.k),
                           seeds=tuple(args.seeds), max_test_items=args.max_test_items,
                           boot_reps=args.boot_reps, device=args.device,
                           resume=args.resume)
    report = run_simulate(opts)
    print(report.read_text(encoding="utf-8"))
    print(f"report: {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
