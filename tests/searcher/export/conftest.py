"""The campaigns the export tests read, built once per session by `stored_campaign`."""

import pytest


@pytest.fixture(scope="module")
def gender_campaign(stored_campaign):
    """400 random evaluations of gender-cnn on 64 px faces (a few seconds): failures, successes, ambiguous truths."""
    return stored_campaign("gender", generator="faces", target="gender-cnn", strategy="random", budget=400, batch=50, seed=0,
                           generator_options={"resolution": 64})


@pytest.fixture(scope="module")
def haar_campaign(stored_campaign):
    """60 random evaluations of OpenCV's Haar face detector on 96 px faces."""
    return stored_campaign("haar", generator="faces", target="haar-face", strategy="random", budget=60, batch=20, seed=1,
                           generator_options={"resolution": 96})
