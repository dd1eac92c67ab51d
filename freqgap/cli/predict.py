"""prompts.parquet → predictions/<name>/: greedy few-shot answers of a causal LM (SPEC §4).

Examples:
  freqgap predict --prompts out/instances --model demo
  freqgap predict --prompts out/instances --model gpt-j-6b          # on a GPU
  freqgap predict --prompts out/instances --model pythia-1b --revision step1000 --shard 0/4
  freqgap predict --prompts out/instances --model pythia-1b --revision step1000 --merge 4
Rerunning the same command resumes: finished chunks are skipped.
"""

from __future__ import annotations

import argparse

from freqgap.cli.common import (add_batch_size, add_device, add_dtype, add_model,
                                add_progress_interval, add_revision, positive_int)


def _shard(text: str) -> tuple[int, int]:
    """--shard i/N, checked while parsing (before the model is loaded)."""
    import re

    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m or int(m.group(2)) < 1 or int(m.group(1)) >= int(m.group(2)):
        raise argparse.ArgumentTypeError(f"i/N with 0 <= i < N expected (e.g. 0/4), not {text!r}")
    return int(m.group(1)), int(m.group(2))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prompts", default="out/instances", metavar="PATH",
                   help="prompts.parquet, or the instances directory holding it")
    add_model(p)
    add_revision(p)
    p.add_argument("--out", metavar="DIR",
                   help="output directory of this model's predictions "
                        "(default: out/predictions/<name>)")
    p.add_argument("--name", help="the `model` column's value and default directory name "
                   "(default: alias or last path part, plus -<revision> if --revision is given)")
    add_device(p)
    add_dtype(p)
    add_batch_size(p, "prompts per forward pass (default: 256 on a GPU, 32 on the CPU; halved "
                      "automatically on CUDA out-of-memory)")
    p.add_argument("--chunk-size", type=positive_int, default=2000, metavar="N",
                   help="rows per output chunk (the unit of resumption)")
    p.add_argument("--max-new-tokens", type=positive_int, default=5, metavar="N",
                   help="greedy tokens generated per prompt")
    p.add_argument("--no-prefix-reuse", action="store_true",
                   help="run every full prompt (the study's way); same predictions, slower")
    p.add_argument("--shard", type=_shard, metavar="i/N",
                   help="run only shard i of N (0-based); merge them with --merge N")
    p.add_argument("--merge", type=positive_int, metavar="N",
                   help="merge the N finished shards of this model instead of predicting")
    add_progress_interval(p)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from freqgap.cli.common import writable_dir
    from freqgap.inference.predict import model_label, predict
    from freqgap.inference.shards import merge_shards

    name = args.name or model_label(args.model, args.revision)
    model_dir = writable_dir("--out", args.out or Path("out/predictions") / name)
    if args.merge is not None:
        manifest = merge_shards(model_dir, args.prompts)
    else:
        manifest = predict(args.prompts, model_dir, args.model, revision=args.revision,
                           device=args.device, dtype=args.dtype, batch_size=args.batch_size,
                           chunk_size=args.chunk_size, shard=args.shard,
                           reuse_prefix=not args.no_prefix_reuse,
                           max_new_tokens=args.max_new_tokens, label=name,
                           progress_interval=args.progress_interval)
    t = manifest["totals"]
    acc = "n/a" if t["accuracy"] is None else f"{100 * t['accuracy']:.1f}%"
    print(f"{model_dir}: {t['rows']} predictions, accuracy {acc} (paper rule)")
    return 0
