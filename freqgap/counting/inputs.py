"""Input files: what a run counts (files, directories, globs; local paths and URIs).

Why a module of its own: the driver plans a run from these alone, and importing them must
not import numpy, pyarrow or zstandard (the readers in `sources`): the driver of a count
never needs those, and every cold run would pay for their imports.

A local file is identified by its real path (symbolic links resolved), so a file named twice
(a link beside its target, `--input a,link`) is counted once; symbolic links to directories
are followed, a link back to a directory already walked (a loop) is not walked again; a
dangling link is refused by name. Its fingerprint is size, mtime in nanoseconds and inode,
taken at listing and checked again once the file has been read (`check_unchanged`): an
input changed during the run is refused before anything is committed.
"""

from __future__ import annotations

import fnmatch
import glob
import os
from dataclasses import dataclass
from urllib.parse import urlparse

from freqgap.errors import FreqgapError

JSONL_SUFFIXES = (".jsonl", ".json", ".jsonl.zst", ".json.zst", ".jsonl.gz", ".json.gz", ".zst", ".gz")
PARQUET_SUFFIXES = (".parquet",)


class BadInputError(FreqgapError):
    """A bad input file or record; the message names the file and, where known, the line."""

    def __init__(self, path: str, reason: str, line: int | None = None) -> None:
        self.path, self.reason, self.line = path, reason, line
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {reason}")


@dataclass(frozen=True)
class InputFile:
    """One input file as planned by the driver."""

    index: int
    path: str
    size: int
    mtime: int
    mtime_ns: int = 0        # 0 where unknown (remote inputs, hand-made plans)
    inode: int = 0

    @property
    def identity(self) -> tuple[str, int, int, int]:
        """What says "the same file, unchanged": path, size, mtime (ns, else s) and inode."""
        return (self.path, self.size, self.mtime_ns or self.mtime, self.inode)

    @property
    def is_parquet(self) -> bool:
        return self.path.endswith(PARQUET_SUFFIXES)


def _is_remote(path: str) -> bool:
    scheme = urlparse(path).scheme
    return len(scheme) > 1 and scheme != "file"


def arrow_fs(path: str):
    """(pyarrow file system, path inside it) of a local path, file:// URI or remote URI;
    s3a:// and s3n:// (Hadoop's names) are s3:// to Arrow. The one way the job's Python
    side opens files: inputs, run files, pieces and the final tables."""
    import pyarrow.fs as pafs

    if not _is_remote(path):
        return pafs.LocalFileSystem(), _local_path(path)
    for alias in ("s3a://", "s3n://"):
        if path.startswith(alias):
            path = "s3://" + path[len(alias):]
    return pafs.FileSystem.from_uri(path)


def _local_path(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


def local_path(path: str) -> str | None:
    """The local file system path that a local path or file:// URI names (as `arrow_fs`
    and `storage.qualify` read it: no percent-decoding), or None for a remote URI."""
    return None if _is_remote(path) else _local_path(path)


def _is_data_file(name: str) -> bool:
    base = os.path.basename(name)
    return (not base.startswith((".", "_"))) and base.endswith(JSONL_SUFFIXES + PARQUET_SUFFIXES)


def list_inputs(specs: list[str]) -> list[InputFile]:
    """Expand files, directories (recursively) and globs into a sorted, de-duplicated list.

    Sorting by path makes the plan independent of the order inputs were given in. An
    input that matches nothing is an error, never an empty count.
    """
    found: dict[str, tuple[int, ...]] = {}
    for spec in specs:
        matched = _expand_remote(spec) if _is_remote(spec) else _expand_local(spec)
        if not matched:
            raise BadInputError(spec, "input matches no file (check the path or glob)")
        found.update(matched)
    return [InputFile(i, p, *stamp) for i, (p, stamp) in enumerate(sorted(found.items()))]


def _stamp(path: str) -> tuple[int, int, int, int]:
    """(size, mtime s, mtime ns, inode) of a local file: its fingerprint."""
    st = os.stat(path)
    return (st.st_size, int(st.st_mtime), st.st_mtime_ns, st.st_ino)


def _dangling(path: str) -> BadInputError:
    return BadInputError(path, f"dangling symbolic link (its target {os.readlink(path)} does "
                               "not exist); remove the link or restore its target")


def _add_local(out: dict[str, tuple[int, ...]], path: str) -> None:
    if os.path.islink(path) and not os.path.exists(path):
        raise _dangling(path)
    real = os.path.realpath(path)
    out[real] = _stamp(real)


def _walk(top: str, out: dict[str, tuple[int, ...]]) -> None:
    """Every data file below `top`, following directory links once each (no loop)."""
    seen = {os.path.realpath(top)}
    for root, dirs, files in os.walk(top, followlinks=True):
        kept = []
        for name in sorted(dirs):
            real = os.path.realpath(os.path.join(root, name))
            if real not in seen:
                seen.add(real)
                kept.append(name)
        dirs[:] = kept
        for name in files:
            if _is_data_file(name):
                _add_local(out, os.path.join(root, name))


def _expand_local(spec: str) -> dict[str, tuple[int, ...]]:
    spec = _local_path(spec)
    paths = sorted(glob.glob(spec, recursive=True)) if glob.has_magic(spec) else [spec]
    out: dict[str, tuple[int, ...]] = {}
    for p in paths:
        if os.path.isdir(p):
            _walk(p, out)
        elif os.path.isfile(p) or os.path.islink(p):
            _add_local(out, p)
    return out


def check_unchanged(files: list[InputFile]) -> None:
    """Refuse a local input whose size, mtime (ns) or inode differ from the listing's: it
    changed while it was read, so the counts would mix two versions of it."""
    for f in files:
        if not f.inode or local_path(f.path) is None:
            continue
        try:
            now = _stamp(local_path(f.path))
        except FileNotFoundError:
            raise BadInputError(f.path, "input was removed while it was being counted; "
                                "nothing was committed: rerun when the inputs no longer "
                                "change") from None
        if (now[0], now[2], now[3]) != (f.size, f.mtime_ns, f.inode):
            raise BadInputError(f.path, f"input changed while it was being counted (size "
                                f"{f.size} -> {now[0]}, or its mtime or inode); nothing was "
                                "committed: rerun when the inputs no longer change")


def _expand_remote(spec: str) -> dict[str, tuple[int, ...]]:
    import pyarrow.fs as pafs

    fs, inner = arrow_fs(spec)
    scheme = spec.split("://", 1)[0]
    magic = glob.has_magic(inner)
    base = inner.split("*", 1)[0].rsplit("/", 1)[0] if magic else inner
    info = fs.get_file_info(base)
    if info.type == pafs.FileType.NotFound:
        return {}
    if info.type == pafs.FileType.File and not magic:
        infos = [info]
    else:
        infos = [i for i in fs.get_file_info(pafs.FileSelector(base, recursive=True))
                 if i.type == pafs.FileType.File and _is_data_file(i.path)]
        if magic:
            infos = [i for i in infos if fnmatch.fnmatch(i.path, inner)]
    return {f"{scheme}://{i.path}": (i.size, int(i.mtime.timestamp()) if i.mtime else 0) for i in infos}


def join(base: str, *names: str) -> str:
    """A path or URI below `base` ("/"-joined, as every file system here names its files)."""
    return "/".join([base.rstrip("/"), *names])
