"""bench/RESULTS.md, the one file of benchmark results: a section per benchmark, each the
latest run of it, naming the machine and the commit it ran on. Each benchmark replaces only
its own section; history is git's, not the file's.

    from results_md import write_section
    write_section("count", "Counting (`make bench-count`)", body_lines, command="make bench-count",
                  machine=..., commit=source_commit(), started=...)
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "RESULTS.md"
HEADER = [
    "# Benchmark results",
    "",
    "Written by the benchmarks themselves (`bench/results_md.py`), never by hand: each section",
    "is the latest run of one benchmark, with the machine, the commit and the command that made",
    "it. Earlier runs are in git's history of this file.",
]
_NAME = re.compile(r"[a-z0-9_-]+")


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- results: {name} -->", f"<!-- end: {name} -->"


def source_commit() -> str:
    """The checkout's short commit, with "+changes" when tracked files other than this
    results file differ from it ("unknown" outside git): a figure is traceable only to the
    code that made it, and an earlier sitting's figures are no change to that code."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                f":!{RESULTS.relative_to(REPO)}"], cwd=REPO,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty else "")


def machine(cpuinfo: str | None = None) -> str:
    """'<CPU model name>, N cores': rates depend on the CPU, so every section names it."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(errors="replace")
        except OSError:
            cpuinfo = ""
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines()
                  if line.startswith("model name")), "unknown CPU")
    return f"{model}, {os.cpu_count()} cores"


def now_utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def render_section(name: str, title: str, body: list[str], *, command: str, machine: str,
                   commit: str, started: str) -> str:
    """One section: its markers, a heading, where and from what it was measured, the body."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"section name {name!r}: use lower-case letters, digits, '-' or '_'")
    begin, end = _markers(name)
    return "\n".join([begin, f"## {title}", "",
                      f"`{command}`, started {started} on {machine}; commit {commit}.", "",
                      *body, end])


def write_section(name: str, title: str, body: list[str], *, command: str, machine: str,
                  commit: str, started: str, path: Path = RESULTS) -> Path:
    """Replace the section `name` of `path` (or append it), keeping every other section."""
    section = render_section(name, title, body, command=command, machine=machine, commit=commit,
                             started=started)
    text = path.read_text() if path.exists() else "\n".join(HEADER) + "\n"
    begin, end = _markers(name)
    start = text.find(begin)
    if start >= 0:
        stop = text.find(end, start)
        if stop < 0:
            raise ValueError(f"{path}: section {name!r} has no end marker {end!r}; "
                             "restore it or delete the section")
        text = text[:start] + section + text[stop + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)
    return path
