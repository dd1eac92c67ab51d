"""Bootstrap intervals of Δ (SPEC §5 step 4): numpy draws the resamples, SQL bins them.

Only the random draws happen here: which keys (and, for `seeds+keys`, which seeds) each
resample holds. Every resample is then passed, as a multiset of keys in rank order, through
the same SQL macro that gives the point estimate (`gap_of_samples` in sql/30_gaps.sql), so the
bin rule exists once. Each group draws from its own generator, seeded by (seed, CRC32 of the
group), so a group's interval does not depend on which other groups the run contains and the
same seed always gives the same intervals.

Kinds:
- `keys`: the seen keys of the group resampled with replacement (seeds pooled as observed).
- `seeds+keys`: a two-level bootstrap. First the group's seeds (draws of the k shots) are
  resampled with replacement; each key's accuracy is recomputed from the pooled test rows of
  the drawn seeds (a seed drawn twice counts twice; a key without rows in them drops out);
  then the remaining keys are resampled with replacement.
"""

from __future__ import annotations

import zlib
from typing import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa

GROUP = ["model", "revision", "task", "k", "freq_def"]
INTERVAL_KINDS = ("keys", "seeds+keys")
# Rows of resampled keys handed to DuckDB at once (bounds memory to ~ 50 bytes x this).
_BATCH_ROWS = 1_000_000


def group_seed(seed: int, group: tuple) -> list[int]:
    """The generator seed of one group: the run's seed and a stable hash of the group."""
    text = "\x1f".join(str(v) for v in group)
    return [int(seed), zlib.crc32(text.encode("utf-8"))]


def _counts(idx: np.ndarray, valid: np.ndarray | None, n: int) -> np.ndarray:
    """reps x n multiplicities of the drawn indices idx (reps x draws); `valid` masks draws."""
    reps = idx.shape[0]
    flat = (idx + (np.arange(reps) * n)[:, None]).ravel()
    if valid is not None:
        flat = flat[valid.ravel()]
    return np.bincount(flat, minlength=reps * n).reshape(reps, n)


def key_weights(n: int, reps: int, rng: np.random.Generator) -> np.ndarray:
    """reps x n multiplicities of a resample of n keys with replacement (keys in rank order)."""
    return _counts(rng.integers(0, n, size=(reps, n)), None, n)


def seed_key_resamples(correct: np.ndarray, rows: np.ndarray, reps: int,
                       rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two-level resamples of one group: (reps x n key multiplicities, reps x n accuracies).

    `correct` and `rows` are n keys x S seeds (keys in rank order). First the S seeds are
    drawn with replacement; a key without rows in the drawn seeds is out of that resample;
    then as many keys as remain are drawn with replacement among them. A resample whose
    seeds hold no seen key at all is all zeros (and is discarded by the caller).
    """
    n, s = rows.shape
    seed_w = rng.multinomial(s, np.full(s, 1.0 / s), size=reps)            # reps x S
    denom = seed_w @ rows.T                                                # reps x n
    numer = seed_w @ correct.T
    alive = denom > 0
    n_alive = alive.sum(axis=1)
    acc = np.where(alive, numer / np.maximum(denom, 1), 0.0)
    # The alive keys of each resample first (in rank order), then draw among the first n_alive.
    u = rng.random((reps, n))
    j = np.minimum((u * n_alive[:, None]).astype(np.int64), np.maximum(n_alive - 1, 0)[:, None])
    if alive.all():                         # the usual case: every key has rows in every seed
        return _counts(j, None, n), acc
    order = np.argsort(~alive, axis=1, kind="stable")
    idx = np.take_along_axis(order, j, axis=1)
    valid = np.arange(n)[None, :] < n_alive[:, None]
    return _counts(idx, valid, n), acc


def samples_table(sample_ids: np.ndarray, weights: np.ndarray, omega: np.ndarray,
                  accuracy: np.ndarray) -> pa.Table:
    """Resamples as gap_of_samples reads them: one row per drawn key, occupying positions
    first_pos..last_pos of n_drawn in rank order. `weights` and `accuracy` are reps x n
    (accuracy may also be one row of n, shared by every resample)."""
    reps, n = weights.shape
    last = np.cumsum(weights, axis=1)
    n_drawn = last[:, -1]
    w_flat = weights.ravel()
    nz = np.flatnonzero(w_flat)
    r, c = np.divmod(nz, n)
    last_nz = last.ravel()[nz]
    acc = accuracy.ravel()[nz] if accuracy.ndim == 2 else accuracy[c]
    return pa.table({
        "sample_id": pa.array(sample_ids[r], pa.int64()),
        "omega": pa.array(omega[c], pa.int64()),
        "accuracy": pa.array(np.asarray(acc, dtype=float), pa.float64()),
        "first_pos": pa.array(last_nz - w_flat[nz] + 1, pa.int64()),
        "last_pos": pa.array(last_nz, pa.int64()),
        "n_drawn": pa.array(n_drawn[r], pa.int64()),
    })


def _resamples(group: tuple, keys: pd.DataFrame, seeds: pd.DataFrame | None, kind: str,
               reps: int, rng: np.random.Generator, first_id: int) -> pa.Table:
    """The resamples of one group, with sample ids first_id .. first_id + reps - 1."""
    keys = keys.sort_values("pos")
    omega = keys["omega"].to_numpy(dtype=np.int64)
    ids = np.arange(first_id, first_id + reps, dtype=np.int64)
    if kind == "keys":
        return samples_table(ids, key_weights(len(keys), reps, rng), omega,
                             keys["accuracy"].to_numpy(dtype=float))
    assert seeds is not None
    wide_c = seeds.pivot_table(index="pos", columns="seed", values="n_correct", fill_value=0)
    wide_n = seeds.pivot_table(index="pos", columns="seed", values="n_rows", fill_value=0)
    wide_c = wide_c.reindex(keys["pos"], fill_value=0)
    wide_n = wide_n.reindex(keys["pos"], fill_value=0)[wide_c.columns]
    weights, acc = seed_key_resamples(wide_c.to_numpy(dtype=float), wide_n.to_numpy(dtype=float),
                                      reps, rng)
    return samples_table(ids, weights, omega, acc)


def _batches(ranked: pd.DataFrame, seeds: pd.DataFrame | None, kind: str, reps: int,
             seed: int) -> Iterator[tuple[pa.Table, dict[int, tuple]]]:
    """Resample tables of a few groups at a time, with their sample id -> group map."""
    by_group = dict(tuple(seeds.groupby(GROUP, sort=False))) if seeds is not None else {}
    tables: list[pa.Table] = []
    owner: dict[int, tuple] = {}
    rows = 0
    next_id = 0
    for group, keys in ranked.groupby(GROUP, sort=True):
        rng = np.random.default_rng(group_seed(seed, group))
        t = _resamples(group, keys, by_group.get(group), kind, reps, rng, next_id)
        for i in range(next_id, next_id + reps):
            owner[i] = group
        next_id += reps
        tables.append(t)
        rows += t.num_rows
        if rows >= _BATCH_ROWS:
            yield pa.concat_tables(tables), owner
            tables, owner, rows = [], {}, 0
    if tables:
        yield pa.concat_tables(tables), owner


def bootstrap_intervals(con, ranked: pd.DataFrame, seeds: pd.DataFrame | None, kind: str,
                        reps: int, seed: int, level: float) -> pd.DataFrame:
    """One row per group of `ranked` (the ranked_keys of groups with a Δ): the percentile
    interval at `level` of the Δ of `reps` resamples, each binned by gap_of_samples on `con`.

    `seeds` (per_key_seed rows with the key's pos) is needed for kind 'seeds+keys'. Resamples
    without a Δ (an empty quantile bin, fewer keys than min_seen_keys after dropping keys) are
    discarded and counted in boot_discarded, never scored as 0.
    """
    cols = GROUP + ["ci_low", "ci_high", "ci_level", "ci_kind", "boot_reps", "boot_discarded",
                    "boot_seed"]
    if ranked.empty or reps == 0:
        return pd.DataFrame(columns=cols)
    deltas: dict[tuple, list[np.ndarray]] = {}
    for table, owner in _batches(ranked, seeds, kind, reps, seed):
        con.register("boot_samples", table)
        got = con.execute("SELECT sample_id, delta FROM gap_of_samples('boot_samples')").df()
        con.unregister("boot_samples")
        got["group"] = got["sample_id"].map(owner)
        for group, g in got.groupby("group", sort=False):
            d = g["delta"].to_numpy(dtype=float)
            deltas.setdefault(group, []).append(d[~np.isnan(d)])
    lo_q, hi_q = 100 * (1 - level) / 2, 100 * (1 + level) / 2
    out = []
    for group in sorted({g for g, _ in ranked.groupby(GROUP, sort=True)}):
        d = np.concatenate(deltas.get(group, [np.empty(0)]))
        low, high = np.percentile(d, [lo_q, hi_q]) if len(d) else (np.nan, np.nan)
        out.append(dict(zip(GROUP, group), ci_low=float(low), ci_high=float(high),
                        ci_level=level, ci_kind=kind, boot_reps=reps,
                        boot_discarded=reps - len(d), boot_seed=seed))
    return pd.DataFrame(out, columns=cols)
