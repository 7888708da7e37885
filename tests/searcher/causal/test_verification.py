"""FNMR / FMR per group on hand-countable pairs, the threshold at a target FMR, bootstrap bands,
and identity-distance effects against statsmodels' OLS."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from searcher.causal import (
    FMRThreshold,
    fnmr_at_threshold,
    identity_distance_effects,
    threshold_at_fmr,
    verification_rates,
)


@pytest.fixture
def pairs():
    # group x: genuine 0.2 0.5 0.6 0.7, impostor 0.4 0.55 0.8 0.9 1.0
    # group y: genuine 0.3 0.35, impostor 0.65 0.9
    return pd.DataFrame({
        "distance": [0.2, 0.5, 0.6, 0.7, 0.4, 0.55, 0.8, 0.9, 1.0, 0.3, 0.35, 0.65, 0.9],
        "same": [1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0],
        "group": ["x"] * 9 + ["y"] * 4,
    })


def test_rates_by_hand(pairs):
    """A pair matches when distance < threshold (as the dlib-verify target decides)."""
    out = verification_rates(pairs, "distance", "same", "group", [0.5, 0.6, 0.7])
    x = out.loc["x"]
    # threshold 0.6: genuine 0.6 and 0.7 do not match (0.6 is not < 0.6) -> FNMR 2/4; impostors 0.4, 0.55 match -> 2/5
    assert x.loc[0.6, ["n_genuine", "false_non_matches", "n_impostor", "false_matches"]].tolist() == [4, 2, 5, 2]
    assert (x.loc[0.6, "fnmr"], x.loc[0.6, "fmr"]) == (0.5, 0.4)
    assert (x.loc[0.5, "fnmr"], x.loc[0.5, "fmr"]) == (0.75, 0.2)
    assert (x.loc[0.7, "fnmr"], x.loc[0.7, "fmr"]) == (0.25, 0.4)
    y = out.loc["y"]
    assert y["fnmr"].tolist() == [0, 0, 0] and y["fmr"].tolist() == [0, 0, 0.5]
    assert (out["fnmr_low"] <= out["fnmr"]).all() and (out["fmr"] <= out["fmr_high"]).all()
    pooled = verification_rates(pairs, group_col=None, thresholds=0.6)
    assert pooled.index.tolist() == [("all", 0.6)] and pooled["fnmr"].iloc[0] == pytest.approx(2 / 6)


def test_similarity_scores_mirror_distances(pairs):
    sim = pairs.assign(distance=-pairs["distance"])
    out = verification_rates(sim, thresholds=[-0.6], similarity=True)
    ref = verification_rates(pairs, thresholds=[0.6])
    np.testing.assert_array_equal(out[["fnmr", "fmr"]].to_numpy(), ref[["fnmr", "fmr"]].to_numpy())


def test_group_without_impostors_has_nan_fmr(pairs):
    out = verification_rates(pairs[~((pairs["group"] == "y") & (pairs["same"] == 0))], thresholds=[0.6])
    assert out.loc[("y", 0.6), "n_impostor"] == 0 and np.isnan(out.loc[("y", 0.6), "fmr"])


def test_threshold_at_fmr_exact():
    d = np.random.default_rng(0).permutation(np.arange(20_000) / 20_000)  # 0, 0.00005, ... distinct
    result = threshold_at_fmr(d, fmr=1e-3)
    assert isinstance(result, FMRThreshold) and not result.fell_back
    assert result.threshold == pytest.approx(20 / 20_000)  # 20 distances lie strictly below it
    assert result.fmr_achieved == pytest.approx(1e-3) and result.n_impostor == 20_000 and float(result) == result.threshold
    sim = threshold_at_fmr(-d, fmr=1e-3, similarity=True)
    assert sim.threshold == pytest.approx(-20 / 20_000) and sim.fmr_achieved == pytest.approx(1e-3)
    ties = threshold_at_fmr(np.r_[np.zeros(30), np.ones(9970)], fmr=1e-3)  # 30 tied at 0: none may match
    assert ties.threshold == 0.0 and ties.fmr_achieved == 0.0


def test_threshold_falls_back_with_a_warning():
    d = np.linspace(0.5, 1.5, 5000)
    with pytest.warns(UserWarning, match="5000 impostor pairs are too few for an FMR of 0.001 .*using FMR 0.01"):
        result = threshold_at_fmr(d, fmr=1e-3)
    assert result.fell_back and result.fmr == 0.01 and result.fmr_requested == 0.001
    assert result.threshold == d[50] and result.fmr_achieved == pytest.approx(0.01)
    with pytest.raises(ValueError, match=r"500 impostor pairs are too few .*fallback 0.01 \(need 1,000\)"):
        threshold_at_fmr(d[:500], fmr=1e-3)
    assert threshold_at_fmr(d[:500], fmr=1e-2, min_expected=5).threshold == d[5]
    with pytest.raises(ValueError, match="'fmr' parameter"):
        threshold_at_fmr(d, fmr=0)
    with pytest.raises(ValueError, match="finite"):
        threshold_at_fmr(np.r_[d, np.nan])


def test_fnmr_at_threshold_bands():
    rng = np.random.default_rng(0)
    n = 2000
    group = np.where(np.arange(n) < n // 2, "a", "b")
    genuine = rng.normal(np.where(group == "a", 0.40, 0.48), 0.1)  # group b's genuine pairs sit nearer the threshold
    impostor = rng.normal(0.85, 0.08, 20_000)
    pairs = pd.DataFrame({"distance": np.r_[genuine, impostor], "same": np.r_[np.ones(n), np.zeros(20_000)].astype(int),
                          "group": np.r_[group, rng.choice(["a", "b"], 20_000)]})
    thr = threshold_at_fmr(impostor, fmr=1e-3)
    out = fnmr_at_threshold(pairs, thr, n_boot=400, seed=0)
    assert out.attrs["threshold"] == thr.threshold and out["n_genuine"].tolist() == [1000, 1000]
    assert (out["low"] <= out["fnmr"]).all() and (out["fnmr"] <= out["high"]).all()
    assert out.loc["b", "low"] > out.loc["a", "high"]
    verify = verification_rates(pairs, thresholds=[thr.threshold])
    np.testing.assert_allclose(out["fnmr"].to_numpy(), verify["fnmr"].to_numpy())
    # the pair bootstrap of a proportion: band close to the Wilson interval
    w = (verify["fnmr_high"] - verify["fnmr_low"]).to_numpy()
    assert np.allclose((out["high"] - out["low"]).to_numpy() / w, 1, atol=0.2)
    pd.testing.assert_frame_equal(out, fnmr_at_threshold(pairs, thr, n_boot=400, seed=0))


def test_cluster_bootstrap_is_wider_for_correlated_pairs():
    """Ten pairs per identity that all match or all miss: resampling identities widens the band."""
    rng = np.random.default_rng(1)
    identity = np.repeat(np.arange(100), 10)
    miss = np.repeat(rng.random(100) < 0.3, 10)
    pairs = pd.DataFrame({"distance": np.where(miss, 0.7, 0.4), "same": 1, "group": "g", "identity": identity})
    by_pair = fnmr_at_threshold(pairs, 0.6, n_boot=300)
    by_identity = fnmr_at_threshold(pairs, 0.6, cluster_col="identity", n_boot=300)
    assert by_pair.loc["g", "fnmr"] == by_identity.loc["g", "fnmr"]
    ratio = (by_identity.loc["g", "high"] - by_identity.loc["g", "low"]) / (by_pair.loc["g", "high"] - by_pair.loc["g", "low"])
    assert ratio > 2  # about sqrt(10)


def test_fnmr_rejects_bad_input(pairs):
    with pytest.raises(ValueError, match="group 'z' has no genuine pair"):
        fnmr_at_threshold(pd.concat([pairs, pd.DataFrame({"distance": [0.9], "same": [0], "group": ["z"]})]), 0.6)
    with pytest.raises(ValueError, match="'threshold' parameter"):
        fnmr_at_threshold(pairs, "0.6")
    with pytest.raises(ValueError, match="ground-truth column 'same' must be 0/1"):
        verification_rates(pairs.assign(same=2), thresholds=[0.6])
    with pytest.raises(ValueError, match="score column 'distance'.*must be finite"):
        verification_rates(pairs.assign(distance=np.nan), thresholds=[0.6])
    with pytest.raises(ValueError, match="unknown column 'grp'"):
        verification_rates(pairs, group_col="grp", thresholds=[0.6])


def test_identity_distance_effects_match_statsmodels_ols():
    rng = np.random.default_rng(2)
    n = 500
    df = pd.DataFrame({"d_yaw": rng.uniform(0, 60, n), "d_age": rng.uniform(0, 40, n), "d_light": rng.uniform(0, 1, n)})
    df["distance"] = 0.25 + 0.004 * df["d_yaw"] + 0.006 * df["d_age"] + 0.0 * df["d_light"] + rng.normal(0, 0.05, n)
    cols = ["d_yaw", "d_age", "d_light"]
    out = identity_distance_effects(df, "distance", cols)
    ref = sm.OLS(df["distance"], sm.add_constant(df[cols])).fit()
    np.testing.assert_allclose(out["coef"], ref.params[cols], rtol=1e-10)
    np.testing.assert_allclose(out["std"], ref.bse[cols], rtol=1e-10)
    np.testing.assert_allclose(out[["low", "high"]].to_numpy(), ref.conf_int(0.05).loc[cols].to_numpy(), rtol=1e-10)
    np.testing.assert_allclose(out["p_value"], ref.pvalues[cols], rtol=1e-8, atol=1e-300)
    assert out.attrs["intercept"] == pytest.approx(ref.params["const"])
    assert out.loc["d_light", "low"] < 0 < out.loc["d_light", "high"] and out.loc["d_yaw", "low"] > 0
    with pytest.raises(ValueError, match="collinear"):
        identity_distance_effects(df.assign(d_twice=2 * df["d_yaw"]), "distance", cols + ["d_twice"])
    with pytest.raises(ValueError, match="too few"):
        identity_distance_effects(df.head(4), "distance", cols)
