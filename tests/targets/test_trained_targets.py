"""The shipped `gender-cnn` and `smile-cnn` load, conform, and show the biases planted in their training data.

The bias checks use matched pairs: the same pseudo-persons rendered twice, one attribute changed.
"""

from __future__ import annotations

import numpy as np
import pytest

import generators
from searcher.errors import PluginError
from searcher.testing import TARGET_CHECKS
from targets.trained import GenderCNN, SmileCNN, weights_path

IDS = range(24)


@pytest.fixture(scope="module")
def gender() -> GenderCNN:
    return GenderCNN()


@pytest.fixture(scope="module")
def smile() -> SmileCNN:
    return SmileCNN()


@pytest.fixture(scope="module")
def faces():
    return generators.load("faces")


def p_second(target, images: np.ndarray) -> np.ndarray:
    """Probability of the second label (feminine, smiling) from the predicted label and its score."""
    pred = target.predict(images)
    return np.array([s if lab == target.labels[1] else 1.0 - s for lab, s in zip(pred.label, pred.score)])


@pytest.mark.parametrize("task", ["gender", "smile"])
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


def test_labels(gender, smile):
    assert gender.task == smile.task == "classify"
    assert gender.labels == ("masculine", "feminine") and smile.labels == ("not smiling", "smiling")


@pytest.mark.parametrize("check", TARGET_CHECKS, ids=lambda c: c.__name__)
def test_conformance(check, gender, smile):
    check(gender)
    check(smile)


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
