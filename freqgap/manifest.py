"""`_manifest.json` for every output directory (SPEC §1).

A manifest records inputs (size, mtime, optional checksum), the full config, software
versions, row totals and start/end times. It is written last and atomically, so a
directory with a complete manifest is a complete result, and one without is not.

A writer also records its data files (`files`: relative path -> bytes, sha256 and, for
Parquet, rows), and `read_manifest` checks them: a file deleted, added, truncated or edited
after the manifest was written (a lost chunk, a hand-edited `correct`) is refused rather
than read as a smaller or other result.
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
from typing import Any, Iterable, Sequence

MANIFEST_NAME = "_manifest.json"
FILES_FIELD = "files"
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


def file_records(directory: str | Path, files: Iterable[str | Path]) -> dict[str, dict[str, Any]]:
    """The `files` record of a writer's output: relative path -> bytes, sha256 and (for a
    Parquet file) rows, read from its footer."""
    directory = Path(directory)
    out: dict[str, dict[str, Any]] = {}
    for f in files:
        path = Path(f)
        rec: dict[str, Any] = {"bytes": path.stat().st_size, "sha256": sha256_file(path)}
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            rec["rows"] = pq.read_metadata(path).num_rows
        out[path.relative_to(directory).as_posix()] = rec
    return out


def dataset_records(directory: str | Path) -> dict[str, dict[str, Any]] | None:
    """file_records of every Parquet file a reader of `directory` reads (hidden and
    `_`-prefixed paths left out, as readers do); None for a remote URI (not checked)."""
    from freqgap.contract import parquet_files

    text = str(directory)
    if text.startswith("file://"):
        text = text[len("file://"):]
    elif "://" in text:
        return None
    return file_records(text, parquet_files(text))


def damaged_files(directory: str | Path, manifest: dict[str, Any]) -> list[tuple[Path, str]]:
    """(file, what is wrong) for each data file that differs from the manifest's `files`
    record: missing, of other size or sha256, or a Parquet file it does not list. Empty
    when all match, or when the manifest records no files (written before they were)."""
    from freqgap.contract import parquet_files

    recorded = manifest.get(FILES_FIELD)
    if not isinstance(recorded, dict):
        return []
    directory = Path(directory)
    problems: list[tuple[Path, str]] = []
    for rel, rec in sorted(recorded.items()):
        path = directory / rel
        if not path.is_file():
            problems.append((path, f"listed in its {MANIFEST_NAME} ({rec.get('rows')} rows) "
                                   "but missing"))
        elif path.stat().st_size != rec.get("bytes") or sha256_file(path) != rec.get("sha256"):
            problems.append((path, f"differs from the sha256 its {MANIFEST_NAME} records "
                                   "(changed or damaged after it was written)"))
    for path in parquet_files(directory):
        if path.relative_to(directory).as_posix() not in recorded:
            problems.append((path, f"not among the files its {MANIFEST_NAME} lists (added "
                                   "after it was written)"))
    return problems


def check_files(directory: str | Path, manifest: dict[str, Any]) -> None:
    """ManifestError naming the first data file that differs from the manifest's record."""
    from freqgap.contract import ManifestError

    problems = damaged_files(directory, manifest)
    if problems:
        path, what = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ManifestError(f"{path}: {what}{more}; rerun the stage that writes "
                            f"{Path(directory)}")


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
    """The manifest dictionary of one completed stage (`fingerprint` is added on writing;
    `upstream` names the fingerprints of the outputs it was made from, freqgap/contract.py)."""
    if "fingerprint" in extra:
        raise TypeError("build_manifest: `fingerprint` is computed by write_manifest; record "
                        "a stage's own settings hash under another name")
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


def manifest_text(manifest: dict[str, Any]) -> str:
    """The JSON text of a manifest, sealed: fingerprint added, required fields checked."""
    from freqgap.contract import seal

    return json.dumps(seal(manifest), indent=2, sort_keys=True) + "\n"


def write_manifest(directory: str | Path, manifest: dict[str, Any]) -> Path:
    """Write `_manifest.json` into a local directory, atomically, with its fingerprint.
    The given dict becomes what was written (JSON values, `fingerprint` added), so a caller
    that returns it returns what a reader will see."""
    from freqgap.contract import seal

    sealed = seal(manifest)
    manifest.clear()
    manifest.update(sealed)
    path = Path(directory) / MANIFEST_NAME
    atomic_write_text(path, json.dumps(sealed, indent=2, sort_keys=True) + "\n")
    return path


def load_manifest_file(path: str | Path) -> dict[str, Any]:
    """The parsed `_manifest.json` at `path`, or a ManifestError saying what to do."""
    from freqgap.contract import ManifestError

    path = Path(path)
    if not path.parent.is_dir():
        raise ManifestError(f"{path.parent}: directory not found (run the stage that writes "
                            "it, or check the path)")
    if not path.exists():
        raise ManifestError(f"{path.parent}: no {MANIFEST_NAME}; the stage that writes it did "
                            "not finish (rerun it, or use --resume)")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{path}: not valid JSON ({exc}); rerun the stage that writes "
                            "it") from None
    if not isinstance(manifest, dict):
        raise ManifestError(f"{path}: not a manifest (a JSON object expected)")
    return manifest


def read_manifest(directory: str | Path, stage: str | Sequence[str] | None = None,
                  upstream: dict[str, str | None] | None = None,
                  files: bool = True) -> dict[str, Any]:
    """The manifest of a finished stage, checked (freqgap.contract.check_manifest): status
    complete, written by `stage` (one name or several), required fields present, the
    fingerprint matching the content, `upstream` fingerprints equal where given and (with
    `files`) the data files equal to those it records (check_files). Errors are
    FreqgapErrors naming the path and what to do."""
    from freqgap.contract import check_manifest

    path = Path(directory) / MANIFEST_NAME
    manifest = check_manifest(load_manifest_file(path), path, stage=stage, upstream=upstream)
    if files:
        check_files(directory, manifest)
    return manifest


def upstream_fingerprint(directory: str | Path, stage: str | Sequence[str]) -> str | None:
    """The fingerprint of the `stage` output in `directory`, or None when it holds no
    manifest (e.g. a prompts file copied on its own); a manifest that fails its checks is
    an error, not None."""
    if not (Path(directory) / MANIFEST_NAME).exists():
        return None
    return read_manifest(directory, stage=stage)["fingerprint"]
