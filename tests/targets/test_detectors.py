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


@pytest.mark.parametrize("name", ["dlib-cnn", "dlib-hog", "haar-face"])
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


def test_haar_smile_responds_to_the_smile():
    gen = generators.load("faces")
    smile = targets.load("haar-smile")
    rates = []
    for value in (0.0, 0.95):
        batch = gen.generate([{"identity": i, "smile": value, "skin_tone": 1 + i % 6} for i in range(18)])
        rates.append(np.mean([lab == "smiling" for lab in smile.predict(batch.images).label]))
    assert rates[1] - rates[0] > 0.5
    blank = np.full((1, 128, 128, 3), 128, np.uint8)
    assert smile.predict(blank).label == ["no face"]


def test_verify_same_identity_is_closer_than_another():
    """Identity fixes the face: dlib's verifier puts two renders of one pseudo-person (smiling,
    lit from the side) closer than renders of different pseudo-people with the same attributes."""
    gen = generators.load("faces")
    verify = targets.load("dlib-verify")
    base = {"skin_tone": 3.0, "gender_presentation": 0.3, "age": 35.0}
    params = [p for i in range(6) for p in ({**base, "identity": i}, {**base, "identity": i, "smile": 0.7, "light_direction": 25.0})]
    e = verify.predict(gen.generate(params).images).embedding
    assert all(x is not None and x.shape == (128,) for x in e)
    same = [verify.distance(e[2 * i], e[2 * i + 1]) for i in range(6)]
    other = [verify.distance(e[2 * i], e[2 * j]) for i in range(6) for j in range(i + 1, 6)]
    assert np.median(same) < np.median(other)
    assert verify.same(e[0], e[1])
    blank = verify.predict(np.full((1, 128, 128, 3), 128, np.uint8))
    assert blank.label == [False] and blank.embedding == [None] and blank.error == [None]


@pytest.mark.parametrize("name", ["dlib-cnn", "dlib-hog", "haar-face"])
def test_a_detector_is_surer_of_a_frontal_face_than_a_turned_one(name):
    """Each detector's score is a confidence (None where it found nothing), and it falls as a face
    turns away: what the continuous "score" loss reads to tell near-failures from sure passes."""
    gen = generators.load("faces")
    rows = gen.space.sample(16, seed=1)
    det = targets.load(name)
    medians = []
    for yaw in (0.0, 30.0):
        pred = det.predict(gen.generate([dict(r, yaw=yaw) for r in rows], seed=0).images)
        assert all((s is None) == (not found) for s, found in zip(pred.score, pred.label))
        medians.append(np.median([s for s in pred.score if s is not None]))
    assert medians[1] < medians[0], medians


def test_haar_smile_takes_the_same_face_whatever_order_the_cascade_returns_ties_in(monkeypatch):
    """Two faces of one size (the cascade's windows come in discrete sizes): OpenCV's parallel loop
    returns them in thread order, and the smile classifier must read the same face either way,
    the one nearer the centre."""
    smile, gen = targets.load("haar-smile"), generators.load("faces")
    image = gen.generate(gen.space.sample(1, seed=0), seed=0).images
    centred, aside = (32.0, 32.0, 96.0, 96.0), (0.0, 10.0, 64.0, 74.0)
    boxes = []
    for order in ([centred, aside], [aside, centred]):
        monkeypatch.setattr(smile._faces, "faces", lambda grey, order=order: list(order))
        boxes.append(smile.predict(image).boxes[0])
    assert boxes[0] == boxes[1] == [(32, 32, 96, 96)]


def test_haar_face_boxes_are_those_of_detect_multi_scale():
    """The level weights come from `detectMultiScale3`; which faces are found must not change."""
    import cv2

    h, gen = targets.load("haar-face"), generators.load("faces")
    for im in gen.generate(gen.space.sample(30, seed=2), seed=0).images:
        grey = cv2.cvtColor(im, cv2.COLOR_RGB2GRAY)
        plain = h._cascade.detectMultiScale(grey, scaleFactor=h.scale_factor, minNeighbors=h.min_neighbors)
        assert sorted(h.faces(grey)) == sorted((float(x), float(y), float(x + w), float(y + hh)) for x, y, w, hh in plain)
