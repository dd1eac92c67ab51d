"""CPU seconds of a command and every process it starts, however deep (JVM, Python workers).

Why a subreaper: Spark's JVM and its Python workers are grandchildren that outlive or
escape their parents; with PR_SET_CHILD_SUBREAPER every orphan is re-parented to this
process and reaped here, so RUSAGE_CHILDREN holds the CPU of the whole tree exactly
(Linux only), unlike sampling /proc, which misses short-lived processes.
"""

from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import time

_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> None:
    """Make orphaned descendants re-parent to this process (idempotent)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")


def _children() -> set[int]:
    """Living (or zombie) child processes of this process."""
    me, out = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    if int(handle.read().rsplit(")", 1)[1].split()[1]) == me:
                        out.add(int(entry))
            except OSError:
                continue
    return out


def _reap_new(keep: set[int], deadline_s: float) -> None:
    """Reap every child not in `keep` (orphaned descendants included), waiting up to deadline_s."""
    end = time.monotonic() + deadline_s
    while True:
        for pid in _children() - keep:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
        if not (_children() - keep) or time.monotonic() > end:
            return
        time.sleep(0.05)


def run_measured(cmd: list[str], env: dict[str, str] | None = None, cwd: str | None = None,
                 stdout=None, stderr=None, timeout_s: float = 1800) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the whole process tree, return code) of `cmd`."""
    become_subreaper()
    keep = _children()          # e.g. a Spark JVM this process runs itself: not ours to wait for
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=stdout, stderr=stderr)
    rc = proc.wait(timeout=timeout_s)
    wall = time.monotonic() - t
    _reap_new(keep, 30)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, rc
