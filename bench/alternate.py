"""Side-by-side timing of the inference benchmarks (bench_inference, bench_next_token).

Runs on one loaded model alternate within each repeat, so drift in the machine's load hits
every run alike; each run's median time gives its rate.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable


def time_alternating(runs: dict[str, Callable[[int], Any]], repeats: int
                     ) -> tuple[dict[str, list[float]], dict[tuple[int, str], Any]]:
    """Call every run once per repeat, in order; returns the seconds of each call by run
    name and what each call returned by (repeat, name)."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    results: dict[tuple[int, str], Any] = {}
    for r in range(repeats):
        for name, call in runs.items():
            start = time.perf_counter()
            results[(r, name)] = call(r)
            times[name].append(time.perf_counter() - start)
    return times, results


def print_rates(times: dict[str, list[float]], n: int, width: int, unit: str = "prompts"
                ) -> dict[str, float]:
    """Print and return n / median seconds of each run, with every run's time."""
    rates = {}
    for name, ts in times.items():
        rates[name] = n / statistics.median(ts)
        print(f"  {name:{width}s} {rates[name]:8.1f} {unit}/s   "
              f"(runs: {', '.join(f'{t:.2f}s' for t in ts)})")
    return rates
