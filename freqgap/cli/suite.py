"""Evaluate models on a negation, quantifier or QA benchmark: metrics, scaling plot, gap tables.

  freqgap suite {neqa,tinad,quantifiers,qa} --data PATH --models m1,m2,... --out DIR
  freqgap suite qa --data ITEMS.jsonl --count-inputs DIR   (the pair list etc. to count with)

See docs/suites.md for the file layouts, metrics and the frequency-gap step.
"""

from __future__ import annotations

import argparse

from freqgap.cli.common import (HelpFormatter, Parser, add_batch_size, add_device, add_dtype,
                                add_force, add_limit, add_models, add_revision, add_seed,
                                common_parent, positive_int)
from freqgap.errors import UsageError

BENCHMARKS = {
    "neqa": "NeQA: negated multiple-choice questions (Task 1/Task 2 with --original)",
    "tinad": "This is not a Dataset: true/false sentences with and without negation",
    "quantifiers": "quantifier comprehension: typical vs atypical completions",
    "qa": "questions keyed by an entity pair: accuracy and Δ by relevant-document count",
}
# Options that need no model or output directory: they end the command on their own.
STANDALONE = {"tinad": "score", "qa": "count_inputs"}


def _add_benchmark(p: argparse.ArgumentParser, name: str) -> None:
    scoring = name in STANDALONE  # `--score FILE`, `--count-inputs DIR` need no models or --out
    p.add_argument("--data", required=name == "qa" or not scoring, metavar="PATH",
                   help="benchmark file in its released layout (or hf:DATASET[:SPLIT])")
    add_models(p, required=not scoring)
    p.add_argument("--out", required=not scoring, metavar="DIR",
                   help="output directory: instances/, predictions/, metrics, plots and "
                        "_manifest.json")
    if name == "neqa":
        p.add_argument("--original", metavar="PATH",
                       help="the non-negated questions (enables Task 1/Task 2)")
        p.add_argument("--task2-data", metavar="PATH",
                       help="Task 2's negated questions (the authors' *_normalized file, "
                            "without the trailing ' ___ ?'; default: <stem>_normalized<ext> "
                            "beside DATA, else refused)")
        p.add_argument("--task2-original", metavar="PATH",
                       help="Task 2's non-negated questions (default: the authors' "
                            "<stem>_normalized_nonnegated<ext> beside ORIGINAL, or "
                            "<ORIGINAL stem>_normalized<ext>, else refused)")
        p.add_argument("--task2-plain", action="store_true",
                       help="build Task 2 from DATA and ORIGINAL themselves (questions with "
                            "' ___ ?'), not the authors' normalized files; recorded as "
                            "task2_plain in the manifests")
        p.add_argument("--letter-scoring", choices=("top50", "full", "sum"),
                       help="top50: the authors' rule (a letter outside the 50 most likely next "
                            "tokens is absent, then a seeded coin); full: the letters' next-token "
                            "log-probs over the whole vocabulary; sum: each letter form's "
                            "tokens' log-probs summed, for tokenizers where ' B' is not one "
                            "token (default: conf/suites.yaml, top50)")
        p.add_argument("--sample", type=positive_int, metavar="N",
                       help="the authors' sample: random.seed(SEED); random.shuffle(items); "
                            "the first N (their neqa_100 is --sample 100 --seed 42)")
        add_seed(p, 42, "seed of --sample's shuffle")
    if scoring:
        p.add_argument("--score", metavar="PREDICTIONS.jsonl",
                       help="score an existing predictions file (the dataset's lines plus a "
                            "boolean `prediction`, any model's) with the authors' metrics and "
                            "print the JSON; no model is run")
    if name == "qa":
        p.add_argument("--count-inputs", metavar="DIR",
                       help="write DIR/pairs.csv (for count --pairs), DIR/entities.txt (for "
                            "--terms) and DIR/vocab.yaml (the one-word entities, for --vocab) "
                            "from --data and stop; then count with --unit document")
    add_revision(p)
    add_device(p)
    add_dtype(p)
    add_batch_size(p, "items per forward pass (default: conf/suites.yaml batch_size)")
    add_limit(p, "whole test_id groups" if name == "tinad" else "items (the first N)")
    p.add_argument("--overlong", choices=("refuse", "truncate"),
                   help="prompts longer than a model's context: refuse (stop, naming the task) "
                        "or truncate (cut on the left, counted in the manifest) (default: "
                        "conf/suites.yaml, refuse)")
    add_force(p, "rerun models with complete results")
    p.add_argument("--counts", metavar="DIR",
                   help="counts directory of `freqgap count` (run with --vocab "
                        "OUT/instances/vocab.yaml): also compute the frequency gaps")


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True, parser_class=Parser)
    for name, summary in BENCHMARKS.items():
        sp = sub.add_parser(name, help=summary, description=summary,
                            parents=[common_parent(nested=True)],
                            formatter_class=HelpFormatter)
        _add_benchmark(sp, name)


def _score(args: argparse.Namespace) -> int:
    """`freqgap suite tinad --score FILE`: the scorer alone, JSON on stdout."""
    import json

    from freqgap.suites.tinad import score_file

    given = [f"--{k}" for k in ("data", "models", "out", "counts") if getattr(args, k)]
    if given:
        raise UsageError(f"--score scores an existing predictions file; drop {', '.join(given)}")
    print(json.dumps(score_file(args.score), indent=2))
    return 0


def _count_inputs(args: argparse.Namespace) -> int:
    """`freqgap suite qa --count-inputs DIR`: the counting job's inputs alone."""
    from freqgap.suites.qa import write_count_inputs

    given = [f"--{k}" for k in ("models", "out", "counts") if getattr(args, k)]
    if given:
        raise UsageError(f"--count-inputs writes the counting job's inputs only; drop "
                         f"{', '.join(given)}")
    files = write_count_inputs(args.data, args.count_inputs)
    print(f"wrote {files['pairs']}, {files['entities']}, {files['vocab']}; now: freqgap count "
          f"--unit document --number-rule strip-punct --pairs {files['pairs']} --terms "
          f"{files['entities']} --input CORPUS --out COUNTS")
    return 0


def run(args: argparse.Namespace) -> int:
    from freqgap.cli.common import writable_dir
    from freqgap.suites.pipeline import run as run_suite

    if getattr(args, "score", None):
        return _score(args)
    if getattr(args, "count_inputs", None):
        return _count_inputs(args)
    missing = [f"--{k}" for k in ("data", "models", "out") if not getattr(args, k)]
    if missing:
        other = ("--count-inputs DIR to write the counting job's inputs" if args.benchmark == "qa"
                 else "--score PREDICTIONS.jsonl to score a predictions file")
        raise UsageError(f"{', '.join(missing)} required (or {other})")
    writable_dir("--out", args.out)
    from freqgap.cli.model_check import cached_or_refuse

    for model in args.models:
        cached_or_refuse(model, [args.revision])
    extra = {k: getattr(args, k) for k in ("task2_data", "task2_original", "sample",
                                           "letter_scoring", "overlong")
            if getattr(args, k, None) is not None}
    if args.benchmark == "neqa":
        extra["seed"] = args.seed
        if args.task2_plain:
            extra["task2_plain"] = True
    result = run_suite(args.benchmark, args.data, args.models, args.out,
                       original=getattr(args, "original", None), revision=args.revision,
                       device=args.device, dtype=args.dtype, batch_size=args.batch_size,
                       limit=args.limit, force=args.force, counts=args.counts,
                       verbose=args.verbose, **extra)
    from freqgap.analysis.suites import summary_table

    if result.get("summary"):             # a table of every model's headline metrics
        print(summary_table(result["summary"]))
    counts = ", ".join(f"{k}={v}" for k, v in result["instances"].items()
                       if isinstance(v, (int, float)))
    print(f"instances: {counts}" if counts else "instances: see the manifest")
    print(f"wrote {args.out}: summary/metrics.json, summary/trends.json, summary/scaling.png"
          + (f"; gaps in {result['gaps'].results_dir}" if result["gaps"] is not None else ""))
    if result.get("report") is not None and args.benchmark == "qa":
        from freqgap.analysis.qa import bins_table, delta_lines

        print(delta_lines(result["gaps"].gaps))
        print(bins_table(result["report"]["bins"]))
        print(f"figure: {result['report']['figure']}")
    return 0
