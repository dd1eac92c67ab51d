"""sha256 of a model's weight files: computed once per file version, checked on use.

A corrupt or swapped checkpoint must not give a plausible accuracy under a complete
manifest. So every predictions manifest records the sha256 of the weights it ran, a model
directory whose `_manifest.json` records its weights (the committed `models/demo`) is
checked against them before loading, and a truncated safetensors file is caught by its
own header before transformers sees it. Hashing 24 GB of GPT-J takes minutes, so digests
are cached by (real path, size, mtime in ns) in `$FREQGAP_CACHE_DIR/sha256.json` (default
`~/.cache/freqgap/`); a file changed in place gets a new mtime and is hashed again.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from pathlib import Path
from typing import Any

from freqgap.inference.models import ModelError
from freqgap.manifest import MANIFEST_NAME, atomic_write_text, sha256_file

CACHE_ENV = "FREQGAP_CACHE_DIR"
WEIGHTS_FIELD = "weights"     # in a model directory's _manifest.json: {sha256, files}
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack")


class CheckpointError(ModelError):
    """Weight files are corrupt, truncated or not the ones recorded."""


def cache_path() -> Path:
    """Where file digests are cached."""
    base = os.environ.get(CACHE_ENV) or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "freqgap")
    return Path(base) / "sha256.json"


def _load_cache() -> dict[str, Any]:
    try:
        return json.loads(cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}    # no cache yet, or a damaged one: digests are recomputed


def cached_sha256(path: str | Path) -> str:
    """sha256 of a file, from the cache when (real path, size, mtime_ns) match."""
    real = os.path.realpath(path)
    st = os.stat(real)
    stamp = [st.st_size, st.st_mtime_ns]
    cache = _load_cache()
    hit = cache.get(real)
    if hit and hit.get("stamp") == stamp:
        return hit["sha256"]
    digest = sha256_file(real)
    cache = _load_cache()          # re-read: another run may have added entries meanwhile
    cache[real] = {"stamp": stamp, "sha256": digest}
    try:
        atomic_write_text(cache_path(), json.dumps(cache, sort_keys=True, indent=0) + "\n")
    except OSError:
        pass                       # an unwritable cache only costs a rehash next time
    return digest


def weight_files(directory: str | Path) -> list[Path]:
    """The files transformers reads weights from: safetensors when any exist (it prefers
    them), else the other formats; shard indexes included."""
    d = Path(directory)
    files = sorted(p for p in d.iterdir() if p.is_file() and p.name.endswith(_WEIGHT_SUFFIXES))
    safe = [p for p in files if p.name.endswith(".safetensors")]
    chosen = safe or [p for p in files if not p.name.startswith("training_args")]
    index_suffix = ".safetensors.index.json" if safe else ".bin.index.json"
    chosen += sorted(d.glob(f"*{index_suffix}"))
    return chosen


CONFIG_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.json",
                "merges.txt", "special_tokens_map.json", "added_tokens.json", "tokenizer.model",
                "vocab.txt")


def config_sha256(directory: str | Path) -> str | None:
    """One digest over the non-weight files that change results: the model config and the
    tokenizer's files (those present). None when there are none."""
    d = Path(directory)
    files = {n: cached_sha256(d / n) for n in CONFIG_FILES if (d / n).is_file()}
    return combined_sha256(files) if files else None


def combined_sha256(files: dict[str, str]) -> str:
    """One digest over `name sha256` lines in name order (the weights' identity)."""
    text = "".join(f"{name} {digest}\n" for name, digest in sorted(files.items()))
    return hashlib.sha256(text.encode()).hexdigest()


def check_safetensors(path: str | Path) -> None:
    """Refuse a safetensors file whose size does not match its header (truncated or padded),
    or whose header is not the format's: 8-byte little-endian length, JSON, data."""
    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as handle:
        head = handle.read(8)
        if len(head) < 8:
            raise CheckpointError(f"{path}: {size} bytes, too short for a safetensors file; "
                                  "the checkpoint is truncated: download or copy it again")
        (n,) = struct.unpack("<Q", head)
        if n > size - 8:
            raise CheckpointError(f"{path}: header of {n} bytes in a {size}-byte file; the "
                                  "checkpoint is truncated: download or copy it again")
        try:
            header = json.loads(handle.read(n))
        except ValueError:
            raise CheckpointError(f"{path}: the safetensors header is not valid JSON; the "
                                  "file is corrupt: download or copy it again") from None
    ends = [t["data_offsets"][1] for k, t in header.items()
            if k != "__metadata__" and isinstance(t, dict) and "data_offsets" in t]
    expected = 8 + n + max(ends, default=0)
    if expected != size:
        what = "truncated" if size < expected else "longer than its header says"
        raise CheckpointError(f"{path}: {size} bytes but its header describes {expected}; the "
                              f"checkpoint is {what}: download or copy it again")


def weights_record(directory: str | Path) -> dict[str, Any]:
    """{sha256, files: {name: {sha256, size}}} of a model directory's weight files, after
    checking every safetensors file's size against its header."""
    files = weight_files(directory)
    if not files:
        raise CheckpointError(f"{directory}: no weight files (*.safetensors, *.bin); "
                              "not a model checkpoint")
    out = {}
    for f in files:
        if f.name.endswith(".safetensors"):
            check_safetensors(f)
        out[f.name] = {"sha256": cached_sha256(f), "size": f.stat().st_size}
    return {"sha256": combined_sha256({k: v["sha256"] for k, v in out.items()}), "files": out}


def recorded_weights(directory: str | Path) -> dict[str, Any] | None:
    """The weights record in the directory's own `_manifest.json`, if it has one."""
    path = Path(directory) / MANIFEST_NAME
    if not path.exists():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8")).get(WEIGHTS_FIELD)
    except ValueError:
        raise CheckpointError(f"{path}: not valid JSON; restore the model's manifest") from None
    return record if isinstance(record, dict) else None


def verify_weights(directory: str | Path) -> dict[str, Any]:
    """The weights record of `directory`, checked against the one it records (if any)."""
    actual = weights_record(directory)
    recorded = recorded_weights(directory)
    if recorded is None:
        return actual
    manifest = Path(directory) / MANIFEST_NAME
    for name, rec in sorted(recorded.get("files", {}).items()):
        got = actual["files"].get(name)
        if got is None:
            raise CheckpointError(f"{Path(directory) / name}: missing, but recorded in "
                                  f"{manifest}; restore the checkpoint")
        if got["sha256"] != rec["sha256"]:
            raise CheckpointError(
                f"{Path(directory) / name}: sha256 {got['sha256'][:12]}… does not match "
                f"{rec['sha256'][:12]}… recorded in {manifest}; the checkpoint is corrupt or "
                "was changed: restore it (e.g. git checkout) or retrain it")
    extra = sorted(set(actual["files"]) - set(recorded.get("files", {})))
    if extra:
        raise CheckpointError(f"{directory}: weight file(s) {', '.join(extra)} not recorded in "
                              f"{manifest}; remove them or record the weights again")
    return actual


def record_weights(directory: str | Path) -> dict[str, Any]:
    """Write the weights record into the directory's `_manifest.json` (trainers call this
    after saving a checkpoint); returns it."""
    path = Path(directory) / MANIFEST_NAME
    if not path.exists():
        raise CheckpointError(f"{path}: no manifest to record the weights in")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest[WEIGHTS_FIELD] = weights_record(directory)
    atomic_write_text(path, json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n")
    return manifest[WEIGHTS_FIELD]
