"""The planted landscapes' shapes (box, ball, slab, shell), mixed spaces with a categorical
parameter, the confidence a detector gives near its failures, and the generator and target built on them."""

import math

import numpy as np
import pytest

from searcher.errors import ParameterError
from searcher.objective import Objective, detection_loss
from searcher.testing import check_generator, check_target
from searcher.testing.planted import SHAPES, PlantedGenerator, PlantedRegions, PlantedTarget

CASES = [  # (dim, k, volume, shape, categories): one per shape, and mixed spaces
    (8, 4, 0.02, "box", 0),
    (6, 3, 0.01, "ball", 0),
    (12, 5, 0.02, "slab", 0),
    (6, 3, 0.003, "shell", 0),
    (8, 6, 0.02, "box", 3),
    (6, 4, 0.005, "ball", 2),
    (10, 4, 0.01, "slab", 2),
    (6, 4, 0.004, "shell", 2),
]


def _ball_volume(dim: int, r: np.ndarray) -> np.ndarray:
    return math.pi ** (dim / 2) / math.gamma(dim / 2 + 1) * np.asarray(r) ** dim


def _volumes(p: PlantedRegions) -> np.ndarray:
    """Each region's continuous volume, from its geometry."""
    if p.shape in ("box", "slab"):
        return np.prod(p.upper - p.lower, axis=1)
    if p.shape == "ball":
        return _ball_volume(p.dim, p.radius)
    return _ball_volume(p.dim, p.radius + p.thickness) - _ball_volume(p.dim, p.radius)


def _direct_region(p: PlantedRegions, X: np.ndarray) -> np.ndarray:
    """region_of written out for balls and shells: the distance to the centre against the radii, at the region's level."""
    C = X[:, : p.dim]
    level = X[:, p.dim:].argmax(axis=1) if p.categories else np.zeros(len(X), int)
    out = np.full(len(X), -1)
    for j in range(p.k):
        r = np.linalg.norm(C - p.centres[j], axis=1)
        inner = p.radius[j] if p.shape == "shell" else 0.0
        outer = p.radius[j] + (p.thickness[j] if p.shape == "shell" else 0.0)
        out[(r >= inner) & (r <= outer) & (level == p.levels[j]) & (out < 0)] = j
    return out


@pytest.mark.parametrize("dim, k, volume, shape, categories", CASES)
def test_each_shape_places_exactly_the_volume(dim, k, volume, shape, categories):
    p = PlantedRegions(dim=dim, k=k, volume=volume, seed=1, shape=shape, categories=categories)
    m = max(categories, 1)
    assert _volumes(p) == pytest.approx(np.full(k, volume * m / k))  # each region's continuous volume
    assert _volumes(p).sum() / m == pytest.approx(volume)  # the failing fraction of the whole space
    n = 200_000
    X = p.space.cube.uniform(np.random.default_rng(7), n)
    rate = (p.region_of(X) >= 0).mean()
    assert abs(rate - volume) < 4 * math.sqrt(volume * (1 - volume) / n), f"Monte Carlo {rate:.5f} against {volume}"


@pytest.mark.parametrize("dim, k, volume, shape, categories", CASES)
def test_regions_are_disjoint_and_inside_the_cube(dim, k, volume, shape, categories):
    p = PlantedRegions(dim=dim, k=k, volume=volume, seed=2, shape=shape, categories=categories)
    assert (p.lower >= 0).all() and (p.upper <= 1).all()
    for i in range(k):
        for j in range(i):
            if p.levels[i] != p.levels[j]:
                continue  # regions of different levels never meet
            if shape in ("box", "slab"):
                assert ((p.lower[i] >= p.upper[j]) | (p.upper[i] <= p.lower[j])).any(), f"regions {i} and {j} overlap"
            else:
                outer = (p.upper - p.lower)[:, 0] / 2
                assert np.linalg.norm(p.centres[i] - p.centres[j]) >= outer[i] + outer[j], f"regions {i} and {j} overlap"
    assert (p.region_of(p.inside_points()) == np.arange(k)).all()


def test_slabs_are_thin_along_one_axis():
    p = PlantedRegions(dim=12, k=5, volume=0.02, seed=0, shape="slab")
    sides = np.sort(p.upper - p.lower, axis=1)
    assert (sides[:, 0] * 4 < sides[:, 1]).all(), "one side much thinner than all the others"
    assert (sides[:, 1:] > 0.5).all()


@pytest.mark.parametrize("shape, categories", [("ball", 0), ("shell", 0), ("ball", 2), ("shell", 2)])
def test_region_of_balls_and_shells_is_the_distance_to_the_centre(shape, categories):
    p = PlantedRegions(dim=6, k=4, volume=0.004, seed=3, shape=shape, categories=categories)
    rng = np.random.default_rng(0)
    direction = rng.normal(size=(4 * 500, 6))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    outer = np.repeat((p.upper - p.lower)[:, 0] / 2, 500)
    near = np.repeat(p.centres, 500, axis=0) + direction * rng.uniform(0, 1.4, len(direction))[:, None] * outer[:, None]  # in and around each
    C = np.clip(np.concatenate([near, rng.random((2000, 6))]), 0, 1)
    X = np.concatenate([C, np.eye(categories)[rng.integers(categories, size=len(C))]], axis=1) if categories else C
    got = p.region_of(X)
    assert np.array_equal(got, _direct_region(p, X))
    assert (got >= 0).sum() > 120, "the test points hit the regions"


@pytest.mark.parametrize("shape", SHAPES)
def test_confidence_is_zero_inside_and_grows_leaving_a_region(shape):
    p = PlantedRegions(dim=6, k=1, volume=0.004, seed=0, shape=shape)
    X = p.space.cube.uniform(np.random.default_rng(1), 20_000)
    inside = p.region_of(X) >= 0
    conf = p.confidence(X)
    assert (conf[inside] == 0).all() and (conf[~inside] > 0).all()
    start = p.inside_points()[0]
    direction = start - p.centres[0] if shape == "shell" else np.ones(6)
    direction /= np.linalg.norm(direction)
    steps = start + np.linspace(0, 0.6, 200)[:, None] * direction
    steps = steps[(steps >= 0).all(axis=1) & (steps <= 1).all(axis=1)]  # the ray up to the cube's face
    along = p.confidence(steps)
    assert along[0] == 0 and along[-1] > 0
    assert (np.diff(along) >= -1e-12).all(), "the confidence never falls as the ray leaves the region"
    loss = p.loss(steps, score=True)
    assert loss[0] == 1.0 and (loss[along > 0] < 0.5).all()
    assert (np.diff(loss[along > 0]) <= 1e-12).all(), "the score loss rises towards the region"


def test_score_loss_is_the_detection_loss_of_the_scaled_confidence():
    p = PlantedRegions(dim=6, k=5, volume=0.03, seed=0)
    X = np.concatenate([p.inside_points(), np.random.default_rng(2).random((300, 6))])
    scored, zero_one = p.loss(X, score=True), p.loss(X)
    assert np.array_equal(scored >= 0.5, zero_one == 1.0)
    expected = [detection_loss(found=r < 0, confidence=c / (0.1 * math.sqrt(6))) for r, c in zip(p.region_of(X), p.confidence(X))]
    assert scored == pytest.approx(expected)
    assert p.scale == pytest.approx(0.1 * math.sqrt(6))


def test_mixed_regions_fail_only_at_their_level():
    p = PlantedRegions(dim=8, k=6, volume=0.02, seed=0, shape="box", categories=3)
    assert p.space.names == [f"x{i}" for i in range(8)] + ["c"] and p.space["c"].choices == ("c0", "c1", "c2")
    assert sorted(np.bincount(p.levels).tolist()) == [2, 2, 2], "levels spread over the regions"
    points = p.inside_points()
    assert (p.region_of(points) == np.arange(6)).all()
    for shift in (1, 2):
        moved = points.copy()
        moved[:, 8:] = np.eye(3)[(p.levels + shift) % 3]  # the same continuous point, another level
        region = p.region_of(moved)
        assert (region != np.arange(6)).all(), "a region fails at its own level only"
        assert (p.levels[region[region >= 0]] == (p.levels[region >= 0] + shift) % 3).all(), "what fails there is a region of that level"
        conf = p.confidence(moved)
        assert (conf[region < 0] > 0).all() and np.isfinite(conf).all(), "regions of another level are not near"
    X = p.space.cube.uniform(np.random.default_rng(3), 50_000)
    hit = p.region_of(X)
    assert (X[hit >= 0, 8:].argmax(axis=1) == p.levels[hit[hit >= 0]]).all()


@pytest.mark.parametrize(
    "options, match",
    [
        ({"shape": "cube"}, r"'shape'.*'box', 'ball', 'slab', 'shell'.*'cube'"),
        ({"categories": 1}, r"'categories'.*0 \(no categorical parameter\) or an integer in \[2, k=5\].*Got 1"),
        ({"categories": 6}, r"'categories'.*\[2, k=5\].*Got 6"),
        ({"categories": 2.5}, r"'categories'.*Got 2.5"),
        ({"shape": "ball", "dim": 12, "volume": 0.01}, r"ball of volume .* 12 dimensions .* does not fit"),
        ({"shape": "shell", "dim": 6, "k": 5, "volume": 0.05}, r"Could not place 5 disjoint regions .*'shell'"),
        ({"shape": "slab", "dim": 1}, "dim >= 2"),
    ],
)
def test_bad_shapes_and_categories_raise(options, match):
    with pytest.raises(ParameterError, match=match):
        PlantedRegions(**options)


def test_region_of_checks_the_width_of_a_mixed_space():
    with pytest.raises(ParameterError, match="n x 9"):
        PlantedRegions(dim=6, k=4, volume=0.02, categories=3).region_of(np.zeros((2, 6)))


def test_mixed_generator_and_target_pass_the_conformance_suites():
    options = {"dim": 6, "k": 4, "volume": 0.004, "shape": "shell", "categories": 2}
    gen = PlantedGenerator(**options)
    assert gen.space is gen.regions.space
    check_generator(gen)
    check_target(PlantedTarget(**options, score=True))


@pytest.mark.parametrize("score", [False, True])
def test_a_campaign_loss_is_the_landscape_loss(score):
    """Through generator, target and the "score" judge, a point's loss is `regions.loss(X, score)`."""
    options = {"dim": 6, "k": 4, "volume": 0.02, "shape": "box", "categories": 2}
    gen, target = PlantedGenerator(**options), PlantedTarget(**options, score=score)
    X = np.concatenate([gen.regions.inside_points(), gen.space.cube.uniform(np.random.default_rng(4), 60)])
    outcomes = Objective(gen, target, loss="score").evaluate(gen.space.from_unit(X))
    assert [o.loss for o in outcomes] == pytest.approx(gen.regions.loss(X, score=score).tolist())
    assert [o.truth["region"] for o in outcomes] == gen.regions.region_of(X).tolist()
    assert all((o.score is None) == (not score or o.truth["region"] >= 0) for o in outcomes)


def test_target_score_must_be_a_bool():
    with pytest.raises(ParameterError, match="'score'.*True or False"):
        PlantedTarget(score="yes")
