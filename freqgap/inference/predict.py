"""The inference stage: prompts.parquet → predictions/<model>/ (SPEC §4, DATA.md).

Prompts are served per (task, k, seed) so the k shared shots are computed once
(freqgap.inference.generate). Output is chunked and resumable (freqgap.inference.writer);
with `shard=(i, N)` only the prompts of shard i are run, into `_shards/i-of-N/`, and
freqgap.inference.shards merges them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from freqgap.errors import FreqgapError
from freqgap.inference.generate import Generator, GroupStats
from freqgap.inference.models import ModelError, ModelInfo, load_model, resolve_model
from freqgap.inference.parse import score
from freqgap.inference.shards import check_complete, shard_dir, shard_mask
from freqgap.inference.writer import KEY, ChunkWriter, PredictionsError, part_files, read_keys
from freqgap.manifest import (MANIFEST_NAME, build_manifest, describe_local_inputs, now_iso,
                              read_manifest, write_manifest)
from freqgap.progress import Progress

REQUIRED_COLUMNS = ("task", "k", "seed", "instance_id", "prefix", "prompt", "answer")
GROUP = ("task", "k", "seed")


class PromptsError(FreqgapError, ValueError):
    """The prompts file is missing or lacks columns; the message names the file."""


def read_prompts(path: str | Path, columns: list[str] | None = None) -> pa.Table:
    """prompts.parquet (or a directory holding it), checked for the DATA.md columns."""
    path = Path(path)
    if path.is_dir():
        path = path / "prompts.parquet"
    if not path.exists():
        raise PromptsError(f"{path}: prompts file not found (run make_instances first)")
    names = pq.read_schema(path).names
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        raise PromptsError(f"{path}: missing column(s) {', '.join(missing)}; expected "
                           f"{', '.join(REQUIRED_COLUMNS)} (docs/DATA.md, instances/)")
    return pq.read_table(path, columns=columns or list(REQUIRED_COLUMNS))


def model_label(name_or_path: str, revision: str | None) -> str:
    """Directory/column name of a model: the alias or last path part, plus the revision
    when one was asked for explicitly (`pythia-70m-step1000`)."""
    base = Path(name_or_path.rstrip("/")).name or name_or_path
    return f"{base}-{revision}" if revision else base


def summarize(table: pa.Table) -> dict[str, Any]:
    """Row totals and accuracies for a manifest."""
    def acc(col: str, t: pa.Table) -> float | None:
        return None if t.num_rows == 0 else round(float(pc.mean(pc.cast(t.column(col), pa.float64())).as_py()), 6)

    per_task = {}
    for task in sorted(set(table.column("task").to_pylist())):
        t = table.filter(pc.equal(table.column("task"), task))
        per_task[task] = {"rows": t.num_rows, "accuracy": acc("correct", t),
                          "accuracy_lenient": acc("correct_lenient", t)}
    return {"rows": table.num_rows, "accuracy": acc("correct", table),
            "accuracy_lenient": acc("correct_lenient", table), "per_task": per_task}


def _group_bounds(keys: dict[str, list]) -> list[int]:
    """Row offsets where a new (task, k, seed) starts in key-sorted rows, plus the end."""
    n = len(keys["task"])
    return [0] + [i for i in range(1, n)
                  if any(keys[c][i] != keys[c][i - 1] for c in GROUP)] + [n]


def _check_context(gen: Generator, table: pa.Table, keys: dict[str, list], bounds: list[int],
                   info: ModelInfo, max_new: int) -> int:
    """Error before any work if the longest prompt of a group (by characters, then
    tokens) does not fit the model's context; returns the longest length in tokens."""
    if table.num_rows == 0:
        return 0
    chars = pc.utf8_length(table.column("prompt")).to_numpy()
    idx = [g0 + int(chars[g0:g1].argmax()) for g0, g1 in zip(bounds[:-1], bounds[1:])]
    texts = table.take(pa.array(idx)).column("prompt").to_pylist()
    lengths = [len(s) for s in gen.tokenize(texts)]
    worst = max(range(len(idx)), key=lambda j: lengths[j])
    _raise_if_too_long(lengths[worst], max_new, info, tuple(keys[c][idx[worst]] for c in KEY))
    return lengths[worst]


def _raise_if_too_long(n_tokens: int, max_new: int, info: ModelInfo, key: tuple) -> None:
    if n_tokens + max_new > info.context_length:
        raise ModelError(
            f"{info.model_id}: context length {info.context_length} tokens is shorter than "
            f"the longest prompt ({n_tokens} tokens + {max_new} new, key {key}); use a "
            "smaller k or a model with a longer context")


def predict(prompts_path: str | Path, out_dir: str | Path, model: str,
            revision: str | None = None, device: str | None = None, dtype: str | None = None,
            batch_size: int | None = None, chunk_size: int = 2000,
            shard: tuple[int, int] | None = None, reuse_prefix: bool = True,
            max_new_tokens: int = 5, label: str | None = None,
            progress_interval: float = 10.0, loaded=None,
            stop_after_chunks: int | None = None) -> dict[str, Any] | None:
    """Run `model` over the prompts; write predictions under `out_dir` (the model's
    directory). Returns the manifest, or None if stopped early (`stop_after_chunks`,
    used to test resumption)."""
    started = now_iso()
    model_dir = Path(out_dir)
    target = shard_dir(model_dir, shard) if shard else model_dir
    prompts = read_prompts(prompts_path)
    prompts = prompts.filter(shard_mask(prompts, shard))
    spec = resolve_model(model, revision) if loaded is None else None
    label = label or model_label(model, revision)
    if revision:
        rev = revision
    elif spec is not None and spec.revision:
        rev = spec.revision
    else:   # the hub's default branch, or a directory / an already loaded model
        rev = "main" if spec is not None and not spec.is_local else "local"
    if (target / MANIFEST_NAME).exists():
        done = read_manifest(target)
        now = describe_local_inputs([read_prompts_path(prompts_path)], checksum=True)[0]["sha256"]
        if done["inputs"] and done["inputs"][0].get("sha256") != now:
            raise PredictionsError(f"{target}: finished predictions of a different prompts "
                                   f"file than {prompts_path}; remove it or use another --out-root")
        return done
    writer = ChunkWriter(target, label, rev)
    all_keys = list(zip(*[prompts.column(c).to_pylist() for c in KEY]))
    expected = set(all_keys)
    stray = writer.done - expected
    if stray:
        raise PredictionsError(f"{target}: holds {len(stray)} rows that are not in {prompts_path} "
                               f"(e.g. {sorted(stray)[:2]}); it belongs to another prompts file")
    todo_mask = pa.array([k not in writer.done for k in all_keys])
    todo = prompts.filter(todo_mask).sort_by([(c, "ascending") for c in (*GROUP, "instance_id")])

    if loaded is None:
        model_obj, tokenizer, info = load_model(model, revision, device=device, dtype=dtype)
    else:
        model_obj, tokenizer, info = loaded
    if batch_size is None:
        batch_size = 256 if info.device.startswith("cuda") else 32
    progress = Progress(f"predict {label}", total=todo.num_rows, unit="prompts",
                        interval=progress_interval)
    gen = Generator(model_obj, tokenizer, max_new_tokens=max_new_tokens, batch_size=batch_size,
                    on_batch_size_change=lambda b: progress.update(
                        extra=f"out of memory: batch size now {b}", force=True))
    keys = {c: todo.column(c).to_pylist() for c in KEY}
    starts = _group_bounds(keys)
    longest = _check_context(gen, todo, keys, starts, info, max_new_tokens)
    stats = GroupStats()
    buffer: list[dict[str, Any]] = []
    chunks = 0
    for g0, g1 in zip(starts[:-1], starts[1:]):
        for p0 in range(g0, g1, chunk_size):
            p1 = min(p0 + chunk_size, g1)
            if buffer and len(buffer) + (p1 - p0) > chunk_size:
                writer.write(buffer)
                buffer, chunks = [], chunks + 1
                if stop_after_chunks is not None and chunks >= stop_after_chunks:
                    return None
            piece = todo.slice(p0, p1 - p0)
            answers = piece.column("answer").to_pylist()
            conts = gen.generate_group(piece.column("prefix")[0].as_py(),
                                       piece.column("prompt").to_pylist(),
                                       reuse=reuse_prefix, stats=stats)
            for j, cont in enumerate(conts):
                row = {"model": label, "revision": rev,
                       **{c: keys[c][p0 + j] for c in KEY}, "continuation": cont}
                row.update(score(cont, answers[j]))
                buffer.append(row)
            progress.update(advance=p1 - p0, extra=f"batch {gen.batch_size}")
    writer.write(buffer)
    progress.update(force=True, extra="done")
    written, _ = read_keys(part_files(target))
    check_complete(written, expected, str(target))
    table = pa.concat_tables(pq.read_table(f) for f in part_files(target)) if written else \
        pa.table({c: [] for c in ("task", "correct", "correct_lenient")})
    config = {"model": info.to_dict(), "label": label, "revision": rev,
              "max_new_tokens": max_new_tokens, "batch_size": batch_size,
              "final_batch_size": gen.batch_size, "chunk_size": chunk_size,
              "reuse_prefix": reuse_prefix, "shard": list(shard) if shard else None,
              "prompts": str(prompts_path), "decoding": "greedy, stop at newline or eos"}
    totals = summarize(table)
    totals.update(prefix_reused=stats.reused, prefix_fallback=stats.fallback,
                  longest_prompt_tokens=longest)
    manifest = build_manifest("predictions", config,
                              describe_local_inputs([read_prompts_path(prompts_path)], checksum=True),
                              totals, started)
    write_manifest(target, manifest)
    return manifest


def read_prompts_path(path: str | Path) -> Path:
    path = Path(path)
    return path / "prompts.parquet" if path.is_dir() else path
