"""Splitting the prompt set into N shards and merging their predictions.

A prompt's shard depends only on its key (task, k, seed, instance_id), so any machine
can compute its share from the same prompts file. The merge checks that every prompt has
exactly one prediction before it writes the model's directory and manifest.
"""

from __future__ import annotations

import re
import shutil
import zlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from freqgap.errors import InputMismatchError, UsageError
from freqgap.inference.fingerprint import (FINGERPRINT_NAME, differences, digest,
                                           prompts_upstream)
from freqgap.outdir import DirLock
from freqgap.inference.prompts import read_prompts, read_prompts_path, summarize
from freqgap.inference.writer import KEY, PredictionsError, part_files, read_keys
from freqgap.manifest import (MANIFEST_NAME, build_manifest, dataset_records,
                              describe_local_inputs, now_iso, read_manifest, write_manifest)

SHARDS_DIR = "_shards"   # leading underscore: ignored by Parquet dataset readers


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """'i/N' (0 <= i < N) → (i, N); None stays None."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m or int(m.group(2)) < 1 or int(m.group(1)) >= int(m.group(2)):
        raise UsageError(f"--shard {text!r}: expected i/N with 0 <= i < N, e.g. 0/4")
    return int(m.group(1)), int(m.group(2))


def shard_of(task: str, k: int, seed: int, instance_id: int, n_shards: int) -> int:
    """The shard of one prompt key (stable across machines and Python runs)."""
    return zlib.crc32(f"{task}|{k}|{seed}|{instance_id}".encode()) % n_shards


def shard_mask(table: pa.Table, shard: tuple[int, int] | None) -> pa.Array:
    """Boolean mask of the rows of `table` (with KEY columns) that belong to `shard`."""
    if shard is None:
        return pa.array([True] * table.num_rows)
    i, n = shard
    cols = [table.column(c).to_pylist() for c in KEY]
    return pa.array([shard_of(*key, n) == i for key in zip(*cols)])


def shard_dir(model_dir: str | Path, shard: tuple[int, int]) -> Path:
    return Path(model_dir) / SHARDS_DIR / f"{shard[0]}-of-{shard[1]}"


def check_complete(keys: list[tuple], expected: set[tuple], where: str) -> None:
    """Every expected key exactly once, nothing else; errors list a few examples."""
    seen: set[tuple] = set()
    doubled = []
    for key in keys:
        if key in seen:
            doubled.append(key)
        seen.add(key)
    missing = expected - seen
    extra = seen - expected
    problems = []
    if doubled:
        problems.append(f"{len(doubled)} doubled rows (e.g. {sorted(doubled)[:3]})")
    if missing:
        problems.append(f"{len(missing)} missing rows (e.g. {sorted(missing)[:3]})")
    if extra:
        problems.append(f"{len(extra)} rows not in the prompts file (e.g. {sorted(extra)[:3]})")
    if problems:
        raise PredictionsError(f"{where}: " + "; ".join(problems) + " (key: task, k, seed, "
                               "instance_id)")


def merge_shards(model_dir: str | Path, prompts_path: str | Path) -> dict[str, Any]:
    """Merge `model_dir/_shards/*-of-N` into `model_dir`, checking nothing is missing or
    doubled; one merge (or run) at a time per directory."""
    model_dir = Path(model_dir)
    if (model_dir / MANIFEST_NAME).exists():
        return read_manifest(model_dir, stage="predictions")     # merged before
    if not (model_dir / SHARDS_DIR).is_dir():
        raise PredictionsError(f"{model_dir}: no shard directories under {SHARDS_DIR}/ (run "
                               "the shards with --shard i/N first)")
    with DirLock(model_dir):
        return _merge(model_dir, prompts_path)


def _merge(model_dir: Path, prompts_path: str | Path) -> dict[str, Any]:
    started = now_iso()
    dirs = sorted((model_dir / SHARDS_DIR).glob("*-of-*"))
    if not dirs:
        raise PredictionsError(f"{model_dir}: no shard directories under {SHARDS_DIR}/")
    ns = {int(d.name.split("-of-")[1]) for d in dirs}
    if len(ns) != 1:
        raise PredictionsError(f"{model_dir}: shards of different splits {sorted(ns)} present")
    n = ns.pop()
    present = {int(d.name.split("-of-")[0]) for d in dirs}
    absent = sorted(set(range(n)) - present)
    unfinished = [d.name for d in dirs if not (d / MANIFEST_NAME).exists()]
    if absent or unfinished:
        raise PredictionsError(
            f"{model_dir}: cannot merge {n} shards: missing shard(s) {absent or 'none'}, "
            f"unfinished shard(s) {unfinished or 'none'} (rerun them with --shard i/{n})")
    if part_files(model_dir) and (model_dir / FINGERPRINT_NAME).exists():
        raise PredictionsError(f"{model_dir}: also holds unsharded predictions in progress; "
                               "merge into another directory or remove them")
    for f in part_files(model_dir):
        f.unlink()          # the output of a merge killed before its manifest: redone
    files = [f for d in dirs for f in part_files(d)]
    keys, models = read_keys(files)
    if len(models) != 1:
        raise PredictionsError(f"{model_dir}: shards hold different models {sorted(models)}")
    prompts = read_prompts(prompts_path, columns=list(KEY))
    expected = set(zip(*[prompts.column(c).to_pylist() for c in KEY]))
    check_complete(keys, expected, str(model_dir))
    table = pa.concat_tables(pq.read_table(f) for f in files)
    table = table.sort_by([(c, "ascending") for c in KEY])
    tmp = model_dir / ".part-00000.parquet.tmp"
    pq.write_table(table, tmp, compression="zstd")
    tmp.rename(model_dir / "part-00000.parquet")
    shard_manifests = [read_manifest(d, stage="predictions") for d in dirs]
    fields = [dict(m["config"].get("fingerprint_fields") or {}, shard=None)
              for m in shard_manifests]
    for d, f in zip(dirs, fields):
        if f != fields[0]:
            raise InputMismatchError(f"{model_dir}: shard {d.name} was made with other settings "
                                     f"than {dirs[0].name} ({'; '.join(differences(fields[0], f))}); "
                                     "rerun it with the same options")
    prompts_file = read_prompts_path(prompts_path)
    inputs = describe_local_inputs([prompts_file], checksum=True)
    if fields[0].get("prompts_sha256") not in (None, inputs[0]["sha256"]):
        raise InputMismatchError(f"{model_dir}: shards were run on another prompts file than "
                                 f"{prompts_file}; merge with the same --prompts")
    config = dict(shard_manifests[0]["config"])
    config["shard"] = None
    config["merged_from"] = [d.name for d in dirs]
    config["fingerprint_fields"] = fields[0]
    manifest = build_manifest(
        "predictions", config, inputs, summarize(table), started,
        upstream={"instances": prompts_upstream(prompts_file)},
        settings_fingerprint=digest(fields[0]),
        weights_sha256=shard_manifests[0].get("weights_sha256"),
        files=dataset_records(model_dir))
    write_manifest(model_dir, manifest)
    shutil.rmtree(model_dir / SHARDS_DIR)
    return manifest
