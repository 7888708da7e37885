"""The `faces` renderer: parameters change what they say they change, truth reports what was drawn."""

import numpy as np
import pytest

import generators
import targets


@pytest.fixture(scope="module")
def faces():
    return generators.load("faces")


def luminance(images):
    return images.astype(float).mean(axis=-1)


def test_default_face_is_found_by_a_real_detector_inside_the_truth_box(faces):
    """dlib's HOG detector (trained on photographs) finds clean faces where truth says they are."""
    batch = faces.generate([{"identity": i, "skin_tone": 1 + i % 6, "gender_presentation": (i % 5) / 4} for i in range(6)])
    pred = targets.load("dlib-hog").predict(batch.images)
    assert all(pred.label)
    for boxes, (_, row) in zip(pred.boxes, batch.truth.iterrows()):
        x0, y0, x1, y1 = boxes[0]
        ix = max(0, min(x1, row.face_x1) - max(x0, row.face_x0))
        iy = max(0, min(y1, row.face_y1) - max(y0, row.face_y0))
        inter = ix * iy
        union = (x1 - x0) * (y1 - y0) + (row.face_x1 - row.face_x0) * (row.face_y1 - row.face_y0) - inter
        assert inter / union > 0.4


def test_hard_conditions_defeat_the_detector(faces):
    easy = faces.generate({})
    hard = faces.generate([{"yaw": 75.0}, {"light_intensity": 0.1}, {"occlusion": 1.0, "eyewear": "sunglasses"}])
    det = targets.load("dlib-hog")
    assert det.predict(easy.images).label == [True]
    assert sum(det.predict(hard.images).label) <= 1


def test_skin_tone_darkens_the_face_relative_to_the_background(faces):
    """Darker skin is darker against the same background, though the camera meters on the face
    (half-way auto-exposure lifts the whole frame by at most 1.6x)."""
    b = faces.generate([{"skin_tone": 1.0}, {"skin_tone": 6.0}])
    centre = luminance(b.images)[:, 72:80, 56:72].mean(axis=(1, 2))  # cheeks and nose
    corner = luminance(b.images)[:, :10, :10].mean(axis=(1, 2))
    assert centre[0] / corner[0] > 2.0 * centre[1] / corner[1]
    assert 1.0 < corner[1] / corner[0] <= 1.61


def test_light_and_sunglasses_and_blur(faces):
    b = faces.generate([{}, {"light_intensity": 0.3}, {"eyewear": "sunglasses"}, {"blur": 3.0}])
    lum = luminance(b.images)
    assert lum[1].mean() < 0.5 * lum[0].mean()
    eyes = (slice(62, 70), slice(52, 77))
    assert lum[2][eyes].mean() < lum[0][eyes].mean() - 30
    sharpness = [np.abs(np.diff(x, axis=1)).mean() for x in lum]
    assert sharpness[3] < 0.7 * sharpness[0]


def test_identity_fixes_the_face_across_attributes(faces):
    """The same identity under two lights differs less than two identities under one light."""
    b = faces.generate([{"identity": 1}, {"identity": 1, "smile": 0.8}, {"identity": 2}])
    same = np.abs(b.images[0].astype(int) - b.images[1]).mean()
    other = np.abs(b.images[0].astype(int) - b.images[2]).mean()
    assert 0 < same < other


def test_truth_reports_what_was_rendered(faces):
    b = faces.generate([{"age": 8.0, "facial_hair": 1.0}, {"age": 40.0, "facial_hair": 1.0}, {"skin_tone": 4.6}])
    assert b.truth.loc[0, "facial_hair"] == 0.0  # children grow no beard
    assert b.truth.loc[1, "facial_hair"] == 1.0
    assert b.truth.loc[2, "fitzpatrick"] == 5
    assert {"face_x0", "face_y0", "face_x1", "face_y1"} <= set(b.truth.columns)


def test_resolution_option(faces):
    for r in (64, 256):
        assert generators.load("faces", resolution=r).generate({}).images.shape == (1, r, r, 3)


def test_empty_batch(faces):
    assert len(faces.generate([])) == 0
