"""`searcher retrain`: every arm trains on what it says, with one recipe, and is scored as
scikit-learn scores it; your own model plugs in through the `TrainingRecipe` protocol."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import balanced_accuracy_score

import searcher
from searcher.campaign import load_campaign
from searcher.cli import main
from searcher.errors import ParameterError
from searcher.retrain import DEFAULT_ARMS, retrain
from targets.base import LabelledImages, TrainingRecipe
from targets.trained import GenderCNN


def test_every_arm_trains_on_its_own_data_with_one_recipe(pixel_recipe, hard, tmp_path):
    recipe = pixel_recipe()
    assert isinstance(recipe, TrainingRecipe) and isinstance(recipe.base(0), LabelledImages)
    result = retrain(recipe=recipe, hard=hard, n=25, seeds=(0, 1), out=tmp_path / "r")
    assert result.n_added == 25
    assert len(recipe.seen) == 2 * len(DEFAULT_ARMS)
    by_arm = dict(zip([(seed, arm) for seed in (0, 1) for arm in DEFAULT_ARMS], recipe.seen))
    trials = load_campaign(hard).trials
    failed = set(trials.loc[trials["loss"] >= 0.5, "params"].map(lambda p: round(p["hair_length"], 9)))
    for seed in (0, 1):
        base = by_arm[seed, "base"][1]
        assert by_arm[seed, "base"][0] == seed and len(base) == 400
        for arm in ("hard", "random", "spread"):
            data = by_arm[seed, arm][1]
            assert len(data) == 425 and np.array_equal(data.images[:400], base.images)
            extra = data.truth.iloc[400:]
            right = (extra["gender_presentation"] >= 0.5).astype(int).to_numpy()
            assert np.array_equal(data.labels[400:], right)  # the right label, never the target's answer
            in_campaign = extra["hair_length"].round(9).isin(failed)
            assert in_campaign.all() if arm != "random" else not in_campaign.any()
        assert len(by_arm[seed, "balanced"][1]) == 400
    assert not np.array_equal(by_arm[0, "base"][1].images, by_arm[1, "base"][1].images)  # each seed draws its own data
    # the added failures: first found vs spread over modes differ; the same failures each seed
    assert not by_arm[0, "hard"][1].truth.iloc[400:].equals(by_arm[0, "spread"][1].truth.iloc[400:])
    assert by_arm[0, "hard"][1].truth.iloc[400:].reset_index(drop=True).equals(by_arm[1, "hard"][1].truth.iloc[400:].reset_index(drop=True))


def test_scores_are_what_scikit_learn_computes(pixel_recipe, hard, tmp_path):
    recipe = pixel_recipe()
    result = retrain(recipe=recipe, hard=hard, n=10, seeds=(0,), arms=("base", "hard"), out=tmp_path / "r")
    assert set(result.scores["test"]) == {"balanced", "ppb-like"}
    for (data, pred), (_, row) in zip(recipe.predictions, result.scores.iterrows()):
        assert row["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(data.labels, pred))
        assert row["accuracy"] == pytest.approx(float((pred == data.labels).mean()))
    groups = pd.read_csv(tmp_path / "r" / "groups.csv")
    row = groups[(groups["arm"] == "base") & (groups["test"] == "balanced") & (groups["group"] == "all")].iloc[0]
    data, pred = recipe.predictions[0]
    assert row["n"] == len(data) and row["errors"] == int((pred != data.labels).sum())
    assert row["ci_low"] <= row["error"] <= row["ci_high"]
    for name in ("summary.md", "scores.csv", "retraining.png"):
        assert (tmp_path / "r" / name).stat().st_size > 0


def test_same_seeds_same_result(pixel_recipe, hard, tmp_path):
    a = retrain(recipe=pixel_recipe(), hard=hard, n=10, seeds=(3,), arms=("random", "spread"), out=tmp_path / "a")
    b = retrain(recipe=pixel_recipe(), hard=hard, n=10, seeds=(3,), arms=("random", "spread"), out=tmp_path / "b")
    pd.testing.assert_frame_equal(a.scores, b.scores)


def test_the_shipped_recipe_trains_a_model_that_learns(hard, tmp_path, capsys):
    """gender-cnn's own recipe, shrunk (1,200 faces, 2 passes): the CLI end to end; the base model beats chance on its PPB-like set."""
    assert main(["retrain", "--target", "gender-cnn", "--hard", str(hard), "-n", "20", "--seeds", "1", "--arms", "base,hard",
                 "--train-n", "1200", "--epochs", "2", "--test-n", "200", "--out", str(tmp_path / "r"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "retraining, 1 seeds, 20 images added per arm" in out and "summary.md" in out
    scores = pd.read_csv(tmp_path / "r" / "scores.csv")
    assert list(scores["train_size"].unique()) == [1200, 1220]
    assert scores.loc[(scores["arm"] == "base") & (scores["test"] == "ppb-like"), "accuracy"].iloc[0] > 0.6
    assert callable(searcher.retrain)


def test_bad_input_names_what_is_wrong(pixel_recipe, hard, tmp_path):
    with pytest.raises(ParameterError, match="Unknown arm.*'worst'.*base"):
        retrain(recipe=pixel_recipe(), hard=hard, arms=("base", "worst"), out=tmp_path / "r")
    with pytest.raises(ParameterError, match="'haar-face' cannot be retrained.*gender-cnn, glasses-cnn, smile-cnn"):
        retrain("haar-face", hard=hard, out=tmp_path / "r")
    smile = GenderCNN().recipe(n=100)
    smile = type(smile)("smile", ("not smiling", "smiling"), 100, 1, 0.85, 100)
    with pytest.raises(ParameterError, match="judge 'gender-cnn'.*labels \\['not smiling', 'smiling'\\]"):
        retrain(recipe=smile, hard=hard, out=tmp_path / "r")
    with pytest.raises(ParameterError, match="-n must be an integer >= 1"):
        retrain(recipe=pixel_recipe(), hard=hard, n=0, out=tmp_path / "r")
    with pytest.raises(ParameterError, match="needs hard examples"):
        retrain(None, recipe=pixel_recipe(), out=tmp_path / "r")
