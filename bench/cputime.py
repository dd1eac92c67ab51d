"""CPU seconds of a command and every process it starts, however deep (JVM, Python workers).

Why a subreaper: Spark's JVM and its Python workers are grandchildren that outlive or
escape their parents; with PR_SET_CHILD_SUBREAPER every orphan is re-parented to this
process and reaped here, so RUSAGE_CHILDREN holds the CPU of every process that was
waited for (Linux only). Not of processes whose parent ignores SIGCHLD: PySpark's worker
daemon auto-reaps its Python workers, so their CPU is in no rusage. The tree is therefore
also polled from /proc every 20 ms, and the larger of the two totals is reported (each is
a lower bound: polling misses a process's last 20 ms and processes shorter than that).
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
    polled: dict[tuple[int, int], float] = {}     # (pid, start time) -> CPU-s last seen
    while True:
        _poll_tree(proc.pid, polled, keep)
        try:
            rc = proc.wait(timeout=POLL_S)
            break
        except subprocess.TimeoutExpired:
            if time.monotonic() - t > timeout_s:
                proc.kill()
                raise
    wall = time.monotonic() - t
    _reap_new(keep, 30)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # Both are lower bounds: rusage misses processes whose parent ignores SIGCHLD (PySpark's
    # daemon auto-reaps its Python workers that way), polling misses the last POLL_S of each
    # process and processes shorter than that. The larger one is the closer.
    return wall, max(cpu, sum(polled.values())), rc


POLL_S = 0.02
_TICKS = os.sysconf("SC_CLK_TCK")


def process_table() -> dict[int, tuple[int, int, float, float, float]]:
    """pid -> (parent pid, start time, own CPU-s, CPU-s of its waited-for children, the
    kernel's part of those two) of every process alive now, from /proc."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            table[int(entry)] = (int(fields[1]), int(fields[19]),
                                 (int(fields[11]) + int(fields[12])) / _TICKS,
                                 (int(fields[13]) + int(fields[14])) / _TICKS,
                                 (int(fields[12]) + int(fields[14])) / _TICKS)
    return table


def descendants(root: int, table: dict[int, tuple]) -> set[int]:
    """`root` and every process below it in `table`."""
    members, frontier = set(), {root}
    while frontier:
        members |= frontier
        frontier = {pid for pid, row in table.items() if row[0] in frontier and pid not in members}
    return members


def _poll_tree(root: int, seen: dict[tuple[int, int], float], keep: set[int]) -> None:
    """Record the own CPU-s of `root` and every descendant alive now (orphans re-parented
    to this subreaper count as descendants of this process: they are included too)."""
    table = process_table()
    members = descendants(root, table)
    members |= {pid for pid, row in table.items() if row[0] == os.getpid() and pid not in keep}
    for pid in members:
        if pid in table:
            _, start, cpu, _, _ = table[pid]
            seen[(pid, start)] = max(seen.get((pid, start), 0.0), cpu)
