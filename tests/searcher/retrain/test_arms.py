"""The retraining arms built from causes (`searcher.export.recipes`, `searcher retrain --arms`,
`searcher export --recipe`): each builds exactly N images from the campaign alone, twins change
the label and nothing else, decorrelated draws break the label-cause link the failures show, and
upweight chooses its weight without reading a test set."""

import io
import json
import shutil

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from searcher.cli import main
from searcher.errors import ParameterError
from searcher.export import export
from searcher.export.recipes import RECIPES, build_set, label_parameter
from searcher.export.source import read_source
from searcher.retrain import ARMS, WEIGHTS, retrain
from searcher.retrain.harness import choose_weight


@pytest.fixture(scope="module")
def source(hard):
    return read_source(hard)


@pytest.fixture(scope="module")
def confirmed(hard, source, tmp_path_factory):
    """A copy of the campaign with an explain.json as `searcher explain --confirm` writes it: the
    largest mode with one confirmed cause (hair length, set back to 0.7), a rule attribute whose
    fix rate stays at the control's (age), and a second mode with no cause confirmed."""
    run = tmp_path_factory.mktemp("confirmed") / "run"
    shutil.copytree(hard, run)
    modes = source.rows.loc[source.rows["mode"] >= 0, "mode"].value_counts()
    big, other = int(modes.index[0]), int(modes.index[1])
    records = [
        {"mode": big, "failures": int(modes.iloc[0]), "over": "parameters", "control": "background",
         "rule": {"hair_length": [0.0, 0.35], "age": [20.0, 60.0], "gender_presentation": [0.6, 1.0]},
         "fix_rates": {"hair_length": [0.9, 0.8, 0.95], "age": [0.1, 0.03, 0.2], "background": [0.05, 0.01, 0.15]},
         "interventions": {"hair_length": {"value": 0.7}, "age": {"value": 70.0}, "background": {"value": 0.2, "control": True}}},
        {"mode": other, "failures": int(modes.iloc[1]), "over": "parameters", "control": "background",
         "rule": {"yaw": [20.0, 75.0]}, "fix_rates": {"yaw": [0.1, 0.02, 0.2], "background": [0.05, 0.01, 0.15]}},
    ]
    (run / "explain.json").write_text(json.dumps(records))
    return run, big


def _pixels(png):
    with Image.open(io.BytesIO(png)) as im:
        return np.asarray(im.convert("RGB"))


@pytest.mark.parametrize("recipe", RECIPES)
def test_each_recipe_builds_exactly_n_images(confirmed, recipe):
    built = build_set(read_source(confirmed[0]), recipe, 13)
    assert len(built.rows) == len(built.pngs) == 13 and built.rows["id"].is_unique
    assert built.rows["true_label"].notna().all() and built.notes


def test_balanced_hard_holds_both_labels_equally_from_the_campaign(source):
    rows = build_set(source, "balanced-hard", 30).rows
    counts = rows["true_label"].astype(str).value_counts()
    assert counts.max() - counts.min() <= 0 or len(rows[rows["failure"]]) == 30  # balanced, or the failures alone already were
    assert rows["id"].isin(source.rows["id"]).all()  # drawn from the campaign's own trials


def test_twins_differ_from_their_failure_in_the_label_attribute_only(source):
    built = build_set(source, "twins", 20)
    rows, label = built.rows, label_parameter(source).name
    twins = rows[rows["source"] == "twin"]
    originals = rows[rows["source"] != "twin"].set_index("id")
    assert len(twins) == len(originals) == 10 and originals["failure"].all()
    params = [c for c in rows.columns if c.startswith("param.")]
    for _, twin in twins.iterrows():
        failure = originals.loc[twin["id"].removesuffix("-twin")]
        differ = [c for c in params if failure[c] != twin[c]]
        assert differ == [f"param.{label}"]
        assert twin["true_label"] != failure["true_label"] and twin["mode"] == failure["mode"]
        assert abs(twin[f"param.{label}"] - 0.5) >= 0.1  # in the other label's clear band
        assert twin[f"param.{label}"] == pytest.approx(1.0 - failure[f"param.{label}"])  # mirrored across the cut at 0.5
    # everything held means the renderer gives back the stored image when nothing changes
    gen, seed = source.objective.generator, int(source.config["seed"])
    first = originals.iloc[:3]
    stored = [_pixels(png) for _, png in source.png(first.reset_index())]
    again = gen.generate([{c[6:]: r[c] for c in params} for _, r in first.iterrows()], seed=seed).images
    assert all(np.array_equal(a, b) for a, b in zip(stored, again))


def test_decorrelated_draws_lie_in_the_rule_with_the_cause_independent_of_the_label(confirmed, source):
    run, big = confirmed
    built = build_set(read_source(run), "decorrelated", 40, seed=3)
    rows = built.rows
    assert "confirmed by intervention" in built.notes[0] and "hair_length" in built.notes[0]
    assert (rows["mode"] == big).all()  # the mode without a confirmed cause is left out
    assert rows["param.age"].between(20.0, 60.0).all()  # a rule attribute that is no cause stays inside the box
    feminine = (rows["true_label"] == "feminine").to_numpy(float)
    inside = rows["param.hair_length"].between(0.0, 0.35).to_numpy(float)
    assert feminine.mean() == 0.5 and inside.mean() == 0.5
    assert abs(np.corrcoef(feminine, inside)[0, 1]) < 0.1
    # the campaign's failures tie the label to the cause: the draws are what breaks it
    fails = source.rows[source.rows["failure"]]
    tied = np.corrcoef((fails["true_label"] == "feminine").to_numpy(float), fails["param.hair_length"].between(0.0, 0.35).to_numpy(float))[0, 1]
    assert tied > 0.3
    again = build_set(read_source(run), "decorrelated", 40, seed=3).rows
    pd.testing.assert_frame_equal(rows[[c for c in rows if c.startswith("param.")]], again[[c for c in again if c.startswith("param.")]])


def test_crossed_twins_flip_the_label_and_set_the_confirmed_cause_back_and_nothing_else(confirmed, source):
    """Each crossed twin differs from its failure in the label attribute and the mode's confirmed
    cause alone, set to the value the confirmation set it back to; only the confirmed mode is
    paired, and each twin takes the other label, so the set is label-balanced."""
    run, big = confirmed
    built = build_set(read_source(run), "crossed", 12)
    rows, label = built.rows, label_parameter(source).name
    twins = rows[rows["source"] == "crossed"]
    originals = rows[rows["source"] != "crossed"].set_index("id")
    assert len(twins) == len(originals) == 6 and originals["failure"].all() and (rows["mode"] == big).all()
    assert "hair_length to 0.7" in built.notes[0]
    params = [c for c in rows.columns if c.startswith("param.")]
    for _, twin in twins.iterrows():
        failure = originals.loc[twin["id"].removesuffix("-crossed")]
        assert sorted(c for c in params if failure[c] != twin[c]) == sorted([f"param.{label}", "param.hair_length"]) or (
            failure["param.hair_length"] == 0.7)
        assert twin["param.hair_length"] == 0.7 and twin["true_label"] != failure["true_label"]
    assert rows["true_label"].value_counts().tolist() == [6, 6]


def test_crossed_draws_fill_the_two_crossed_cells_with_fresh_contexts(confirmed, source):
    """Image 2i carries failure i's label value with the cause inside the mode's box, image 2i + 1
    that value flipped with the cause at or beyond its set-back value (0.7, away from the box
    [0, 0.35]); everything else is drawn afresh, so the set spreads where `crossed` holds the
    failures' contexts. The same seed draws the same set."""
    run, big = confirmed
    rows, label = build_set(read_source(run), "crossed-draws", 12).rows, label_parameter(source).name
    fails = source.rows[source.rows["failure"] & (source.rows["mode"] == big)].reset_index(drop=True)
    assert (rows["source"] == "crossed-draws").all() and (rows["mode"] == big).all()
    assert rows["true_label"].value_counts().tolist() == [6, 6]
    for j, row in rows.iterrows():
        failure = fails.iloc[j // 2]
        if j % 2 == 0:
            assert row["true_label"] == failure["true_label"] and 0.0 <= row["param.hair_length"] <= 0.35
            assert row[f"param.{label}"] == failure[f"param.{label}"]
        else:
            assert row["true_label"] != failure["true_label"] and 0.7 <= row["param.hair_length"] <= 1.0
            assert row[f"param.{label}"] == pytest.approx(1.0 - failure[f"param.{label}"])  # mirrored across the cut at 0.5
    assert rows["param.hair_length"].nunique() == 12
    # the context is not the failures': their ages (a rule attribute, no cause) are left behind
    assert not rows["param.age"].isin(fails["param.age"]).any() and rows["param.age"].std() > 5
    again = build_set(read_source(run), "crossed-draws", 12).rows
    pd.testing.assert_frame_equal(rows[[c for c in rows if c.startswith("param.")]], again[[c for c in again if c.startswith("param.")]])


def test_crossed_needs_a_confirmation_and_says_how_to_run_one(hard):
    with pytest.raises(ParameterError) as bad:
        build_set(read_source(hard), "crossed", 10)
    assert "--confirm" in str(bad.value)


def test_without_fix_rates_the_rule_attributes_stand_in_for_causes(confirmed, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(confirmed[0], run)
    records = json.loads((run / "explain.json").read_text())
    (run / "explain.json").write_text(json.dumps([{k: v for k, v in r.items() if k not in ("fix_rates", "control")} for r in records]))
    built = build_set(read_source(run), "decorrelated", 20)
    assert "not confirmed" in built.notes[0] and set(built.rows["mode"]) <= {r["mode"] for r in records}


def test_upweight_chooses_its_weight_on_validation_and_never_reads_a_test_set(pixel_recipe, hard, tmp_path):
    events = []

    class Watched(pixel_recipe):
        def tests(self, seed=1):
            events.append("tests")
            return super().tests(seed)

        def evaluate(self, model, data):
            events.append("evaluate")
            return super().evaluate(model, data)

    recipe = Watched()
    result = retrain(recipe=recipe, hard=hard, n=10, seeds=(0, 1), arms=("base", "upweight", "random-upweight"), weights=(1, 3),
                     out=tmp_path / "r")
    assert result.weight in (1, 3) and "chosen on a validation split" in " ".join(result.notes)
    assert events[:2] == ["evaluate", "evaluate"] and events[2] == "tests"  # both weights scored before any test set is read
    sizes = result.scores.drop_duplicates(["arm", "seed"]).set_index(["arm", "seed"])["train_size"]
    assert sizes["upweight", 1] == sizes["random-upweight", 1] == 400 + 10 * result.weight

    class Sealed(pixel_recipe):
        def tests(self, seed=1):
            raise AssertionError("a test set was read")

    sealed = Sealed()
    base = sealed.base(0)
    w, scores, _ = choose_weight(sealed, base, sealed.base(5), 0, WEIGHTS[:2], sealed.base(1000), [])
    assert w in WEIGHTS[:2] and set(scores) == set(WEIGHTS[:2])


def test_upweight_weighs_the_set_it_is_given_and_its_control_alone_trains(pixel_recipe, confirmed, tmp_path):
    """`upweighted` names the added set the upweight arm repeats (here the crossed-draws set, which
    no other arm asks for), the weight chosen with it; random-upweight alone still has a weight to
    take, chosen on the hard images."""
    run, _ = confirmed
    result = retrain(recipe=pixel_recipe(), hard=run, n=10, seeds=(0,), arms=("base", "upweight"), weights=(2,),
                     upweighted="crossed-draws", out=tmp_path / "r")
    assert any(n.startswith("upweight (Just Train Twice, the crossed-draws images): w = 2") for n in result.notes)
    assert any(n.startswith("crossed-draws: 10 fresh draws") for n in result.notes)
    assert result.scores.set_index("arm").loc["upweight", "train_size"].iloc[0] == 400 + 2 * 10
    alone = retrain(recipe=pixel_recipe(), hard=run, n=10, seeds=(0,), arms=("base", "random-upweight"), weights=(3,), out=tmp_path / "a")
    assert alone.weight == 3 and set(alone.scores["arm"]) == {"base", "random-upweight"}
    with pytest.raises(ParameterError, match=r"--upweighted must be one of 'hard', 'spread', 'balanced-hard'.*Got 'twinz'"):
        retrain(recipe=pixel_recipe(), hard=run, arms=("base", "upweight"), upweighted="twinz", out=tmp_path / "b")


def test_export_recipe_twins_loads_like_other_exports(hard, tmp_path, monkeypatch, capsys):
    import datasets

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    assert main(["export", str(hard), "--out", str(tmp_path / "tw"), "--recipe", "twins", "--max", "12"]) == 0
    assert "twins: 6 failures and 6 twins" in capsys.readouterr().out
    meta = pd.read_csv(tmp_path / "tw" / "train" / "metadata.csv")
    assert len(meta) == 12 and set(meta["source"]) == {"search", "twin"}
    data = datasets.load_dataset(str(tmp_path / "tw"), cache_dir=str(tmp_path / "hf"))["train"]
    assert len(data) == 12 and data.features["label"].names == ["feminine", "masculine"]
    assert "Retraining set: twins" in (tmp_path / "tw" / "README.md").read_text()


def test_an_arm_that_cannot_be_built_is_left_out_and_the_others_train(pixel_recipe, hard, tmp_path, monkeypatch):
    """A recipe the campaign cannot give (no mode with a confirmed cause) leaves its arm out with the
    reason in the notes; the other arms train, as `searcher fix`'s defaults need on a short confirmation."""
    import searcher.retrain.harness as harness

    def refused(source, recipe, n, seed=0):
        raise ParameterError(f"No failure mode of {source.dir} has a confirmed cause to draw from")

    monkeypatch.setattr(harness, "build_set", refused)
    result = retrain(recipe=pixel_recipe(), hard=hard, n=10, seeds=(0,), arms=("base", "random", "decorrelated"), out=tmp_path / "r")
    assert set(result.scores["arm"]) == {"base", "random"}
    assert any(n.startswith("decorrelated: not trained: No failure mode") for n in result.notes)
    assert "decorrelated: not trained" in (tmp_path / "r" / "summary.md").read_text()


def test_bad_arm_and_recipe_names_are_one_line_errors_naming_the_valid_ones(pixel_recipe, hard, tmp_path):
    with pytest.raises(ParameterError) as arm:
        retrain(recipe=pixel_recipe(), hard=hard, arms=("base", "twinz"), out=tmp_path / "r")
    assert "'twinz'" in str(arm.value) and ", ".join(ARMS) in str(arm.value) and "\n" not in str(arm.value)
    for call in (lambda: export(hard, tmp_path / "e", recipe="twinz"), lambda: build_set(read_source(hard), "upweight", 10)):
        with pytest.raises(ParameterError) as bad:
            call()
        assert "balanced-hard" in str(bad.value) and "decorrelated" in str(bad.value) and "\n" not in str(bad.value)


def test_choosing_the_weight_resumes_from_the_journal_and_keeps_each_score_as_it_comes(pixel_recipe, tmp_path):
    """A stop while the weight is chosen loses at most the model in training: a weight the journal
    scored is not trained again, and each new score is kept before the next weight trains."""
    from searcher.retrain.journal import Journal

    trained = []

    class Counted(pixel_recipe):
        def train(self, data, seed):
            trained.append(len(data))
            return super().train(data, seed)

    recipe, journal = Counted(), Journal(tmp_path, {"run": 1})
    base, added, validation = recipe.base(0), recipe.base(5), recipe.base(1000)
    w, scores, models = choose_weight(recipe, base, added, 0, (1, 3), validation, [], journal)
    assert len(trained) == 2 and Journal(tmp_path, {"run": 1}).validated == scores
    trained.clear()
    again = Journal(tmp_path, {"run": 1})
    again.validated.pop(3)  # as if the stop came while weight 3 trained
    w2, scores2, models2 = choose_weight(recipe, base, added, 0, (1, 3), validation, [], again)
    assert len(trained) == 1 and set(models2) == {3} and (w2, scores2) == (w, scores)
