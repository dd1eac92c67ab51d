"""The second effect size: logistic regression of correctness on log10 ω (SPEC §5 step 4).

Unlike Δ it does not depend on a binning. Model, per group (model, revision, task, k,
definition), over its test rows whose key has ω > 0 (unseen keys are left out, as in Δ):

    P(correct) = 1 / (1 + exp(-(b0 + b1 · log10 ω)))

fitted by maximum likelihood without a penalty (Newton's method on the binomial counts per key,
which gives the same estimate as one Bernoulli row per prediction). b1 is the change in
log-odds of a correct answer per decade (10×) of ω. Its interval is the Wald interval
b1 ± z · se(b1), se from the inverse observed information at the estimate. No estimate (NULL
with a note) when it does not exist: every row correct or every row wrong, a single distinct
ω, or (quasi-)complete separation by ω, where the likelihood grows without bound.
The study's notebook fitted sklearn's LogisticRegression with its default L2 penalty (C = 1),
which shrinks b1 towards 0; we report the unpenalised estimate.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pandas as pd

GROUP = ["model", "revision", "task", "k", "freq_def"]
_MAX_ITER = 100
_TOL = 1e-10


def fit(log_omega: np.ndarray, n_correct: np.ndarray, n_rows: np.ndarray, level: float
        ) -> dict[str, float | str | None]:
    """Intercept, slope, se and interval of one group's fit, or NULLs with a note."""
    x = np.asarray(log_omega, dtype=float)
    s = np.asarray(n_correct, dtype=float)
    n = np.asarray(n_rows, dtype=float)
    out: dict[str, float | str | None] = {
        "logit_intercept": None, "logit_slope": None, "logit_slope_se": None,
        "logit_slope_low": None, "logit_slope_high": None, "logit_n_rows": int(n.sum()),
        "logit_note": None}
    if n.sum() == 0:
        out["logit_note"] = "no test rows with ω > 0"
        return out
    if s.sum() == 0 or s.sum() == n.sum():
        out["logit_note"] = "every row " + ("wrong" if s.sum() == 0 else "correct")
        return out
    if np.ptp(x) == 0:
        out["logit_note"] = "a single distinct ω"
        return out
    fails, wins = x[(n - s) > 0], x[s > 0]
    if fails.max() <= wins.min() or wins.max() <= fails.min():
        out["logit_note"] = "correct and wrong rows separated by ω: no finite estimate"
        return out
    xc = x - x.mean()                       # centred for a well-conditioned Newton step
    X = np.column_stack([np.ones_like(xc), xc])
    beta = np.array([np.log(s.sum() / (n.sum() - s.sum())), 0.0])
    for _ in range(_MAX_ITER):
        p = 1.0 / (1.0 + np.exp(-(X @ beta)))
        grad = X.T @ (s - n * p)
        info = (X * (n * p * (1 - p))[:, None]).T @ X
        step = np.linalg.solve(info, grad)
        beta = beta + step
        if np.abs(step).max() < _TOL:
            break
    else:
        out["logit_note"] = f"Newton's method did not converge in {_MAX_ITER} steps"
        return out
    p = 1.0 / (1.0 + np.exp(-(X @ beta)))
    info = (X * (n * p * (1 - p))[:, None]).T @ X
    se = float(np.sqrt(np.linalg.inv(info)[1, 1]))
    z = NormalDist().inv_cdf((1 + level) / 2)
    slope = float(beta[1])
    out.update(logit_intercept=float(beta[0] - beta[1] * x.mean()), logit_slope=slope,
               logit_slope_se=se, logit_slope_low=slope - z * se, logit_slope_high=slope + z * se)
    return out


def logistic_fits(per_key: pd.DataFrame, level: float) -> pd.DataFrame:
    """One row per group of per_key (GROUP, omega, n_correct, n_rows): the fit of its seen keys."""
    cols = GROUP + ["logit_intercept", "logit_slope", "logit_slope_se", "logit_slope_low",
                    "logit_slope_high", "logit_n_rows", "logit_note"]
    rows = []
    for group, g in per_key.groupby(GROUP, sort=True):
        seen = g[g["omega"] > 0]
        res = fit(np.log10(seen["omega"].to_numpy(dtype=float)), seen["n_correct"].to_numpy(),
                  seen["n_rows"].to_numpy(), level)
        rows.append({**dict(zip(GROUP, group)), **res})
    return pd.DataFrame(rows, columns=cols)

