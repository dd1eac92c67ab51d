"""prompts.parquet → predictions/<name>/: greedy few-shot answers of a causal LM (SPEC §4).

Examples:
  freqgap predict --prompts out/instances --model demo
  freqgap predict --prompts out/instances --model gpt-j-6b          # on a GPU
  freqgap predict --prompts out/instances --model pythia-1b --revision step1000 --shard 0/4
  freqgap predict --prompts out/instances --model pythia-1b --revision step1000 --merge 4
  freqgap predict --prompts out/instances --model pythia-70m --revisions step1000,step2000
  freqgap predict --prompts out/instances --model out/dyn/model --revisions step100,step200
  torchrun --nproc_per_node 8 -m freqgap predict --prompts out/instances --model gpt-j-6b
    (a shard per GPU from RANK/WORLD_SIZE/LOCAL_RANK; rank 0 merges: docs/inference.md)
Rerunning the same command resumes: finished chunks are skipped. A rerun with other
settings (prompts, weights, dtype, decoding…) is refused unless --force.
"""

from __future__ import annotations

import argparse

from freqgap.cli.common import (add_batch_size, add_device, add_dtype, add_force, add_model,
                                add_progress_interval, add_revision, positive_int, str_list)


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
    p.add_argument("--revisions", type=str_list, metavar="R,R,…",
                   help="comma-separated revisions, predicted one after another from prompts "
                        "read once: hub revisions (step1000,step2000 for Pythia), or the "
                        "checkpoint subdirectories <model>/<R>/ when --model is a directory; "
                        "one output directory <name>-<R>/ per revision under --out")
    p.add_argument("--out", metavar="DIR",
                   help="output directory of this model's predictions (default: "
                        "out/predictions/<name>, or out/predictions/<name>-<revision> with "
                        "--revision); with --revisions the directory holding <name>-<R>/ "
                        "(default: out/predictions)")
    p.add_argument("--name", help="the `model` column's value (default: alias or last path "
                   "part); the revision has its own column and is added to directory names")
    add_force(p, "discard earlier predictions in the output directory that were made "
                 "with other settings, instead of refusing")
    add_device(p)
    add_dtype(p)
    add_batch_size(p, "prompts per forward pass (default: on a GPU as many as free memory holds, at most "
                      "2048; 32 on the CPU; halved automatically on CUDA out-of-memory)")
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
    from freqgap.cli.common import writable_dir
    from freqgap.errors import UsageError
    from freqgap.inference.predict import (model_label, predict, predict_revisions,
                                           prediction_dir)
    from freqgap.inference.shards import merge_shards

    name = args.name or model_label(args.model)
    from freqgap.inference.distributed import launch_from_env, predict_launched, refuse_options

    launch = launch_from_env()                # torchrun / accelerate launch: a shard per rank
    if launch is not None:
        refuse_options(launch, getattr(args, "_argv", ()), shard=args.shard, merge=args.merge,
                       revisions=args.revisions)
    if args.merge is None:
        from freqgap.cli.model_check import cached_or_refuse

        cached_or_refuse(args.model, args.revisions or [args.revision])
    options = dict(device=args.device, dtype=args.dtype, batch_size=args.batch_size,
                   chunk_size=args.chunk_size, reuse_prefix=not args.no_prefix_reuse,
                   max_new_tokens=args.max_new_tokens, force=args.force,
                   progress_interval=args.progress_interval, verbose=args.verbose)
    if args.revisions:
        for flag, value in (("--revision", args.revision), ("--shard", args.shard),
                            ("--merge", args.merge)):
            if value is not None:
                raise UsageError(f"{flag} and --revisions exclude each other; give the "
                                 "revisions as one list, and shard or merge one revision at a time")
        root = writable_dir("--out", args.out or "out/predictions")
        manifests = predict_revisions(args.prompts, root, args.model, args.revisions,
                                      name=name, **options)
        done = [(prediction_dir(root, name, r), m) for r, m in zip(args.revisions, manifests)]
    else:
        model_dir = writable_dir("--out", args.out or prediction_dir("out/predictions", name,
                                                                     args.revision))
        if args.merge is not None:
            manifest = merge_shards(model_dir, args.prompts)
        elif launch is not None:
            manifest = predict_launched(launch, args.prompts, model_dir, args.model,
                                        revision=args.revision, label=name, **options)
        else:
            manifest = predict(args.prompts, model_dir, args.model, revision=args.revision,
                               shard=args.shard, label=name, **options)
        done = [(model_dir, manifest)] if manifest is not None else []    # ranks > 0: None
    for directory, manifest in done:
        t = manifest["totals"]
        acc = "n/a" if t["accuracy"] is None else f"{100 * t['accuracy']:.1f}%"
        print(f"{directory}: {t['rows']} predictions, accuracy {acc} (paper rule)")
    if launch is not None:
        from freqgap.inference.distributed import exit_launched

        exit_launched(0)
    return 0
