"""logistic_effects against statsmodels' unpenalised Logit, and its bootstrap against Logit's standard errors."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from searcher.causal import logistic_effects


def sample(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"glasses": rng.integers(0, 2, n), "dark": rng.random(n) < 0.4, "age": rng.uniform(10, 80, n)})
    logit = -1.0 + 0.8 * df["glasses"] - 0.5 * df["dark"] + 0.02 * df["age"]
    df["error"] = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return df


COVS = ["glasses", "dark", "age"]


def test_large_C_matches_statsmodels_logit():
    df = sample(3000, seed=1)
    effects = logistic_effects(df, "error", COVS, n_boot=0, C=1e10)
    ref = sm.Logit(df["error"].astype(float), sm.add_constant(df[COVS].astype(float))).fit(disp=0)
    np.testing.assert_allclose(effects["coef"].to_numpy(), ref.params[COVS].to_numpy(), rtol=1e-5, atol=1e-6)
    assert effects.attrs["intercept"] == pytest.approx(ref.params["const"], rel=1e-5, abs=1e-6)
    assert effects.index.name == "covariate" and effects.index.tolist() == COVS
    assert effects[["std", "low", "high"]].isna().all().all() and effects.attrs["n_boot_used"] == 0


def test_default_penalty_shrinks():
    """C = 1 (the paper's setting) shrinks towards 0 relative to the unpenalised fit on a small sample."""
    df = sample(150, seed=2)
    free = logistic_effects(df, "error", COVS, n_boot=0, C=1e10)["coef"]
    l2 = logistic_effects(df, "error", COVS, n_boot=0)["coef"]
    assert np.sum(l2**2) < np.sum(free**2)


def test_bootstrap_std_close_to_statsmodels_standard_errors():
    df = sample(20_000, seed=3)
    effects = logistic_effects(df, "error", COVS, n_boot=200, seed=0)
    ref = sm.Logit(df["error"].astype(float), sm.add_constant(df[COVS].astype(float))).fit(disp=0)
    ratio = effects["std"].to_numpy() / ref.bse[COVS].to_numpy()
    assert ((ratio > 0.8) & (ratio < 1.25)).all(), ratio
    assert effects.attrs["intercept_std"] / ref.bse["const"] == pytest.approx(1, abs=0.25)
    # the percentile interval brackets the estimate and is about 2 x 1.96 standard errors wide
    assert ((effects["low"] < effects["coef"]) & (effects["coef"] < effects["high"])).all()
    width = (effects["high"] - effects["low"]).to_numpy() / (2 * 1.96 * ref.bse[COVS].to_numpy())
    assert ((width > 0.75) & (width < 1.3)).all(), width


def test_seeded_and_reproducible():
    df = sample(400, seed=4)
    a = logistic_effects(df, "error", COVS, n_boot=30, seed=7)
    b = logistic_effects(df, "error", COVS, n_boot=30, seed=7)
    c = logistic_effects(df, "error", COVS, n_boot=30, seed=8)
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["std"], c["std"])
    np.testing.assert_allclose(a["coef"], c["coef"])


def test_degenerate_bootstrap_replicates_are_counted():
    """With 2 errors in 40 rows some resamples have no error at all: left out, counted, warned."""
    df = pd.DataFrame({"x": np.r_[np.zeros(20), np.ones(20)], "error": np.r_[1, np.zeros(38), 1].astype(int)})
    with pytest.warns(UserWarning, match="single outcome value"):
        out = logistic_effects(df, "error", ["x"], n_boot=100, seed=0)
    assert 0 < out.attrs["n_boot_used"] < 100 and np.isfinite(out.loc["x", "std"])


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"covariates": ["glasses", "nose"]}, "unknown covariate 'nose'"),
    ({"covariates": []}, "at least one covariate"),
    ({"covariates": ["error"]}, "cannot also be a covariate"),
    ({"covariates": ["glasses"], "C": 0}, "'C' parameter"),
    ({"covariates": ["glasses"], "C": -1.0}, "'C' parameter"),
    ({"covariates": ["glasses"], "n_boot": -1}, "'n_boot' parameter"),
    ({"covariates": ["glasses"], "seed": 1.5}, "'seed' parameter"),
    ({"covariates": ["label"]}, "covariate 'label' must be numeric"),
])
def test_rejects_bad_input(kwargs, match):
    df = sample(50, seed=5).assign(label="x")
    with pytest.raises(ValueError, match=match):
        logistic_effects(df, "error", **{"n_boot": 0, **kwargs})


def test_rejects_constant_outcome_and_missing_covariates():
    df = sample(50, seed=6)
    with pytest.raises(ValueError, match="is 0 on every row"):
        logistic_effects(df.assign(error=0), "error", COVS, n_boot=0)
    with pytest.raises(ValueError, match="covariate 'age' must be finite; 1 value"):
        logistic_effects(df.assign(age=df["age"].where(df.index != 3)), "error", COVS, n_boot=0)


def test_no_warnings_on_a_clean_fit():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        logistic_effects(sample(500, seed=9), "error", COVS, n_boot=20)
