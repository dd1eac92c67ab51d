"""freqgap/outdir.py: one run per output directory, for every stage that writes one.

A second run is refused at once naming the holder; the claim dies with its process (also
on SIGKILL); an output inside a file or in an unwritable place is refused before any
work; a refused run leaves no directory it created behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from freqgap.cli import main
from freqgap.errors import UsageError
from freqgap.outdir import DirectoryBusyError, DirLock, claim, sibling_lock

pytestmark = pytest.mark.timeout(120)

HOLD = """
import sys, time
from freqgap.outdir import claim
with claim(sys.argv[1], beside=sys.argv[2] == "whole"):
    print("held", flush=True)
    time.sleep(60)
"""


def hold(path: Path, whole: bool = False) -> subprocess.Popen:
    """Another process holding the claim; returns once it holds it (bounded wait)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path), "whole" if whole else "dir"],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_second_claim_is_refused_naming_the_holder_and_a_kill_frees_it(tmp_path):
    out = tmp_path / "out"
    proc = hold(out)
    try:
        with pytest.raises(DirectoryBusyError, match=f"pid {proc.pid}"):
            with claim(out):
                pass
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert (out / ".lock").exists()            # the dead run's file stays, its lock does not
    with claim(out) as held:
        assert held == out
    assert not (out / ".lock").exists()


def test_whole_directory_claim_is_a_sibling_file(tmp_path):
    out = tmp_path / "model"
    proc = hold(out, whole=True)
    try:
        assert sibling_lock(out).exists() and not out.exists()
        with pytest.raises(DirectoryBusyError):
            with claim(out, beside=True):
                pass
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_output_inside_a_file_or_unwritable_is_refused(tmp_path):
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(UsageError, match="file.txt is a file"):
        with claim(tmp_path / "file.txt" / "out"):
            pass
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(UsageError, match="not writable"):
            with claim(ro / "out"):
                pass
    finally:
        ro.chmod(0o755)


def test_a_refused_run_leaves_no_directory_it_created(tmp_path):
    class Refused(Exception):
        pass

    with pytest.raises(Refused):
        with claim(tmp_path / "a" / "b" / "out"):
            raise Refused
    assert not (tmp_path / "a").exists()
    with claim(tmp_path / "kept") as out:       # one the run wrote into stays
        (out / "result").write_text("1")
    assert (tmp_path / "kept" / "result").exists()


def test_lock_is_per_open_file(tmp_path):
    """Two claims in one process conflict too (flock is per open file): the CLI tests below
    hold the directory in this process and run the command beside it."""
    with DirLock(tmp_path):
        with pytest.raises(DirectoryBusyError, match=f"pid {os.getpid()}"):
            DirLock(tmp_path).acquire()


# Every subcommand writing an output directory refuses a second run at once (before Spark,
# a model or DuckDB start), naming the directory, with the one-line error and exit 2.
BUSY = [
    ("count", ["count", "--input", "{inp}", "--out", "{out}"], True),
    ("instances", ["instances", "--counts", "{inp}", "--out", "{out}"], False),
    ("gaps", ["gaps", "--counts", "{inp}", "--instances", "{inp}", "--predictions", "{inp}",
              "--out", "{out}"], False),
    ("corpus", ["corpus", "--profile", "tiny", "--out", "{out}"], False),
    ("train", ["train", "--profile", "smoke", "--corpus", "{inp}", "--out", "{out}"], True),
    ("dynamics gaps", ["dynamics", "gaps", "--counts", "{inp}", "--instances", "{inp}",
                       "--predictions", "{inp}", "--out", "{out}"], False),
    ("import-lm-eval", ["import-lm-eval", "{inp}", "--model", "m", "--out", "{out}"], False),
    ("demo", ["demo", "--corpus", "{inp}", "--work", "{out}", "--out", "{out}"], False),
    ("simulate", ["simulate", "--work", "{out}", "--out", "{tmp}/results"], False),
    ("suite neqa", ["suite", "neqa", "--data", "{inp}", "--models", "demo", "--out", "{out}"],
     False),
    ("predict", ["predict", "--model", "models/demo", "--prompts", "{prompts}", "--out",
                 "{out}"], False),
]


@pytest.mark.parametrize("prog,argv,whole", BUSY, ids=[b[0] for b in BUSY])
def test_every_stage_refuses_a_concurrent_run(tmp_path, capsys, monkeypatch, prog, argv, whole):
    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)                           # models/demo is found from the root
    inp = tmp_path / "input.jsonl"
    inp.write_text('{"text": "1 2"}\n')
    out = tmp_path / "out"
    prompts = ""
    if "{prompts}" in argv:                           # predict reads its prompts first
        from freqgap.config import load_conf
        from freqgap.instances import build_instances_dir, resolve_grid
        from tests.instances.counts_fixture import default_counts

        conf = load_conf("tasks")
        grid = resolve_grid(conf, "demo", tasks=["mult"], max_test_items=2)
        build_instances_dir(default_counts(tmp_path / "counts"), tmp_path / "inst", grid, conf)
        prompts = tmp_path / "inst" / "prompts.parquet"
    argv = [a.format(inp=inp, out=out, prompts=prompts, tmp=tmp_path) for a in argv]
    lock = DirLock(out, sibling_lock(out) if whole else None)
    (out.parent if whole else out).mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with lock:
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and f"freqgap {prog}: error: {out}: another run (pid" in err, err
    assert time.monotonic() - started < 20            # refused at once, not after the work
