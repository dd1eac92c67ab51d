"""Run `freqgap ARGV` in this process and SIGKILL it just before its Nth rename.

Every stage makes its results visible by renames (os.replace / Path.replace) and writes
its manifest by a rename last, so "killed just before rename N", for every N, visits every
state an interrupted run can leave behind. N = 0 never kills; the run then prints
`renames: M` (how many there were) as its last stdout line.

  python tests/guarantees/killer.py N instances --counts C --out O
"""

from __future__ import annotations

import os
import signal
import sys


def main() -> int:
    kill_at, argv = int(sys.argv[1]), sys.argv[2:]
    real, seen = os.replace, [0]

    def replace(src, dst, *args, **kwargs):
        seen[0] += 1
        if seen[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(src, dst, *args, **kwargs)

    os.replace = replace
    from freqgap.cli import main as cli

    code = cli(argv)
    print(f"renames: {seen[0]}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
