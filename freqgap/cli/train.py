"""Train a small GPT-NeoX causal LM (and its BPE tokenizer) on Pile-format shards.

  freqgap train --corpus data/sample --out models/demo            # profile demo
  freqgap train --profile smoke --corpus DIR --out DIR --steps 20

Settings live in conf/training.yaml; the output directory loads offline with
transformers' AutoModelForCausalLM / AutoTokenizer and holds _manifest.json (settings,
corpus checksums, loss curve, timing). Runs on a GPU unchanged (device auto).
"""

from __future__ import annotations

import argparse

from freqgap.cli.common import (add_force, add_out, add_seed, non_negative_int, positive_int,
                                str_list)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from freqgap.config import load_conf

    profiles = sorted((load_conf("training").get("profiles") or {}))
    p.add_argument("--profile", default="demo", choices=profiles, help="profile in conf/training.yaml")
    p.add_argument("--corpus", type=str_list, default=["data/sample"], metavar="PATH,PATH,…",
                   help="comma-separated corpus files, directories or globs")
    add_out(p, None, "the model directory to write")
    p.add_argument("--steps", type=positive_int, metavar="N",
                   help="override the profile's number of optimiser steps")
    add_seed(p, None, "override the profile's seed")
    p.add_argument("--device", help="auto, cpu or cuda[:n] (default: the profile's)")
    p.add_argument("--threads", type=positive_int, metavar="N",
                   help="torch CPU threads (default: the profile's)")
    p.add_argument("--record-predictions", type=non_negative_int, default=0, metavar="N",
                   help="after training, record N multiplication prompts and the model's "
                        "continuations in OUT/predictions.json (for a reproducibility test)")
    add_force(p, "replace a model in --out trained with other settings or another corpus")


def run(args: argparse.Namespace) -> int:
    import shlex
    import sys

    from freqgap.outdir import claim
    from freqgap.training import load_settings, train_model
    from freqgap.training.train import result_settings
    from freqgap.training.predictions import record_predictions

    overrides = {k: v for k, v in {"steps": args.steps, "seed": args.seed, "device": args.device,
                                   "threads": args.threads}.items() if v is not None}
    settings = load_settings(args.profile, overrides)
    command = "freqgap train " + " ".join(shlex.quote(a) for a in _argv(args, sys.argv))
    # the model directory is replaced whole by a rename: the claim is a sibling lock file
    with claim(args.out, beside=True, stage="train_lm", inputs=[args.corpus],
               settings=result_settings(settings, args.corpus), force=args.force):
        manifest = train_model(settings, args.corpus, args.out, command=command)
        if args.record_predictions:
            path = record_predictions(args.out, args.record_predictions)
            print(f"recorded {args.record_predictions} predictions in {path}")
    t = manifest["totals"]
    print(f"saved {args.out}: {t['parameters']:,} parameters, {t['steps']} steps on "
          f"{manifest['device']}, {t['epochs']} epochs of {t['corpus_tokens']:,} tokens, "
          f"loss {t['first_loss']:.3f} -> {t['final_loss_ema']:.3f}, "
          f"{t['train_s']:.0f} s training ({t['tokens_per_s']:,.0f} tokens/s) + {t['setup_s']:.0f} s setup")
    return 0


def _argv(args: argparse.Namespace, sys_argv: list[str]) -> list[str]:
    """The arguments after `train` as given (recorded in COMMAND.txt and the manifest)."""
    words = list(getattr(args, "_argv", None) or sys_argv[1:])
    return words[words.index("train") + 1:] if "train" in words else words
