"""`searcher analyze`: search-aware rates, tables equal to the estimators', plots, clear errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

import searcher.figures.analysis as figures
from searcher.campaign import Campaign, load_campaign
from searcher.causal import ate, logistic_effects, score_sensitivity
from searcher.cli import main
from searcher.errors import ParameterError
from searcher.studies.analyze import analyze

FACES = {"generator": "faces", "target": "haar-face", "budget": 48, "batch": 8, "generator_options": {"resolution": 64}}


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory):
    """Small faces campaigns against the fast Haar detector: random, bo, and bo with an audit sample."""
    root = tmp_path_factory.mktemp("campaigns")
    kinds = {"random": {"strategy": "random"}, "bo": {"strategy": "bo"}, "audit": {"strategy": "bo", "audit": 0.25}}
    for name, kw in kinds.items():
        Campaign(**FACES, **kw, out=str(root / name)).run(progress=False)
    return root


def synthetic_transects(path, seed=0):
    """A 3 x 2 grid (hair_length x skin_tone) where failures and P(masculine) depend on hair length
    only, with some target errors and pruned images."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(40):
        for hair in (-1.5, 0.0, 1.5):
            for skin in (-1.5, 1.5):
                p_fem = 1 / (1 + np.exp(-(hair + rng.normal(0, 0.5))))
                rows.append({"transect": t, "image": len(rows), "value_hair_length": hair, "value_skin_tone": skin,
                             "target_label": "feminine" if p_fem >= 0.5 else "masculine", "target_score": max(p_fem, 1 - p_fem),
                             "error": float(rng.random() < (0.5 if hair > 0 else 0.15)), "pruned": ""})
    table = pd.DataFrame(rows)
    table.loc[rng.choice(len(table), 8, replace=False), "error"] = np.nan  # the target gave no answer
    table.loc[rng.choice(len(table), 20, replace=False), "pruned"] = "image"
    path.mkdir(parents=True, exist_ok=True)
    table.to_csv(path / "transects.csv", index=False)
    return table


def test_random_campaign_rates_on_every_trial_with_wilson_intervals(campaigns):
    tables = analyze(campaigns / "random", n_boot=10)
    out = tables.summary()
    trials = load_campaign(campaigns / "random").trials
    judged = trials[trials["error"].isna() & trials["excluded"].isna()]
    sub = pd.read_csv(campaigns / "random" / "analysis" / "subgroups.csv")
    assert list(sub["attribute"].unique()) == ["skin_tone", "hair_length", "gender_presentation", "age", "yaw",
                                               "light_intensity", "eyewear"]
    assert (sub.groupby("attribute")["n"].sum() == len(judged)).all()
    assert sub.loc[sub["attribute"] == "skin_tone", "n"].tolist() == [16, 16, 16]  # tertiles
    row = sub.iloc[1]
    np.testing.assert_allclose(row[["low", "high"]].to_numpy(float),
                               proportion_confint(row["errors"], row["n"], method="wilson"), rtol=1e-12)
    assert {"subgroups", "effects"} <= set(tables) and f"{len(judged)} judged" in out and "samples uniformly" in out
    for name in ("subgroups.csv", "effects.csv", "subgroups.png", "effects.png"):
        assert (campaigns / "random" / "analysis" / name).is_file()


def test_few_data_for_the_effects_is_said(campaigns, tmp_path):
    """48 trials against about 16 coefficients: the summary warns that the effects are unstable; the
    synthetic transects' 220 rows against 3 do not get the warning."""
    out = analyze(campaigns / "random", n_boot=5).summary()
    trials = load_campaign(campaigns / "random").trials
    k = int((trials["loss"] >= 0.5).sum())
    assert f"few data: {k} failures and {len(trials) - k} successes for" in out and "A longer campaign, or --audit" in out
    synthetic_transects(tmp_path / "t")
    assert "few data" not in analyze(tmp_path / "t", n_boot=5).summary()


def test_adaptive_campaign_without_audit_writes_no_rates_unless_biased(campaigns, tmp_path, monkeypatch):
    nothing = analyze(campaigns / "bo", out=tmp_path / "a")
    assert nothing == {}
    out = nothing.summary()
    assert "no rates written" in out and "--audit" in out and "random" in out and "adaptive" in out
    assert not (tmp_path / "a").exists()

    titles = []
    save = figures.save
    monkeypatch.setattr(figures, "save", lambda fig, path, **kw: (titles.append(kw["title"]), save(fig, path, **kw)))
    tables = analyze(campaigns / "bo", out=tmp_path / "b", n_boot=5, biased=True)
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == [
        "effects_biased.csv", "effects_biased.png", "subgroups_biased.csv", "subgroups_biased.png"]
    assert all("search trials, not population rates" in t for t in titles) and len(titles) == 2
    assert tables["subgroups"].groupby("attribute")["n"].sum().eq(48).all()
    assert "--biased" in tables.summary()


def test_adaptive_campaign_with_audit_uses_the_audit_trials_only(campaigns):
    tables = analyze(campaigns / "audit", n_boot=5)
    trials = load_campaign(campaigns / "audit").trials
    audit = trials[(trials["source"] == "audit") & trials["error"].isna() & trials["excluded"].isna()]
    assert len(audit) == 12
    sub = pd.read_csv(campaigns / "audit" / "analysis" / "subgroups.csv")
    assert (sub.groupby("attribute")["n"].sum() == len(audit)).all()
    assert sub["n"].tolist() == tables["subgroups"]["n"].tolist()
    assert "12 audit trials only" in tables.summary()


def test_transect_tables_equal_the_estimators(tmp_path):
    table = synthetic_transects(tmp_path)
    tables = analyze(tmp_path, n_boot=30, seed=3)
    kept = table[table["error"].notna() & (table["pruned"] == "")]
    assert set(tables) == {"subgroups", "effects", "ate", "sensitivity"}
    sub = tables["subgroups"]
    assert list(sub["attribute"].unique()) == ["hair_length", "skin_tone", "hair_length x skin_tone"]
    assert sub.loc[sub["attribute"] == "hair_length x skin_tone", "level"].tolist()[:2] == ["-1.5 | -1.5", "-1.5 | 1.5"]
    assert sub.loc[sub["attribute"] == "hair_length", "n"].sum() == len(kept)

    design = pd.DataFrame({"hair_length=0": kept["value_hair_length"].eq(0.0), "hair_length=1.5": kept["value_hair_length"].eq(1.5),
                           "skin_tone=1.5": kept["value_skin_tone"].eq(1.5)}).astype(int).assign(e=kept["error"].astype(int))
    direct = logistic_effects(design, "e", ["hair_length=0", "hair_length=1.5", "skin_tone=1.5"], n_boot=30, seed=3)
    effects = pd.read_csv(tmp_path / "analysis" / "effects.csv").set_index("covariate")
    np.testing.assert_allclose(effects[["coef", "std"]].to_numpy(), direct[["coef", "std"]].to_numpy(), rtol=1e-10)
    assert set(effects["reference"].astype(str)) == {"-1.5"}

    hair = kept[kept["value_hair_length"] != 0]
    hair = hair.assign(side=np.where(hair["value_hair_length"] > 0, "high", "low"))
    expected = ate(hair.assign(e=hair["error"].astype(int)), "e", "side", treated="high")
    got = tables["ate"].set_index("attribute").loc["hair_length"]
    assert (got["value"], got["low"], got["high"]) == pytest.approx((expected.value, expected.low, expected.high))
    assert got["value"] > 0.15  # the planted cause

    f = np.where(kept["target_label"] == "masculine", kept["target_score"], 1 - kept["target_score"])
    tidy = pd.DataFrame({"image": kept["transect"].astype(str) + "/" + kept["value_skin_tone"].astype(str),
                         "lambda": kept["value_hair_length"], "score": f})
    tidy = tidy[tidy.groupby("image")["lambda"].transform(lambda v: (v == 0).any())]
    sens = tables["sensitivity"]
    assert sens["positive"].eq("masculine").all() and sens["attribute"].eq("hair_length").all()
    np.testing.assert_allclose(sens["sensitivity"], score_sensitivity(tidy)["sensitivity"], rtol=1e-12)
    assert sens["sensitivity"].iloc[-1] < 0 < sens["sensitivity"].iloc[0]  # longer hair, less P(masculine)
    assert "8 with a target error and 20 pruned" in tables.summary()
    for name in ("subgroups.png", "effects.png", "sensitivity.png", "ate.csv", "sensitivity.csv"):
        assert (tmp_path / "analysis" / name).is_file()


def test_keep_pruned_and_attribute_selection(tmp_path):
    table = synthetic_transects(tmp_path)
    tables = analyze(tmp_path, out=tmp_path / "all", attributes=["skin_tone"], n_boot=0, keep_pruned=True)
    assert tables["subgroups"]["attribute"].unique().tolist() == ["skin_tone"]
    assert tables["subgroups"]["n"].sum() == table["error"].notna().sum()
    assert "sensitivity" not in tables  # skin tone has two steps
    with pytest.raises(ParameterError, match=r"Unknown attribute\(s\) \['age'\].*Valid attributes: hair_length, skin_tone"):
        analyze(tmp_path, attributes=["age"])
    with pytest.raises(ParameterError, match="'bins'.*>= 2"):
        analyze(tmp_path, bins=1)


def test_cli_on_a_real_transect_directory_and_a_bad_one(tmp_path, capsys):
    run = tmp_path / "tr"
    assert main(["transect", "--target", "haar-face", "-n", "4", "--fit-samples", "60", "--resolution", "64",
                 "--out", str(run), "--no-progress", "--sheets", "0"]) == 0
    assert main(["analyze", str(run), "--boot", "20"]) == 0
    out = capsys.readouterr().out
    assert "treatment effects" in out and f"wrote {run}/analysis" in out
    assert "no sensitivity curves" not in out  # 2x2x2: no axis has three steps
    for name in ("subgroups.png", "effects.png", "subgroups.csv", "effects.csv", "ate.csv"):
        assert (run / "analysis" / name).is_file()
    assert main(["analyze", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err
    assert "neither a campaign directory (campaign.sqlite" in err and "transects.csv" in err and "Traceback" not in err
