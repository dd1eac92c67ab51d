"""Write a synthetic Pile-format corpus (a profile of conf/corpus.yaml): zstd JSON Lines
shards whose operand frequencies follow a chosen law, and a _manifest.json of its facts.

  freqgap corpus --profile sample --out data/sample
  freqgap corpus --profile bench --out out/corpus/bench --workers 2
"""

from __future__ import annotations

import argparse

from freqgap.cli.common import add_force, add_out, add_seed, positive_float, positive_int


def add_arguments(p: argparse.ArgumentParser) -> None:
    from freqgap.config import load_conf

    profiles = sorted((load_conf("corpus").get("profiles") or {}))
    p.add_argument("--profile", default="sample", choices=profiles,
                   help="profile in conf/corpus.yaml")
    add_out(p, None, "the shards and _manifest.json")
    add_seed(p, None, "override the profile's seed")
    p.add_argument("--shards", type=positive_int, metavar="N", help="override the number of shards")
    p.add_argument("--shard-mb", type=positive_float, metavar="MB",
                   help="override the uncompressed MB per shard")
    p.add_argument("--exponent", type=positive_float, help="override the Zipf exponent")
    p.add_argument("--operand-law", choices=["zipf", "uniform"], help="override the operand law")
    p.add_argument("--workers", type=positive_int, default=1, metavar="N",
                   help="processes writing shards in parallel")
    add_force(p, "replace a corpus in --out made with another profile or overrides")


def run(args: argparse.Namespace) -> int:
    import json
    import time

    from freqgap.corpus import generate_corpus, load_profile
    from freqgap.outdir import claim

    overrides = {k: v for k, v in {
        "seed": args.seed, "shards": args.shards, "shard_mb": args.shard_mb,
        "exponent": args.exponent, "operand_law": args.operand_law}.items() if v is not None}
    profile = load_profile(args.profile, overrides)
    t0 = time.monotonic()
    # one run per output directory; a corpus of another profile only with --force (outdir.py)
    with claim(args.out, stage="generate_corpus", settings=profile.to_dict(), force=args.force):
        manifest = generate_corpus(profile, args.out, workers=args.workers)
    totals = manifest["totals"]
    secs = max(time.monotonic() - t0, 1e-9)
    print(f"wrote {totals['shards']} shards to {args.out}: {totals['documents']:,} documents, "
          f"{totals['bytes_uncompressed'] / 1e6:.1f} MB JSON Lines "
          f"({totals['bytes_compressed'] / 1e6:.1f} MB zstd) in {secs:.1f} s "
          f"({totals['bytes_uncompressed'] / 1e6 / secs:.1f} MB/s)")
    print("facts: " + json.dumps(totals["facts"]))
    return 0
