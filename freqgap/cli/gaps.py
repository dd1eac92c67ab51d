"""The performance gap Δ from counts, instances and predictions (SPEC §5), in DuckDB.

Settings come from conf/gaps.yaml (replace it with `--conf DIR`); every one can be
overridden here. Writes into --out: gaps.parquet, per_key.parquet, table_*.md/.tex,
plots/*.png, freqgap.duckdb and _manifest.json (last). Query the result with
`freqgap query "SELECT * FROM gaps"`.
"""

from __future__ import annotations

import argparse

from freqgap.cli.common import add_force, non_negative_int, positive_int, str_list


def _freq_defs(text: str) -> list[str]:
    """'1;1,2' -> ['1', '1,2'] (a definition holds commas, so definitions are ';'-separated)."""
    parts = [p.strip().replace(" ", "") for p in text.split(";") if p.strip()]
    if not parts:
        raise argparse.ArgumentTypeError(f"';'-separated frequency definitions expected, not {text!r}")
    return parts


def add_arguments(p: argparse.ArgumentParser) -> None:
    from freqgap.config import load_conf

    conf = load_conf("gaps")
    boot = conf.get("bootstrap") or {}
    db = conf.get("duckdb") or {}
    src = "conf/gaps.yaml"
    p.add_argument("--counts", metavar="DIR",
                   help=f"counts directory of `freqgap count` ({src}: {conf.get('counts')})")
    p.add_argument("--instances", metavar="DIR",
                   help=f"instances directory of `freqgap instances` ({src}: {conf.get('instances')})")
    p.add_argument("--predictions", metavar="GLOB",
                   help=f"glob of predictions model directories ({src}: {conf.get('predictions')})")
    p.add_argument("--out", metavar="DIR", help=f"output directory ({src}: {conf.get('results')})")
    p.add_argument("--models", type=str_list, metavar="M,M,…",
                   help="comma-separated model names to use (default: every model found)")
    p.add_argument("--tasks", type=str_list, metavar="T,T,…",
                   help="comma-separated tasks to use (default: every task found)")
    p.add_argument("--freq-defs", type=_freq_defs, metavar="D;D;…",
                   help="frequency definitions, ';'-separated because they hold commas, e.g. "
                        "'1;1,2;1,y' (default: all of each task)")
    p.add_argument("--binning", choices=["rank", "quantile"],
                   help=f"rank: top/bottom bins of keys by ω; quantile: the original code's "
                        f"np.quantile edges and left-closed np.digitize bins ({src}: "
                        f"{conf.get('binning')})")
    p.add_argument("--bin-percent", type=positive_int, metavar="P",
                   help=f"size of the top and bottom bins, % of keys, 1..50 "
                        f"({src}: {conf.get('bin_percent')})".replace("%", "%%"))
    p.add_argument("--min-seen-keys", type=positive_int, metavar="N",
                   help=f"fewer keys with ω > 0 in a group: no Δ, ρ, interval or slope, the "
                        f"reason in withheld_reason ({src}: {conf.get('min_seen_keys')})")
    p.add_argument("--interval", choices=["keys", "seeds+keys"],
                   help=f"bootstrap interval: resample the keys, or the seeds (draws of the "
                        f"shots) and then the keys ({src}: {boot.get('interval')})")
    p.add_argument("--boot-reps", type=non_negative_int, metavar="N",
                   help=f"bootstrap resamples of the keys; 0: no interval ({src}: {boot.get('reps')})")
    p.add_argument("--boot-seed", type=non_negative_int, metavar="S",
                   help=f"seed of the bootstrap ({src}: {boot.get('seed')})")
    p.add_argument("--memory-limit", metavar="SIZE",
                   help=f"DuckDB memory_limit, e.g. 4GB ({src}: {db.get('memory_limit')})")
    p.add_argument("--threads", type=positive_int, metavar="N",
                   help=f"DuckDB threads ({src}: {db.get('threads') or 'all cores'})")
    p.add_argument("--no-plots", action="store_true", help="skip the plots")
    p.add_argument("--counts-mismatch-ok", action="store_true",
                   help="accept counts other than those the instances were made from (their "
                        "fingerprints differ, e.g. another corpus); recorded in the manifest")
    p.add_argument("--compare-counts", metavar="DIR",
                   help="counts of another rule set over the same corpus (e.g. `freqgap count "
                        "--rules pythia-case-study`): Δ over them too, on the same predictions, "
                        "and the shift per group in rule_set_shift.parquet (docs/gaps.md)")
    add_force(p, "replace a result in --out made with other settings")
    p.add_argument("--examples", metavar="OUT.json",
                   help="also write lm-eval's --samples file {task: [doc ids]} of the "
                        "instances in the bottom and top bins, for the tasks of "
                        "`freqgap export-lm-eval` on the same instances")
    p.add_argument("--examples-freq-def", default="1,2", metavar="DEF",
                   help="frequency definition whose bins --examples takes (default %(default)s)")
    p.add_argument("--summary", action="store_true",
                   help="print a Table-2-like summary, what it means, and the plots' paths")


def options_from_args(args: argparse.Namespace, **extra):
    """GapsOptions: conf/gaps.yaml with the given flags applied."""
    from freqgap.gaps.options import options_from_conf

    return options_from_conf(
        counts=args.counts, instances=args.instances, predictions=args.predictions,
        results=args.out, models=args.models, tasks=args.tasks, freq_defs=args.freq_defs,
        binning=args.binning, bin_percent=args.bin_percent, min_seen_keys=args.min_seen_keys,
        interval=args.interval, boot_reps=args.boot_reps,
        boot_seed=args.boot_seed, memory_limit=args.memory_limit, threads=args.threads,
        make_plots=False if args.no_plots else None,
        counts_mismatch_ok=True if args.counts_mismatch_ok else None,
        compare_counts=args.compare_counts, **extra)


def run(args: argparse.Namespace) -> int:
    opts = options_from_args(args)
    opts.check_predictions_pattern()        # before the stage's modules load

    from freqgap.gaps.run import input_paths, result_settings, run_gaps
    from freqgap.analysis.gaps import summary_text
    from freqgap.outdir import claim

    # one run per output directory, never over another result or an input (freqgap/outdir.py)
    with claim(opts.path(opts.results), stage="gaps", inputs=input_paths(opts),
               settings=result_settings(opts), force=args.force):
        result = run_gaps(opts, examples=(args.examples, args.examples_freq_def)
                          if args.examples else None)
    if args.summary:
        print(summary_text(result.gaps, opts.tables, opts.task_labels, opts.binning,
                           opts.bin_percent, opts.boot_level, result.results_dir, result.plots,
                           reference=opts.paper_reference))
    else:
        print(f"gaps: {len(result.gaps)} rows, per_key: {len(result.per_key)} rows -> "
              f"{result.results_dir}")
    if "rule_set_shift" in result.files:
        from freqgap.gaps.compare import shift_text

        print(shift_text(result.files["rule_set_shift"]))
    return 0
