"""Kill-and-rerun sweep shared by the stage tests: a killed run leaves the previous
complete result or no manifest, and a rerun equals a clean run."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]
KILLER = Path(__file__).with_name("killer.py")
MANIFEST = "_manifest.json"
TIMEOUT_S = 240          # every subprocess wait is bounded


def freqgap(kill_at: int, argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(KILLER), str(kill_at), *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT_S)


def clean_run(argv: list[str], cwd: Path) -> int:
    """Run to the end; returns how many renames it made."""
    done = freqgap(0, argv, cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    return int(done.stdout.strip().splitlines()[-1].split(": ")[1])


def visible(directory: Path) -> dict[str, str]:
    """sha256 of every file a reader sees (hidden temporaries and the lock excluded)."""
    out = {}
    for path in sorted(directory.rglob("*")):
        rel = path.relative_to(directory)
        if path.is_file() and not any(part.startswith(".") for part in rel.parts):
            out[str(rel)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def assert_previous_or_incomplete(out: Path, previous: dict[str, str], where: str) -> None:
    """Never a partial result under a complete manifest."""
    if not (out / MANIFEST).exists():
        return
    assert visible(out) == previous, f"{where}: a manifest over files other than the previous run's"


def sweep(tmp_path: Path, old: Callable[[Path], list[str]], new: Callable[[Path], list[str]],
          same: Callable[[Path, Path], None], points: int | None = None,
          reruns: str = "all") -> list[int]:
    """old(out)/new(out): the argv of the previous and the interrupted run. Kills `new` before
    each rename (or `points` of them, spread evenly), over a copy of the previous complete
    result; checks the state, then reruns (after every kill, or only the last) and compares
    with a clean run by same(clean_dir, rerun_dir). Returns the kill points used."""
    reference = tmp_path / "clean"
    renames = clean_run(new(reference), tmp_path)
    previous = tmp_path / "previous"
    clean_run(old(previous), tmp_path)
    before = visible(previous)
    assert (previous / MANIFEST).exists() and before
    at = list(range(1, renames + 1))
    if points is not None and len(at) > points:
        at = sorted({at[round(i * (len(at) - 1) / (points - 1))] for i in range(points)})
    for n in at:
        out = tmp_path / f"killed-{n}"
        shutil.copytree(previous, out, symlinks=True)
        done = freqgap(n, new(out), tmp_path)
        assert done.returncode == -9, f"kill at rename {n}: exit {done.returncode}: {done.stderr[-2000:]}"
        assert_previous_or_incomplete(out, before, f"killed before rename {n} of {renames}")
        if reruns == "all" or n == at[-1]:
            clean_run(new(out), tmp_path)
            same(reference, out)
        shutil.rmtree(out)
    return at


def manifest_core(directory: Path) -> dict:
    """A manifest without what differs between two equal runs (times, paths, fingerprint)."""
    m = json.loads((directory / MANIFEST).read_text())
    drop = {"started", "finished", "fingerprint", "created", "host", "seconds", "command",
            "duration_s", "timings", "elapsed_s"}

    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k not in drop and not k.endswith("_s")}
        if isinstance(v, list):
            return [strip(x) for x in v]
        if isinstance(v, str):
            return v.replace(str(directory), "<out>")
        return v

    return strip(m)
