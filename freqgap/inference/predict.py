"""The inference stage: prompts.parquet → predictions/<name>[-<revision>]/ (SPEC §4, DATA.md).

Prompts are served per (task, k, seed) through the model interface
(freqgap.inference.lm.LM.generate_until), with the k shared shots as the prefix hint so a
backend computes them once. Output is chunked and resumable (freqgap.inference.writer);
a rerun continues only the same computation (freqgap.inference.fingerprint), one run at a
time per directory (freqgap.outdir). With `shard=(i, N)` only the prompts of shard
i are run, into `_shards/i-of-N/`, and freqgap.inference.shards merges them.
Bad options, names and models fail before the output directory exists.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from freqgap.errors import InputMismatchError, UsageError
from freqgap.inference.checksums import cached_sha256
from freqgap.inference.fingerprint import (FINGERPRINT_NAME, digest, fingerprint_fields,
                                           prompts_upstream, read_fingerprint,
                                           refuse_if_different, write_fingerprint)
from freqgap.inference.hf import HFCausalLM
from freqgap.inference.lm import LM, NEWLINE, GenerateRequest, StopRule, get_lm
from freqgap.outdir import LOCK_NAME, DirectoryBusyError, DirLock
from freqgap.inference.models import ModelError, resolve_model
from freqgap.inference.parse import score
from freqgap.inference.prompts import (PromptsError, read_prompts, read_prompts_path,
                                       summarize)
from freqgap.inference.shards import check_complete, shard_dir, shard_mask
from freqgap.inference.writer import KEY, ChunkWriter, part_files, read_keys
from freqgap.manifest import (MANIFEST_NAME, build_manifest, damaged_files, dataset_records,
                              describe_local_inputs, now_iso, read_manifest, write_manifest)
from freqgap.progress import Progress

GROUP = ("task", "k", "seed")
__all__ = ["Prompts", "PromptsError", "load_prompts", "model_label", "prediction_dir",
           "predict", "predict_revisions", "resolve_revision"]


@dataclass(frozen=True)
class Prompts:
    """A prompts file read once: its path, sha256 and table (shared by many revisions)."""

    path: Path
    sha256: str
    table: pa.Table
    instances_fingerprint: str | None    # of the instances directory holding the file


def load_prompts(path: str | Path) -> Prompts:
    """Read and check prompts.parquet (or the instances directory holding it)."""
    table = read_prompts(path)
    file = read_prompts_path(path)
    return Prompts(file, cached_sha256(file), table, prompts_upstream(file))


def model_label(name_or_path: str, revision: str | None = None) -> str:
    """The alias or last path part, plus `-<revision>` when one is given (directory names:
    `pythia-70m-step1000`). Rows keep model and revision in separate columns."""
    base = Path(name_or_path.rstrip("/")).name or name_or_path
    return f"{base}-{revision}" if revision else base


def prediction_dir(out_root: str | Path, name: str, revision: str | None) -> Path:
    """`<out_root>/<name>` or, for an explicit revision, `<out_root>/<name>-<revision>`."""
    return Path(out_root) / (f"{name}-{revision}" if revision else name)


def _group_bounds(keys: dict[str, list]) -> list[int]:
    """Row offsets where a new (task, k, seed) starts in key-sorted rows, plus the end."""
    n = len(keys["task"])
    return [0] + [i for i in range(1, n)
                  if any(keys[c][i] != keys[c][i - 1] for c in GROUP)] + [n]


def _check_context(lm: LM, table: pa.Table, keys: dict[str, list], bounds: list[int],
                   max_new: int) -> int:
    """Error before any work if the longest prompt of a group (by characters, then
    tokens) does not fit the model's context; returns the longest length in tokens."""
    if table.num_rows == 0:
        return 0
    chars = pc.utf8_length(table.column("prompt")).to_numpy()
    idx = [g0 + int(chars[g0:g1].argmax()) for g0, g1 in zip(bounds[:-1], bounds[1:])]
    texts = table.take(pa.array(idx)).column("prompt").to_pylist()
    lengths = [len(lm.encode(s)) for s in texts]
    worst = max(range(len(idx)), key=lambda j: lengths[j])
    if lengths[worst] + max_new > lm.max_length:
        key = tuple(keys[c][idx[worst]] for c in KEY)
        raise ModelError(
            f"{lm.model_id}: context length {lm.max_length} tokens is shorter than the longest "
            f"prompt ({lengths[worst]} tokens + {max_new} new, key {key}); use a smaller k or "
            "a model with a longer context")
    return lengths[worst]


def _validate(chunk_size: int, max_new_tokens: int, batch_size: int | None) -> None:
    for flag, value in (("--chunk-size", chunk_size), ("--max-new-tokens", max_new_tokens),
                        ("--batch-size", batch_size)):
        if value is not None and (not isinstance(value, int) or value < 1):
            raise UsageError(f"{flag} {value}: must be a whole number of at least 1")


def _created_dirs(target: Path) -> list[Path]:
    """The directories from `target` up that do not exist yet (deepest first)."""
    out, d = [], target
    while not d.exists():
        out.append(d)
        d = d.parent
    return out


def _cleanup_failed(target: Path, created: list[Path]) -> None:
    """After a failure: remove what this run created if it holds no prediction rows, so a
    failed run leaves no empty directory behind (it would stop `make gaps`)."""
    if not target.exists() or part_files(target) or (target / MANIFEST_NAME).exists():
        return
    for name in (FINGERPRINT_NAME, LOCK_NAME):
        (target / name).unlink(missing_ok=True)
    for stale in target.glob(".part-*.tmp"):
        stale.unlink()
    for d in created:
        try:
            d.rmdir()
        except OSError:
            break     # not empty (something else lives there): leave it


def _discard(target: Path) -> None:
    """--force: remove earlier predictions (chunks, fingerprint, manifest, shards)."""
    for f in part_files(target):
        f.unlink()
    for name in (MANIFEST_NAME, FINGERPRINT_NAME):
        (target / name).unlink(missing_ok=True)
    for stale in target.glob(".part-*.tmp"):
        stale.unlink()


def predict(prompts_path: str | Path | Prompts, out_dir: str | Path, model: str | LM, *,
            revision: str | None = None, device: str | None = None, dtype: str | None = None,
            batch_size: int | None = None, chunk_size: int = 2000,
            shard: tuple[int, int] | None = None, reuse_prefix: bool = True,
            max_new_tokens: int = 5, stop: StopRule = NEWLINE, label: str | None = None,
            revision_label: str | None = None, force: bool = False,
            progress_interval: float = 10.0, verbose: bool = False) -> dict[str, Any]:
    """Run `model` (a name for get_lm, or a loaded LM) over the prompts into `out_dir`.

    Rows carry `model` = `label` (default: the alias or last path part) and `revision` =
    `revision_label` (default: the revision loaded; `local` for a directory). A finished
    directory with the same fingerprint is returned as it is; one with other settings, or
    unfinished chunks of other settings, is refused unless `force` (then discarded).
    `revision`, `batch_size`, `device`, `dtype` and `verbose` (transformers' loading logs)
    apply when `model` is a name. Returns the manifest.
    """
    started = now_iso()
    _validate(chunk_size, max_new_tokens, batch_size)
    prompts = prompts_path if isinstance(prompts_path, Prompts) else load_prompts(prompts_path)
    if isinstance(model, str):
        resolve_model(model, revision)               # a bad name fails before any directory
        label = label or model_label(model)
    elif any(v is not None for v in (revision, batch_size, device, dtype)):
        raise UsageError("revision, batch size, device and dtype are set when an LM is built, "
                         "not when a loaded LM is passed to predict")
    else:
        label = label or model_label(model.name)
    model_dir = Path(out_dir)
    target = shard_dir(model_dir, shard) if shard else model_dir
    created = _created_dirs(target)
    lock = DirLock(target)
    try:
        target.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except DirectoryBusyError:
        raise                  # the other run's directory and lock: leave them alone
    except OSError as exc:
        _cleanup_failed(target, created)
        raise UsageError(f"{target}: cannot create or write the output directory "
                         f"({exc.strerror or exc}); choose another --out") from None
    except BaseException:
        _cleanup_failed(target, created)
        raise
    lm = None
    settings = dict(prompts_sha256=prompts.sha256, label=label, max_new_tokens=max_new_tokens,
                    stop=stop, reuse_prefix=reuse_prefix, shard=shard)
    try:
        if isinstance(model, str) and not force and (target / MANIFEST_NAME).exists():
            # A finished directory: compare settings without loading the weights.
            ident = HFCausalLM.identity(model, revision, device, dtype, batch_size)
            if ident is not None:
                fields = fingerprint_fields(lm=ident, revision=revision_label or ident.revision,
                                            batch_size=ident.batch_size, **settings)
                done = _previous(target, fields, force)
                if done is not None:
                    return done
        lm = get_lm(model, revision=revision, device=device, dtype=dtype,
                    batch_size=batch_size, verbose=verbose) if isinstance(model, str) else model
        rev = revision_label or lm.revision
        fields = fingerprint_fields(lm=lm, revision=rev,
                                    batch_size=getattr(lm, "batch_size", None), **settings)
        done = _previous(target, fields, force)
        if done is not None:
            return done
        write_fingerprint(target, fields)
        return _run(prompts, target, lm, label, rev, fields, stop=stop, shard=shard,
                    reuse_prefix=reuse_prefix, max_new_tokens=max_new_tokens,
                    chunk_size=chunk_size, progress_interval=progress_interval,
                    started=started)
    except BaseException:
        _cleanup_failed(target, created)
        raise
    finally:
        lock.release()
        if lm is not None and isinstance(model, str):
            lm.close()


def _previous(target: Path, fields: dict[str, Any], force: bool) -> dict[str, Any] | None:
    """The finished manifest when it has these settings; refuse other or unknown settings
    (with `force`, discard them); None when there is work to do (fresh or resumable)."""
    finished = (target / MANIFEST_NAME).exists()
    stored = (read_manifest(target, stage="predictions", files=False).get("config", {}).get(
        "fingerprint_fields") if finished else read_fingerprint(target))
    if stored is None:
        if finished or part_files(target):
            if not force:
                raise InputMismatchError(
                    f"{target}: holds predictions without a fingerprint (made by an older "
                    "freqgap), so their settings are unknown; use a new --out/--name, or "
                    "--force to discard them")
            _discard(target)
        return None
    if stored != fields:
        if not force:
            refuse_if_different(target, stored, fields)
        _discard(target)
        return None
    if finished and _reopen_if_damaged(target):
        return None                  # the same settings: recompute the damaged chunks
    return read_manifest(target, stage="predictions") if finished else None


def _reopen_if_damaged(target: Path) -> bool:
    """A finished directory (of this run's settings) whose chunks differ from its manifest
    (one deleted, edited or added) becomes unfinished again: the damaged chunks are
    removed, the settings fingerprint put back and the manifest removed, so the run
    recomputes just those rows. True when it did so."""
    manifest = read_manifest(target, stage="predictions", files=False)
    damaged = damaged_files(target, manifest)
    fields = (manifest.get("config") or {}).get("fingerprint_fields")
    if not damaged or fields is None:
        return False
    write_fingerprint(target, fields)
    for path, _ in damaged:          # before the manifest: a kill here is found again
        path.unlink(missing_ok=True)
    (target / MANIFEST_NAME).unlink()
    path, what = damaged[0]
    print(f"{path}: {what}; recomputing the rows of {len(damaged)} chunk(s)", file=sys.stderr,
          flush=True)
    return True


def _run(prompts: Prompts, target: Path, lm: LM, label: str, rev: str,
         fields: dict[str, Any], *, stop: StopRule, shard: tuple[int, int] | None,
         reuse_prefix: bool, max_new_tokens: int, chunk_size: int, progress_interval: float,
         started: str) -> dict[str, Any]:
    table = prompts.table.filter(shard_mask(prompts.table, shard))
    writer = ChunkWriter(target, label, rev)
    all_keys = list(zip(*[table.column(c).to_pylist() for c in KEY]))
    expected = set(all_keys)
    stray = writer.done - expected
    if stray:
        raise PromptsError(f"{target}: holds {len(stray)} rows that are not in {prompts.path} "
                           f"(e.g. {sorted(stray)[:2]}); it belongs to another prompts file")
    todo = table.filter(pa.array([k not in writer.done for k in all_keys]))
    todo = todo.sort_by([(c, "ascending") for c in (*GROUP, "instance_id")])
    progress = Progress(f"predict {label}" + (f" @ {rev}" if rev not in ("local", "main") else ""),
                        total=todo.num_rows, unit="prompts", interval=progress_interval)
    if hasattr(lm, "on_batch_size_change"):
        lm.on_batch_size_change = lambda b: progress.update(
            extra=f"out of memory: batch size now {b}", force=True)
    keys = {c: todo.column(c).to_pylist() for c in KEY}
    starts = _group_bounds(keys)
    longest = _check_context(lm, todo, keys, starts, max_new_tokens)
    buffer: list[dict[str, Any]] = []
    for g0, g1 in zip(starts[:-1], starts[1:]):
        for p0 in range(g0, g1, chunk_size):
            p1 = min(p0 + chunk_size, g1)
            if buffer and len(buffer) + (p1 - p0) > chunk_size:
                writer.write(buffer)
                buffer = []
            piece = todo.slice(p0, p1 - p0)
            answers = piece.column("answer").to_pylist()
            prefix = piece.column("prefix")[0].as_py() if reuse_prefix else ""
            conts = lm.generate_until([GenerateRequest(p, max_new_tokens, stop, prefix)
                                       for p in piece.column("prompt").to_pylist()])
            for j, cont in enumerate(conts):
                row = {"model": label, "revision": rev,
                       **{c: keys[c][p0 + j] for c in KEY}, "continuation": cont}
                row.update(score(cont, answers[j]))
                buffer.append(row)
            extra = f"batch {lm.batch_size}" if hasattr(lm, "batch_size") else ""
            progress.update(advance=p1 - p0, extra=extra)
    writer.write(buffer)
    progress.update(force=True, extra="done")
    written, _ = read_keys(part_files(target))
    check_complete(written, expected, str(target))
    out = pa.concat_tables(pq.read_table(f) for f in part_files(target)) if written else \
        pa.table({c: pa.array([], pa.bool_()) if c.startswith("correct") else [] for c in
                  ("task", "correct", "correct_lenient")})
    stats = getattr(lm, "stats", None)
    config = {"model": lm.describe(), "label": label, "revision": rev,
              "max_new_tokens": max_new_tokens, "stop": stop.describe(),
              "batch_size": getattr(lm, "batch_size", None), "chunk_size": chunk_size,
              "reuse_prefix": reuse_prefix, "shard": list(shard) if shard else None,
              "prompts": str(prompts.path), "decoding": "greedy",
              "fingerprint_fields": fields}
    totals = summarize(out)
    totals.update(longest_prompt_tokens=longest)
    if stats is not None:
        totals.update(prefix_reused=stats.reused, prefix_fallback=stats.fallback)
    inputs = describe_local_inputs([prompts.path])
    inputs[0]["sha256"] = prompts.sha256
    manifest = build_manifest("predictions", config, inputs, totals, started,
                              settings_fingerprint=digest(fields),
                              upstream={"instances": prompts.instances_fingerprint},
                              weights_sha256=lm.weights_sha256, files=dataset_records(target))
    write_manifest(target, manifest)
    (target / FINGERPRINT_NAME).unlink(missing_ok=True)   # the manifest holds it now
    return manifest


def resolve_revision(model: str, revision: str) -> tuple[str, str | None]:
    """(what to load, hub revision) for one entry of `--revisions`: for a local directory,
    its checkpoint subdirectory `<model>/<revision>/` (a trainer saves `step<N>/`), which
    must hold a config.json; otherwise the hub revision `revision` of `model`."""
    root = Path(model).expanduser()
    if root.is_dir():
        sub = root / revision
        if not (sub / "config.json").is_file():
            found = sorted(p.name for p in root.iterdir() if (p / "config.json").is_file())
            raise UsageError(f"--revisions {revision}: {sub} holds no checkpoint (config.json); "
                             f"checkpoints in {root}: {', '.join(found) or 'none'}")
        return str(sub), None
    return model, revision


def predict_revisions(prompts_path: str | Path, out_root: str | Path, model: str,
                      revisions: Sequence[str], *, name: str | None = None,
                      **kwargs: Any) -> list[dict[str, Any]]:
    """Predictions of `model` at each revision, prompts read once, one model loaded at a
    time, into `<out_root>/<name>-<revision>/`; every row has model = `name` and revision =
    the revision, so the gaps group and join per revision. Returns the manifests."""
    if not revisions:
        raise UsageError("--revisions: give at least one revision")
    if len(set(revisions)) != len(revisions):
        raise UsageError(f"--revisions {','.join(revisions)}: a revision is listed twice")
    name = name or model_label(model)
    targets = [resolve_revision(model, r) for r in revisions]
    for (source, hub_rev), r in zip(targets, revisions):
        resolve_model(source, hub_rev)            # every name checked before the first load
    prompts = load_prompts(prompts_path)
    out = []
    for (source, hub_rev), r in zip(targets, revisions):
        out.append(predict(prompts, prediction_dir(out_root, name, r), source, revision=hub_rev,
                           label=name, revision_label=r, **kwargs))
    return out
