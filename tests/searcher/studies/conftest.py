"""The planted pair the intervention studies (`confirm`, `probe`) are tested on, whose cause is
known: the `planted` generator of dimension 3 against a `planted` target of dimension 2 (both
images hold 3 x 3 pixels, and the target reads the first two coordinates only). The target fails in
one box over (x0, x1), a third of the points; x2 changes nothing it reads."""

import shutil
from pathlib import Path

import pytest

import targets
from searcher.campaign import Campaign

GENERATOR = {"dim": 3}
TARGET = {"dim": 2, "k": 1, "volume": 0.3}


@pytest.fixture(scope="session")
def planted_pair():
    """`make(out, **target_options)`: a 400-evaluation random campaign of the pair in `out` (the
    target's options added to the pair's, e.g. `error_rate`, `delay`), returned."""

    def make(out: Path, **target) -> Path:
        Campaign(generator="planted", target="planted", strategy="random", budget=400, batch=200, out=str(out),
                 generator_options=GENERATOR, target_options={**TARGET, **target}).run(progress=False)
        return out

    return make


@pytest.fixture(scope="session")
def planted(tmp_path_factory, planted_pair):
    return planted_pair(tmp_path_factory.mktemp("studies") / "planted")


@pytest.fixture
def run(planted, tmp_path):
    """A fresh copy of the planted campaign (a study writes inside it: RUN/confirm, RUN/probe)."""
    return shutil.copytree(planted, tmp_path / "run")


@pytest.fixture(scope="session")
def planted_box():
    """The target's box over (x0, x1): (lower, upper)."""
    regions = targets.load("planted", **TARGET).regions
    return regions.lower[0], regions.upper[0]
