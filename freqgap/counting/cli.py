"""Command line of `spark-submit jobs/count_terms.py` (kept here so it is unit-tested)."""

from __future__ import annotations

import argparse
import sys

from freqgap.config import ConfigError
from freqgap.counting.job import CountJobError, CountOptions, CountJob, summary_text
from freqgap.counting.rules import TermRules, read_vocab_file
from freqgap.counting.sources import BadInputError
from freqgap.paths import OUT_DIR, SAMPLE_CORPUS_DIR


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="count_terms.py",
        description="Count numbers, vocabulary words and their windowed pairs and triples "
                    "(SPEC §2) in JSON Lines / Parquet corpora into Parquet. Defaults come "
                    "from conf/terms.yaml; with no arguments the bundled sample corpus is "
                    "counted in local mode into out/counts.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--input", nargs="+", default=[str(SAMPLE_CORPUS_DIR)], metavar="PATH",
                   help="input files, directories (recursive) or globs: .jsonl, .jsonl.zst, "
                        ".jsonl.gz, .parquet; local paths or s3://, s3a://, gs://, hdfs:// URIs")
    p.add_argument("--output", default=str(OUT_DIR / "counts"),
                   help="output directory (local path or Hadoop URI)")
    p.add_argument("--window", type=int, default=None,
                   help="W: positions i<j co-occur when j-i < W (conf: 5)")
    p.add_argument("--number-rule", choices=["strict", "strip-punct"], default=None,
                   help="strict: a number is a token of 1-6 ASCII digits; strip-punct: strip "
                        "leading/trailing ASCII punctuation from every token first (conf: strict)")
    p.add_argument("--vocab", metavar="FILE", default=None,
                   help="extra vocabulary words (YAML list, or text file one word per line), "
                        "added to conf/terms.yaml's words")
    p.add_argument("--max-order", type=int, choices=[1, 2, 3], default=None,
                   help="1: unigrams; 2: + pairs; 3: + triples (conf: 3)")
    p.add_argument("--text-field", default=None, help="JSON field of the text (conf: text)")
    p.add_argument("--on-bad-record", choices=["fail", "skip"], default="fail",
                   help="fail: stop with file:line and write no result; skip: count the rest "
                        "and report skipped records per file and reason in the manifest")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted run in --output, redoing only unfinished groups")
    p.add_argument("--files-per-job", type=int, default=None,
                   help="input files per resumable group (default: 2 x Spark's default parallelism)")
    p.add_argument("--spread", type=int, default=None,
                   help="partitions to spread a group's lines over before tokenising "
                        "(default: 2 x cores when a group has fewer files than cores; 0: never)")
    p.add_argument("--master", default=None,
                   help="Spark master when run without spark-submit (default local[*])")
    p.add_argument("--progress-interval", type=float, default=10.0, help="seconds between progress lines")
    return p


def options_from_args(args: argparse.Namespace) -> CountOptions:
    extra_words = read_vocab_file(args.vocab) if args.vocab else []
    rules = TermRules.from_conf({"window": args.window, "number_rule": args.number_rule,
                                 "max_order": args.max_order, "text_field": args.text_field},
                                extra_words=extra_words)
    return CountOptions(inputs=args.input, output=args.output, rules=rules,
                        on_bad_record=args.on_bad_record, resume=args.resume,
                        files_per_job=args.files_per_job, spread=args.spread,
                        progress_interval=args.progress_interval)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        options = options_from_args(args)
        from freqgap.spark_session import get_spark
        spark = get_spark(master=args.master, app_name="freqgap-count-terms")
        manifest = CountJob(spark, options).run()
    except (CountJobError, BadInputError, ConfigError) as exc:
        print(f"count_terms: error: {exc}", file=sys.stderr, flush=True)
        return 2
    print(summary_text(manifest), flush=True)
    print(f"wrote {args.output}/{{unigrams,pairs,triples}} and _manifest.json", flush=True)
    return 0
