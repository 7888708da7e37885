"""Ratings given on the page are what `searcher analyze` uses: people's mean levels for the rated
attributes, their agreement, and pruning of what they marked unrealistic."""

from __future__ import annotations

import shutil

import pandas as pd
from starlette.testclient import TestClient

from searcher.analysis.annotations import krippendorff_alpha, read_annotations
from searcher.annotate import app
from searcher.campaign import load_campaign
from searcher.cli import main
from searcher.studies.analyze import analyze

CAMPAIGN = {"generator": "faces", "target": "haar-face", "budget": 12, "batch": 4, "generator_options": {"resolution": 64},
            "strategy": "random"}


def test_analyze_uses_the_ratings_people_gave_on_the_page(stored_campaign, tmp_path, capsys):
    run = shutil.copytree(stored_campaign("annotate-random", **CAMPAIGN), tmp_path / "run")
    trials = load_campaign(run).trials
    judged = trials[trials["error"].isna() & trials["excluded"].isna()]
    alice, bob = (TestClient(app(run, "skin_tone", name), base_url="http://127.0.0.1") for name in ("alice", "bob"))
    n = len(judged["image"].unique())
    for image in range(n - 2):  # the last two images are left unrated
        alice.post("/rate", json={"image": image, "attribute": "skin_tone", "value": 1 + image % 6})
        bob.post("/rate", json={"image": image, "attribute": "skin_tone", "value": 1 + (image + 1) % 6})
    for c in (alice, bob):
        assert c.post("/mark", json={"image": 0, "marked": True}).status_code == 200
    ratings = read_annotations(run / "annotations.csv")

    result = analyze(run, attributes=["skin_tone", "age"], n_boot=0)
    summary = result.summary()
    assert "human ratings (annotations.csv) from 2 annotator(s) (alice, bob)" in summary
    faked = judged["image"].eq(ratings.query("attribute == 'fakeness'")["image"].iloc[0]).sum()
    assert f"{faked} judged trials whose image people rated likely fake dropped" in summary
    assert "skin_tone: the mean level people chose" in summary
    unrated = judged["image"].isin(set(judged["image"]) - set(ratings["image"])).sum()
    assert f"{unrated} judged trials nobody rated on skin_tone dropped" in summary
    sub = result["subgroups"]
    assert sub.query("attribute == 'skin_tone'")["n"].sum() == len(judged) - faked - unrated

    means = ratings.query("attribute == 'skin_tone'").groupby("image")["value"].mean()
    table = pd.read_csv(run / "analysis" / "ratings.csv").set_index("image")
    assert table["skin_tone"].dropna().sort_index().equals(means.sort_index())
    agreement = pd.read_csv(run / "analysis" / "agreement.csv").set_index("attribute")
    assert agreement.loc["skin_tone", "annotators"] == 2 and agreement.loc["skin_tone", "images"] == n - 2
    assert agreement.loc["skin_tone", "alpha"] == krippendorff_alpha(ratings.query("attribute == 'skin_tone'"))["skin_tone"]

    kept = analyze(run, out=tmp_path / "kept", attributes=["skin_tone"], n_boot=0, keep_pruned=True)
    assert kept["subgroups"]["n"].sum() == len(judged) - unrated and "kept (--keep-pruned)" in kept.summary()
    assert main(["analyze", str(run), "--attributes", "age", "--boot", "0"]) == 0
    out = capsys.readouterr().out
    assert "human ratings (annotations.csv) from 2 annotator(s)" in out and "nobody rated" not in out  # age is the generator's truth
