"""Count numbers, vocabulary words and their windowed pairs and triples (SPEC §2) in JSON
Lines / Parquet corpora into Parquet: exact int64 counts, identical for any partitioning.

Defaults come from conf/terms.yaml; with no arguments the bundled sample corpus (shipped
with the package, so from any directory) is counted in local mode into out/counts. On a cluster, the same command is
`spark-submit --master URL jobs/count_terms.py [options]`.
"""

from __future__ import annotations

import argparse

from freqgap.cli.common import (add_out, add_progress_interval, int_list, non_negative_float,
                                non_negative_int, positive_int, str_list)


def _terms_conf() -> dict:
    from freqgap.config import load_conf

    return load_conf("terms")


def add_arguments(p: argparse.ArgumentParser) -> None:
    conf = _terms_conf()
    p.add_argument("--input", type=str_list, metavar="PATH,PATH,…",
                   help="comma-separated input files, directories (recursive) or globs: .jsonl, "
                        ".jsonl.zst, .jsonl.gz, .parquet; local paths or s3://, s3a://, gs://, "
                        "hdfs:// URIs (default: the bundled sample corpus, shipped with the "
                        "package)")
    add_out(p, "out/counts", "unigrams/, pairs/, triples/ and _manifest.json (local path or "
                             "Hadoop URI)")
    p.add_argument("--rules", default="razeghi", metavar="NAME",
                   help="named rule set of conf/rule_sets.yaml: razeghi (conf/terms.yaml as it "
                        "stands, the default) or pythia-case-study (the Pythia study's term "
                        "counts: numbers of at most 5 digits, time units as substrings, unigrams "
                        "and pairs only inside its windows; docs/counting.md)")
    p.add_argument("--window", type=positive_int, metavar="W",
                   help=f"positions i<j co-occur when j-i < W (conf/terms.yaml: {conf.get('window')})")
    p.add_argument("--unit", metavar="UNIT",
                   help="co-occurrence unit: window:W (pairs of positions within W tokens; the "
                        "default, W from --window or conf/terms.yaml), sentence, document or "
                        "sequence (a pair or triple counts the sentences, documents or training "
                        "sequences holding all its terms; unigrams gain `documents`, or `units` "
                        "for sentences and sequences; sequence needs a training-order input)")
    p.add_argument("--pairs", metavar="FILE",
                   help="sentence, document or sequence unit: count only these pairs (CSV with "
                        "header t1,t2, JSON Lines objects or Parquet with columns t1, t2) and "
                        "triples (rows with a third term, column t3)")
    p.add_argument("--max-unit-terms", type=positive_int, metavar="N",
                   help="sentence, document or sequence unit without --pairs: refuse a unit with "
                        "more than N distinct terms, naming its file and line (default: 2000; N "
                        "terms make N(N-1)/2 pairs; with triples the bound is the largest n "
                        "with C(n,3) <= C(N,2): 229 for 2000)")
    p.add_argument("--hits", metavar="KEYS_FILE",
                   help="hit lists: for each key of the file (a term, pair or triple: CSV with "
                        "header t1[,t2[,t3]], JSON Lines, Parquet, or text with one key a line) "
                        "the documents holding it, by file and line, with its totals: OUT/hits/")
    p.add_argument("--hits-limit", type=positive_int, metavar="N",
                   help="with --hits: list at most N documents per key, those of the smallest "
                        "(file, line) (default: 100)")
    p.add_argument("--number-rule", choices=["strict", "strip-punct"],
                   help="strict: a number is a token of 1-6 ASCII digits; strip-punct: strip "
                        "leading/trailing ASCII punctuation from every token first "
                        f"(conf/terms.yaml: {conf.get('number_rule')})")
    p.add_argument("--vocab", metavar="FILE",
                   help="extra vocabulary words (YAML list, or text file one word per line), "
                        "added to conf/terms.yaml's words")
    p.add_argument("--terms", metavar="FILE",
                   help="listed terms, single words and multi-word phrases (entity names): a text "
                        "file, one term per line, or CSV / JSON Lines / Parquet with a `term` "
                        "column and optional `id`, `category`; matched longest first on "
                        "normalized tokens (SPEC §2), beside numbers and vocabulary words")
    p.add_argument("--only-listed", action="store_true",
                   help="with --terms: count only the listed terms (no numbers, no vocabulary words)")
    p.add_argument("--max-order", type=int, choices=[1, 2, 3],
                   help="1: unigrams; 2: + pairs; 3: + triples "
                        f"(conf/terms.yaml: {conf.get('max_order')})")
    p.add_argument("--text-field", metavar="NAME",
                   help=f"JSON field of the text (conf/terms.yaml: {conf.get('text_field')})")
    p.add_argument("--on-bad-record", choices=["fail", "skip"], default="fail",
                   help="fail: stop with file:line and write no result; skip: count the rest "
                        "and report skipped records per file and reason in the manifest")
    p.add_argument("--max-skipped-share", type=non_negative_float, metavar="F",
                   help="with --on-bad-record skip: a run that skipped every record or more "
                        "than this share of them writes no result (default: 0.5)")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted run in --out, redoing only unfinished groups")
    p.add_argument("--files-per-job", type=positive_int, metavar="N",
                   help="input files per resumable group (default: 2 x Spark's default parallelism)")
    p.add_argument("--spread", type=non_negative_int, metavar="N",
                   help="partitions to spread a group's lines over before tokenising "
                        "(default: 2 x cores when a group of at least 64 MiB has at most half as many "
                        "files as cores; 0: never)")
    p.add_argument("--master", metavar="URL",
                   help="Spark master when not started by spark-submit (default: local[*])")
    add_progress_interval(p)
    _add_extra_arguments(p, conf)
    _add_order_arguments(p)


def _add_extra_arguments(p: argparse.ArgumentParser, conf: dict) -> None:
    """A dry run, counts per subset and document frequencies (docs/counting.md)."""
    g = p.add_argument_group("dry run, subsets and document frequency (docs/counting.md)")
    g.add_argument("--limit", type=positive_int, metavar="N",
                   help="dry run: count only the first N records, in the order the inputs are "
                        "listed; the manifest and summary say so, and instances and gaps refuse "
                        "the result")
    g.add_argument("--by-subset", action="store_true",
                   help="key every table by each record's subset too (column `subset`, from "
                        "--subset-field; '' for a record without it); the manifest totals each "
                        "subset")
    g.add_argument("--subset-field", metavar="NAME",
                   help=f"JSON field of the subset (conf/terms.yaml: {conf.get('subset_field')})")
    g.add_argument("--doc-freq", action="store_true",
                   help="window unit: unigrams gain `documents`, the documents holding each term "
                        "(a document-unit count always has it)")


def _add_order_arguments(p: argparse.ArgumentParser) -> None:
    """Counting by training position (docs/dynamics.md): tables gain step_bucket."""
    g = p.add_argument_group("counting by training position (docs/dynamics.md)")
    g.add_argument("--order-of", metavar="MODEL_DIR",
                   help="count what a model trained here with data_order: packed trained on "
                        "(MODEL_DIR/data_order/), bucketed by its checkpoints; replaces --input")
    g.add_argument("--training-order", action="store_true",
                   help="--input is one Megatron/GPT-NeoX indexed dataset PREFIX (PREFIX.idx + "
                        "PREFIX.bin, e.g. Pythia's pre-shuffled document), entry i consumed at "
                        "step i // --seqs-per-step; needs --tokenizer")
    g.add_argument("--order-file", metavar="FILE",
                   help="count the JSON Lines corpus by step from an order file (Parquet or JSON "
                        "Lines: file, line, step[, char_start, char_end]), e.g. a model's "
                        "data_order/pieces.parquet; replaces --input")
    g.add_argument("--tokenizer", metavar="DIR",
                   help="directory with tokenizer.json (or the file, or a Hugging Face name in "
                        "the local cache, e.g. EleutherAI/pythia-70m) to decode the token ids")
    g.add_argument("--seqs-per-step", type=positive_int, metavar="N",
                   help="sequences per optimizer step (conf/dynamics.yaml pythia: 1024)")
    g.add_argument("--bucket-edges", type=int_list, metavar="S,S,…",
                   help="checkpoint steps to bucket by (conf/dynamics.yaml: Pythia's 154 steps "
                        "0, 1, 2, 4, …, 512, 1000, 2000, …, 143000)")
    g.add_argument("--eod-token", metavar="TEXT",
                   help="end-of-document token (conf/dynamics.yaml pythia: <|endoftext|>)")


def _order_options(args: argparse.Namespace, options):
    """OrderOptions for --order-of / --training-order, ("order_file", path, edges) for
    --order-file (checked before Spark starts), else None."""
    from freqgap.errors import UsageError

    given = [f for f, v in (("--order-of", args.order_of), ("--training-order", args.training_order),
                            ("--order-file", args.order_file)) if v]
    if len(given) > 1:
        raise UsageError(f"{' and '.join(given)}: give one of them")
    if args.bucket_edges:
        from freqgap.counting.order_source import check_edges

        check_edges(args.bucket_edges, "--bucket-edges")
    if args.order_file:
        from pathlib import Path

        from freqgap.dynamics.settings import edges_from_conf

        for flag in ("tokenizer", "seqs_per_step", "eod_token"):
            if getattr(args, flag) is not None:
                raise UsageError(f"--{flag.replace('_', '-')} does not apply to --order-file "
                                 "(the order file gives steps and text ranges)")
        info = Path(args.order_file).parent / "order.json"
        if args.bucket_edges:
            edges = args.bucket_edges
        elif info.is_file():
            from freqgap.training.order import parse_order

            edges = parse_order(info)["checkpoints"]
        else:
            edges = edges_from_conf()
        return ("order_file", args.order_file, edges)
    if not (args.order_of or args.training_order):
        for flag in ("tokenizer", "seqs_per_step", "bucket_edges", "eod_token"):
            if getattr(args, flag) is not None:
                raise UsageError(f"--{flag.replace('_', '-')} applies to counting by training "
                                 "position only; add --training-order or --order-of")
        return None
    from freqgap.counting.ordered_job import OrderOptions
    from freqgap.dynamics.settings import edges_from_conf, pythia_settings

    if args.order_of:
        from freqgap.training.order import read_order

        info = read_order(args.order_of, args.seqs_per_step, args.eod_token)
        options.inputs = [info["prefix_path"]]
        order = OrderOptions(tokenizer=args.tokenizer or info["tokenizer_path"],
                             edges=args.bucket_edges or info["checkpoints"],
                             seqs_per_step=args.seqs_per_step or int(info["seqs_per_step"]),
                             eod_token=args.eod_token or info["eod_token"],
                             extra={"order_of": args.order_of})
    else:
        if not args.tokenizer:
            raise UsageError("--training-order needs --tokenizer (the model's tokenizer directory)")
        pythia = pythia_settings()
        order = OrderOptions(tokenizer=args.tokenizer, edges=args.bucket_edges or edges_from_conf(),
                             seqs_per_step=args.seqs_per_step or int(pythia["seqs_per_step"]),
                             eod_token=args.eod_token or pythia["eod_token"])
    return order


def options_from_args(args: argparse.Namespace):
    """CountOptions of the parsed flags (the term rules: conf/terms.yaml plus overrides)."""
    from freqgap.counting.job import CountOptions
    from freqgap.counting.rule_sets import term_rules
    from freqgap.counting.rules import read_vocab_file

    extra_words = read_vocab_file(args.vocab) if args.vocab else []
    unit, window = _unit(args)
    rules = term_rules(args.rules, {"window": window, "number_rule": args.number_rule,
                                 "max_order": args.max_order, "text_field": args.text_field,
                                 "unit": unit, "max_unit_terms": args.max_unit_terms,
                                 "subset_field": args.subset_field,
                                 "by_subset": args.by_subset or None,
                                 "doc_freq": args.doc_freq or None},
                                extra_words=extra_words)
    if args.terms or args.only_listed:
        rules = _with_terms(args, rules)
    if args.pairs:
        import dataclasses

        from freqgap.counting.pair_list import read_pairs

        rules = dataclasses.replace(rules, pairs=read_pairs(args.pairs, rules))
    return CountOptions(inputs=args.input, output=args.out, rules=rules, hits=_hit_settings(args, rules),
                        on_bad_record=args.on_bad_record, resume=args.resume,
                        files_per_job=args.files_per_job, spread=args.spread,
                        progress_interval=args.progress_interval, limit=args.limit,
                        **({} if args.max_skipped_share is None else
                           {"max_skipped_share": args.max_skipped_share}))


def _hit_settings(args: argparse.Namespace, rules):
    """HitSettings of --hits and --hits-limit (the keys read and checked now), or None."""
    if not args.hits:
        if args.hits_limit is not None:
            from freqgap.errors import UsageError

            raise UsageError("--hits-limit applies with --hits KEYS_FILE only")
        return None
    from freqgap.counting.hits import DEFAULT_LIMIT, HitSettings, read_keys

    return HitSettings(read_keys(args.hits, rules), args.hits_limit or DEFAULT_LIMIT)


def _with_terms(args: argparse.Namespace, rules):
    """The rules with --terms FILE's terms (and --only-listed), read before any pair list
    (a listed pair may name a listed term)."""
    import dataclasses

    from freqgap.counting.term_list import read_terms
    from freqgap.errors import UsageError

    if not args.terms:
        raise UsageError("--only-listed needs a term list: add --terms FILE")
    if args.only_listed:
        rules = dataclasses.replace(rules, listed_only=True)
    return read_terms(args.terms, rules)


def _unit(args: argparse.Namespace) -> tuple[str | None, int | None]:
    """(unit, window) of --unit and --window; options of the other unit are refused."""
    from freqgap.counting.rules import UNITS, WINDOW_UNIT
    from freqgap.errors import UsageError

    unit, window = args.unit, args.window
    if unit is not None:
        name, _, size = unit.partition(":")
        if name == "window" and size:
            if not size.isdigit():
                raise UsageError(f"--unit {unit}: W must be a whole number (window:5)")
            if window is not None and window != int(size):
                raise UsageError(f"--unit {unit} and --window {window} disagree; give one")
            window = int(size)
        elif name not in UNITS or size:
            raise UsageError(f"--unit {unit}: expected window:W, sentence, document or sequence")
        unit = name
    if unit in (None, WINDOW_UNIT):
        for flag in ("pairs", "max_unit_terms"):
            if getattr(args, flag) is not None:
                raise UsageError(f"--{flag.replace('_', '-')} applies to --unit sentence, "
                                 "document or sequence only")
    elif args.window is not None:
        raise UsageError(f"--window applies to the window unit; --unit {unit} counts {unit}s")
    if unit not in (None, "window") and args.doc_freq:
        raise UsageError(f"--doc-freq applies to the window unit; a {unit}-unit count's "
                         "unigrams count its units already")
    return unit, window


def _check_unit_input(unit: str, order) -> None:
    """The sentence and document units count records of JSON Lines or Parquet inputs; the
    sequence unit counts the training sequences of a training-order input."""
    from freqgap.errors import UsageError

    if order is not None and unit in ("sentence", "document"):
        raise UsageError(f"--unit {unit} counts records of JSON Lines or Parquet inputs; counting "
                         "by training position takes the window or the sequence unit")
    if order is None and unit == "sequence":
        raise UsageError("--unit sequence needs a training-order input (--order-of DIR, "
                         "--training-order or --order-file FILE): a sequence is a training "
                         "sequence of the indexed dataset")


def run(args: argparse.Namespace) -> int:
    from freqgap.paths import SAMPLE_CORPUS_DIR

    args.input = args.input or [str(SAMPLE_CORPUS_DIR)]   # found from any directory
    from freqgap.runtime.blas_threads import single_threaded_blas
    from freqgap.outdir import claim

    single_threaded_blas()            # before numpy's import: no BLAS thread pool to start

    # one run per local output directory (a URI is not claimed); the lock file lies beside
    # it: the job refuses an output directory holding files that are not its own
    with claim(args.out, beside=True, stage="count_terms", inputs=args.input):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from freqgap.counting.job import CountJob, summary_text
    from freqgap.spark_session import get_spark

    options = options_from_args(args)
    order = _order_options(args, options)
    _check_unit_input(options.rules.unit, order)
    if order is not None:
        from freqgap.errors import UsageError

        for flag, value in (("--limit", args.limit), ("--by-subset", args.by_subset)):
            if value:
                raise UsageError(f"{flag} counts records of JSON Lines or Parquet inputs; "
                                 "counting by training position takes neither")
    if isinstance(order, tuple) and options.hits:      # an order file's tasks find no hits
        from freqgap.errors import UsageError

        raise UsageError("--hits lists documents of JSON Lines or Parquet inputs or the "
                         "sequences of an indexed dataset; an --order-file count does not take it")
    if order is None and not any("://" in i for i in options.inputs):
        from freqgap.counting.inputs import list_inputs

        list_inputs(options.inputs)   # a local input that matches nothing: refused before Spark
    spark = get_spark(master=args.master, app_name="freqgap-count-terms", verbose=args.verbose)
    if isinstance(order, tuple):
        from freqgap.counting.ordered_job import OrderFileCountJob

        job = OrderFileCountJob(spark, options, order[1], order[2])
    elif order is not None:
        from freqgap.counting.ordered_job import OrderedCountJob

        job = OrderedCountJob(spark, options, order)
    else:
        job = CountJob(spark, options)
    manifest = job.run()
    print(summary_text(manifest), flush=True)
    hits = ",hits" if options.hits else ""
    print(f"wrote {args.out}/{{unigrams,pairs,triples{hits}}} and _manifest.json", flush=True)
    return 0
