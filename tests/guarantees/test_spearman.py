"""Issue 38 (minor): Spearman's ρ is exact and the same on every run (a kill + rerun
differed from a clean run by up to 9e-16: corr() summed doubles in thread order). ρ is now
computed from exact integer sums of the doubled ranks: equal for 1 and 4 threads, and equal
bit for bit to the same formula in Python integers."""

from __future__ import annotations

import math
from collections import defaultdict

import pyarrow.parquet as pq
import pytest

from freqgap.gaps.options import options_from_conf
from freqgap.gaps.run import run_gaps
from tests.gaps.fixtures import random_world

pytestmark = pytest.mark.timeout(300)
GROUP = ("model", "revision", "task", "k", "freq_def")


def doubled_ranks(values: list[float]) -> list[int]:
    """2 x the average rank (ties share the mean of their ranks), as integers."""
    order = sorted(values)
    first = {}
    for i, v in enumerate(order):
        first.setdefault(v, i + 1)
    return [2 * first[v] + order.count(v) - 1 for v in values]


def exact_rho(omega: list[float], accuracy: list[float]) -> float | None:
    x, y, n = doubled_ranks(omega), doubled_ranks(accuracy), len(omega)
    sx, sy = sum(x), sum(y)
    vx, vy = n * sum(a * a for a in x) - sx * sx, n * sum(b * b for b in y) - sy * sy
    if not vx or not vy:
        return None
    return float(n * sum(a * b for a, b in zip(x, y)) - sx * sy) / math.sqrt(float(vx) * float(vy))


def test_spearman_rho_is_exact_and_the_same_for_any_thread_count(tmp_path):
    world = random_world(tmp_path / "w", n_x1=40)
    rhos = []
    for threads in (1, 4):
        opts = options_from_conf(counts=str(world.counts), instances=str(world.instances),
                                 predictions=f"{world.predictions}/*/",
                                 results=str(tmp_path / f"r{threads}"), boot_reps=10,
                                 threads=threads, make_plots=False, min_seen_keys=5)
        result = run_gaps(opts)
        rhos.append({tuple(r[c] for c in GROUP): r["spearman_rho"]
                     for r in result.gaps.to_dict("records")})
    assert rhos[0] == rhos[1]
    keys = defaultdict(lambda: ([], []))
    for r in pq.read_table(tmp_path / "r1" / "per_key.parquet").to_pylist():
        if r["omega"] > 0:
            keys[tuple(r[c] for c in GROUP)][0].append(r["omega"])
            keys[tuple(r[c] for c in GROUP)][1].append(r["accuracy"])
    checked = 0
    for group, rho in rhos[0].items():
        if rho is not None and not math.isnan(rho):
            assert rho == exact_rho(*keys[group]), group
            checked += 1
    assert checked >= 4
