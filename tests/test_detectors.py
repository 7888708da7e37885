"""The shipped detectors load from installed packages and answer per image."""

import numpy as np
import pytest

import generators
import targets
from searcher.errors import PluginError


@pytest.fixture(scope="module")
def images():
    face = generators.load("faces").generate({}).images
    blank = np.full((1, 128, 128, 3), 128, np.uint8)
    return np.concatenate([face, blank])


@pytest.mark.parametrize("name", targets.available())
def test_detector_finds_the_face_and_not_the_blank(name, images):
    pred = targets.load(name).predict(images)
    assert pred.label == [True, False]
    assert len(pred.boxes[0]) >= 1 and pred.boxes[1] == []
    assert pred.error == [None, None]


def test_unknown_target_lists_valid_names():
    with pytest.raises(PluginError, match="dlib-cnn"):
        targets.load("nope")


def test_bad_images_rejected():
    with pytest.raises(ValueError, match="uint8"):
        targets.load("dlib-hog").predict(np.zeros((1, 64, 64, 3), np.float32))
