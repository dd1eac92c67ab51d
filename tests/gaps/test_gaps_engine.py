"""The public engine of the gaps stage (freqgap/gaps/engine.py) that freqgap.dynamics also
runs: its replaceable inputs are names the SQL defines, a replacement for any other name is
refused, and the database appears under its name only when the block succeeds."""

from __future__ import annotations

import duckdb
import pytest

from freqgap.gaps import engine
from freqgap.gaps.options import GapsOptions
from freqgap.gaps.sqlrun import defined_name, run_sql_file, statements
from freqgap.paths import SQL_DIR


def _defined(file: str) -> set[str]:
    return {defined_name(s) for s in statements((SQL_DIR / file).read_text(encoding="utf-8"))}


def test_replaceable_inputs_are_defined_by_the_sql():
    assert engine.PREDICTIONS_VIEW in _defined("20_selection.sql")
    assert engine.OMEGA_TABLE in _defined("25_per_key.sql")


def test_replacement_for_a_name_the_file_lacks_is_refused(tmp_path):
    (tmp_path / "x.sql").write_text("-- x\nCREATE OR REPLACE VIEW a AS SELECT 1 AS v;\n")
    con = duckdb.connect()
    with pytest.raises(KeyError, match="defines no \\['b'\\]"):
        run_sql_file(con, "x.sql", {}, {"b": "CREATE OR REPLACE VIEW b AS SELECT 2 AS v"},
                     sql_dir=tmp_path)
    assert con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = 'a'"
                       ).fetchall() == [(0,)]          # nothing ran
    run_sql_file(con, "x.sql", {}, {"a": "CREATE OR REPLACE VIEW a AS SELECT 2 AS v"},
                 sql_dir=tmp_path)
    assert con.execute("SELECT v FROM a").fetchall() == [(2,)]


def test_replacement_statement_must_define_the_input_it_replaces():
    con = duckdb.connect()
    with pytest.raises(ValueError, match="defines 'other', not 'selected_predictions'"):
        engine.select_predictions(con, {}, "CREATE OR REPLACE VIEW other AS SELECT 1")


def test_database_is_renamed_only_on_success(tmp_path):
    opts = GapsOptions()
    db, spill = tmp_path / "g.duckdb", tmp_path / "spill"
    with pytest.raises(RuntimeError, match="boom"):
        with engine.database(db, opts, spill) as con:
            con.execute("CREATE TABLE t AS SELECT 1 AS v")
            raise RuntimeError("boom")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    with engine.database(db, opts, spill) as con:
        con.execute("CREATE TABLE t AS SELECT 1 AS v")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.duckdb"]
    assert duckdb.connect(str(db), read_only=True).execute("SELECT v FROM t").fetchall() == [(1,)]
