"""Tiny counts/, instances/ and predictions/ directories that follow docs/DATA.md exactly.

Built with pyarrow (explicit schemas) and freqgap.manifest, so the gaps stage is tested
against the contract rather than against the other stages' code.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from freqgap.contract import count_settings
from freqgap.manifest import build_manifest, now_iso, read_manifest, write_manifest

COUNTS_CONFIG = {"window": 5, "max_order": 3, "number_rule": "strict", "max_digits": 6,
                 "vocab": ["second", "minute", "hour", "day", "week", "month", "year", "decade"],
                 "text_field": "text"}

UNIGRAMS = pa.schema([("term", pa.string()), ("kind", pa.string()), ("count", pa.int64())])
PAIRS = pa.schema([("t1", pa.string()), ("t2", pa.string()), ("count", pa.int64())])
TRIPLES = pa.schema([("t1", pa.string()), ("t2", pa.string()), ("t3", pa.string()),
                     ("count", pa.int64())])
INSTANCES = pa.schema([("task", pa.string()), ("instance_id", pa.int64()), ("x1", pa.int64()),
                       ("x2", pa.string()), ("x3", pa.int64()), ("y", pa.int64()),
                       ("question", pa.string()), ("answer", pa.string())])
TERMS = pa.schema([("task", pa.string()), ("instance_id", pa.int64()), ("freq_def", pa.string()),
                   ("n_terms", pa.int64()), ("t1", pa.string()), ("t2", pa.string()),
                   ("t3", pa.string())])
PREDICTIONS = pa.schema([("model", pa.string()), ("revision", pa.string()), ("task", pa.string()),
                         ("k", pa.int64()), ("seed", pa.int64()), ("instance_id", pa.int64()),
                         ("continuation", pa.string()), ("answer", pa.string()),
                         ("answer_lenient", pa.string()), ("correct", pa.bool_()),
                         ("correct_lenient", pa.bool_())])

UNITS = {"hour_min": ("hour", "minute", 60), "year_month": ("year", "month", 12)}


def write_table(path: Path, rows: list[dict[str, Any]], schema: pa.Schema) -> Path:
    """One Parquet file with an explicit schema (an empty list gives an empty file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cols = {f.name: [r.get(f.name) for r in rows] for f in schema}
    pq.write_table(pa.table(cols, schema=schema), path)
    return path


def key_of(terms: Iterable[str]) -> tuple[str, ...]:
    """A term key as the instances stage writes it: sorted as strings, duplicates kept."""
    return tuple(sorted(terms))


def make_counts(root: Path, unigrams: dict[str, int], pairs: dict[tuple[str, str], int],
                triples: dict[tuple[str, str, str], int], config: dict[str, Any] | None = None,
                parts: int = 2) -> Path:
    """counts/ with unigrams/, pairs/, triples/ split into `parts` files, and a manifest."""
    root.mkdir(parents=True, exist_ok=True)
    tables = {
        "unigrams": ([{"term": t, "kind": "number" if t.isdigit() else "word", "count": c}
                      for t, c in sorted(unigrams.items())], UNIGRAMS),
        "pairs": ([{"t1": a, "t2": b, "count": c} for (a, b), c in sorted(pairs.items())], PAIRS),
        "triples": ([{"t1": a, "t2": b, "t3": d, "count": c}
                     for (a, b, d), c in sorted(triples.items())], TRIPLES),
    }
    for name, (rows, schema) in tables.items():
        for i in range(parts):
            write_table(root / name / f"part-{i:05d}.parquet", rows[i::parts], schema)
    write_manifest(root, build_manifest("count_terms", config or COUNTS_CONFIG, [],
                                        {k: len(v[0]) for k, v in tables.items()}, now_iso(),
                                        plan_fingerprint=None,
                                        outputs={k: {"rows": len(v[0])} for k, v in tables.items()}))
    return root


def make_instances(root: Path, instances: list[dict[str, Any]], terms: list[dict[str, Any]],
                   counts: Path | None = None,
                   counts_config: dict[str, Any] | None = None) -> Path:
    """instances/ with instances.parquet and instance_terms.parquet, and a manifest that
    records the counts it was made from (their fingerprint, docs/DATA.md), or none."""
    write_table(root / "instances.parquet", instances, INSTANCES)
    write_table(root / "instance_terms.parquet", terms, TERMS)
    config = {"k": [0, 2], "seeds": [0, 1]}
    counts_fp = read_manifest(counts)["fingerprint"] if counts is not None else None
    write_manifest(root, build_manifest("instances", config, [],
                                        {"instances": len(instances), "terms": len(terms)},
                                        now_iso(),
                                        upstream={"counts": counts_fp, "counts_dir": str(counts)},
                                        counts_settings=count_settings(
                                            counts_config or COUNTS_CONFIG)))
    return root


def make_predictions(root: Path, rows: list[dict[str, Any]], parts: int = 1,
                     instances_fp: str | None = None) -> Path:
    """predictions/<model>/ with `parts` Parquet files and a manifest."""
    for i in range(parts):
        write_table(root / f"part-{i:05d}.parquet", rows[i::parts], PREDICTIONS)
    write_manifest(root, build_manifest("predictions",
                                        {"model": rows[0]["model"] if rows else None},
                                        [], {"rows": len(rows)}, now_iso(),
                                        upstream={"instances": instances_fp}))
    return root


def term_rows(task: str, instance_id: int, x1: int, x2: str, x3: int | None,
              y: int) -> list[dict[str, Any]]:
    """instance_terms rows of one instance under the definitions of its kind of task."""
    if x3 is None:
        defs = {"1": [str(x1)], "1,2": [str(x1), x2], "1,y": [str(x1), str(y)]}
    else:
        defs = {"1,2": [str(x1), x2], "1,2,3": [str(x1), x2, str(x3)],
                "1,2,y": [str(x1), x2, str(y)]}
    rows = []
    for d, terms in defs.items():
        key = key_of(terms)
        slots = list(key) + [None] * (3 - len(key))
        rows.append({"task": task, "instance_id": instance_id, "freq_def": d,
                     "n_terms": len(key), "t1": slots[0], "t2": slots[1], "t3": slots[2]})
    return rows


def instance(task: str, instance_id: int, x1: int, x2: int | str) -> dict[str, Any]:
    """One instance row as docs/DATA.md describes it."""
    if task in UNITS:
        unit, target, x3 = UNITS[task]
        y = x1 * x3
        return {"task": task, "instance_id": instance_id, "x1": x1, "x2": unit, "x3": x3, "y": y,
                "question": f"What is {x1} {unit}s in {target}s?", "answer": str(y)}
    op, y = {"mult": ("times", x1 * int(x2)), "add": ("plus", x1 + int(x2))}[task]
    return {"task": task, "instance_id": instance_id, "x1": x1, "x2": str(x2), "x3": None, "y": y,
            "question": f"What is {x1} {op} {x2}?", "answer": str(y)}


def prediction(model: str, task: str, k: int, seed: int, instance_id: int, answer: str, y: int,
               revision: str = "main") -> dict[str, Any]:
    """One prediction row; correct by the paper rule."""
    return {"model": model, "revision": revision, "task": task, "k": k, "seed": seed,
            "instance_id": instance_id, "continuation": f" {answer}\n", "answer": answer,
            "answer_lenient": answer, "correct": answer == str(y),
            "correct_lenient": answer == str(y)}


@dataclasses.dataclass
class World:
    """A fixture: the three input directories and the rows written into them."""

    counts: Path
    instances: Path
    predictions: Path          # the parent of the model directories
    instance_rows: list[dict[str, Any]]
    term_rows: list[dict[str, Any]]
    prediction_rows: list[dict[str, Any]]
    unigrams: dict[str, int]
    pairs: dict[tuple[str, str], int]
    triples: dict[tuple[str, str, str], int]


def random_world(root: Path, seed: int = 0, models: tuple[str, ...] = ("tiny-a", "tiny-b"),
                 tasks: tuple[str, ...] = ("mult", "add", "hour_min"), ks: tuple[int, ...] = (0, 2),
                 seeds: tuple[int, ...] = (0, 1), n_x1: int = 30, n_x2: int = 4,
                 p_unseen: float = 0.1, n_x1_of: dict[str, int] | None = None) -> World:
    """A random but consistent world: random counts (some keys absent), instances of the
    given tasks, and predictions whose accuracy rises with ω{x1}, for several models.
    n_x1_of gives some tasks another number of x1 values than n_x1."""
    rng = np.random.default_rng(seed)
    inst, terms = [], []
    iid = 0
    for task in tasks:
        x2s = [None] if task in UNITS else list(range(1, n_x2 + 1))
        for x1 in range((n_x1_of or {}).get(task, n_x1)):
            for x2 in x2s:
                row = instance(task, iid, x1, x2 if x2 is not None else "")
                inst.append(row)
                terms += term_rows(task, iid, x1, row["x2"], row["x3"], row["y"])
                iid += 1
    omega: dict[tuple[str, ...], int] = {}
    decided: set[tuple[str, ...]] = set()
    for t in terms:
        key = tuple(v for v in (t["t1"], t["t2"], t["t3"]) if v is not None)
        if key in decided:
            continue
        decided.add(key)
        if rng.random() >= p_unseen:
            omega[key] = int(rng.zipf(1.6)) * int(rng.integers(1, 4))
    uni = {k[0]: c for k, c in omega.items() if len(k) == 1}
    pairs = {(k[0], k[1]): c for k, c in omega.items() if len(k) == 2}
    triples = {(k[0], k[1], k[2]): c for k, c in omega.items() if len(k) == 3}
    # A few count rows no instance needs, as in a real corpus.
    uni.update({"999999": 5, "hour": 1000, "minute": 700})
    pairs[("123", "456")] = 3
    omega1 = {r["x1"]: uni.get(str(r["x1"]), 0) for r in inst}
    preds_by_model: dict[str, list[dict[str, Any]]] = {}
    for mi, model in enumerate(models):
        rows = []
        for task in tasks:
            for k in ks:
                for s in seeds:
                    for r in (r for r in inst if r["task"] == task):
                        if rng.random() < 0.15:    # a shot, or left out: not a test row
                            continue
                        p = min(0.95, 0.1 + 0.12 * np.log1p(omega1[r["x1"]]) + 0.05 * mi + 0.02 * k)
                        ok = rng.random() < p
                        ans = r["answer"] if ok else str(r["y"] + 1)
                        rows.append(prediction(model, task, k, s, r["instance_id"], ans, r["y"]))
        preds_by_model[model] = rows
    counts = make_counts(root / "counts", uni, pairs, triples)
    instances_dir = make_instances(root / "instances", inst, terms, counts=counts)
    instances_fp = read_manifest(instances_dir)["fingerprint"]
    for model, rows in preds_by_model.items():
        make_predictions(root / "predictions" / model, rows, parts=2, instances_fp=instances_fp)
    return World(counts=counts, instances=instances_dir, predictions=root / "predictions",
                 instance_rows=inst, term_rows=terms,
                 prediction_rows=[r for rows in preds_by_model.values() for r in rows],
                 unigrams=uni, pairs=pairs, triples=triples)


def build_world(root: Path, specs: list[tuple[str, int, Any, list[bool]]],
                unigrams: dict[str, int], pairs: dict[tuple[str, str], int] | None = None,
                triples: dict[tuple[str, str, str], int] | None = None, model: str = "m",
                k: int = 2, counts_config: dict[str, Any] | None = None,
                instances_counts_config: dict[str, Any] | None = None) -> World:
    """A hand-made world: one instance per spec (task, x1, x2, correct per seed), the given
    counts (absent keys have ω = 0), one model at one k; seed i of an instance is correct
    iff its list says so (a shorter list = fewer seeds for that instance)."""
    inst, terms, preds = [], [], []
    for iid, (task, x1, x2, correct) in enumerate(specs):
        row = instance(task, iid, x1, x2)
        inst.append(row)
        terms += term_rows(task, iid, x1, row["x2"], row["x3"], row["y"])
        for seed, ok in enumerate(correct):
            ans = row["answer"] if ok else str(row["y"] + 1)
            preds.append(prediction(model, task, k, seed, iid, ans, row["y"]))
    pairs, triples = pairs or {}, triples or {}
    counts = make_counts(root / "counts", unigrams, pairs, triples, config=counts_config)
    inst_counts = counts
    if instances_counts_config is not None and instances_counts_config != counts_config:
        # The instances were made from other counts (with these settings) than the given ones.
        inst_counts = make_counts(root / "counts_of_instances", unigrams, pairs, triples,
                                  config=instances_counts_config)
    instances_dir = make_instances(root / "instances", inst, terms, counts=inst_counts,
                                   counts_config=instances_counts_config or counts_config)
    make_predictions(root / "predictions" / model, preds,
                     instances_fp=read_manifest(instances_dir)["fingerprint"])
    return World(counts=counts, instances=instances_dir, predictions=root / "predictions",
                 instance_rows=inst, term_rows=terms, prediction_rows=preds, unigrams=unigrams,
                 pairs=pairs, triples=triples)


def options_for(world: World, results: Path, **overrides: Any):
    """GapsOptions reading the world's directories (conf/gaps.yaml for everything else)."""
    from freqgap.gaps.options import options_from_conf

    overrides.setdefault("make_plots", False)
    overrides.setdefault("boot_reps", 200)
    return options_from_conf(counts=str(world.counts), instances=str(world.instances),
                             predictions=str(world.predictions) + "/*/", results=str(results),
                             **overrides)
