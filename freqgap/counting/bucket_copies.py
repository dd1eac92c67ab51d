"""Local copies of bucket directories, for the stages after `count`, which read and write
local paths (DuckDB, pathlib, atomic renames): a finished input is fetched once into the
cache, an output is a local mirror of its prefix published when the stage succeeds
(freqgap/cli/remote_paths.py decides which options; docs/cluster.md, "What takes bucket
paths"). Published manifest-last, so a reader sees the old result, none, or the new one
whole: an object store has no rename to swap a directory in."""

from __future__ import annotations

import hashlib
import shutil
import uuid
from pathlib import Path

from freqgap.counting.inputs import arrow_fs
from freqgap.counting.objectstore import ObjectStore, ObjectStoreError, answering
from freqgap.manifest import MANIFEST_NAME


def _download(uri: str, into: Path, skip: str | None = None) -> None:
    """Every object under `uri` to the same relative path under `into` (made even when
    there is none), except those under the top-level directory `skip`."""
    import pyarrow.fs as pafs

    into.mkdir(parents=True, exist_ok=True)
    fs, root = arrow_fs(uri)
    with answering(uri):
        for item in fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True)):
            inner = item.path[len(root) + 1:]
            if item.type != pafs.FileType.File or (skip and inner.split("/", 1)[0] == skip):
                continue
            (into / inner).parent.mkdir(parents=True, exist_ok=True)
            pafs.copy_files(item.path, str(into / inner), source_filesystem=fs,
                            destination_filesystem=pafs.LocalFileSystem())


def _slot(cache: Path, *keys: str) -> Path:
    return cache / hashlib.sha256("\0".join(keys).encode()).hexdigest()[:20]


def fetch_finished(uri: str, cache: Path) -> Path:
    """A local copy of a finished stage's directory: `cache`/<hash of the URI and its
    manifest>/<name>. Fetched once per result and never half: the manifest must be there
    (an unfinished run is refused), the copy is made under a hidden name and renamed into
    place whole, and a manifest that changed while copying (a run writing there) is
    refused. The run's work area is not fetched."""
    store, uri = ObjectStore(), uri.rstrip("/")
    if not store.exists(f"{uri}/{MANIFEST_NAME}"):
        raise ObjectStoreError(f"{uri}: no {MANIFEST_NAME}, so not the output of a finished run "
                               "(run the stage that writes it to the end, or check the URI)")
    manifest = store.read_text(f"{uri}/{MANIFEST_NAME}")
    name = uri.rsplit("/", 1)[-1]
    target = _slot(cache, uri, manifest)
    if (target / name / MANIFEST_NAME).is_file():
        return target / name
    staging = cache / f".{target.name}.{uuid.uuid4().hex[:8]}"
    _download(uri, staging / name, skip="_work")
    if (staging / name / MANIFEST_NAME).read_text(encoding="utf-8") != manifest:
        shutil.rmtree(staging)
        raise ObjectStoreError(f"{uri}: its {MANIFEST_NAME} changed while it was fetched (a run is "
                               "writing there); try again when it has finished")
    try:
        staging.rename(target)
    except OSError:                       # fetched by another process meanwhile: keep that one
        shutil.rmtree(staging)
    return target / name


def pull(uri: str, cache: Path) -> Path:
    """A local mirror of everything under `uri` (empty when there is nothing):
    `cache`/<hash of the URI>/<name>, made afresh each time, so a stage writing there sees
    the earlier result it may reuse or resume."""
    uri = uri.rstrip("/")
    mirror = _slot(cache, uri) / uri.rsplit("/", 1)[-1]
    shutil.rmtree(mirror.parent, ignore_errors=True)
    _download(uri, mirror)
    return mirror


def push(mirror: Path, uri: str) -> None:
    """Publish a stage's finished mirror under `uri`: every manifest there is deleted
    first, the data files are uploaded (and objects the stage no longer has deleted), and
    the manifests are uploaded last. Hidden files (lock and temporary files) stay behind;
    the mirror is removed after."""
    import pyarrow.fs as pafs

    uri = uri.rstrip("/")
    fs, root = arrow_fs(uri)
    files = sorted(p.relative_to(mirror).as_posix() for p in mirror.rglob("*")
                   if p.is_file() and not any(part.startswith(".") for part in p.relative_to(mirror).parts))
    last = [f for f in files if f.rsplit("/", 1)[-1] == MANIFEST_NAME]
    with answering(uri):
        there = [i.path for i in fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
                 if i.type == pafs.FileType.File]
        for path in sorted(there, key=lambda p: not p.endswith("/" + MANIFEST_NAME)):
            if path[len(root) + 1:] not in files or path.endswith("/" + MANIFEST_NAME):
                fs.delete_file(path)
        for name in [f for f in files if f not in last] + last:
            pafs.copy_files(str(mirror / name), f"{root}/{name}", source_filesystem=pafs.LocalFileSystem(),
                            destination_filesystem=fs)
    shutil.rmtree(mirror.parent, ignore_errors=True)
