"""Cold `freqgap count` of two checkouts of this project, paired and alternating, on one
input: the CPU seconds of every process (bench/cputime.py). Answers "did this change make
a cold count slower?" without a whole `make bench-count` sitting; each checkout needs its
own `.venv` (`make setup` there).

    python bench/pair_cold.py OLD_CHECKOUT NEW_CHECKOUT INPUT [ROUNDS]
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cputime import run_measured  # noqa: E402


def cold_cpu(checkout: str, inp: str, out: str) -> float:
    """CPU seconds of one fresh `freqgap count` run with `checkout`'s own venv."""
    py = f"{checkout}/.venv/bin/python"
    env = {**os.environ, "PYSPARK_PYTHON": py, "PYSPARK_DRIVER_PYTHON": py,
           "SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")}
    shutil.rmtree(out, ignore_errors=True)
    _, cpu, rc = run_measured([f"{checkout}/.venv/bin/freqgap", "count", "--input", inp, "--out", out],
                              env=env, cwd=checkout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if rc != 0:
        raise SystemExit(f"pair_cold: error: freqgap count in {checkout} exited {rc}; run it by hand to see why")
    return cpu


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4):
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    old, new, inp = argv[:3]
    rounds = int(argv[3]) if len(argv) == 4 else 4
    cpu: dict[str, list[float]] = {old: [], new: []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):                       # each round starts with the other one
            for checkout in ((old, new) if r % 2 == 0 else (new, old)):
                cpu[checkout].append(cold_cpu(checkout, inp, f"{tmp}/out"))
    med = {c: statistics.median(v) for c, v in cpu.items()}
    for c, v in cpu.items():
        print(f"{c}: median {med[c]:.2f} CPU-s over {rounds} runs ({min(v):.2f}-{max(v):.2f})")
    print(f"new / old: {med[new] / med[old]:.3f}x the CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
