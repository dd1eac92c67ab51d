"""Write a synthetic Pile-format corpus (profiles in conf/corpus.yaml).

    python jobs/generate_corpus.py --profile sample --output data/sample
    python jobs/generate_corpus.py --profile bench --output out/corpus/bench --workers 2
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from freqgap.config import ConfigError
from freqgap.corpus import generate_corpus, load_profile


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="sample", help="profile name in conf/corpus.yaml (default: sample)")
    ap.add_argument("--output", required=True, help="directory for the shards and _manifest.json")
    ap.add_argument("--seed", type=int, help="override the profile's seed")
    ap.add_argument("--shards", type=int, help="override the number of shards")
    ap.add_argument("--shard-mb", type=float, help="override the uncompressed MB per shard")
    ap.add_argument("--exponent", type=float, help="override the Zipf exponent")
    ap.add_argument("--operand-law", choices=["zipf", "uniform"], help="override the operand law")
    ap.add_argument("--workers", type=int, default=1, help="processes writing shards in parallel")
    args = ap.parse_args(argv)
    overrides = {k: v for k, v in {
        "seed": args.seed, "shards": args.shards, "shard_mb": args.shard_mb,
        "exponent": args.exponent, "operand_law": args.operand_law}.items() if v is not None}
    try:
        profile = load_profile(args.profile, overrides)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    manifest = generate_corpus(profile, args.output, workers=args.workers)
    totals = manifest["totals"]
    secs = time.monotonic() - t0
    print(f"wrote {totals['shards']} shards to {args.output}: {totals['documents']:,} documents, "
          f"{totals['bytes_uncompressed'] / 1e6:.1f} MB JSON Lines "
          f"({totals['bytes_compressed'] / 1e6:.1f} MB zstd) in {secs:.1f} s "
          f"({totals['bytes_uncompressed'] / 1e6 / secs:.1f} MB/s)")
    print("facts: " + json.dumps(totals["facts"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
