"""`_manifest.json` for every output directory (SPEC §1).

A manifest records inputs (size, mtime, optional checksum), the full config, software
versions, row totals and start/end times. It is written last and atomically, so a
directory with a complete manifest is a complete result, and one without is not.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable

MANIFEST_NAME = "_manifest.json"
_VERSIONED = ("freqgap", "pyspark", "pyarrow", "duckdb", "zstandard", "polars", "torch",
              "transformers", "tokenizers")


def now_iso() -> str:
    """UTC time stamp used in manifests."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def software_versions() -> dict[str, str]:
    """Versions of Python and the stack's packages that are installed."""
    out = {"python": platform.python_version()}
    for name in _VERSIONED:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """Checksum of a local file, streamed."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def describe_local_inputs(paths: Iterable[str | Path], checksum: bool = False) -> list[dict[str, Any]]:
    """Input records (path, size, mtime and, if asked, sha256) for local files."""
    records = []
    for p in paths:
        st = os.stat(p)
        rec: dict[str, Any] = {"path": str(p), "size": st.st_size, "mtime": int(st.st_mtime)}
        if checksum:
            rec["sha256"] = sha256_file(p)
        records.append(rec)
    return records


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write a file so that readers see either the old or the new content, never half."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)       # mkstemp creates 0600; results are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def build_manifest(stage: str, config: dict[str, Any], inputs: list[dict[str, Any]],
                   totals: dict[str, Any], started: str, **extra: Any) -> dict[str, Any]:
    """The manifest dictionary of one completed stage."""
    manifest = {
        "stage": stage,
        "status": "complete",
        "config": config,
        "inputs": inputs,
        "totals": totals,
        "versions": software_versions(),
        "started": started,
        "finished": now_iso(),
    }
    manifest.update(extra)
    return manifest


def write_manifest(directory: str | Path, manifest: dict[str, Any]) -> Path:
    """Write `_manifest.json` into a local directory, atomically."""
    path = Path(directory) / MANIFEST_NAME
    atomic_write_text(path, json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n")
    return path


def read_manifest(directory: str | Path) -> dict[str, Any]:
    """Read the manifest of a finished stage, with an error naming the directory if absent."""
    path = Path(directory) / MANIFEST_NAME
    if not path.exists():
        raise FileNotFoundError(
            f"{directory}: no {MANIFEST_NAME}; the stage that writes it did not finish "
            "(rerun it, or use --resume)")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if manifest.get("status") != "complete":
        raise ValueError(f"{path}: status is {manifest.get('status')!r}, not 'complete'")
    return manifest
