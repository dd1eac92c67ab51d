"""One run per output directory, for every stage: `with claim(out):`.

Two runs writing one directory interleave their files (doubled rows, or one run's tables
under the other's manifest). `claim` first refuses an output path that lies inside a file
or cannot be written (one line, before any work), then takes an exclusive, non-blocking
`flock` on `<dir>/.lock`. The kernel releases an flock when its process dies, even by
SIGKILL, so a killed run never leaves a stale claim; a second run is refused at once
rather than queued, naming the holder's pid. Stages that replace their whole directory
by a rename (training), or that refuse a directory holding files not theirs (counting),
lock a file beside it, `.<name>.lock`, instead (`beside=True`).
"""

from __future__ import annotations

import fcntl
import os
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Iterator

from freqgap.errors import FreqgapError, UsageError

LOCK_NAME = ".lock"


class DirectoryBusyError(FreqgapError):
    """Another run holds the output directory."""


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
    `lock_path` names another lock file (e.g. a sibling of a directory that is renamed)."""

    def __init__(self, directory: str | Path, lock_path: str | Path | None = None) -> None:
        self.directory = Path(directory)
        self.path = Path(lock_path) if lock_path is not None else self.directory / LOCK_NAME
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
    """The lock file beside `directory` (for claim(..., beside=True))."""
    directory = Path(directory)
    return directory.with_name(f".{directory.name}.lock")


@contextmanager
def claim(directory: str | Path, option: str = "--out", beside: bool = False
          ) -> Iterator[Path]:
    """Check, create and hold `directory` for this run; the directories this call created
    that the run left empty (refused before writing) are removed again. URIs are not
    claimed."""
    path = writable_dir(option, directory)
    if "://" in str(directory):
        yield path
        return
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
            yield path
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
            key = os.path.abspath(os.path.expanduser(str(directory)))
            if key not in seen:
                seen.add(key)
                paths.append(stack.enter_context(claim(directory, option)))
        yield paths
