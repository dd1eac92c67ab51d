"""Import lm-evaluation-harness `--log_samples` logs (samples_<task>_<date>.jsonl) as
predictions/<model>/, so that `freqgap gaps` joins them with the counts.

Each sample is matched to an instance by its question text (doc.question, or the last
'Q: ...\\nA:' of the prompt) and scored by the paper rule against that instance's answer.

Example:
  freqgap import-lm-eval lm_eval_out/samples_mult_2024-01-01T00-00-00.jsonl \\
      --instances out/instances --model gpt-j-6b --task mult --k 2
"""

from __future__ import annotations

import argparse

from freqgap.cli.common import add_revision, add_seed, non_negative_int


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("samples", nargs="+", metavar="SAMPLES", help="samples_*.jsonl files")
    p.add_argument("--instances", default="out/instances", metavar="DIR",
                   help="instances directory the harness's questions came from")
    p.add_argument("--model", required=True, help="model name to record in the `model` column")
    add_revision(p)
    p.add_argument("--task", help="this project's task name (needed when tasks share questions)")
    p.add_argument("--k", type=non_negative_int,
                   help="shots (default: n-shot of the results_*.json beside the samples)")
    add_seed(p, 0, "seed to record (lm-eval's --seed)")
    p.add_argument("--question-field", metavar="NAME", help="doc field holding the question text")
    p.add_argument("--filter", help="lm-eval filter whose rows to use (default: the first)")
    p.add_argument("--out", metavar="DIR",
                   help="output directory (default: out/predictions/<model>-lm-eval)")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from freqgap.gaps.lm_eval import import_samples
    from freqgap.analysis.gaps import slug
    from freqgap.outdir import claim

    out = Path(args.out or Path("out/predictions") / f"{slug(args.model)}-lm-eval")
    with claim(out, stage="import_lm_eval", inputs=[*args.samples, args.instances]):               # one run per output directory (freqgap/outdir.py)
        manifest = import_samples([Path(s) for s in args.samples], Path(args.instances), out,
                                  args.model, args.revision or "", args.task, args.k, args.seed,
                                  args.question_field, args.filter)
    t = manifest["totals"]
    print(f"imported {t['rows']} predictions ({t['correct']} correct by the paper rule) -> {out}")
    return 0
