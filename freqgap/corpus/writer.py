"""Writing and reading Pile-format shards (`.jsonl.zst`), byte-identical under a seed.

Each shard has its own random stream, derived from (seed, shard index) only, so shards can
be written in parallel and the profiles that differ only in their number law (zipf vs
uniform) hold the same documents with only the operands redrawn. zstd runs at a fixed level
with one thread and no timestamps, so the same profile gives the same bytes. Shards are
written under a temporary name and renamed; `_manifest.json` comes last.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import zstandard

from freqgap.corpus.numbers import NumberModel
from freqgap.corpus.profiles import CorpusProfile
from freqgap.corpus.registers import DocumentWriter
from freqgap.manifest import build_manifest, now_iso, sha256_file, write_manifest, MANIFEST_NAME
from freqgap.progress import Progress


def shard_seed(seed: int, shard: int) -> int:
    """The random seed of one shard: stable across Python versions and processes."""
    digest = hashlib.sha256(f"freqgap-corpus:{seed}:{shard}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def shard_name(profile: CorpusProfile, shard: int) -> str:
    return f"{profile.prefix}-{shard:02d}.jsonl.zst"


def write_shard(profile: CorpusProfile, shard: int, out_dir: str | Path,
                progress: bool = False) -> dict[str, Any]:
    """Write one shard; returns its totals (documents, bytes, facts written)."""
    out_dir = Path(out_dir)
    path = out_dir / shard_name(profile, shard)
    tmp = out_dir / f".{path.name}.tmp"
    rng = random.Random(shard_seed(profile.seed, shard))
    writer = DocumentWriter(profile, NumberModel(profile))
    target = int(profile.shard_mb * 1_000_000)
    registers: dict[str, int] = {}
    docs = raw = 0
    meter = Progress(f"corpus {path.name}", total=target / 1e6, unit="MB", interval=10.0) if progress else None
    cctx = zstandard.ZstdCompressor(level=profile.zstd_level, threads=0, write_checksum=True,
                                    write_content_size=False)
    try:
        with open(tmp, "wb") as fh, cctx.stream_writer(fh, closefd=False) as zfh:
            buf = io.BytesIO()
            while raw < target:
                doc = writer.document(rng)
                line = (json.dumps(doc, ensure_ascii=False) + "\n").encode("utf-8")
                buf.write(line)
                raw += len(line)
                docs += 1
                name = doc["meta"]["pile_set_name"]
                registers[name] = registers.get(name, 0) + 1
                if buf.tell() > 1 << 20:
                    zfh.write(buf.getvalue())
                    buf = io.BytesIO()
                    if meter:
                        meter.update(done=raw / 1e6)
            zfh.write(buf.getvalue())
        os.replace(tmp, path)
    except BaseException:
        if tmp.exists():
            tmp.unlink()
        raise
    return {"file": path.name, "documents": docs, "bytes_uncompressed": raw,
            "bytes_compressed": path.stat().st_size, "sha256": sha256_file(path),
            "registers": registers, "facts": dict(writer.facts.tally),
            "fact_forms": dict(writer.facts.form_tally)}


def generate_corpus(profile: CorpusProfile, out_dir: str | Path, workers: int = 1,
                    progress: bool = True) -> dict[str, Any]:
    """Write all shards of `profile` into `out_dir`, then its manifest; returns the manifest."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = now_iso()
    stale = out_dir / MANIFEST_NAME
    if stale.exists():
        stale.unlink()  # a directory being rewritten must not look complete
    keep = {shard_name(profile, s) for s in range(profile.shards)}
    for old in out_dir.glob(f"{profile.prefix}-*.jsonl.zst"):
        if old.name not in keep:
            old.unlink()  # shards of an earlier run with more shards would be read as input
    shards = range(profile.shards)
    if workers > 1 and profile.shards > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(write_shard, [profile] * len(shards), shards,
                                    [out_dir] * len(shards), [progress] * len(shards)))
    else:
        results = [write_shard(profile, s, out_dir, progress) for s in shards]
    totals: dict[str, Any] = {
        "shards": len(results),
        "documents": sum(r["documents"] for r in results),
        "bytes_uncompressed": sum(r["bytes_uncompressed"] for r in results),
        "bytes_compressed": sum(r["bytes_compressed"] for r in results),
    }
    for key in ("facts", "registers"):
        merged: dict[str, int] = {}
        for r in results:
            for k, v in r[key].items():
                merged[k] = merged.get(k, 0) + v
        totals[key] = merged
    numbers = NumberModel(profile)
    manifest = build_manifest(
        "generate_corpus", profile.to_dict(), inputs=[], totals=totals, started=started,
        shards=results, operand_ranks=numbers.operands)
    write_manifest(out_dir, manifest)
    return manifest
