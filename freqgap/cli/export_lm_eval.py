"""Write an instances directory's prompts as lm-evaluation-harness tasks (one per task, k
and seed: YAML + a local JSON Lines dataset), so any lm-eval backend runs freqgap's exact
prompts; `freqgap import-lm-eval` reads the logs back by instance id.

Example:
  freqgap export-lm-eval --instances out/instances --out out/lm_eval_tasks
  lm_eval --model hf --model_args pretrained=models/demo --include_path out/lm_eval_tasks \\
      --tasks freqgap --log_samples --output_path lm_out
"""

from __future__ import annotations

import argparse

from freqgap.cli.common import add_out, positive_int


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--instances", default="out/instances", metavar="DIR",
                   help="instances directory of `freqgap instances` (with prompts.parquet)")
    add_out(p, None, "one <task>.yaml per (task, k, seed) and data/<task>.jsonl; must be new "
                     "or empty")
    p.add_argument("--max-gen-toks", type=positive_int, default=5,
                   metavar="N", help="tokens generated at most (freqgap predict's "
                                     "--max-new-tokens; default %(default)s)")


def run(args: argparse.Namespace) -> int:
    from freqgap.gaps.lm_eval_export import TAG, export
    from freqgap.outdir import claim

    # the folder is renamed into place whole: the claim is a lock beside it (outdir.py)
    with claim(args.out, beside=True, inputs=[args.instances]):
        tasks = export(args.instances, args.out, args.max_gen_toks)
    print(f"exported {sum(tasks.values())} prompts as {len(tasks)} lm-eval task(s) (tag "
          f"{TAG!r}) -> {args.out}; run them with lm_eval --include_path {args.out} "
          f"--tasks {TAG} --log_samples")
    return 0
