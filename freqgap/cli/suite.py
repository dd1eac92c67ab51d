"""Evaluate models on a negation or quantifier benchmark: metrics, scaling plot, gap tables.

  freqgap suite {neqa,tinad,quantifiers} --data PATH --models m1,m2,... --out DIR

See docs/suites.md for the file layouts, metrics and the frequency-gap step.
"""

from __future__ import annotations

import argparse

from freqgap.cli.common import (HelpFormatter, Parser, add_batch_size, add_device, add_dtype,
                                add_limit, add_models, add_out, add_revision, common_parent)

BENCHMARKS = {
    "neqa": "NeQA: negated multiple-choice questions (Task 1/Task 2 with --original)",
    "tinad": "This is not a Dataset: true/false sentences with and without negation",
    "quantifiers": "quantifier comprehension: typical vs atypical completions",
}


def _add_benchmark(p: argparse.ArgumentParser, name: str) -> None:
    p.add_argument("--data", required=True, metavar="PATH",
                   help="benchmark file in its released layout (or hf:DATASET[:SPLIT])")
    add_models(p)
    add_out(p, None, "instances/, predictions/, metrics, plots and _manifest.json")
    if name == "neqa":
        p.add_argument("--original", metavar="PATH",
                       help="the non-negated questions (enables Task 1/Task 2)")
    add_revision(p)
    add_device(p)
    add_dtype(p)
    add_batch_size(p, "items per forward pass (default: conf/suites.yaml batch_size)")
    add_limit(p, "items (whole groups for tinad)")
    p.add_argument("--force", action="store_true", help="rerun models with complete results")
    p.add_argument("--counts", metavar="DIR",
                   help="counts directory of `freqgap count` (run with --vocab "
                        "OUT/instances/vocab.yaml): also compute the frequency gaps")


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True, parser_class=Parser)
    for name, summary in BENCHMARKS.items():
        sp = sub.add_parser(name, help=summary, description=summary, parents=[common_parent()],
                            formatter_class=HelpFormatter)
        _add_benchmark(sp, name)
        sp.set_defaults(_prog=f"freqgap suite {name}")


def run(args: argparse.Namespace) -> int:
    import json

    from freqgap.cli.common import writable_dir
    from freqgap.suites.pipeline import run as run_suite

    writable_dir("--out", args.out)
    result = run_suite(args.benchmark, args.data, args.models, args.out,
                       original=getattr(args, "original", None), revision=args.revision,
                       device=args.device, dtype=args.dtype, batch_size=args.batch_size,
                       limit=args.limit, force=args.force, counts=args.counts)
    summary = {"out": args.out, "instances": result["instances"], "trends": result["trends"]}
    if result["gaps"] is not None:
        summary["gaps"] = str(result["gaps"].results_dir)
    print(json.dumps(summary, indent=2))
    return 0
