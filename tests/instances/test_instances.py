"""Instances and prompts against SPEC §3: operands, counts, shots, exclusion, exact text."""

from __future__ import annotations

import copy
import re
from collections import defaultdict

import pyarrow.parquet as pq
import pytest

from freqgap.config import ConfigError, load_conf
from freqgap.errors import UsageError
from freqgap.contract import ManifestError
from freqgap.instances import CountsError, build_instances_dir, load_tasks, resolve_grid
from freqgap.manifest import read_manifest
from tests.instances.counts_fixture import UNITS, default_counts, write_counts

ARITH = ["mult", "add", "mult_hash", "add_hash"]
TIME = ["min_sec", "hour_min", "day_hour", "week_day", "month_week", "year_month", "decade_year"]


@pytest.fixture(scope="module")
def conf():
    return load_conf("tasks")


@pytest.fixture(scope="module")
def built(tmp_path_factory, conf):
    base = tmp_path_factory.mktemp("inst")
    counts = default_counts(base / "counts")
    grid = resolve_grid(conf, "paper", ks=[0, 2, 4, 16], seeds=[0, 1, 2])
    build_instances_dir(counts, base / "out", grid, conf)
    out = base / "out"
    return {name: pq.read_table(out / f"{name}.parquet").to_pylist()
            for name in ("instances", "instance_terms", "prompts")} | {"dir": out}


def _by_task(rows):
    out = defaultdict(list)
    for r in rows:
        out[r["task"]].append(r)
    return out


def test_conf_has_the_eleven_tasks_and_paper_grid(conf):
    assert sorted(load_tasks(conf)) == sorted(ARITH + TIME)
    grid = resolve_grid(conf, "paper")
    assert grid.ks == (0, 2, 4, 8, 16) and grid.seeds == (0, 1, 2, 3, 4)
    assert len(grid.tasks) == 11


def test_operand_ranges_and_instance_counts(built):
    insts = _by_task(built["instances"])
    # Top 200 number terms: '7' (tie-breaker count), '0', '05', then 1..198 except 7;
    # at most 2 digits as distinct integers: 0..99 ('05' is 5).
    for task in ARITH:
        rows = insts[task]
        assert len(rows) == 100 * 50
        assert sorted({r["x1"] for r in rows}) == list(range(100))
        assert sorted({int(r["x2"]) for r in rows}) == list(range(1, 51))
        assert [r["instance_id"] for r in rows] == list(range(5000))
    # Unit pairs: 1..39 with each unit; ('100', unit) is among the top but has 3 digits.
    mult = {"min_sec": 60, "hour_min": 60, "day_hour": 24, "week_day": 7, "month_week": 4,
            "year_month": 12, "decade_year": 10}
    for task in TIME:
        rows = insts[task]
        assert [r["x1"] for r in rows] == list(range(1, 40))
        assert {r["x3"] for r in rows} == {mult[task]}
        assert all(r["y"] == r["x1"] * mult[task] for r in rows)


def test_answers_and_questions(built):
    insts = {(r["task"], r["x1"], r["x2"]): r for r in built["instances"]}
    assert insts[("mult", 7, "13")]["question"] == "What is 7 times 13?"
    assert insts[("mult", 7, "13")]["answer"] == "91"
    assert insts[("add", 7, "13")]["question"] == "What is 7 plus 13?"
    assert insts[("add", 7, "13")]["y"] == 20
    assert insts[("mult_hash", 7, "13")]["question"] == "What is 7 # 13?"
    assert insts[("mult_hash", 7, "13")]["y"] == 91
    assert insts[("add_hash", 7, "13")]["y"] == 20
    assert insts[("min_sec", 5, "minute")]["question"] == "What is 5 minutes in seconds?"
    assert insts[("decade_year", 3, "decade")]["question"] == "What is 3 decades in years?"
    assert insts[("decade_year", 3, "decade")]["answer"] == "30"
    assert insts[("year_month", 3, "year")]["x3"] == 12
    assert all(r["answer"] == str(r["y"]) for r in built["instances"])


def test_instance_terms(built):
    ids = {(r["task"], r["x1"], r["x2"]): r["instance_id"] for r in built["instances"]}
    terms = {(r["task"], r["instance_id"], r["freq_def"]): r for r in built["instance_terms"]}

    def get(task, x1, x2, fdef):
        r = terms[(task, ids[(task, x1, x2)], fdef)]
        return r["n_terms"], [t for t in (r["t1"], r["t2"], r["t3"]) if t is not None]

    assert get("mult", 7, "13", "1") == (1, ["7"])
    assert get("mult", 7, "13", "1,2") == (2, ["13", "7"])          # sorted as strings
    assert get("mult", 7, "13", "1,y") == (2, ["7", "91"])
    assert get("mult", 5, "5", "1,2") == (2, ["5", "5"])            # a multiset, as counted
    assert get("add", 10, "9", "1,y") == (2, ["10", "19"])
    assert get("year_month", 3, "year", "1,2") == (2, ["3", "year"])
    assert get("year_month", 3, "year", "1,2,3") == (3, ["12", "3", "year"])
    assert get("year_month", 3, "year", "1,2,y") == (3, ["3", "36", "year"])
    defs = defaultdict(set)
    for r in built["instance_terms"]:
        defs[r["task"]].add(r["freq_def"])
    assert defs["add_hash"] == {"1", "1,2", "1,y"}
    assert defs["week_day"] == {"1,2", "1,2,3", "1,2,y"}


def test_prompt_counts_and_shot_exclusion(built):
    insts = {(r["task"], r["instance_id"]): r for r in built["instances"]}
    n_inst = defaultdict(int)
    for r in built["instances"]:
        n_inst[r["task"]] += 1
    groups = defaultdict(list)
    for p in built["prompts"]:
        groups[(p["task"], p["k"], p["seed"])].append(p)
    # k=0 prompts do not depend on the seed: written once.
    assert {(t, s) for (t, k, s) in groups if k == 0} == {(t, 0) for t in ARITH + TIME}
    assert len(groups) == 11 * (1 + 3 * 3)
    for (task, k, seed), rows in groups.items():
        shot_ids = rows[0]["shot_ids"]
        assert len(shot_ids) == k == len(set(shot_ids))
        assert all(r["shot_ids"] == shot_ids and r["prefix"] == rows[0]["prefix"] for r in rows)

        def key(i):
            return tuple(sorted((str(insts[(task, i)]["x1"]), insts[(task, i)]["x2"])))
        shot_keys = {key(i) for i in shot_ids}
        test_ids = [r["instance_id"] for r in rows]
        assert len(set(test_ids)) == len(test_ids)
        excluded = {i for (t, i) in insts if t == task and key(i) in shot_keys}
        assert set(test_ids) == {i for (t, i) in insts if t == task} - excluded
        assert not set(shot_ids) & set(test_ids)
        if task in ARITH and k:
            # The commuted copy of a shot (when it exists) is left out too.
            a = insts[(task, shot_ids[0])]
            twin = [i for (t, i) in insts if t == task and insts[(t, i)]["x1"] == int(a["x2"])
                    and insts[(t, i)]["x2"] == str(a["x1"])]
            assert not set(twin) & set(test_ids)


def test_exact_prompt_strings(built):
    insts = {(r["task"], r["instance_id"]): r for r in built["instances"]}
    p0 = next(p for p in built["prompts"] if p["task"] == "mult" and p["k"] == 0
              and p["instance_id"] == 0)
    assert p0["prompt"] == "Q: What is 0 times 1?\nA:" and p0["prefix"] == ""
    for p in built["prompts"][::97]:
        shots = [insts[(p["task"], i)] for i in p["shot_ids"]]
        prefix = "".join(f"Q: {s['question']}\nA: {s['answer']}\n\n" for s in shots)
        q = insts[(p["task"], p["instance_id"])]["question"]
        assert p["prefix"] == prefix
        assert p["prompt"] == prefix + f"Q: {q}\nA:"
        assert p["answer"] == insts[(p["task"], p["instance_id"])]["answer"]
    p2 = next(p for p in built["prompts"] if p["task"] == "min_sec" and p["k"] == 2)
    assert re.fullmatch(r"(Q: What is \d+ minutes in seconds\?\nA: \d+\n\n){2}"
                        r"Q: What is \d+ minutes in seconds\?\nA:", p2["prompt"])
    assert not re.search(r"\b0\d", "".join(p["prompt"] for p in built["prompts"][::50]))


def test_shots_deterministic_nested_and_seed_dependent(built, tmp_path, conf):
    shots = {(p["task"], p["k"], p["seed"]): p["shot_ids"] for p in built["prompts"]}
    for task in ("mult", "year_month"):
        for seed in (0, 1, 2):
            assert shots[(task, 2, seed)] == shots[(task, 4, seed)][:2]
            assert shots[(task, 4, seed)] == shots[(task, 16, seed)][:4]
        assert shots[(task, 16, 0)] != shots[(task, 16, 1)]
    again = build_instances_dir(built["dir"].parent / "counts", tmp_path / "again",
                                resolve_grid(conf, "paper", tasks=["mult"], ks=[16], seeds=[1]),
                                conf)
    rows = pq.read_table(tmp_path / "again" / "prompts.parquet").to_pylist()
    assert rows[0]["shot_ids"] == shots[("mult", 16, 1)]
    assert again["totals"]["prompts"]["mult"] == len(rows)


def test_manifest_and_max_test_items(tmp_path, conf, built):
    m = read_manifest(built["dir"])
    assert m["stage"] == "instances" and m["totals"]["instances"]["mult"] == 5000
    assert m["totals"]["prompts_all"] == len(built["prompts"])
    grid = resolve_grid(conf, "demo")
    assert grid.max_test_items and set(grid.tasks) <= set(ARITH + TIME)
    grid = resolve_grid(conf, "paper", tasks=["add", "week_day"], ks=[2], seeds=[0, 1],
                        max_test_items=7)
    build_instances_dir(built["dir"].parent / "counts", tmp_path / "small", grid, conf)
    rows = pq.read_table(tmp_path / "small" / "prompts.parquet").to_pylist()
    assert len(rows) == 2 * 2 * 7
    assert {r["task"] for r in rows} == {"add", "week_day"}


def test_task_added_by_configuration(tmp_path, conf, built):
    conf2 = copy.deepcopy(conf)
    conf2["tasks"]["sub"] = {"kind": "binary", "question": "What is {x1} minus {x2}?",
                             "answer": "sub", "x1": "top_numbers", "x2_range": [1, 3],
                             "freq_defs": "arithmetic"}
    grid = resolve_grid(conf2, "paper", tasks=["sub"], ks=[2], seeds=[0])
    build_instances_dir(built["dir"].parent / "counts", tmp_path / "sub", grid, conf2)
    rows = pq.read_table(tmp_path / "sub" / "instances.parquet").to_pylist()
    assert len(rows) == 300 and rows[0]["question"] == "What is 0 minus 1?" and rows[0]["y"] == -1


def test_top_cutoff_ties_broken_by_term(tmp_path, conf):
    counts = write_counts(tmp_path / "c", {"9": 5, "10": 5, "8": 5, "3": 9}, {})
    conf2 = copy.deepcopy(conf)
    conf2["operand_rules"]["top_numbers"]["top"] = 3
    grid = resolve_grid(conf2, "paper", tasks=["mult"], ks=[0], seeds=[0])
    m = build_instances_dir(counts, tmp_path / "o", grid, conf2)
    assert m["config"]["x1"]["mult"] == [3, 8, 10]      # '10' < '8' < '9' as strings


def test_errors(tmp_path, conf, built):
    grid = resolve_grid(conf, "paper", tasks=["min_sec"], ks=[2], seeds=[0])
    (tmp_path / "nomanifest").mkdir()
    with pytest.raises(ManifestError, match="nomanifest: no _manifest.json"):
        build_instances_dir(tmp_path / "nomanifest", tmp_path / "o", grid, conf)
    only_numbers = write_counts(tmp_path / "c1", {"5": 3}, {("5", "6"): 2})
    with pytest.raises(CountsError, match="task min_sec: no \\(number, minute\\) pairs"):
        build_instances_dir(only_numbers, tmp_path / "o", grid, conf)
    no_unit = write_counts(tmp_path / "c2", {"5": 3}, {("5", "minute"): 2},
                           vocab=[u for u in UNITS if u != "minute"])
    with pytest.raises(CountsError, match="task min_sec: the unit word 'minute' was not counted"):
        build_instances_dir(no_unit, tmp_path / "o", grid, conf)
    assert not (tmp_path / "o" / "_manifest.json").exists()
    with pytest.raises(ConfigError, match="unknown task\\(s\\) nope"):
        resolve_grid(conf, "paper", tasks=["nope"])
    with pytest.raises(ConfigError, match="no grid 'huge'"):
        resolve_grid(conf, "huge")
    bad = copy.deepcopy(conf)
    bad["tasks"]["mult"]["answer"] = "pow"
    with pytest.raises(ConfigError, match="tasks.mult: answer 'pow' is not one of"):
        load_tasks(bad)
    with pytest.raises(UsageError, match="k=16 shots requested but the counts give only 1 instances"):
        g = resolve_grid(conf, "paper", tasks=["min_sec"], ks=[16], seeds=[0])
        build_instances_dir(write_counts(tmp_path / "c3", {"5": 3}, {("5", "minute"): 2}),
                            tmp_path / "o", g, conf)


def test_cli(tmp_path, built, capsys):
    from jobs.make_instances import main

    rc = main(["--counts", str(built["dir"].parent / "counts"), "--out", str(tmp_path / "o"),
               "--tasks", "add,day_hour", "--k", "0,2", "--seeds", "3", "--limit", "5"])
    assert rc == 0 and "prompts" in capsys.readouterr().out
    rows = pq.read_table(tmp_path / "o" / "prompts.parquet").to_pylist()
    assert {(r["task"], r["k"], r["seed"]) for r in rows} == {
        ("add", 0, 3), ("add", 2, 3), ("day_hour", 0, 3), ("day_hour", 2, 3)}
    assert main(["--counts", str(tmp_path / "missing"), "--out", str(tmp_path / "o2")]) == 2
    assert "missing" in capsys.readouterr().err
