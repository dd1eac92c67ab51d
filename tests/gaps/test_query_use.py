"""`freqgap query` for real use (issue 40 item 5, issue 38 item 6 and its two tracebacks):
formats and files, wide tables whole, --columns, --list, results that survive a move with
their inputs, a recount refused where a statement reads it, a truncated database and a
dynamics result."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from freqgap.cli import main
from freqgap.manifest import MANIFEST_NAME, build_manifest, now_iso, write_manifest
from freqgap.gaps.run import run_gaps
from tests.gaps.fixtures import options_for, random_world


def _make(root: Path) -> Path:
    """A project folder: inputs and results, given as relative paths at the run."""
    import os

    root.mkdir(parents=True, exist_ok=True)
    here = os.getcwd()
    os.chdir(root)
    try:
        world = random_world(Path("w"), seed=3, tasks=("mult",), models=("a",))
        run_gaps(options_for(world, Path("results"), boot_reps=20))
    finally:
        os.chdir(here)
    return root


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """One project, only read."""
    return _make(tmp_path_factory.mktemp("project") / "p")


@pytest.fixture
def project(tmp_path):
    """A project of its own, to move or damage."""
    return _make(tmp_path / "own")


def _query(capsys, *argv):
    rc = main(["query", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_wide_table_shows_every_column(made, capsys):
    rc, out, _ = _query(capsys, "--results", str(made / "results"), "SELECT * FROM gaps")
    header = next(line for line in out.splitlines() if "model" in line)
    for column in ("delta", "ci_low", "ci_high", "logit_note"):
        assert f" {column} " in header


def test_csv_json_parquet_and_columns(made, capsys, tmp_path):
    results = str(made / "results")
    sql = "SELECT task, k, freq_def, delta, ci_low, ci_high FROM gaps ORDER BY k, freq_def"
    rc, out, _ = _query(capsys, "--results", results, sql, "--format", "csv", "--columns",
                        "task,k,delta")
    assert rc == 0
    table = list(csv.reader(io.StringIO(out)))
    assert table[0] == ["task", "k", "delta"] and len(table) == 7
    rc, out, _ = _query(capsys, "--results", results, sql, "--format", "json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 6 and set(lines[0]) == {"task", "k", "freq_def", "delta", "ci_low",
                                                   "ci_high"}
    target = tmp_path / "g.parquet"
    rc, _, err = _query(capsys, "--results", results, sql, "--format", "parquet", "--out",
                        str(target))
    assert rc == 0 and f"wrote {target}" in err
    assert pq.read_table(target).column_names[:3] == ["task", "k", "freq_def"]
    assert pq.read_table(target).num_rows == 6


@pytest.mark.parametrize("argv, says", [
    (["--format", "parquet"], "--format parquet writes a file: give --out FILE.parquet"),
    (["--columns", "task,nope"], "--columns: no column nope in the result; it has"),
    (["--out", "{results}/x.csv", "--format", "csv"], "which the query reads"),
])
def test_output_mistakes_are_one_line(made, capsys, argv, says):
    results = str(made / "results")
    argv = [a.format(results=results) for a in argv]
    rc, out, err = _query(capsys, "--results", results, "SELECT task FROM gaps", *argv)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and says in err


def test_list_shows_the_views_for_questions_apart(made, capsys):
    rc, out, _ = _query(capsys, "--results", str(made / "results"), "--list")
    lines = out.splitlines()
    internal = next(i for i, line in enumerate(lines) if line.startswith("internal steps"))
    named = [line.split()[0] for line in lines[1:internal]]
    assert named[:2] == ["gaps", "per_key"] and "predictions" in named
    assert "check_null_correct" in lines[internal] and "check_null_correct" not in named
    assert "one row per group, Δ with its interval" in out


def test_results_moved_with_their_inputs_still_answer(project, capsys, tmp_path):
    moved = tmp_path / "elsewhere" / "renamed"
    moved.parent.mkdir()
    project.rename(moved)
    for table in ("unigrams", "pairs", "counts", "predictions", "gaps"):
        rc, out, err = _query(capsys, "--results", str(moved / "results"),
                              f"SELECT count(*) AS n FROM {table}", "--format", "csv")
        assert rc == 0, err
        assert int(out.splitlines()[1]) > 0


def test_inputs_gone_are_named_where_a_view_needs_them(project, capsys):
    shutil.rmtree(project / "w" / "counts")
    rc, out, err = _query(capsys, "--results", str(project / "results"),
                          "SELECT count(*) FROM pairs")
    assert rc == 2 and "the view pairs reads" in err and "which is gone" in err
    rc, out, err = _query(capsys, "--results", str(project / "results"),
                          "SELECT count(*) AS n FROM per_key", "--format", "csv")
    assert rc == 0 and int(out.splitlines()[1]) > 0          # stored tables still answer


def test_a_recount_is_refused_where_read_and_labelled_when_allowed(project, capsys):
    counts = project / "w" / "counts"
    manifest = json.loads((counts / MANIFEST_NAME).read_text())
    manifest.pop("fingerprint")
    manifest["totals"]["unigrams"] += 1          # another count run: another fingerprint
    write_manifest(counts, manifest)
    results = str(project / "results")
    rc, out, err = _query(capsys, "--results", results, "SELECT count(*) FROM unigrams")
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert "the view unigrams would read" in err and "changed since this result was made" in err
    assert "--allow-mixed" in err
    rc, out, err = _query(capsys, "--results", results, "SELECT count(*) AS n FROM gaps")
    assert rc == 0                                 # gaps does not read the counts
    rc, out, err = _query(capsys, "--results", results, "SELECT count(*) FROM unigrams",
                          "--allow-mixed")
    assert rc == 0 and "warning: MIXED INPUTS: unigrams read" in err
    assert out.startswith("-- MIXED INPUTS: unigrams read")


def test_a_truncated_database_is_one_line(project, capsys):
    db = project / "results" / "freqgap.duckdb"
    with open(db, "r+b") as handle:
        handle.truncate(5000)
    rc, out, err = _query(capsys, "--results", str(project / "results"), "SELECT 1")
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert "not a readable DuckDB database" in err and "rerun `freqgap gaps`" in err


def test_a_dynamics_result_is_queried_as_such(tmp_path, capsys):
    results = tmp_path / "dyn"
    results.mkdir()
    con = duckdb.connect(str(results / "dynamics.duckdb"))
    con.execute("CREATE TABLE gaps_by_step AS SELECT 512 AS step, 'mult' AS task, 0.25 AS delta")
    con.close()
    write_manifest(results, build_manifest("dynamics_gaps", {}, [], {"rows": 1}, now_iso(),
                                           upstream={"counts": "c", "instances": "i",
                                                     "predictions": {}}))
    rc, out, err = _query(capsys, "--results", str(results),
                          "SELECT step, delta FROM gaps_by_step", "--format", "json")
    assert rc == 0, err
    assert json.loads(out) == {"step": 512, "delta": 0.25}
    rc, out, err = _query(capsys, "--results", str(results), "--list")
    assert "gaps_by_step" in out.splitlines()[1]
