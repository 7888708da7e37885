"""logistic_effects fits the distinct (covariates, outcome) rows weighted by their counts: the same
coefficients and bootstrap, to rounding, as fitting every row written out with the same draws."""

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from searcher.causal import logistic_effects

COVS = ["a", "b", "c"]


def _fit(X, y):
    model = LogisticRegression(C=1.0, solver="newton-cholesky", tol=1e-8, max_iter=200).fit(X, y)
    return np.r_[model.coef_[0], model.intercept_[0]]


def test_weighted_patterns_give_the_row_by_row_fit_and_bootstrap():
    rng = np.random.default_rng(4)
    df = pd.DataFrame(rng.integers(0, 2, (400, 3)), columns=COVS).assign(c=lambda d: d["c"] * rng.integers(1, 3, 400))
    df["error"] = (rng.random(400) < 1 / (1 + np.exp(-(1.2 * df["a"] - 0.8 * df["c"])))).astype(int)
    got = logistic_effects(df, "error", COVS, n_boot=15, seed=5)

    X, y = df[COVS].to_numpy(float), df["error"].to_numpy()
    draws = np.random.default_rng(5)
    boots = np.array([_fit(X[idx], y[idx]) for idx in (draws.integers(0, 400, 400) for _ in range(15))])
    whole = _fit(X, y)
    np.testing.assert_allclose([*got["coef"], got.attrs["intercept"]], whole, rtol=1e-9)
    np.testing.assert_allclose([*got["std"], got.attrs["intercept_std"]], boots.std(axis=0, ddof=1), rtol=1e-7)
