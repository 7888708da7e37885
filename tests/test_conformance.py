"""Every registered generator, target and strategy, and the shipped fakes, pass the same
conformance suites (`searcher.testing`)."""

import pytest

import generators
import targets
from searcher.errors import PluginError
from searcher.strategies import STRATEGIES
from searcher.testing import GENERATOR_CHECKS, STRATEGY_CHECKS, TARGET_CHECKS, CallableTarget, FakeGenerator

SMALL = {"faces": {"resolution": 64}, "faces-latent": {"resolution": 64}, "faces-cvae": {"resolution": 64}}  # keep the suite fast
# These need a server or a model file; tests/targets/test_http_*.py, test_local_targets.py and
# tests/generators/test_checkpoint.py run the same checks on them.
NEEDS_OPTIONS = {"http", "torch", "onnx", "checkpoint"}


@pytest.fixture(scope="module", params=[*(name for name in generators.available() if name not in NEEDS_OPTIONS), "fake"])
def generator(request):
    return FakeGenerator() if request.param == "fake" else generators.load(request.param, **SMALL.get(request.param, {}))


@pytest.mark.parametrize("check", GENERATOR_CHECKS, ids=lambda c: c.__name__)
def test_generator_conformance(generator, check):
    check(generator)


@pytest.fixture(scope="module", params=[*(name for name in targets.available() if name not in NEEDS_OPTIONS), "callable"])
def target(request):
    if request.param == "callable":
        return CallableTarget(lambda images: [bool(im.std() > 10) for im in images])  # "a face" where there is texture
    return targets.load(request.param)


@pytest.mark.parametrize("check", TARGET_CHECKS, ids=lambda c: c.__name__)
def test_target_conformance(target, check):
    check(target)


@pytest.fixture(scope="module", params=STRATEGIES.available())
def strategy(request):
    return lambda space, seed: STRATEGIES.load(request.param, space, seed=seed)


@pytest.mark.parametrize("check", STRATEGY_CHECKS, ids=lambda c: c.__name__)
def test_strategy_conformance(strategy, check):
    check(strategy)


def test_unknown_generator_names_the_valid_ones():
    with pytest.raises(PluginError, match="faces-latent"):
        generators.load("no-such-generator")


@pytest.mark.parametrize("resolution", [63, 257, 128.0, "128"])
def test_bad_resolution_raises(resolution):
    with pytest.raises(ValueError, match="resolution"):
        generators.load("faces", resolution=resolution)
