"""The campaigns the export tests read, built once per session by `stored_campaign` (and `haar_campaign`, in tests/conftest.py)."""

import pytest


@pytest.fixture(scope="module")
def gender_campaign(stored_campaign):
    """400 random evaluations of gender-cnn on 64 px faces (a few seconds): failures, successes, ambiguous truths."""
    return stored_campaign("gender", generator="faces", target="gender-cnn", strategy="random", budget=400, batch=50, seed=0,
                           generator_options={"resolution": 64})
