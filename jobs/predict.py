"""prompts.parquet → predictions/<model>/: greedy few-shot answers of a causal LM (SPEC §4).

Examples:
  python jobs/predict.py --prompts out/instances --model demo --out-root out/predictions
  python jobs/predict.py --prompts out/instances --model gpt-j-6b          # on a GPU
  python jobs/predict.py --prompts out/instances --model pythia-1b --revision step1000 --shard 0/4
  python jobs/predict.py --prompts out/instances --model pythia-1b --revision step1000 --merge 4
Rerunning the same command resumes: finished chunks are skipped.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from freqgap.config import ConfigError
from freqgap.inference.models import ModelError
from freqgap.inference.predict import PromptsError, model_label, predict
from freqgap.inference.shards import merge_shards, parse_shard
from freqgap.inference.writer import PredictionsError
from freqgap.paths import OUT_DIR


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("--prompts", required=True,
                    help="prompts.parquet, or the instances directory holding it")
    ap.add_argument("--model", required=True,
                    help="alias (conf/models.yaml), Hugging Face id, or local directory")
    ap.add_argument("--revision", help="branch/tag/commit, e.g. step1000 for Pythia")
    ap.add_argument("--out-root", default=str(OUT_DIR / "predictions"),
                    help="predictions are written to OUT_ROOT/<name>/ (default out/predictions)")
    ap.add_argument("--name", help="directory and `model` column name (default: alias or "
                    "last path part, plus -<revision> if --revision is given)")
    ap.add_argument("--device", help="cpu, cuda, cuda:1 … (default: cuda if available)")
    ap.add_argument("--dtype", help="float32 | bfloat16 | float16 (default: float32 on CPU, "
                    "the registry's GPU dtype on a GPU)")
    ap.add_argument("--batch-size", type=int, help="default 256 on a GPU, 32 on the CPU; "
                    "halved automatically on CUDA out-of-memory")
    ap.add_argument("--chunk-size", type=int, default=2000, help="rows per output chunk")
    ap.add_argument("--max-new-tokens", type=int, default=5)
    ap.add_argument("--no-prefix-reuse", action="store_true",
                    help="run every full prompt (the study's way); same predictions, slower")
    ap.add_argument("--shard", help="i/N: run only shard i of N (0-based)")
    ap.add_argument("--merge", type=int, metavar="N",
                    help="merge the N finished shards of this model instead of predicting")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    name = args.name or model_label(args.model, args.revision)
    model_dir = Path(args.out_root) / name
    try:
        if args.merge is not None:
            manifest = merge_shards(model_dir, args.prompts)
        else:
            manifest = predict(args.prompts, model_dir, args.model, revision=args.revision,
                               device=args.device, dtype=args.dtype, batch_size=args.batch_size,
                               chunk_size=args.chunk_size, shard=parse_shard(args.shard),
                               reuse_prefix=not args.no_prefix_reuse,
                               max_new_tokens=args.max_new_tokens, label=name)
    except (ModelError, PromptsError, PredictionsError, ConfigError, ValueError) as exc:
        print(f"predict: error: {exc}", file=sys.stderr)
        return 2
    t = manifest["totals"]
    acc = "n/a" if t["accuracy"] is None else f"{100 * t['accuracy']:.1f}%"
    print(f"{model_dir}: {t['rows']} predictions, accuracy {acc} (paper rule)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
