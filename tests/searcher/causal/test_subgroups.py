"""Subgroup error rates, E_j^1 - E_j^0, binning, the search-aware guard, and the planted-cause
simulation: an observational gap by skin tone that the adjusted regression attributes to hair."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from searcher.causal import (
    ate,
    logistic_effects,
    one_hot_bins,
    subgroup_error_rates,
    uniform_audit_rates,
)


@pytest.fixture
def toy():
    return pd.DataFrame({
        "error": [1, 0, 0, 1, 1, 0, 0, 0],
        "skin": ["dark", "dark", "dark", "light", "light", "light", "light", "light"],
        "hair": ["short", "long", "short", "short", "long", "long", "long", "short"],
    })


def test_rates_by_one_column(toy):
    out = subgroup_error_rates(toy, "error", "skin")
    assert list(out.columns) == ["n", "errors", "rate", "low", "high"]
    assert out.loc["dark", ["n", "errors"]].tolist() == [3, 1]
    assert out.loc["light", ["n", "errors"]].tolist() == [5, 2]
    assert out.loc["light", "rate"] == pytest.approx(0.4)
    low, high = proportion_confint(2, 5, method="wilson")
    assert out.loc["light", "low"] == pytest.approx(low, abs=1e-12) and out.loc["light", "high"] == pytest.approx(high, abs=1e-12)


def test_intersections_and_empty_categorical_cells(toy):
    """A list of columns gives one row per observed combination; Categorical columns show empty cells as n = 0."""
    out = subgroup_error_rates(toy, "error", ["skin", "hair"])
    assert out.index.names == ["skin", "hair"] and len(out) == 4
    assert out.loc[("light", "long"), ["n", "errors"]].tolist() == [3, 1]
    assert out["n"].sum() == len(toy)
    cat = toy.assign(skin=pd.Categorical(toy["skin"], categories=["dark", "light", "medium"]))
    out = subgroup_error_rates(cat, "error", "skin")
    assert out.loc["medium", "n"] == 0 and np.isnan(out.loc["medium", ["rate", "low", "high"]].astype(float)).all()


def test_boolean_outcome_and_object_failure_column(toy):
    """Booleans work as 0/1; a missing outcome (a target that gave no answer) is a clear error."""
    out = subgroup_error_rates(toy.assign(error=toy["error"].astype(bool)), "error", "skin")
    assert out["errors"].tolist() == [1, 2]
    bad = toy.assign(error=pd.Series([True, False, None, True, True, False, False, False], dtype=object))
    with pytest.raises(ValueError, match="1 missing value"):
        subgroup_error_rates(bad, "error", "skin")


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"outcome": "eror", "by": "skin"}, "unknown outcome column 'eror'. Valid columns: error, skin, hair"),
    ({"outcome": "error", "by": "skn"}, "unknown grouping column 'skn'"),
    ({"outcome": "error", "by": ["skin", "skin"]}, "given more than once"),
    ({"outcome": "error", "by": "error"}, "cannot also be a grouping column"),
    ({"outcome": "skin", "by": "hair"}, "must be 0/1"),
    ({"outcome": "error", "by": "skin", "level": 1.5}, "'level' parameter"),
])
def test_rates_reject_bad_input(toy, kwargs, match):
    with pytest.raises(ValueError, match=match):
        subgroup_error_rates(toy, **kwargs)


def test_rates_reject_missing_group_values(toy):
    with pytest.raises(ValueError, match="grouping column 'skin' has 1 missing"):
        subgroup_error_rates(toy.assign(skin=toy["skin"].where(toy.index != 2)), "error", "skin")
    with pytest.raises(ValueError, match="DataFrame"):
        subgroup_error_rates(toy.to_dict(), "error", "skin")


def test_search_aware_guard(toy):
    """Trials from an adaptive strategy are refused unless allow_biased; uniform ones pass."""
    searched = toy.assign(strategy=["bo"] * 4 + ["random"] * 4)
    with pytest.raises(ValueError, match=r"4 of 8 trials come from a non-uniform strategy \('bo'.*allow_biased=True"):
        subgroup_error_rates(searched, "error", "skin")
    with pytest.raises(ValueError, match="non-uniform"):
        ate(searched.assign(dark=(toy["skin"] == "dark").astype(int)), "error", "dark")
    with pytest.warns(UserWarning, match="describe the search"):
        out = subgroup_error_rates(searched, "error", "skin", allow_biased=True)
    assert out["n"].sum() == 8
    audit = toy.assign(strategy=["random", "sobol", "audit", "random", "random", "sobol", "audit", "random"])
    pd.testing.assert_frame_equal(uniform_audit_rates(audit, "error", "skin"), subgroup_error_rates(toy, "error", "skin"))
    with pytest.raises(ValueError, match="no 'strategy' column"):
        uniform_audit_rates(toy, "error", "skin")
    with pytest.raises(ValueError, match="non-uniform"):
        uniform_audit_rates(searched, "error", "skin")


def test_ate_matches_newcombe_from_statsmodels(toy):
    df = pd.DataFrame({"error": [1] * 30 + [0] * 70 + [1] * 20 + [0] * 80, "t": [1] * 100 + [0] * 100})
    eff = ate(df, "error", "t")
    assert eff.value == pytest.approx(0.1) and (eff.n_treated, eff.n_control) == (100, 100)
    ref = confint_proportions_2indep(30, 100, 20, 100, method="newcomb", compare="diff")
    assert (eff.low, eff.high) == pytest.approx(tuple(ref), abs=1e-12)
    by_value = ate(toy, "error", "skin", treated="dark")
    assert by_value.rate_treated == pytest.approx(1 / 3) and by_value.rate_control == pytest.approx(2 / 5)
    with pytest.raises(ValueError, match="no row has skin == 'medium'. Values present: 'dark', 'light'"):
        ate(toy, "error", "skin", treated="medium")
    with pytest.raises(ValueError, match="column 'skin' must be 0/1.*Got 'dark'. Or pass treated=<value>"):
        ate(toy, "error", "skin")
    with pytest.raises(ValueError, match="control arm"):
        ate(df.assign(t=1), "error", "t")


def test_one_hot_bins():
    df = pd.DataFrame({"age": [4, 17.9, 18, 64.99, 65, 85]}, index=list("abcdef"))
    out = one_hot_bins(df, "age", [4, 18, 65, 85], ["child", "adult", "senior"])
    assert out.index.tolist() == list("abcdef")
    assert out.to_numpy().tolist() == [[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]]
    assert (out.sum(axis=1) == 1).all() and out.dtypes.eq(np.int64).all()
    with pytest.raises(ValueError, match=r"1 value\(s\) of 'age' fall outside the edges \[4, 80\] \(first: 85\)"):
        one_hot_bins(df, "age", [4, 18, 65, 80], ["child", "adult", "senior"])
    with pytest.raises(ValueError, match="one label per bin: 3 for 4 edges"):
        one_hot_bins(df, "age", [4, 18, 65, 85], ["child", "adult"])
    with pytest.raises(ValueError, match="strictly increasing"):
        one_hot_bins(df, "age", [4, 65, 18, 85], ["a", "b", "c"])
    with pytest.raises(ValueError, match="distinct"):
        one_hot_bins(df, "age", [4, 18, 65, 85], ["a", "a", "c"])
    with pytest.raises(ValueError, match="must be finite"):
        one_hot_bins(df.assign(age=[4, np.nan, 18, 20, 30, 40]), "age", [4, 18, 65, 85], ["a", "b", "c"])


def planted(n: int = 4000, seed: int = 0) -> pd.DataFrame:
    """Errors depend on hair length only; dark skin goes with short hair in this observational sample."""
    rng = np.random.default_rng(seed)
    dark = rng.random(n) < 0.5
    short = rng.random(n) < np.where(dark, 0.8, 0.2)
    hair_length = np.where(short, rng.uniform(0.0, 0.35, n), rng.uniform(0.35, 1.0, n))
    p_error = 1 / (1 + np.exp(-(-2.5 + 2.0 * short)))
    error = (rng.random(n) < p_error).astype(int)
    return pd.DataFrame({"error": error, "hair_length": hair_length, "dark_skin": dark.astype(int),
                         "skin": np.where(dark, "dark", "light")})


def test_planted_cause_is_attributed_to_hair_not_skin():
    df = planted()
    df = df.join(one_hot_bins(df, "hair_length", [0, 0.35, 1], ["short_hair", "long_hair"]))
    # Observational: a clear gap by skin tone (expected about 0.32 against 0.14).
    rates = subgroup_error_rates(df, "error", "skin")
    assert rates.loc["dark", "low"] > rates.loc["light", "high"]
    gap = ate(df, "error", "dark_skin")
    assert gap.low > 0.1 and 0.12 < gap.value < 0.25
    # Adjusted: the regression puts it on hair; skin's interval covers 0 (planted effect 2.0 on the logit).
    effects = logistic_effects(df, "error", ["short_hair", "dark_skin"], n_boot=200, seed=0)
    assert effects.loc["short_hair", "low"] > 1.0 and 1.5 < effects.loc["short_hair", "coef"] < 2.5
    skin = effects.loc["dark_skin"]
    assert skin["low"] < 0 < skin["high"]
    assert abs(skin["coef"]) < 2 * skin["std"] and skin["std"] < 0.3
