"""Every output of `make gaps`: Parquet, tables, plots, the database, the manifest, the summary."""

from __future__ import annotations

import dataclasses

import duckdb
import pyarrow.parquet as pq
import pytest

from freqgap.gaps.run import run_gaps
from freqgap.analysis.gaps import summary_text
from freqgap.manifest import read_manifest
from tests.gaps.fixtures import options_for, random_world

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    root = tmp_path_factory.mktemp("outputs")
    world = random_world(root / "w", seed=2, n_x1_of={"hour_min": 18})   # hour_min: no Δ
    opts = options_for(world, root / "results", make_plots=True)
    return world, opts, run_gaps(opts)


def test_parquet_outputs(done):
    _, opts, res = done
    gaps = pq.read_table(res.files["gaps"]).to_pandas()
    per_key = pq.read_table(res.files["per_key"]).to_pandas()
    assert len(gaps) == len(res.gaps) == 2 * 2 * (3 + 3 + 3)     # models x k x (task, def)
    for col in ("model", "revision", "task", "k", "freq_def", "accuracy", "n_keys",
                "n_unseen_keys", "delta", "ci_low", "ci_high", "ci_kind", "spearman_rho",
                "withheld_reason", "min_seen_keys", "delta_per_seed", "delta_seed_min",
                "delta_seed_max", "delta_seed_sd", "logit_slope", "logit_slope_low",
                "logit_slope_high"):
        assert col in gaps.columns, col
    ok = gaps[gaps["delta"].notna()]
    assert len(ok) > 10 and (ok["ci_kind"] == "seeds+keys").all()      # the conf default
    assert ok["logit_slope"].notna().all() and ok["ci_low"].notna().all()
    assert (ok["logit_slope_low"] < ok["logit_slope"]).all()
    assert (ok["logit_slope"] < ok["logit_slope_high"]).all()
    assert (ok["n_keys"] >= 20).all() and ok["withheld_reason"].isna().all()
    held = gaps[gaps["delta"].isna()]
    assert len(held) and (held["n_keys"] < 20).all()               # hour_min: 18 x1
    assert held["withheld_reason"].str.contains("fewer than min_seen_keys = 20").all()
    assert held[["ci_low", "spearman_rho", "logit_slope"]].isna().all().all()
    for col in ("model", "revision", "task", "k", "freq_def", "key", "omega", "accuracy",
                "n_rows"):
        assert col in per_key.columns


def test_tables_have_the_papers_shape(done):
    _, opts, res = done
    md = (res.results_dir / "table_arithmetic.md").read_text()
    assert "| Task | k | Acc | Δ1 | Δ1,2 | Δ1,y |" in md
    g = res.gaps
    r = g[(g.model == "tiny-b") & (g.task == "mult") & (g.k == 2) & (g.freq_def == "1")].iloc[0]
    line = next(l for l in md.splitlines() if l.startswith("| Multiplication | 2 |")
                and f"{100 * r.accuracy:.1f}" in l)
    assert f"{100 * r.delta:.1f} [{100 * r.ci_low:.1f}, {100 * r.ci_high:.1f}]" in line
    time_md = (res.results_dir / "table_time_units.md").read_text()
    assert "| Task | k | Acc | Δ1,2 | Δ1,2,3 | Δ1,2,y |" in time_md and "Hour→Min" in time_md
    keys = f"({int(r.n_keys)}/{int(r.n_unseen_keys)})"
    assert f"{100 * r.delta:.1f} [{100 * r.ci_low:.1f}, {100 * r.ci_high:.1f}] {keys}" in line
    held = g[g.delta.isna()].iloc[0]
    assert f"— ({int(held.n_keys)}/{int(held.n_unseen_keys)})" in time_md + md
    assert "seeds (the draws of the k shots)" in md and "— : Δ withheld" not in md
    assert "—: Δ withheld, fewer than 20 seen keys" in md
    assert "Not the paper's full grid; missing tiny-a@main mult: k=4, 8, 16; tiny-a@main add" in md
    tex = (res.results_dir / "table_arithmetic.tex").read_text()
    assert r"\toprule" in tex and r"$\fgDelta_{1,y}$" in tex and r"\end{tabular}" in tex


def test_plots(done):
    _, opts, res = done
    names = {p.name for p in res.plots}
    for model in ("tiny-a-main", "tiny-b-main"):
        assert {f"fig1_{model}_mult.png", f"fig1_{model}_add.png",
                f"binned_{model}_mult.png", f"binned_{model}_hour_min.png"} <= names
    assert "fig6_mult.png" in names                       # two models present
    assert {"delta_vs_k_tiny-a-main_mult.png", "delta_vs_k_tiny-b-main_hour_min.png"} <= names
    for p in res.plots:
        assert p.read_bytes()[:8] == PNG and p.stat().st_size > 5000


def test_database_answers_in_a_new_session_without_copies(done):
    world, opts, res = done
    con = duckdb.connect(str(res.results_dir / "freqgap.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM gaps").fetchall()[0][0] == len(res.gaps)
    assert con.execute("SELECT count(*) FROM pairs").fetchall()[0][0] == len(world.pairs)
    assert con.execute("SELECT count(*) FROM predictions").fetchall()[0][0] == \
        len(world.prediction_rows)
    tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    assert tables == {"per_key", "per_key_seed", "key_omega", "gap_groups", "gap_intervals",
                      "gap_logistic"}                               # small; counts are views
    top = con.execute("SELECT key FROM per_key WHERE freq_def = '1' ORDER BY omega DESC "
                      "LIMIT 1").fetchall()[0][0]
    assert world.unigrams[top] == max(world.unigrams[str(r["x1"])] for r in world.instance_rows
                                      if str(r["x1"]) in world.unigrams)
    con.close()


def test_manifest_written_last_lists_outputs(done):
    _, opts, res = done
    m = read_manifest(res.results_dir)
    assert m["stage"] == "gaps" and m["compatibility"] == "checked"
    listed = set(m["outputs"])
    assert {"gaps.parquet", "per_key.parquet", "freqgap.duckdb", "table_arithmetic.md",
            "plots/fig6_mult.png"} <= listed
    assert m["totals"]["models"] == ["tiny-a@main", "tiny-b@main"]


def test_summary_says_what_the_numbers_mean(done):
    _, opts, res = done
    text = summary_text(res.gaps, opts.tables, opts.task_labels, opts.binning, opts.bin_percent,
                        opts.boot_level, res.results_dir, res.plots)
    assert "| Multiplication | 2 |" in text and "points more accurately" in text
    assert "bootstrap interval" in text and str(res.plots[0]) in text
    r = res.gaps[(res.gaps.model == "tiny-a") & (res.gaps.task == "mult") & (res.gaps.k == 2)
                 & (res.gaps.freq_def == "1")].iloc[0]
    # the headline: seed-aware interval, per-seed spread, the logistic slope, in words
    assert (f"95 % bootstrap interval resampling the seeds (the draws of the k shots), then the "
            f"keys: [{100 * r.ci_low:.1f}, {100 * r.ci_high:.1f}]") in text
    assert f"from {100 * r.delta_seed_min:.1f} to {100 * r.delta_seed_max:.1f}" in text
    assert (f"slope of {r.logit_slope:.2f} per tenfold ω (95 % Wald interval "
            f"[{r.logit_slope_low:.2f}, {r.logit_slope_high:.2f}]") in text
    n_held = int(res.gaps["delta"].isna().sum())
    assert f"{n_held} of {len(res.gaps)} Δ are withheld" in text
    assert "fewer than 20 keys with ω > 0 behind them" in text


def test_gptj_rows_print_the_papers_figures_beside_ours(done):
    from freqgap.analysis.gaps import render_tables

    _, opts, res = done
    g = res.gaps.copy()
    g["model"] = g["model"].map({"tiny-a": "EleutherAI/gpt-j-6b", "tiny-b": "tiny-b"})
    md = render_tables(g, opts.tables, opts.task_labels, "rank", 10, 0.95,
                       opts.paper_reference, opts.paper_ks)["arithmetic.md"]
    gptj = md.split("## EleutherAI/gpt-j-6b@main")[1].split("## tiny-b")[0]
    lines = gptj.splitlines()
    i = next(i for i, l in enumerate(lines) if l.startswith("| Multiplication | 2 |"))
    assert lines[i + 1] == "| Multiplication (paper) | 2 | 35.9 | 77.6 | 79.3 | 89.9 |"
    assert "| Addition (paper) | 2 | 88.2 | 16.8 | – | – |" in gptj
    assert "(paper)" not in md.split("## tiny-b@main")[1]


def test_rerun_with_one_model_removes_stale_plots(done, tmp_path):
    world, opts, res = done
    again = run_gaps(dataclasses.replace(opts, models=["tiny-a"]))
    names = {p.name for p in (again.results_dir / "plots").glob("*.png")}
    assert "fig6_mult.png" not in names and not any("tiny-b" in n for n in names)
    assert set(again.gaps["model"]) == {"tiny-a"}


def test_query_option_reads_the_database(done, capsys):
    from freqgap.cli import main

    _, opts, res = done
    assert main(["query", "--results", str(res.results_dir),
                 "SELECT count(*) AS n FROM gaps WHERE delta IS NOT NULL"]) == 0
    now = pq.read_table(res.results_dir / "gaps.parquet").to_pandas()    # what the db holds
    assert f"│ {int(now['delta'].notna().sum()):>5} │" in capsys.readouterr().out
    assert main(["query", "--results", str(res.results_dir), "SELECT * FROM nope"]) == 2
    assert "nope" in capsys.readouterr().err
