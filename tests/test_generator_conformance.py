"""Every registered generator passes the same conformance suite."""

import pytest

import generators
from searcher.errors import PluginError
from searcher.testing import GENERATOR_CHECKS

SMALL = {"faces": {"resolution": 64}, "faces-latent": {"resolution": 64}}  # keep the suite fast


@pytest.fixture(scope="module", params=generators.available())
def generator(request):
    return generators.load(request.param, **SMALL.get(request.param, {}))


@pytest.mark.parametrize("check", GENERATOR_CHECKS, ids=lambda c: c.__name__)
def test_conformance(generator, check):
    check(generator)


def test_unknown_generator_names_the_valid_ones():
    with pytest.raises(PluginError, match="faces-latent"):
        generators.load("no-such-generator")


@pytest.mark.parametrize("resolution", [63, 257, 128.0, "128"])
def test_bad_resolution_raises(resolution):
    with pytest.raises(ValueError, match="resolution"):
        generators.load("faces", resolution=resolution)
