"""`freqgap instances`: a task the counts cannot build is skipped on request, naming it and
why, and the number of prompts (with the predict time they take) is printed before any
prompt is written (issue 40, item 3)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from freqgap.cli import main
from tests.instances.counts_fixture import UNITS, write_counts


def _counts_without_decades(directory):
    unigrams = {str(n): 10_000 - 7 * n for n in range(200)}
    unigrams.update({u: 1000 for u in UNITS})
    pairs = {(str(n), u): 500 - n for u in UNITS if u != "decade" for n in range(1, 30)}
    return write_counts(directory, unigrams, pairs)


def test_an_unbuildable_task_stops_the_run_and_names_the_flag(tmp_path, capsys):
    counts = _counts_without_decades(tmp_path / "counts")
    rc = main(["instances", "--counts", str(counts), "--out", str(tmp_path / "inst"),
               "--tasks", "mult,decade_year", "--k", "2", "--seeds", "0"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1
    assert "task decade_year: no (number, decade) pairs" in err and "--skip-unbuildable" in err
    assert not (tmp_path / "inst" / "_manifest.json").exists()


def test_skip_unbuildable_builds_the_rest_with_a_plan_first(tmp_path, capsys):
    counts = _counts_without_decades(tmp_path / "counts")
    out = tmp_path / "inst"
    rc = main(["instances", "--counts", str(counts), "--out", str(out), "--grid", "paper",
               "--k", "0,2", "--seeds", "0,1", "--limit", "7", "--skip-unbuildable"])
    assert rc == 0
    text = capsys.readouterr().out
    plan, wrote = text.index("plan: 10 task(s)"), text.index("wrote ")
    assert plan < wrote                                       # the plan comes first
    assert "skipped task decade_year (--skip-unbuildable): task decade_year: no (number, " \
           "decade) pairs" in text
    manifest = json.loads((out / "_manifest.json").read_text())
    assert list(manifest["totals"]["skipped"]) == ["decade_year"]
    assert "decade_year" not in manifest["totals"]["prompts"]
    prompts = pq.read_table(out / "prompts.parquet").num_rows
    # k=0 uses the first seed only: 10 tasks x (1 + 2) cells x 7 items, estimated exactly here
    assert prompts == 10 * 3 * 7 == manifest["totals"]["prompts_all"]
    assert f"about {prompts:,} prompts; `freqgap predict` takes about " in text


def test_help_names_the_files_it_writes(capsys):
    try:
        main(["instances", "--help"])
    except SystemExit:
        pass
    text = " ".join(capsys.readouterr().out.split())
    assert "instance_terms.parquet" in text and "vocab.yaml" not in text
    assert "terms.parquet," not in text.replace("instance_terms.parquet", "")
