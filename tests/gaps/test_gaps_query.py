"""`freqgap query` cannot change the results or write any file unless --allow-write (issue 10.4).

One test per write route: each is refused with exit 2 and a message, and afterwards every file
under the results and input directories is byte-for-byte unchanged and no new file exists.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pytest

from freqgap.cli import main
from freqgap.errors import FreqgapError
from freqgap.gaps.query import open_results, print_query
from freqgap.gaps.run import run_gaps
from tests.gaps.fixtures import options_for, random_world


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    root = tmp_path_factory.mktemp("query")
    world = random_world(root / "w", seed=3, tasks=("mult",), models=("a",))
    res = run_gaps(options_for(world, root / "results", boot_reps=20))
    return root, res


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def routes(root: Path, results: Path) -> dict[str, str]:
    gaps_file = results / "gaps.parquet"
    counts_file = next((root / "w" / "counts" / "unigrams").glob("*.parquet"), root / "x")
    return {
        "copy over the results": f"COPY (SELECT 1 AS a) TO '{gaps_file}' (FORMAT parquet)",
        "copy into an input directory": f"COPY (SELECT 1 AS a) TO '{counts_file}'",
        "copy elsewhere": f"COPY (SELECT 1 AS a) TO '{root / 'elsewhere.csv'}'",
        "export database": f"EXPORT DATABASE '{root / 'exported'}'",
        "attach": f"ATTACH '{root / 'other.duckdb'}' AS other",
        "install": "INSTALL httpfs",
        "load": "LOAD httpfs",
        "set": "SET enable_external_access = true",
        "set variable": "SET VARIABLE x = 1",
        "pragma": "PRAGMA enable_profiling",
        "explain analyze copy": f"EXPLAIN ANALYZE COPY (SELECT 1) TO '{counts_file}.x'",
        "create": "CREATE TABLE t AS SELECT 1",
        "create temp": "CREATE TEMP TABLE t AS SELECT 1",
        "delete": "DELETE FROM per_key",
        "checkpoint": "CHECKPOINT",
        "second statement": f"SELECT 1; COPY (SELECT 1) TO '{gaps_file}'",
    }


ROUTES = list(routes(Path("/r"), Path("/r/results")))


@pytest.mark.parametrize("route", ROUTES)
def test_each_write_route_is_refused_and_nothing_changes(done, route, capsys):
    root, res = done
    sql = routes(root, res.results_dir)[route]
    before = snapshot(root)
    assert main(["query", "--results", str(res.results_dir), sql]) == 2
    err = capsys.readouterr().err
    assert "not a SELECT" in err and "--allow-write" in err
    assert snapshot(root) == before


@pytest.mark.parametrize("sql,what", [
    ("SELECT * FROM read_csv('/etc/passwd')", "outside the inputs"),
    ("SELECT * FROM glob('/tmp/*')", "listing files"),
    ("SELECT * FROM read_parquet('{results}/gaps.parquet')", "the results' own files"),
])
def test_a_select_cannot_read_files_outside_the_inputs(done, sql, what):
    root, res = done
    with pytest.raises(FreqgapError, match="disabled|Permission"):
        print_query(res.results_dir, sql.format(results=res.results_dir))


def test_settings_are_locked(done):
    _, res = done
    con = open_results(res.results_dir)
    with pytest.raises(duckdb.Error, match="configuration"):
        con.execute("SET enable_external_access = true")
    assert con.execute("SELECT current_setting('temp_directory')").fetchall() == [("",)]
    con.close()


def test_selects_over_the_inputs_still_work(done, capsys):
    root, res = done
    n_pairs = duckdb.sql(f"SELECT count(*) FROM '{root}/w/counts/pairs/*.parquet'").fetchall()[0][0]
    print_query(res.results_dir, "SELECT count(*) + 1000000 AS n FROM pairs; "
                                 "SELECT count(*) + 2000000 AS g FROM gaps")
    out = capsys.readouterr().out
    assert str(1000000 + n_pairs) in out and str(2000000 + len(res.gaps)) in out


def test_allow_write_is_the_explicit_opt_in(done, tmp_path, capsys):
    root, res = done
    target = tmp_path / "copy.parquet"
    assert main(["query", "--results", str(res.results_dir), "--allow-write",
                 f"COPY (SELECT * FROM gaps) TO '{target}'"]) == 0
    assert duckdb.sql(f"SELECT count(*) FROM '{target}'").fetchall()[0][0] == len(res.gaps)


def test_no_database_no_manifest(tmp_path):
    with pytest.raises(FreqgapError, match="not found; run `freqgap gaps` first"):
        print_query(tmp_path, "SELECT 1")
