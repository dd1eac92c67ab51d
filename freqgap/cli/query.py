"""Run one SQL statement on the database of a gaps run (freqgap.duckdb) and print it.

For users without the duckdb command-line tool. Read-only: only SELECT statements run, on a
connection that cannot write or read files other than the run's inputs (freqgap/gaps/query.py);
--allow-write lifts that.
Example: freqgap query "SELECT task, k, freq_def, delta FROM gaps ORDER BY delta DESC"
"""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("sql", metavar="SQL", help="one SQL statement (views: gaps, per_key, …)")
    p.add_argument("--results", metavar="DIR",
                   help="output directory of `freqgap gaps` (default: conf/gaps.yaml's results)")
    p.add_argument("--allow-write", action="store_true",
                   help="run any statement (COPY, EXPORT, CREATE, ATTACH, …) on a writable "
                        "connection: it can change the results and write files")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from freqgap.gaps.query import print_query

    results = args.results
    if results is None:
        from freqgap.config import load_conf

        results = load_conf("gaps").get("results", "results")
    print_query(Path(results), args.sql, allow_write=args.allow_write)
    return 0
