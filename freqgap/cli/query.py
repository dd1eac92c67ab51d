"""Run one SQL statement on the database of a gaps run (freqgap.duckdb) and print it.

For users without the duckdb command-line tool. The database is opened read-only.
Example: freqgap query "SELECT task, k, freq_def, delta FROM gaps ORDER BY delta DESC"
"""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("sql", metavar="SQL", help="one SQL statement (views: gaps, per_key, …)")
    p.add_argument("--results", metavar="DIR",
                   help="output directory of `freqgap gaps` (default: conf/gaps.yaml's results)")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from freqgap.gaps.query import print_query

    results = args.results
    if results is None:
        from freqgap.config import load_conf

        results = load_conf("gaps").get("results", "results")
    print_query(Path(results), args.sql)
    return 0
