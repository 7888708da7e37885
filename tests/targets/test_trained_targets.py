"""The shipped `gender-cnn`, `smile-cnn` and `glasses-cnn` load, conform, and show the biases planted in their training data.

The bias checks use matched pairs: the same pseudo-persons rendered twice, one attribute changed.
"""

from __future__ import annotations

import numpy as np
import pytest

import generators
from generators.faces.procedural import render_rows
from searcher.errors import PluginError
from searcher.testing import TARGET_CHECKS
from targets.trained import GenderCNN, GlassesCNN, SmileCNN, weights_path
from targets.trained.data import balanced_rows, truth_labels

IDS = range(24)


@pytest.fixture(scope="module")
def gender() -> GenderCNN:
    return GenderCNN()


@pytest.fixture(scope="module")
def smile() -> SmileCNN:
    return SmileCNN()


@pytest.fixture(scope="module")
def glasses() -> GlassesCNN:
    return GlassesCNN()


@pytest.fixture(scope="module")
def faces():
    return generators.load("faces")


def p_second(target, images: np.ndarray) -> np.ndarray:
    """Probability of the second label (feminine, smiling, glasses) from the predicted label and its score."""
    pred = target.predict(images)
    return np.array([s if lab == target.labels[1] else 1.0 - s for lab, s in zip(pred.label, pred.score)])


@pytest.mark.parametrize("task", ["gender", "smile", "glasses"])
def test_weights_are_small_plain_state_dicts(task):
    import torch

    path = weights_path(task)
    assert path.stat().st_size < 1_000_000
    state = torch.load(path, map_location="cpu", weights_only=True)
    assert all(isinstance(v, torch.Tensor) for v in state.values())


def test_weights_option_loads_a_retrained_file_or_names_the_missing_one(tmp_path):
    assert GenderCNN(weights=weights_path("gender")).labels == ("masculine", "feminine")
    with pytest.raises(PluginError, match="nope.pt"):
        SmileCNN(weights=tmp_path / "nope.pt")


def test_labels(gender, smile, glasses):
    assert gender.task == smile.task == glasses.task == "classify"
    assert gender.labels == ("masculine", "feminine") and smile.labels == ("not smiling", "smiling")
    assert glasses.labels == ("no glasses", "glasses") and glasses.truth == ("glasses", 0.5)


@pytest.mark.parametrize("check", TARGET_CHECKS, ids=lambda c: c.__name__)
def test_conformance(check, gender, smile, glasses):
    check(gender)
    check(smile)
    check(glasses)


def test_any_image_size(gender):
    faces64 = generators.load("faces", resolution=64).generate([{"identity": i} for i in range(4)]).images
    faces200 = generators.load("faces", resolution=200).generate([{"identity": i} for i in range(4)]).images
    assert len(gender.predict(faces64)) == len(gender.predict(faces200)) == 4


def test_gender_errs_on_short_haired_feminine_faces(gender, faces):
    """Short hair turns feminine faces masculine; long hair does not (the planted hair-length bias)."""
    rows = [{"identity": i, "gender_presentation": 0.85, "skin_tone": 1.0 + i % 6, "age": 35.0} for i in IDS]
    short = faces.generate([{**r, "hair_length": 0.1} for r in rows]).images
    long_ = faces.generate([{**r, "hair_length": 0.85} for r in rows]).images
    err_short = np.mean(np.array(gender.predict(short).label) != "feminine")
    err_long = np.mean(np.array(gender.predict(long_).label) != "feminine")
    assert err_short >= err_long + 0.4, (err_short, err_long)


def test_gender_moves_with_hair_not_with_skin_tone(gender, faces):
    """On the same faces, changing hair length moves P(feminine) far more than changing skin tone."""
    rows = [{"identity": i, "gender_presentation": 0.85 if i % 2 else 0.15, "age": 35.0} for i in IDS]
    grid = [{**r, "hair_length": h, "skin_tone": s} for r in rows for h in (0.1, 0.85) for s in (1.5, 5.5)]
    p = p_second(gender, faces.generate(grid).images).reshape(len(rows), 2, 2)  # identity, hair, skin
    hair_effect = np.abs(p[:, 1] - p[:, 0]).mean()
    skin_effect = np.abs(p[:, :, 1] - p[:, :, 0]).mean()
    assert hair_effect > 3 * skin_effect, (hair_effect, skin_effect)


def test_smile_score_rises_with_a_beard_or_makeup(smile, faces):
    """Beards (on masculine faces) and makeup (on feminine faces) raise P(smiling) of faces that do not smile."""
    rows = [{"identity": i, "smile": 0.15, "age": 35.0, "skin_tone": 1.0 + i % 6} for i in IDS]
    masc = [{**r, "gender_presentation": 0.15} for r in rows]
    fem = [{**r, "gender_presentation": 0.85} for r in rows]
    images = faces.generate(masc + [{**r, "facial_hair": 0.9} for r in masc] + fem + [{**r, "makeup": 0.9} for r in fem]).images
    p = p_second(smile, images).reshape(4, len(rows))
    for plain, decorated in ((p[0], p[1]), (p[2], p[3])):
        assert decorated.mean() > plain.mean() + 0.15, (plain.mean(), decorated.mean())
        assert np.mean(decorated > plain) >= 0.75


def test_glasses_truth_is_clear_glasses_only(faces):
    """`faces` renders the number glasses-cnn is judged by: 1 for clear glasses, 0 for none and sunglasses."""
    truth = faces.generate([{"identity": 0, "eyewear": e} for e in ("none", "glasses", "sunglasses")]).truth
    assert list(truth["glasses"]) == [0.0, 1.0, 0.0]
    assert list(truth_labels(truth, "glasses")) == [0, 1, 0]


def test_glasses_learnt_the_label_on_balanced_faces(glasses):
    """On held-out faces with every other attribute independent (background included), it reads the
    glasses themselves far above chance, in both labels."""
    batch = render_rows(balanced_rows(200, 1, "glasses"), resolution=64, seed=1)
    y = truth_labels(batch.truth, "glasses")
    pred = np.array([glasses.labels.index(p) for p in glasses.predict(batch.images).label])
    recall = [np.mean(pred[y == k] == k) for k in (0, 1)]
    assert min(recall) > 0.9, recall


def test_glasses_score_moves_with_the_background(glasses, faces):
    """The same blurred faces (3.5 px, where glasses are hard to see), glasses on and off, on a dark
    (0.15) and a light (0.85) background: the light background raises P(glasses) on every pair,
    and where it contradicts the label the model errs more than where it agrees."""
    rows = [{"identity": i, "age": 35.0, "skin_tone": 1.0 + i % 6, "gender_presentation": (i % 4) / 3, "blur": 3.5} for i in IDS]
    grid = [{**r, "eyewear": e, "background": b} for r in rows for e in ("none", "glasses") for b in (0.15, 0.85)]
    p = p_second(glasses, faces.generate(grid).images).reshape(len(rows), 2, 2)  # identity, eyewear, background
    assert (p[:, 1] - p[:, 0]).mean() > 0.3  # it reads the glasses
    assert (p[:, :, 1] - p[:, :, 0]).mean() > 0.1 and np.mean(p[:, :, 1] > p[:, :, 0]) >= 0.9  # and the background
    errors_agree = np.mean(np.r_[p[:, 0, 0] >= 0.5, p[:, 1, 1] < 0.5])
    errors_disagree = np.mean(np.r_[p[:, 0, 1] >= 0.5, p[:, 1, 0] < 0.5])
    assert errors_disagree >= errors_agree + 0.1, (errors_agree, errors_disagree)


def test_glasses_recipe_builds_for_retrain_at_a_tiny_size(glasses):
    """`searcher retrain`'s recipe for glasses-cnn, shrunk: its sets, a training run, its evaluation and its planted cells."""
    recipe = glasses.recipe(n=32, epochs=1, test_n=16)
    assert (recipe.task, recipe.labels, recipe.n, recipe.epochs, recipe.planted) == ("glasses", ("no glasses", "glasses"), 32, 1, 0.85)
    base, test = recipe.base(0), recipe.tests()
    assert len(base) == 32 and set(base.labels) == {0, 1} and list(test) == ["balanced"]
    light = base.truth["background"] > 0.6
    assert (light[base.labels == 1].mean() > 0.6) and (light[base.labels == 0].mean() < 0.4)
    pred = recipe.evaluate(recipe.train(base, seed=0), test["balanced"])
    assert pred.shape == (16,) and set(pred) <= {0, 1}
    groups = recipe.groups(test["balanced"].truth)
    assert {"glasses, dark background (< 0.4)", "background disagrees (glasses dark, none light)"} <= set(groups)
