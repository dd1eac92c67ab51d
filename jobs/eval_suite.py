"""Evaluate models on a negation/quantifier benchmark: metrics, scaling plot, gap tables.

  python jobs/eval_suite.py {neqa,tinad,quantifiers} --data PATH --models m1,m2,... --out DIR

See docs/suites.md for the file layouts, metrics and the frequency-gap step.
"""

from __future__ import annotations

import argparse
import json
import sys

from freqgap.config import ConfigError
from freqgap.gaps.inputs import GapsInputError
from freqgap.inference.models import ModelError
from freqgap.suites.io import SuiteDataError
from freqgap.suites.pipeline import SUITES, run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("benchmark", choices=sorted(SUITES))
    ap.add_argument("--data", required=True, help="benchmark file in its released layout")
    ap.add_argument("--models", required=True,
                    help="comma-separated aliases (conf/models.yaml), HF ids or local directories")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--original", help="neqa: the non-negated questions (enables Task 1/Task 2)")
    ap.add_argument("--revision", help="model revision for every model (e.g. Pythia stepN)")
    ap.add_argument("--device", help="cuda or cpu (default: cuda when available)")
    ap.add_argument("--dtype", help="float32, float16 or bfloat16 (default: per model)")
    ap.add_argument("--batch-size", type=int, help="default: conf/suites.yaml batch_size")
    ap.add_argument("--limit", type=int, help="first N items only (quick runs)")
    ap.add_argument("--force", action="store_true", help="rerun models with complete results")
    ap.add_argument("--counts", help="counts directory of the counting job (run with "
                    "--vocab OUT/instances/vocab.yaml): also compute the frequency gaps")
    args = ap.parse_args(argv)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    if not models:
        ap.error("--models lists no model")
    try:
        result = run(args.benchmark, args.data, models, args.out, original=args.original,
                     revision=args.revision, device=args.device, dtype=args.dtype,
                     batch_size=args.batch_size, limit=args.limit, force=args.force,
                     counts=args.counts)
    except (SuiteDataError, ModelError, GapsInputError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = {"out": args.out, "instances": result["instances"], "trends": result["trends"]}
    if result["gaps"] is not None:
        summary["gaps"] = str(result["gaps"].results_dir)
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
