"""experiments/denton.py: directions, sweeps, sensitivities and the sanity check on faces-cvae."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
from project_scripts import load_script

SCRIPT = "experiments/denton.py"


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("denton")
    dn = load_script(SCRIPT)
    assert dn.main(["--quick", "--out", str(out)]) == 0
    return dn, out


def test_writes_the_report_figures_and_tables(quick):
    _, out = quick
    for name in ("report.md", "sensitivity.png", "flips.png", "sweeps.png", "directions.csv", "carried.csv", "scores.csv",
                 "sensitivity.csv", "sanity.csv"):
        assert (out / name).stat().st_size > 100, name
    text = (out / "report.md").read_text()
    for header in ("## Attribute vectors", "## What the codes carry", "| attribute | with | without | held-out AUC from E(x) |",
                   "| target | direction | subset | n not smiling |", "## Sanity check", "## Reading"):
        assert header in text


def test_directions_are_unit_vectors_pointing_to_their_attribute(quick):
    _, out = quick
    table = pd.read_csv(out / "directions.csv", index_col="direction")
    assert list(table.index) == ["beard", "makeup", "eyewear", "random"]
    for name in table.index:
        assert table.loc[name, f"cos_{name}"] == pytest.approx(1.0)  # unit norm
    assert (table["gap"].drop("random") > 0).all()  # d points towards the attribute
    assert table.loc["random", ["cos_beard", "cos_makeup", "cos_eyewear"]].abs().max() < 1e-9  # the control carries none of them
    assert table.loc["eyewear", "accuracy"] > 0.75  # the encoder keeps glasses: their direction separates the codes


def test_carried_reads_an_attribute_the_codes_hold_and_not_one_they_lack(quick):
    """`carried`: the held-out AUC of codes -> attribute is high where one coordinate spells the
    attribute, near 0.5 where nothing does, and missing where a class has a single face."""
    dn, out = quick
    rng = np.random.default_rng(0)
    z = rng.normal(size=(400, 6))
    truth = pd.DataFrame({"smile": rng.random(400), "facial_hair": np.where(z[:, 0] > 0.3, 0.9, 0.0),
                          "makeup": np.r_[0.9, np.zeros(399)], "eyewear": np.where(z[:, 1] + 0.3 * rng.normal(size=400) > 0, "sunglasses", "none")})
    carry = dn.carried(z, truth, seed=0)
    assert list(carry.index) == ["smiling", "beard", "makeup", "eyewear"]
    assert carry.loc["beard", "auc"] > 0.97 and carry.loc["eyewear", "auc"] > 0.85
    assert 0.4 < carry.loc["smiling", "auc"] < 0.6
    assert np.isnan(carry.loc["makeup", "auc"]) and carry.loc["makeup", "with"] == 1
    shipped = pd.read_csv(out / "carried.csv", index_col="attribute")
    assert list(shipped.index) == ["smiling", "beard", "makeup", "eyewear"] and shipped["auc"].between(0, 1).all()


def test_sweeps_cover_every_direction_lambda_and_target(quick):
    _, out = quick
    scores = pd.read_csv(out / "scores.csv")
    assert set(scores["direction"]) == {"beard", "makeup", "eyewear", "random"}
    assert sorted(scores["lambda"].unique()) == [-1.0, -0.5, 0.0, 0.5, 1.0]
    assert len(scores) == (3 + 2) * 5 * 40  # --quick pools 2 random controls
    assert scores.groupby("direction")["control"].nunique().to_dict() == {"beard": 1, "makeup": 1, "eyewear": 1, "random": 2}
    at_one = scores[(scores["direction"] == "random") & (scores["lambda"] == 1.0)].pivot(index="image", columns="control", values="smile-cnn")
    assert not np.allclose(at_one[0], at_one[1])  # two directions, not one swept twice
    assert scores["smile-cnn"].between(0, 1).all()
    assert scores["haar-smile"].dropna().isin([0.0, 1.0]).all()
    # the same code at lambda = 0 gives the same image whatever the direction
    zero = scores[(scores["lambda"] == 0.0) & (scores["control"] == 0)].pivot(index="image", columns="direction", values="smile-cnn")
    assert np.allclose(zero.to_numpy(), zero[["beard"]].to_numpy())


def test_sensitivities_agree_with_the_scores(quick):
    _, out = quick
    scores = pd.read_csv(out / "scores.csv")
    sens = pd.read_csv(out / "sensitivity.csv")
    beard = scores[scores["direction"] == "beard"].pivot(index="image", columns="lambda", values="smile-cnn")
    row = sens[(sens["target"] == "smile-cnn") & (sens["direction"] == "beard") & (sens["subset"] == "all") & (sens["lambda"] == 1.0)]
    assert row["score_sensitivity"].item() == pytest.approx((beard[1.0] - beard[0.0]).mean())
    not_smiling = beard[0.0] < 0.5
    assert row["rate_0to1"].item() == pytest.approx((beard.loc[not_smiling, 1.0] >= 0.5).mean())
    assert not sens[sens["target"] == "haar-smile"]["subset"].eq("near boundary").any()  # 0/1 scores: no band


def test_a_direction_with_no_face_near_the_boundary_reports_no_band(quick):
    dn, _ = quick
    lams = (-1.0, 0.0, 1.0)
    scores = pd.DataFrame({"direction": "beard", "control": 0, "image": np.repeat([0, 1, 2, 3], 3), "lambda": lams * 4,
                           "smile-cnn": [0.02, 0.05, 0.4, 0.9, 0.95, 0.97, 0.01, 0.1, 0.2, 0.6, 0.8, 0.99]})
    conditions = [{"gender": g} for g in ("masculine", "feminine", "masculine", "feminine")]
    sens = dn.sensitivities(scores, conditions, ("smile-cnn",))
    assert set(sens["subset"]) == {"all", "masculine faces"}  # graded scores, none in (0.3, 0.7) at lambda = 0
    scores.loc[10, "smile-cnn"] = 0.5  # one face near the boundary: the band is reported
    assert "near boundary" in set(dn.sensitivities(scores, conditions, ("smile-cnn",))["subset"])


def test_the_random_control_is_measured_on_each_cohort_the_attributes_are(quick):
    dn, out = quick
    lams = (0.0, 1.0)
    # images 0, 2 masculine; 1, 3 feminine; not smiling at lambda = 0 except image 3
    scores = pd.DataFrame({"direction": dn.RANDOM, "control": 0, "image": np.repeat([0, 1, 2, 3], 2), "lambda": lams * 4,
                           "smile-cnn": [0.1, 0.9, 0.2, 0.3, 0.1, 0.2, 0.8, 0.1]})
    conditions = [{"gender": g} for g in ("masculine", "feminine", "masculine", "feminine")]
    sens = dn.sensitivities(scores, conditions, ("smile-cnn",)).set_index(["subset", "lambda"])
    assert sens.loc[("masculine faces", 1.0), "rate_0to1"] == pytest.approx(0.5)  # image 0 flips, image 2 does not
    assert sens.loc[("feminine faces", 1.0), "rate_0to1"] == pytest.approx(0.0)  # image 1 stays; image 3 smiles
    assert sens.loc[("feminine faces", 1.0), "rate_1to0"] == pytest.approx(1.0)
    assert "| random directions, same faces |" in (out / "report.md").read_text()


def test_bad_sizes_are_named(quick):
    dn, out = quick
    with pytest.raises(ValueError, match="steps must be odd"):
        dn.run(n_fit=40, n_sweep=4, steps=4, n_check=2, out=out / "bad")
    with pytest.raises(ValueError, match="n_sweep must be an integer >= 4. Got 2"):
        dn.run(n_sweep=2, out=out / "bad")


def test_the_renderer_knows_the_planted_answer(quick):
    """Beards flip smile-cnn's not-smiling predictions far more often than sunglasses when drawn on the same faces."""
    _, out = quick
    truth = pd.read_csv(out / "interventions.csv", index_col="direction")
    assert list(truth["cohort"]) == ["masculine faces", "feminine faces", "all"]
    assert truth.loc["beard", "rate_0to1"] > truth.loc["eyewear", "rate_0to1"] + 0.2
    assert "## Against the renderer's answer" in (out / "report.md").read_text()


def test_sanity_plan_draws_each_point_between_two_codes_of_its_class_and_cell(quick):
    """The check's pairs: `start` and `end` are rows of the codes given (two distinct faces of the
    class the point is labelled with, read off the same conditions), and the point is the code on
    the line between them at `t`, as `from_latent` draws it."""
    dn, _ = quick
    gen = dn.FacesCVAE(resolution=128)
    _, z, conditions = dn.swept_faces(gen, 24, seed=3)
    score = np.random.default_rng(0).random(len(z))  # any scores in [0, 1]: the plan is built from them
    plan = dn.sanity_plan(gen, z, conditions, score, 40, seed=0)
    assert len(plan) and plan["score"].between(0, 1).all()
    start, end = plan["start"].to_numpy(), plan["end"].to_numpy()
    assert (start != end).all()
    assert ((score[start] >= 0.5) == plan["label"]).all() and ((score[end] >= 0.5) == plan["label"]).all()
    assert all(conditions[i] == conditions[j] for i, j in zip(start, end))
    i, j, t = start[0], end[0], plan["t"].iloc[0]
    code = (1 - t) * z[i] + t * z[j]
    again = dn._smile_scores(dn.targets.load("smile-cnn"), gen.from_latent(code[None], conditions=conditions[i]).images)
    assert again[0] == pytest.approx(plan["score"].iloc[0], abs=1e-6)
    flipped = dn.sanity_plan(gen, z, conditions, score, 40, seed=0, target=_Inverted(dn.targets.load("smile-cnn")))
    assert (flipped[["start", "end", "t"]].to_numpy() == plan[["start", "end", "t"]].to_numpy()).all()  # a target object scores the same plan
    assert flipped["score"].to_numpy() == pytest.approx(1 - plan["score"].to_numpy(), abs=1e-6)


class _Inverted:
    """smile-cnn with its two labels swapped: a target object, not a registered name."""

    def __init__(self, target):
        self.target = target

    def predict(self, images):
        pred = self.target.predict(images)
        swap = {"smiling": "not smiling", "not smiling": "smiling"}
        return dataclasses.replace(pred, label=[swap[label] for label in pred.label])
