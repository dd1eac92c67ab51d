"""Train on a Zipf and on a uniform-operand corpus, and compare Δ (`make simulate`).

  freqgap simulate                                   # the documented run (docs/demo_model.md)
  freqgap simulate --steps 20 --shard-mb 0.25 --limit 100    # a quick look

Both corpora (profiles zipf and uniform of conf/corpus.yaml) hold the same documents with
the operands redrawn; both models use a profile of conf/training.yaml (same steps and
seed). Each goes through count → instances → predict → gaps; the report (Markdown +
plots) goes to --out.
"""

from __future__ import annotations

import argparse

from freqgap.cli.common import (add_device, add_k, add_limit, add_out, add_seeds,
                                non_negative_int, positive_float, positive_int)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--work", default="out/simulate", metavar="DIR",
                   help="directory of the intermediate corpora, models, counts, …")
    add_out(p, "results/simulate", "report.md, delta.png, accuracy_by_rank.png, summary.json")
    p.add_argument("--train-profile", default="simulate", metavar="NAME",
                   help="profile in conf/training.yaml (both models)")
    p.add_argument("--steps", type=positive_int, metavar="N",
                   help="override the training steps (both models)")
    p.add_argument("--threads", type=positive_int, metavar="N", help="torch CPU threads for training")
    p.add_argument("--shard-mb", type=positive_float, metavar="MB",
                   help="override the corpora's uncompressed MB per shard")
    p.add_argument("--task", default="mult", help="task of conf/tasks.yaml")
    add_k(p, [2], "shots of the instances")
    add_seeds(p, [0, 1], "shot seeds of the instances")
    add_limit(p, "test items per (k, seed) (default: all)")
    p.add_argument("--boot-reps", type=non_negative_int, default=1000, metavar="N",
                   help="bootstrap resamples for Δ's interval")
    add_device(p)
    p.add_argument("--resume", action="store_true",
                   help="keep corpora and models already written with the same settings "
                        "(their manifests say so); counts, inference and gaps are redone")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from freqgap.outdir import claim_each, writable_dir
    from freqgap.workflows.simulate import SimulateOptions, run_simulate

    writable_dir("--work", args.work)
    writable_dir("--out", args.out)
    train = {k: v for k, v in {"steps": args.steps, "threads": args.threads}.items() if v is not None}
    corpus = {"shard_mb": args.shard_mb} if args.shard_mb else {}
    _check_settings(args, train, corpus)
    opts = SimulateOptions(work=Path(args.work), results=Path(args.out),
                           train_profile=args.train_profile, train_overrides=train,
                           corpus_overrides=corpus, task=args.task, ks=tuple(args.k),
                           seeds=tuple(args.seeds), max_test_items=args.limit,
                           boot_reps=args.boot_reps, device=args.device, resume=args.resume)
    with claim_each(("--work", args.work), ("--out", args.out)):   # one run per directory
        report = run_simulate(opts)
    print(report.read_text(encoding="utf-8"))
    print(f"report: {report}")
    return 0


def _check_settings(args: argparse.Namespace, train: dict, corpus: dict) -> None:
    """Refuse a bad task, profile or grid now, not after corpora were written and trained."""
    from freqgap.config import load_conf
    from freqgap.corpus import load_profile
    from freqgap.instances import resolve_grid
    from freqgap.training import load_settings
    from freqgap.workflows.simulate import LAWS

    for law in LAWS:
        load_profile(law, corpus)
    load_settings(args.train_profile, train)
    resolve_grid(load_conf("tasks"), "paper", tasks=[args.task], ks=args.k, seeds=args.seeds)
