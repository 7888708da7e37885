"""Annotations: simulated and imported ratings, aggregation, agreement and the paper's pruning."""

import io

import numpy as np
import pandas as pd
import pytest

from generators.base import Scale
from generators.faces.vocabulary import SCALES
from searcher.analysis.annotations import (
    aggregate,
    agreement,
    human_ratings,
    krippendorff_alpha,
    latent_fakeness,
    overlay,
    prune,
    read_annotations,
    simulate_annotations,
    wide,
    write_annotations,
)
from searcher.errors import ParameterError


@pytest.fixture(scope="module")
def truth():
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "skin_tone": rng.uniform(1, 6, 200),
        "gender_presentation": rng.uniform(0, 1, 200),
        "age": rng.uniform(4, 85, 200),
        "yaw": rng.uniform(-30, 30, 200),
    })


def test_scales_follow_the_paper():
    assert SCALES["skin_tone"].levels == SCALES["age"].levels == 6
    assert SCALES["gender_presentation"].levels == SCALES["hair_length"].levels == SCALES["smile"].levels == 5
    assert SCALES["skin_tone"].level(np.array([1.0, 1.49, 1.5, 3.6, 6.0])).tolist() == [1, 1, 2, 4, 6]  # = Fitzpatrick rounding
    assert SCALES["gender_presentation"].level(np.array([0.0, 0.2, 0.5, 0.9])).tolist() == [1, 2, 3, 5]  # round(4x) + 1
    assert SCALES["age"].level(np.array([5, 15, 25, 40, 60, 80])).tolist() == [1, 2, 3, 4, 5, 6]
    with pytest.raises(ParameterError, match="4 increasing cut points"):
        Scale(5, edges=(0.1, 0.2))


def test_simulation_is_seeded_and_on_the_scales(truth):
    a = simulate_annotations(truth, n_annotators=5, seed=1)
    assert list(a.columns) == ["image", "attribute", "annotator", "value"]
    assert len(a) == 200 * 3 * 5 and set(a["attribute"]) == {"skin_tone", "gender_presentation", "age"}  # yaw has no scale
    assert a.equals(simulate_annotations(truth, n_annotators=5, seed=1))
    assert not a.equals(simulate_annotations(truth, n_annotators=5, seed=2))
    for attribute, values in a.groupby("attribute")["value"]:
        assert values.between(1, SCALES[attribute].levels).all()
    # one attribute's ratings do not depend on which others are rated
    alone = simulate_annotations(truth, ["age"], n_annotators=5, seed=1)
    assert alone["value"].tolist() == a[a["attribute"] == "age"]["value"].tolist()
    with pytest.raises(ParameterError, match="No annotation scale for attribute 'yaw'"):
        simulate_annotations(truth, ["yaw"])


def test_noiseless_annotators_agree_and_recover_the_level(truth):
    a = simulate_annotations(truth, ["skin_tone"], noise=0.0, bias=0.0)
    agg = aggregate(a)
    assert (agg["agreement"] == 1).all() and (agg["std"] == 0).all()
    assert agg["mode"].tolist() == np.clip(np.rint(truth["skin_tone"]), 1, 6).astype(int).tolist()
    assert krippendorff_alpha(a)["skin_tone"] == 1.0


def test_noisy_annotators_track_truth(truth):
    scores = wide(aggregate(simulate_annotations(truth, n_annotators=5, seed=0)))
    assert list(scores.index) == list(truth.index)
    assert np.corrcoef(scores["gender_presentation"], truth["gender_presentation"])[0, 1] > 0.9
    assert scores.min().min() >= 0 and scores.max().max() <= 1
    assert (krippendorff_alpha(simulate_annotations(truth, seed=0)) > 0.6).all()


def test_aggregate_by_hand():
    a = pd.DataFrame({
        "image": ["x"] * 4 + ["y"] * 3,
        "attribute": ["hair_length"] * 4 + ["skin_tone"] * 3,
        "annotator": [0, 1, 2, 3, 0, 1, 2],
        "value": [2, 2, 4, 4, 6, 5, 6],
    })
    agg = aggregate(a)
    x, y = agg.loc[("x", "hair_length")], agg.loc[("y", "skin_tone")]
    assert x["n"] == 4 and x["mean"] == 3 and x["std"] == 1 and x["mode"] == 2 and x["agreement"] == 0.5  # tie -> lower level
    assert x["score"] == 0.5 and x["spread"] == 0.25
    assert y["mode"] == 6 and y["agreement"] == pytest.approx(2 / 3) and y["score"] == pytest.approx((17 / 3 - 1) / 5)


def test_krippendorff_alpha_near_zero_for_random_ratings():
    rng = np.random.default_rng(3)
    a = pd.DataFrame({"image": np.repeat(np.arange(400), 5), "attribute": "smile", "annotator": np.tile(np.arange(5), 400),
                      "value": rng.integers(1, 6, 2000)})
    assert abs(krippendorff_alpha(a)["smile"]) < 0.05


def test_csv_round_trip_and_validation(tmp_path, truth):
    a = simulate_annotations(truth, seed=4)
    path = tmp_path / "ratings.csv"
    write_annotations(a, path)
    pd.testing.assert_frame_equal(read_annotations(path), a)
    with pytest.raises(ParameterError, match=r"levels 1 \.\. 6. Got 7"):
        read_annotations(io.StringIO("image,attribute,annotator,value\n1,skin_tone,a,7\n"))
    with pytest.raises(ParameterError, match="No annotation scale for attribute 'wings'.*Known attributes: skin_tone"):
        read_annotations(io.StringIO("image,attribute,annotator,value\n1,wings,a,1\n"))
    with pytest.raises(ParameterError, match=r"lacks columns \['annotator'\]"):
        read_annotations(io.StringIO("image,attribute,value\n1,age,2\n"))
    custom = read_annotations(io.StringIO("image,attribute,annotator,value\n1,wings,a,2\n"), scales={"wings": Scale(2)})
    assert aggregate(custom, {"wings": Scale(2)})["score"].tolist() == [1.0]


def test_a_rerating_replaces_the_annotators_earlier_answer(tmp_path):
    assert human_ratings(tmp_path) is None
    (tmp_path / "annotations.csv").write_text("image,attribute,annotator,value\n"
                                              "a,age,ann,2\na,age,bob,3\nb,age,ann,1\na,age,ann,5\n")
    table = human_ratings(tmp_path)
    assert sorted(map(tuple, table.to_numpy().tolist())) == [("a", "age", "ann", 5), ("a", "age", "bob", 3), ("b", "age", "ann", 1)]
    assert aggregate(table).loc[("a", "age"), "n"] == 2
    (tmp_path / "annotations.csv").write_text("image,attribute,annotator,value\n")
    assert human_ratings(tmp_path) is None


def test_simulated_ratings_left_in_annotations_csv_by_an_older_run_are_not_taken_for_people(tmp_path, truth):
    write_annotations(simulate_annotations(truth, ["age"], n_annotators=3, seed=0), tmp_path / "annotations.csv")
    assert human_ratings(tmp_path) is None
    with open(tmp_path / "annotations.csv", "a") as f:
        f.write("0,age,ann,2\n")
    assert human_ratings(tmp_path).to_numpy().tolist() == [[0, "age", "ann", 2]]


def test_people_replace_simulated_annotators_attribute_by_attribute(truth):
    simulated = simulate_annotations(truth, ["skin_tone", "age"], n_annotators=3, seed=0)
    people = pd.DataFrame({"image": [0, 0, 1], "attribute": "skin_tone", "annotator": ["ann", "bob", "ann"], "value": [6, 5, 1]})
    both = overlay(simulated, people)
    assert both[both["attribute"] == "skin_tone"].to_numpy().tolist() == people.to_numpy().tolist()
    assert both[both["attribute"] == "age"].to_numpy().tolist() == simulated[simulated["attribute"] == "age"].to_numpy().tolist()
    table = agreement(people).set_index("attribute").loc["skin_tone"]
    assert (table["annotators"], table["images"], table["ratings"]) == (2, 2, 3)
    assert table["spread"] == pytest.approx(0.5 / 5) and table["agreement"] == 0.5  # image 0 only: levels 6 and 5
    assert table["alpha"] == pytest.approx(krippendorff_alpha(people)["skin_tone"])


def test_pruning_counts_follow_the_paper_order():
    scores = pd.DataFrame({
        "fakeness": [0.0, 0.8, 0.75, 0.0, 0.0, 0.1, 0.0],
        "skin_tone": [0.0, 0.5, 0.5, 0.5, 0.4, 1.0, 0.2],
        "gender_presentation": [1.0, 0.0, 0.0, 0.5, 0.0, 0.6, 0.0],
        "hair_length": [0.9, 0.0, 0.0, 0.0, 0.0, 0.0, 0.35],
    }, index=list("abcdefg"))
    report = prune(scores)
    assert list(report.kept) == ["a"]
    assert report.steps["removed"].tolist() == [2, 2, 1, 1] and report.steps["remaining"].tolist() == [5, 3, 2, 1]
    assert "fakeness >= 0.75" in str(report) and "1 of 7 kept" in str(report)
    assert list(prune(scores, max_fakeness=None, ambiguous={}).kept) == list("abcdefg")
    with pytest.raises(ParameterError, match="no such score column"):
        prune(scores.drop(columns="fakeness"))


def test_latent_fakeness_flags_atypical_codes():
    z = np.random.default_rng(5).standard_normal((20000, 32))
    f = latent_fakeness(z)
    assert f.min() == 0 and 0.015 < (f >= 0.75).mean() < 0.035
    assert latent_fakeness(np.full((1, 32), 2.0))[0] == pytest.approx(1.0)
