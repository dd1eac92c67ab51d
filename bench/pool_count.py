"""Issue 14's goals read from many `make bench-count` sittings at once (the README's figures).

One sitting's ratios move with this VM's load and host, so each goal is read two ways: the
median of every round of every sitting, with a 95 % interval of that median (the rounds as
independent draws), and the median of the sittings' own medians, with its interval (the
sittings as the draws: rounds of one sitting share its host and load). A goal holds where
both intervals lie on its side. Sittings are the JSON files bench_count keeps under
bench/sittings/ (pass others, or a subset, as arguments).

    python bench/pool_count.py [SITTING.json ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from intervals import median_interval  # noqa: E402

SITTINGS = Path(__file__).resolve().parent / "sittings"

# (label, goal, which side passes, per-round values of one sitting's results)
GOALS = [
    ("task code, compiled, MB per CPU-s", 150.0, ">=",
     lambda r, layout: [r[f"real text|{layout}"]["task_numba"]]),
    ("warm job / task code on as many cores", 0.80, ">=",
     lambda r, layout: r[f"real text|{layout}"]["warm_share"]),
    ("cold spark-submit / reference", 3.0, ">=",
     lambda r, layout: r[f"real text|{layout}"]["cold_vs_reference"]),
    ("cold freqgap count / reference", 3.0, ">=",
     lambda r, layout: r[f"real text|{layout}"]["cold_py_vs_reference"]),
    ("W = 10 / W = 5, warm job", 1.3, "<=",
     lambda r, layout: r["real text|big"]["w10_cost"] if layout == "big" else []),
]


def _passes(value: float, goal: float, side: str) -> bool:
    return value >= goal if side == ">=" else value <= goal


def _interval(values: list[float]) -> str:
    got = median_interval(values)
    return f"[{got[0]:.3g}, {got[1]:.3g}]" if got else "[too few for an interval]"


def pool(sittings: list[dict]) -> list[str]:
    """One line per goal and layout: pooled rounds and per-sitting medians, each with its
    median, 95 % interval and how many pass."""
    lines = []
    for label, goal, side, values_of in GOALS:
        for layout, files in (("small", "24 files"), ("big", "2 files")):
            per_sitting = [values_of(s["results"], layout) for s in sittings]
            per_sitting = [v for v in per_sitting if v]
            if not per_sitting:
                continue
            rounds = [x for v in per_sitting for x in v]
            medians = [statistics.median(v) for v in per_sitting]
            lines.append(
                f"{label} ({files}; goal {side} {goal:g}): "
                f"rounds {len(rounds)}, median {statistics.median(rounds):.3g} {_interval(rounds)}, "
                f"{sum(_passes(x, goal, side) for x in rounds)} pass; "
                f"sittings {len(medians)}, median of their medians {statistics.median(medians):.3g} "
                f"{_interval(medians)}, {sum(_passes(x, goal, side) for x in medians)} pass")
    return lines


class NotASitting(ValueError):
    """A file that is not a bench_count sitting (unreadable, not JSON, or without results)."""


def load(paths: list[Path]) -> list[dict]:
    """The full sittings among `paths` (a --quick one measures too little to count)."""
    sittings = []
    for path in paths:
        try:
            sitting = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise NotASitting(f"{path}: cannot read it as JSON ({exc})") from exc
        if not isinstance(sitting, dict) or not isinstance(sitting.get("results"), dict):
            raise NotASitting(f"{path}: no \"results\" object, so not a bench_count sitting")
        if not sitting.get("quick"):
            sittings.append(sitting)
    return sittings


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sittings", nargs="*", type=Path, help=f"bench_count JSON files (default: {SITTINGS}/*.json)")
    args = ap.parse_args()
    paths = args.sittings or sorted(SITTINGS.glob("*.json"))
    try:
        sittings = load(paths)
    except NotASitting as exc:
        print(f"pool_count: {exc}: pass the JSON files `make bench-count` keeps in {SITTINGS}",
              file=sys.stderr)
        return 2
    if not sittings:
        print(f"pool_count: no full sittings in {', '.join(map(str, paths)) or SITTINGS}: "
              "run `make bench-count` first", file=sys.stderr)
        return 2
    first, last = (sittings[0].get("started", "?"), sittings[-1].get("started", "?"))
    print(f"{len(sittings)} sittings, {first} to {last}; commits "
          + ", ".join(sorted({s.get('commit', '?') for s in sittings})))
    print("\n".join(pool(sittings)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
