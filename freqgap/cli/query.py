"""Run SQL on the database of a gaps run (freqgap.duckdb, or a dynamics run's
dynamics.duckdb) and print it, or write it as CSV, JSON Lines or Parquet.

For users without the duckdb command-line tool. Read-only: only SELECT statements run, on a
connection that cannot write or read files other than the run's inputs (freqgap/gaps/query.py);
--allow-write lifts that. Inputs moved together with the results are followed; an input
rewritten since the run (a recount) is refused where a statement reads it, unless
--allow-mixed. `--list` shows the views meant for questions.
Examples:
  freqgap query --list
  freqgap query "SELECT task, k, freq_def, delta, ci_low, ci_high FROM gaps ORDER BY delta DESC"
  freqgap query "SELECT * FROM gaps" --format csv --out gaps.csv
  freqgap query "SELECT * FROM hit_totals"     (counts made with `count --hits KEYS_FILE`)
"""

from __future__ import annotations

import argparse

from freqgap.cli.common import positive_int, str_list


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("sql", metavar="SQL", nargs="?",
                   help="one SQL statement (see --list for the views: gaps, per_key, …)")
    p.add_argument("--results", metavar="DIR",
                   help="output directory of `freqgap gaps` or `freqgap dynamics gaps` "
                        "(default: conf/gaps.yaml's results)")
    p.add_argument("--list", action="store_true",
                   help="list the views and tables meant for questions, with what each holds, "
                        "apart from the internal steps")
    p.add_argument("--format", choices=["table", "csv", "json", "parquet"], default="table",
                   help="table: every column shown; csv; json: JSON Lines (one object a row); "
                        "parquet (needs --out)")
    p.add_argument("--out", metavar="FILE",
                   help="write the result to FILE (written whole, then renamed into place) "
                        "instead of standard output")
    p.add_argument("--columns", type=str_list, metavar="C,C,…",
                   help="keep only these columns of the result, in this order")
    p.add_argument("--max-rows", type=positive_int, default=50, metavar="N",
                   help="rows shown by --format table (the other formats write all)")
    p.add_argument("--allow-mixed", action="store_true",
                   help="run a statement that reads an input rewritten since the run (live "
                        "views beside stored tables of the old one), labelled as mixed")
    p.add_argument("--allow-write", action="store_true",
                   help="run any statement (COPY, EXPORT, CREATE, ATTACH, …) on a writable "
                        "connection: it can change the results and write files")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from freqgap.errors import UsageError
    from freqgap.gaps.query import catalog_text, input_directories, run_query
    from freqgap.gaps.query_output import QueryOutput

    results = args.results
    if results is None:
        from freqgap.config import load_conf

        results = load_conf("gaps").get("results", "results")
    results = Path(results)
    if args.list:
        if args.sql:
            raise UsageError("--list and an SQL statement: give one of them")
        print(catalog_text(results))
        return 0
    if not args.sql:
        raise UsageError("no SQL statement given; e.g. freqgap query \"SELECT * FROM gaps\" "
                         "(freqgap query --list names the views)")
    protected = [results]
    if args.out is not None:
        protected += [Path(d) for d in input_directories(results)]
    output = QueryOutput(args.format, args.out, args.columns, args.max_rows, protected)
    run_query(results, args.sql, output, allow_write=args.allow_write,
              allow_mixed=args.allow_mixed)
    return 0
