"""Import lm-evaluation-harness `--log_samples` logs (samples_<task>_<date>.jsonl) as
predictions/<model>/ so that `make gaps` can join them with the counts.

Each sample is matched to an instance by its question text (doc.question, or the last
'Q: ...\\nA:' of the prompt) and scored by the paper rule against that instance's answer.

Example:
  python jobs/import_lm_eval.py lm_eval_out/samples_mult_2024-01-01T00-00-00.jsonl \\
      --instances out/instances --model gpt-j-6b --task mult --k 2 \\
      --out out/predictions/gpt-j-6b-lm-eval
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("samples", nargs="+", type=Path, help="samples_*.jsonl files")
    p.add_argument("--instances", type=Path, default=Path("out/instances"))
    p.add_argument("--model", required=True, help="model name to record")
    p.add_argument("--revision", default="")
    p.add_argument("--task", help="this project's task name (needed when tasks share questions)")
    p.add_argument("--k", type=int, help="shots (default: n-shot of results_*.json beside)")
    p.add_argument("--seed", type=int, default=0, help="seed to record (lm-eval's --seed)")
    p.add_argument("--question-field", help="doc field holding the question text")
    p.add_argument("--filter", help="lm-eval filter whose rows to use (default: the first)")
    p.add_argument("--out", type=Path, help="output directory (default: "
                   "out/predictions/<model>-lm-eval)")
    args = p.parse_args(argv)
    from freqgap.gaps.inputs import GapsInputError
    from freqgap.gaps.lm_eval import import_samples
    from freqgap.gaps.tables import slug

    out = args.out or Path("out/predictions") / f"{slug(args.model)}-lm-eval"
    try:
        manifest = import_samples(args.samples, args.instances, out, args.model, args.revision,
                                  args.task, args.k, args.seed, args.question_field, args.filter)
    except (GapsInputError, FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    t = manifest["totals"]
    print(f"imported {t['rows']} predictions ({t['correct']} correct by the paper rule) -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
