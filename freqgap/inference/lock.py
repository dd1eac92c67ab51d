"""One run per output directory: an exclusive, non-blocking `flock` on `<dir>/.lock`.

Two runs writing one predictions directory interleave chunks (doubled rows under a
manifest that says complete). The kernel releases an flock when its process dies, even
by SIGKILL, so a killed run never leaves a stale lock behind; a second run is refused at
once rather than queued, naming the holder's pid.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from freqgap.errors import FreqgapError

LOCK_NAME = ".lock"


class DirectoryBusyError(FreqgapError):
    """Another run holds the output directory."""


class DirLock:
    """`with DirLock(dir):` holds the directory for this process; the file is removed after."""

    def __init__(self, directory: str | Path) -> None:
        self.path = Path(directory) / LOCK_NAME
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
                    f"{self.path.parent}: another run (pid {holder}) is writing this directory; "
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
