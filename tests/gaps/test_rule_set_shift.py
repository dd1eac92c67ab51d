"""`freqgap gaps --compare-counts`: Δ over two rule sets' counts of one corpus, on the same
predictions, and the shift between them, each side equal to a plain gaps run over it."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pandas as pd
import pytest

from freqgap.cli import main as freqgap_main
from freqgap.config import ConfigError
from freqgap.counting.rules import PYTHIA_CASE_STUDY
from freqgap.gaps.run import run_gaps
from freqgap.manifest import read_manifest
from tests.counting.corpus_utils import write_jsonl
from tests.gaps.fixtures import (instance, make_instances, make_predictions, options_for,
                                 prediction, term_rows, World)

N_X1 = 30
FILLERS = ["a", "the", "of", "days", "today", "Monday", "x", "and", "hours"]


def corpus_texts(seed: int) -> list[str]:
    """Numbers 0..29 at Zipf-like rates between fillers: the rule sets count them apart
    (the study's only inside windows of two numbers)."""
    rng = random.Random(seed)
    texts = []
    for _ in range(300):
        words = []
        for _ in range(rng.randint(3, 25)):
            words.append(str(min(int(rng.paretovariate(0.8)) - 1, N_X1 - 1))
                         if rng.random() < 0.4 else rng.choice(FILLERS))
        texts.append(" ".join(words))
    return texts


@pytest.fixture(scope="module")
def world(spark, tmp_path_factory):
    """Counts of one corpus under both rule sets, instances made from the default's, and
    predictions whose accuracy rises with x1's default count."""
    root = tmp_path_factory.mktemp("shift")
    write_jsonl(root / "corpus" / "c.jsonl", corpus_texts(0))
    for name, rules in (("counts", "razeghi"), ("counts_pythia", PYTHIA_CASE_STUDY)):
        assert freqgap_main(["count", "--input", str(root / "corpus"), "--out", str(root / name),
                             "--rules", rules]) == 0
    inst, terms = [], []
    for iid, (x1, x2) in enumerate((x1, x2) for x1 in range(N_X1) for x2 in (1, 2)):
        row = instance("mult", iid, x1, x2)
        inst.append(row)
        terms += term_rows("mult", iid, x1, row["x2"], row["x3"], row["y"])
    instances = make_instances(root / "instances", inst, terms, counts=root / "counts")
    rng = random.Random(1)
    preds = []
    for seed in (0, 1):
        for r in inst:
            ok = rng.random() < 0.2 + 0.6 * (r["x1"] < 8)
            preds.append(prediction("m", "mult", 2, seed, r["instance_id"],
                                    r["answer"] if ok else "0", r["y"]))
    make_predictions(root / "predictions" / "m", preds,
                     instances_fp=read_manifest(instances)["fingerprint"])
    return World(counts=root / "counts", instances=instances, predictions=root / "predictions",
                 instance_rows=inst, term_rows=terms, prediction_rows=preds, unigrams={},
                 pairs={}, triples={})


def deltas(gaps: pd.DataFrame) -> dict:
    return {(r.task, r.k, r.freq_def): r.delta for r in gaps.itertuples()}


def test_shift_is_the_difference_of_two_plain_runs(world, tmp_path, capsys):
    other = str(world.counts.parent / "counts_pythia")
    code = freqgap_main(["gaps", "--counts", str(world.counts), "--instances", str(world.instances),
                         "--predictions", str(world.predictions) + "/*/", "--out",
                         str(tmp_path / "r"), "--no-plots", "--boot-reps", "50",
                         "--min-seen-keys", "10", "--compare-counts", other])
    out = capsys.readouterr().out
    assert code == 0
    shift = pd.read_parquet(tmp_path / "r" / "rule_set_shift.parquet")
    plain = run_gaps(options_for(world, tmp_path / "a", boot_reps=0, min_seen_keys=10)).gaps
    moved = run_gaps(options_for(dataclasses.replace(world, counts=Path(other)), tmp_path / "b",
                                 boot_reps=0, min_seen_keys=10, counts_mismatch_ok=True)).gaps
    assert len(shift) == len(plain) == 3
    a, b = deltas(plain), deltas(moved)
    for r in shift.itertuples():
        key = (r.task, r.k, r.freq_def)
        assert r.delta == pytest.approx(a[key]) and r.delta_compare == pytest.approx(b[key])
        assert r.delta_shift == pytest.approx(b[key] - a[key])
    assert (shift["delta_shift"].abs() > 0).any()          # the rule sets bin keys apart
    manifest = read_manifest(tmp_path / "r", stage="gaps")
    record = manifest["totals"]["compare_counts"]
    assert record["rule_set"] == PYTHIA_CASE_STUDY and record["groups"] == 3
    assert manifest["config"]["compare_counts"] == other
    assert "rule_set_shift.parquet" in json.dumps(manifest["outputs"])
    assert "Δ by rule set" in out and "shift" in out
    # the view is stored in the run's database
    import duckdb
    con = duckdb.connect(str(tmp_path / "r" / "freqgap.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM rule_set_shift").fetchall()[0][0] == 3


def test_without_compare_no_shift_file_is_left(world, tmp_path):
    other = str(world.counts.parent / "counts_pythia")
    run_gaps(options_for(world, tmp_path / "r", boot_reps=0, min_seen_keys=10, compare_counts=other))
    assert (tmp_path / "r" / "rule_set_shift.parquet").exists()
    run_gaps(options_for(world, tmp_path / "r", boot_reps=0, min_seen_keys=10))
    assert not (tmp_path / "r" / "rule_set_shift.parquet").exists()


def test_compare_counts_must_be_other_counts(world, tmp_path):
    with pytest.raises(ConfigError, match="is --counts itself"):
        options_for(world, tmp_path / "r", compare_counts=str(world.counts))
