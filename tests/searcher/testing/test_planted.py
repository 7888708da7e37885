"""The planted benchmark: regions with known volume, scoring, and the generator/target pair."""

import numpy as np
import pytest

import generators
import targets
from searcher.errors import ParameterError
from searcher.testing import check_generator, check_target
from searcher.testing.planted import PlantedRegions


@pytest.mark.parametrize("dim, k, volume", [(6, 5, 0.03), (2, 3, 0.1), (1, 2, 0.2), (10, 4, 0.01)])
def test_regions_are_disjoint_boxes_of_the_stated_volume(dim, k, volume):
    planted = PlantedRegions(dim=dim, k=k, volume=volume, seed=3)
    assert planted.lower.shape == planted.upper.shape == (k, dim)
    assert (planted.lower >= 0).all() and (planted.upper <= 1).all()
    assert np.prod(planted.upper - planted.lower, axis=1).sum() == pytest.approx(volume)
    for i in range(k):
        for j in range(i):
            apart = (planted.lower[i] >= planted.upper[j]) | (planted.upper[i] <= planted.lower[j])
            assert apart.any(), f"regions {i} and {j} overlap"
    assert (planted.region_of(planted.centres) == np.arange(k)).all()


def test_loss_matches_the_volume_and_regions_are_seeded():
    planted = PlantedRegions(seed=0)
    X = np.random.default_rng(1).random((100_000, 6))
    assert planted.loss(X).mean() == pytest.approx(0.03, abs=0.003)
    assert set(np.unique(planted.loss(X))) == {0.0, 1.0}
    assert np.array_equal(PlantedRegions(seed=0).lower, planted.lower)
    assert not np.array_equal(PlantedRegions(seed=1).lower, planted.lower)


def test_scoring_counts_failures_and_distinct_regions():
    planted = PlantedRegions(dim=3, k=4, volume=0.08, seed=2)
    outside = np.full((1, 3), -1.0)  # below every box
    X = np.concatenate([planted.centres[[0, 0, 2]], outside])
    assert planted.region_of(X).tolist() == [0, 0, 2, -1]
    assert planted.failures_found(X) == 3
    assert planted.regions_found(X) == 2
    assert planted.regions_found(outside) == 0


@pytest.mark.parametrize(
    "options, match",
    [
        ({"dim": 0}, "'dim'"),
        ({"k": 0}, "'k'"),
        ({"volume": 0.0}, "'volume'"),
        ({"volume": 0.9}, "'volume'"),
        ({"seed": -1}, "'seed'"),
        ({"dim": 4, "k": 8, "volume": 0.5}, "Could not place 8"),
    ],
)
def test_bad_options_raise(options, match):
    with pytest.raises(ParameterError, match=match):
        PlantedRegions(**options)


def test_region_of_checks_the_width():
    with pytest.raises(ParameterError, match="n x 6"):
        PlantedRegions().region_of(np.zeros((2, 5)))


def test_generator_and_target_pass_the_conformance_suites():
    check_generator(generators.load("planted"))
    check_target(targets.load("planted"))


def test_target_fails_exactly_inside_the_regions():
    gen, target = generators.load("planted"), targets.load("planted")
    planted = gen.regions
    points = np.concatenate([planted.centres, np.random.default_rng(0).random((200, 6))])
    params = gen.space.from_unit(points)
    batch = gen.generate(params)
    assert np.array_equal(batch.truth["region"].to_numpy(), planted.region_of(points))
    labels = np.array(target.predict(batch.images).label)
    assert np.array_equal(~labels, planted.region_of(points) >= 0), "label False (a missed face) exactly inside a region"
    assert (~labels).sum() >= len(planted.centres)
