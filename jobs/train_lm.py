"""Train a small GPT-NeoX causal LM (and its BPE tokenizer) on Pile-format shards.

    python jobs/train_lm.py --corpus data/sample --output models/demo            # profile demo
    python jobs/train_lm.py --profile smoke --corpus DIR --output DIR --steps 20

Settings live in conf/training.yaml; the output directory loads offline with
transformers' AutoModelForCausalLM / AutoTokenizer and holds _manifest.json (settings,
corpus checksums, loss curve, timing). Runs on a GPU unchanged (device auto).
"""

from __future__ import annotations

import argparse
import shlex
import sys

from freqgap.config import ConfigError
from freqgap.training import load_settings, train_model
from freqgap.training.predictions import record_predictions


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="demo", help="profile in conf/training.yaml (default: demo)")
    ap.add_argument("--corpus", nargs="+", default=["data/sample"],
                    help="corpus files, directories or globs (default: data/sample)")
    ap.add_argument("--output", required=True, help="model directory to write")
    ap.add_argument("--steps", type=int, help="override the number of optimiser steps")
    ap.add_argument("--seed", type=int, help="override the seed")
    ap.add_argument("--device", help="auto, cpu or cuda[:n] (default from the profile: auto)")
    ap.add_argument("--threads", type=int, help="torch CPU threads (default from the profile: 2)")
    ap.add_argument("--record-predictions", type=int, default=0, metavar="N",
                    help="after training, record N multiplication prompts and the model's "
                         "continuations in OUTPUT/predictions.json (for a reproducibility test)")
    args = ap.parse_args(argv)
    overrides = {k: v for k, v in {"steps": args.steps, "seed": args.seed, "device": args.device,
                                   "threads": args.threads}.items() if v is not None}
    try:
        settings = load_settings(args.profile, overrides)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    command = "python jobs/train_lm.py " + " ".join(shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    manifest = train_model(settings, args.corpus, args.output, command=command)
    if args.record_predictions:
        path = record_predictions(args.output, args.record_predictions)
        print(f"recorded {args.record_predictions} predictions in {path}")
    t = manifest["totals"]
    print(f"saved {args.output}: {t['parameters']:,} parameters, {t['steps']} steps on "
          f"{manifest['device']}, {t['epochs']} epochs of {t['corpus_tokens']:,} tokens, "
          f"loss {t['first_loss']:.3f} -> {t['final_loss_ema']:.3f}, "
          f"{t['train_s']:.0f} s training ({t['tokens_per_s']:,.0f} tokens/s) + {t['setup_s']:.0f} s setup")
    return 0


if __name__ == "__main__":
    sys.exit(main())
