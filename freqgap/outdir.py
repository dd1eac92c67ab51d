"""One run per output directory, for every stage: `with claim(out):`.

Two runs writing one directory interleave their files (doubled rows, or one run's tables
under the other's manifest). `claim` first refuses an output path that lies inside a file
or cannot be written (one line, before any work), then takes an exclusive, non-blocking
`flock` on `<dir>/.lock`. The kernel releases an flock when its process dies, even by
SIGKILL, so a killed run never leaves a stale claim; a second run is refused at once
rather than queued, naming the holder's pid. Stages that replace their whole directory
by a rename (training), or that refuse a directory holding files not theirs (counting),
lock a file beside it, `.<name>.lock`, instead (`beside=True`). Every lock lies on the
resolved path, so every spelling of one directory (a symlink, `..`) shares it.

Given the writing `stage` and its `inputs`, `claim` also refuses, before any work, an output
that holds another stage's result (its `_manifest.json` names another stage), one equal to,
inside or containing an input, and (given `settings`) one holding this stage's result of
other settings unless `force`: a stage never writes over another stage's result or its own
inputs (docs/guarantees.md).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from freqgap.errors import FreqgapError, UsageError

LOCK_NAME = ".lock"


class DirectoryBusyError(FreqgapError):
    """Another run holds the output directory."""


class DiskFullError(FreqgapError):
    """The output's file system filled up during the run."""


def _disk_full(exc: BaseException) -> bool:
    """ENOSPC from Python, or the same inside a Spark/JVM error's text."""
    return ((isinstance(exc, OSError) and exc.errno == errno.ENOSPC)
            or "No space left on device" in str(exc))


def device_of(path: str | Path) -> str:
    """The device (as /proc/mounts names it) holding `path`, or its mount point."""
    mount = os.path.realpath(path)
    while not os.path.ismount(mount) and os.path.dirname(mount) != mount:
        mount = os.path.dirname(mount)
    try:
        with open("/proc/mounts", encoding="utf-8") as handle:
            for line in handle:
                fields = line.split()
                if len(fields) > 1 and fields[1] == mount:
                    return f"{fields[0]} ({mount})"
    except OSError:
        pass
    return mount


def writable_dir(option: str, value: str | os.PathLike) -> Path:
    """Refuse an output directory that cannot be created or written, before any work.

    URIs (s3a://, hdfs://…) are left to the stage's own writer.
    """
    text = str(value)
    if "://" in text:
        return Path(text)
    path = Path(text).expanduser()
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise UsageError(f"{option} {text}: {probe} is a file, not a directory; "
                         "choose another output directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {text}: {probe} is not writable; choose a directory you can "
                         "write to")
    return path


class DirLock:
    """`with DirLock(dir):` holds the directory for this process; the file is removed after.
    `lock_path` names another lock file (e.g. a sibling of a directory that is renamed);
    the default lies in the resolved directory, shared by every spelling of it."""

    def __init__(self, directory: str | Path, lock_path: str | Path | None = None) -> None:
        self.directory = Path(directory)
        self.path = (Path(lock_path) if lock_path is not None
                     else Path(os.path.realpath(self.directory)) / LOCK_NAME)
        self.fd: int | None = None

    def acquire(self) -> "DirLock":
        for _ in range(5):   # the file may be replaced between open and lock: retry a few times
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
                os.close(fd)
                raise DirectoryBusyError(
                    f"{self.directory}: another run (pid {holder}) is writing this directory; "
                    "wait for it to finish or use another --out/--name") from None
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                os.ftruncate(fd, 0)
                os.pwrite(fd, str(os.getpid()).encode(), 0)
                self.fd = fd
                return self
            os.close(fd)     # the holder removed the file after we opened it: take the new one
        raise DirectoryBusyError(f"{self.path}: lock file keeps changing; another run is "
                                 "starting and stopping in this directory")

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.unlink(self.path)          # while still held: nobody can take the old inode
        except FileNotFoundError:
            pass
        os.close(self.fd)
        self.fd = None

    def __enter__(self) -> "DirLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def sibling_lock(directory: str | Path) -> Path:
    """The lock file beside `directory` (for claim(..., beside=True)), on its resolved path."""
    directory = Path(os.path.realpath(Path(directory).expanduser()))
    return directory.with_name(f".{directory.name}.lock")


def _within(inner: Path, outer: Path) -> bool:
    return inner == outer or outer in inner.parents


def refuse_inputs(option: str, directory: str | Path, inputs: Iterable[str | Path]) -> None:
    """Refuse an output directory equal to, inside or containing an input (file or
    directory), compared by resolved path: writing there would replace or mix the input."""
    out = Path(os.path.realpath(Path(directory).expanduser()))
    for given in inputs:
        text = "" if given is None else str(given)
        if not text or "://" in text:
            continue
        inp = Path(os.path.realpath(Path(text).expanduser()))
        if _within(out, inp) or _within(inp, out):
            how = "is" if out == inp else ("lies inside" if _within(out, inp) else "contains")
            raise UsageError(f"{option} {directory}: the output directory {how} the input "
                             f"{given}; choose an output directory apart from the inputs")


def _recorded(directory: Path) -> dict[str, Any] | None:
    """The parsed `_manifest.json` of `directory`, or None (absent or unreadable)."""
    try:
        found = json.loads((directory / "_manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _differences(recorded: Any, wanted: Any, prefix: str = "") -> list[str]:
    """`key: recorded -> wanted` for the settings that differ (nested dicts flattened)."""
    if isinstance(recorded, dict) and isinstance(wanted, dict):
        out: list[str] = []
        for key in sorted(set(recorded) | set(wanted), key=str):
            out += _differences(recorded.get(key), wanted.get(key), f"{prefix}{key}.")
        return out
    return [] if recorded == wanted else [f"{prefix[:-1]}: {recorded!r} -> {wanted!r}"]


def refuse_other_result(option: str, directory: str | Path, stage: str | Iterable[str],
                        settings: dict[str, Any] | None = None, force: bool = False) -> None:
    """Refuse a directory holding another stage's result (always), or this stage's result of
    other `settings` (compared with its manifest's `config`) unless `force`."""
    found = _recorded(Path(directory).expanduser())
    if found is None:
        return
    stages = (stage,) if isinstance(stage, str) else tuple(stage)
    if found.get("stage") not in stages:
        raise UsageError(f"{option} {directory}: holds the result of stage "
                         f"{found.get('stage')!r}, not of {stages[0]!r}; choose another "
                         f"{option} (a stage never writes over another stage's result)")
    if settings is None or force:
        return
    wanted = json.loads(json.dumps(settings, default=str))
    config = found.get("config") if isinstance(found.get("config"), dict) else {}
    diffs = _differences({key: config.get(key) for key in wanted}, wanted)
    if diffs:
        raise UsageError(f"{option} {directory}: already holds a result of other settings "
                         f"({'; '.join(diffs[:3])}); pass --force to replace it, or choose "
                         f"another {option}")


@contextmanager
def claim(directory: str | Path, option: str = "--out", beside: bool = False,
          stage: str | Iterable[str] | None = None, inputs: Iterable[str | Path] = (),
          settings: dict[str, Any] | None = None, force: bool = False) -> Iterator[Path]:
    """Check, create and hold `directory` for this run; the directories this call created
    that the run left empty (refused before writing) are removed again. URIs are not
    claimed. With `stage`, refuses another stage's result, an output overlapping `inputs`
    and (with `settings`) a result of other settings without `force` (module docstring).
    A full disk during the run (ENOSPC, also inside a Spark error) becomes one line naming
    the device and the directory."""
    path = writable_dir(option, directory)
    if "://" in str(directory):
        yield path
        return
    refuse_inputs(option, directory, inputs)
    target = path.parent if beside else path
    created = [d for d in (target, *target.parents) if not d.exists()]   # leaf first
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{option} {directory}: cannot create the output directory "
                         f"({exc.strerror or exc}); choose another {option}") from None
    lock = DirLock(path, sibling_lock(path) if beside else None)
    try:
        with lock:
            if stage is not None:
                refuse_other_result(option, directory, stage, settings, force)
            yield path
    except Exception as exc:
        if not _disk_full(exc):
            raise
        rerun = "rerun with --resume" if stage == "count_terms" else "rerun"
        raise DiskFullError(f"no space left on {device_of(path)} while writing {path}; free "
                            f"space and {rerun}") from None
    finally:
        for d in created:        # leaf first; stops at the first the run wrote into
            try:
                d.rmdir()
            except OSError:
                break


@contextmanager
def claim_each(*named: tuple[str, str | Path]) -> Iterator[list[Path]]:
    """claim() for each (option, directory) of a workflow (its work and results
    directories), a directory named twice once."""
    with ExitStack() as stack:
        seen: set[str] = set()
        paths = []
        for option, directory in named:
            key = os.path.realpath(os.path.expanduser(str(directory)))
            if key not in seen:
                seen.add(key)
                paths.append(stack.enter_context(claim(directory, option)))
        yield paths
