"""The SQL agrees with an independent computation in plain Python/pandas on a random world."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pandas as pd
import pytest

from freqgap.gaps.run import run_gaps
from tests.gaps.fixtures import options_for, random_world

GROUP = ["model", "revision", "task", "k", "freq_def"]
MIN_KEYS = 20          # conf/gaps.yaml min_seen_keys: fewer seen keys, no Δ and no ρ


def independent(world) -> tuple[pd.DataFrame, pd.DataFrame]:
    """per_key and gaps from the rows the fixture wrote, without DuckDB."""
    preds = pd.DataFrame(world.prediction_rows)
    terms = pd.DataFrame(world.term_rows)
    terms["terms"] = [tuple(t for t in (a, b, c) if t is not None)
                      for a, b, c in zip(terms["t1"], terms["t2"], terms["t3"])]
    lookup = {(t,): c for t, c in world.unigrams.items()}
    lookup.update(world.pairs)
    lookup.update(world.triples)
    rows = preds.merge(terms, on=["task", "instance_id"])
    rows["key"] = rows["terms"].map(",".join)
    rows["omega"] = rows["terms"].map(lambda t: lookup.get(t, 0))
    per_key = (rows.groupby(GROUP + ["key", "omega"], as_index=False)
               .agg(accuracy=("correct", "mean"), n_rows=("correct", "size")))
    acc = preds.groupby(["model", "revision", "task", "k"])["correct"].mean()
    out = []
    for group, g in per_key.groupby(GROUP):
        seen = g[g["omega"] > 0].copy()
        seen["md5"] = seen["key"].map(lambda k: hashlib.md5(k.encode()).hexdigest())
        seen = seen.sort_values(["omega", "md5"])
        n = len(seen)
        m = math.ceil(n * 10 / 100)
        delta = seen["accuracy"].iloc[-m:].mean() - seen["accuracy"].iloc[:m].mean() \
            if n >= MIN_KEYS else np.nan
        rho = (np.corrcoef(seen["omega"].rank(), seen["accuracy"].rank())[0, 1]
               if n >= MIN_KEYS and seen["omega"].nunique() > 1 and seen["accuracy"].nunique() > 1
               else np.nan)
        out.append(dict(zip(GROUP, group), accuracy=acc[group[:4]], n_keys=n,
                        n_unseen_keys=int((g["omega"] == 0).sum()), delta=delta,
                        spearman_rho=rho))
    return per_key, pd.DataFrame(out)


@pytest.mark.parametrize("seed", [0, 1])
def test_sql_agrees_with_pandas(tmp_path, seed):
    world = random_world(tmp_path / "w", seed=seed, p_unseen=0.15)
    res = run_gaps(options_for(world, tmp_path / "r", boot_reps=0))
    want_pk, want = independent(world)

    got_pk = res.per_key.merge(want_pk, on=GROUP + ["key"], suffixes=("", "_want"),
                               how="outer", indicator=True)
    assert (got_pk["_merge"] == "both").all()
    assert (got_pk["omega"] == got_pk["omega_want"]).all()
    np.testing.assert_allclose(got_pk["accuracy"], got_pk["accuracy_want"])
    assert (got_pk["n_rows"] == got_pk["n_rows_want"]).all()

    got = res.gaps.merge(want, on=GROUP, suffixes=("", "_want"), how="outer", indicator=True)
    assert (got["_merge"] == "both").all() and len(got) == len(want) > 20
    for col in ("n_keys", "n_unseen_keys"):
        assert (got[col] == got[f"{col}_want"]).all(), col
    for col in ("accuracy", "delta", "spearman_rho"):
        np.testing.assert_allclose(got[col].astype(float), got[f"{col}_want"].astype(float),
                                   rtol=1e-9, atol=1e-12, err_msg=col)
    assert got["delta"].notna().sum() > 20
