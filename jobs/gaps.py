"""`make gaps`: the performance gap Δ from counts, instances and predictions (SPEC §5).

Settings come from conf/gaps.yaml; every one can be overridden here. Writes results/:
gaps.parquet, per_key.parquet, table_*.md/.tex, plots/*.png, freqgap.duckdb, _manifest.json.
"""

from __future__ import annotations

import argparse
import sys

from freqgap.config import ConfigError


def _list(value: str | None, sep: str = ",") -> list[str] | None:
    """'a,b' -> ['a', 'b'] (frequency definitions contain commas: they use ';')."""
    return [v.strip() for v in value.replace(" ", sep).split(sep) if v.strip()] if value else None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--conf", help="YAML file to use instead of conf/gaps.yaml")
    p.add_argument("--counts", help="counts directory (unigrams/, pairs/, triples/)")
    p.add_argument("--instances", help="instances directory")
    p.add_argument("--predictions", help="glob of predictions model directories")
    p.add_argument("--results", help="output directory")
    p.add_argument("--models", help="comma-separated model names to use (default: all)")
    p.add_argument("--tasks", help="comma-separated tasks to use (default: all)")
    p.add_argument("--freq-defs", help="frequency definitions, ';'-separated, e.g. '1;1,2'")
    p.add_argument("--binning", choices=["rank", "quantile"])
    p.add_argument("--bin-percent", type=int)
    p.add_argument("--boot-reps", type=int)
    p.add_argument("--boot-seed", type=int)
    p.add_argument("--memory-limit", help="DuckDB memory_limit, e.g. 4GB")
    p.add_argument("--threads", type=int)
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--summary", action="store_true",
                   help="print a Table-2-like summary, what it means, and the plots' paths")
    p.add_argument("--query", metavar="SQL",
                   help="only run SQL on the existing results/freqgap.duckdb and print it")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from freqgap.config import load_yaml
    from freqgap.gaps.inputs import GapsInputError
    from freqgap.gaps.options import options_from_conf

    try:
        opts = options_from_conf(
            load_yaml(args.conf) if args.conf else None,
            counts=args.counts, instances=args.instances, predictions=args.predictions,
            results=args.results, models=_list(args.models), tasks=_list(args.tasks),
            freq_defs=_list(args.freq_defs, ";"), binning=args.binning, bin_percent=args.bin_percent,
            boot_reps=args.boot_reps, boot_seed=args.boot_seed, memory_limit=args.memory_limit,
            threads=args.threads, make_plots=False if args.no_plots else None)
        if args.query:
            from freqgap.gaps.query import print_query
            print_query(opts.path(opts.results), args.query)
            return 0
        from freqgap.gaps.run import run_gaps
        from freqgap.gaps.summary import summary_text
        result = run_gaps(opts)
    except (GapsInputError, ConfigError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.summary:
        print(summary_text(result.gaps, opts.tables, opts.task_labels, opts.binning,
                           opts.bin_percent, opts.boot_level, result.results_dir, result.plots))
    else:
        print(f"gaps: {len(result.gaps)} rows, per_key: {len(result.per_key)} rows -> "
              f"{result.results_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
