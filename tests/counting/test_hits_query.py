"""Hit lists in `freqgap query` (issue 41 item 3): a gaps result over a real count made with
--hits answers on the views `hits` (the Parquet rows as written) and `hit_totals` (per key,
equal to the counts), lists both with --list, keeps them when the project folder moves,
and a result over a count without --hits says in one line how to get them."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from freqgap.cli import main
from freqgap.counting.hits import HitSettings, read_keys
from freqgap.counting.rules import TermRules
from freqgap.manifest import MANIFEST_NAME, read_manifest, write_manifest
from tests.counting.corpus_utils import write_jsonl
from tests.counting.test_hits import plain_scan
from tests.gaps.fixtures import (World, instance, make_instances, make_predictions, prediction,
                                 random_world, term_rows)

KEYS = (("5",), ("hour",), ("12",), ("12", "5"), ("5", "hour"), ("12", "5", "hour"), ("3", "4"),
        ("29",), ("4", "4"))
LIMIT = 3
WORDS = [str(n) for n in range(30)] + ["hours", "day", "the", "of", "minute", "x."]


def _texts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 30))) for _ in range(n)]


def _gaps(root: Path, counts: Path) -> None:
    """instances of `mult` made from `counts`, predictions, and a gaps run into
    root/results, all given relative to root (so the folder can move as one)."""
    from freqgap.gaps.run import run_gaps
    from tests.gaps.fixtures import options_for

    rng = random.Random(1)
    inst, terms, preds = [], [], []
    for x1 in range(30):
        for x2 in range(1, 5):
            row = instance("mult", len(inst), x1, x2)
            inst.append(row)
            terms += term_rows("mult", row["instance_id"], x1, row["x2"], None, row["y"])
            for k in (0, 2):
                for seed in (0, 1):
                    answer = row["answer"] if rng.random() < 0.5 else str(row["y"] + 1)
                    preds.append(prediction("m", "mult", k, seed, row["instance_id"], answer,
                                            row["y"]))
    here = os.getcwd()
    os.chdir(root)
    try:
        instances = make_instances(Path("instances"), inst, terms, counts=counts.resolve(),
                                   counts_config=read_manifest(counts)["config"])
        make_predictions(Path("predictions") / "m", preds,
                         instances_fp=read_manifest(instances)["fingerprint"])
        world = World(counts=Path(counts.name), instances=Path("instances"),
                      predictions=Path("predictions"), instance_rows=[], term_rows=[],
                      prediction_rows=[], unigrams={}, pairs={}, triples={})
        run_gaps(options_for(world, Path("results"), boot_reps=20))
    finally:
        os.chdir(here)


@pytest.fixture(scope="module")
def project(spark, tmp_path_factory):
    """(project folder, the documents): a count with --hits of two small files, then gaps."""
    from freqgap.counting.job import run_count

    root = tmp_path_factory.mktemp("hitsq") / "p"
    docs = []
    for name, seed in (("a.jsonl", 3), ("b.jsonl.gz", 4)):
        texts = _texts(seed, 60)
        write_jsonl(root / "corpus" / name, texts)
        docs += [(str(root / "corpus" / name), n + 1, t) for n, t in enumerate(texts)]
    (root / "keys.txt").write_text("".join(" ".join(k) + "\n" for k in KEYS))
    rules = TermRules()
    settings = HitSettings(read_keys(root / "keys.txt", rules), LIMIT)
    run_count([str(root / "corpus")], str(root / "counts"), rules=rules, spark=spark,
              hits=settings)
    _gaps(root, root / "counts")
    return root, docs


@pytest.fixture(scope="module")
def without_hits(tmp_path_factory):
    """A gaps result over counts made without --hits."""
    from freqgap.gaps.run import run_gaps
    from tests.gaps.fixtures import options_for

    root = tmp_path_factory.mktemp("nohits")
    world = random_world(root / "w", seed=3, tasks=("mult",), models=("a",))
    run_gaps(options_for(world, root / "results", boot_reps=20))
    return root / "results"


def _json(capsys, results: Path, sql: str) -> list[dict]:
    rc = main(["query", "--results", str(results), sql, "--format", "json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return [json.loads(line) for line in out.splitlines()]


def _key(row: dict) -> tuple:
    return tuple(t for t in (row["t1"], row["t2"], row["t3"]) if t is not None)


def test_the_hits_view_is_the_parquet_as_written(project, capsys):
    root, docs = project
    written = pq.read_table(root / "counts" / "hits").to_pylist()
    got = _json(capsys, root / "results", "SELECT * FROM hits")
    assert got == written and list(got[0]) == list(written[0])
    assert [tuple(r.values()) for r in written] == plain_scan(docs, KEYS, TermRules(), LIMIT)


def test_hit_totals_equal_the_counts(project, capsys):
    root, docs = project
    counts = {(r["term"],): r["count"] for r in pq.read_table(root / "counts" / "unigrams").to_pylist()}
    counts.update({(r["t1"], r["t2"]): r["count"]
                   for r in pq.read_table(root / "counts" / "pairs").to_pylist()})
    counts.update({(r["t1"], r["t2"], r["t3"]): r["count"]
                   for r in pq.read_table(root / "counts" / "triples").to_pylist()})
    listed: dict[tuple, int] = {}
    for r in pq.read_table(root / "counts" / "hits").to_pylist():
        listed[_key(r)] = listed.get(_key(r), 0) + 1
    totals = _json(capsys, root / "results", "SELECT * FROM hit_totals")
    assert list(totals[0]) == ["n_terms", "t1", "t2", "t3", "total_units", "total_occurrences",
                               "listed"]
    assert {_key(r) for r in totals} == set(listed) == {k for k in HitSettings(KEYS).keys
                                                       if counts.get(k)}
    held = {}                       # total_units by a plain scan
    for row in plain_scan(docs, KEYS, TermRules(), 10 ** 6):
        held[tuple(t for t in row[1:4] if t is not None)] = row[-2]
    for r in totals:
        assert r["n_terms"] == len(_key(r))
        assert r["total_occurrences"] == counts[_key(r)]
        assert r["total_units"] == held[_key(r)]
        assert r["listed"] == listed[_key(r)] == min(LIMIT, r["total_units"])
    # The same check in SQL, against the counts view of the result.
    joined = _json(capsys, root / "results",
                   "SELECT count(*) AS n FROM hit_totals h JOIN counts c ON c.n_terms = h.n_terms "
                   "AND c.t1 = h.t1 AND c.t2 IS NOT DISTINCT FROM h.t2 AND c.t3 IS NOT DISTINCT "
                   "FROM h.t3 WHERE c.\"count\" = h.total_occurrences")
    assert joined == [{"n": len(totals)}]


def test_list_shows_both_among_the_views_for_questions(project, without_hits, capsys):
    root, _ = project
    assert main(["query", "--results", str(root / "results"), "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    internal = next(i for i, line in enumerate(lines) if line.startswith("internal steps"))
    named = {line.split()[0]: line for line in lines[1:internal]}
    assert {"hits", "hit_totals", "gaps", "counts"} <= set(named)
    assert "one row per listed unit" in named["hits"]
    assert "total_units and total_occurrences" in named["hit_totals"]
    assert "hits" not in lines[internal]
    assert main(["query", "--results", str(without_hits), "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert not {"hits", "hit_totals"} & {line.split()[0] for line in lines[1:]}
    assert "hit" not in lines[-1]


@pytest.mark.parametrize("sql", ["SELECT * FROM hits", "SELECT count(*) FROM Hit_Totals"])
def test_a_count_without_hits_says_how_to_get_them(without_hits, capsys, sql):
    rc = main(["query", "--results", str(without_hits), sql])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert "made without --hits" in err[0] and "--hits KEYS_FILE" in err[0]
    # The other views answer as before, and a CTE of that name is no view of the counts.
    assert _json(capsys, without_hits, "WITH hits AS (SELECT 1 AS n) SELECT n FROM hits") == [{"n": 1}]


def test_hits_follow_the_project_when_it_moves(project, capsys, tmp_path):
    root, _ = project
    written = pq.read_table(root / "counts" / "hits").to_pylist()
    moved = tmp_path / "elsewhere" / "renamed"
    moved.parent.mkdir()
    root.rename(moved)
    try:
        assert _json(capsys, moved / "results", "SELECT * FROM hits") == written
        assert len(_json(capsys, moved / "results", "SELECT * FROM hit_totals")) > 0
    finally:
        moved.rename(root)


def test_hit_lists_not_recorded_by_the_manifest_are_refused(project, capsys):
    root, _ = project
    stray = root / "counts" / "hits" / "part-999.parquet"
    stray.write_bytes((root / "counts" / "hits" / "part-000.parquet").read_bytes())
    try:
        rc = main(["query", "--results", str(root / "results"), "SELECT * FROM hits"])
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 2 and len(err) == 1 and "not the hit lists its _manifest.json records" in err[0]
    finally:
        stray.unlink()


def test_a_recount_is_refused_where_hits_are_read(project, capsys):
    root, _ = project
    counts = root / "counts"
    before = (counts / MANIFEST_NAME).read_text()
    manifest = json.loads(before)
    manifest.pop("fingerprint")
    manifest["totals"]["documents"] += 1         # another count run: another fingerprint
    write_manifest(counts, manifest)
    try:
        for view in ("hits", "hit_totals"):
            rc = main(["query", "--results", str(root / "results"), f"SELECT * FROM {view}"])
            err = capsys.readouterr().err
            assert rc == 2 and f"the view {view} would read" in err and "--allow-mixed" in err
        assert main(["query", "--results", str(root / "results"), "SELECT * FROM hit_totals",
                     "--allow-mixed"]) == 0
        assert "MIXED INPUTS: hit_totals read" in capsys.readouterr().err
    finally:
        (counts / MANIFEST_NAME).write_text(before)
